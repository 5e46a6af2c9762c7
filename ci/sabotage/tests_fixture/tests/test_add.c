#include <stdio.h>
#include "lib.h"
int main(void)
{
    if (fx_add(2, 3) != 5) {
        fprintf(stderr, "test_add: fx_add(2, 3) = %d\n", fx_add(2, 3));
        return 1;
    }
    printf("[  PASSED  ] 1 test(s).\n");
    return 0;
}
