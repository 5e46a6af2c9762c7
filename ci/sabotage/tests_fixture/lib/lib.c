#include "lib.h"

/* A build-time rule: its negation is a generated mutant that cannot compile. */
_Static_assert(sizeof(int) >= 2, "int has at least 16 bits");

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
