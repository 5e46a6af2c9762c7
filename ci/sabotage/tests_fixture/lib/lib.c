#include "lib.h"

int fx_add(int a, int b)
{
    return a + b;
}

int fx_count(int n)
{
    int i = 0;
    while (i < n)
        i++;
    return i;
}

int fx_check(unsigned seed)
{
    return seed < 1000000u;
}

int fx_unused(int x)
{
    return x * 2;
}
