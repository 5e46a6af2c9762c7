/* Leaves a child in its process group, so the sweep's kill-the-whole-tree
 * rule is observable: the child's pid is written to $FX_CHILD_PIDFILE. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "lib.h"
int main(void)
{
    const char *pf = getenv("FX_CHILD_PIDFILE");
    if (pf) {
        pid_t pid = fork();
        if (pid == 0) {
            freopen("/dev/null", "w", stdout);
            freopen("/dev/null", "w", stderr);
            sleep(300);
            _exit(0);
        }
        FILE *f = fopen(pf, "w");
        if (f) {
            fprintf(f, "%d\n", (int)pid);
            fclose(f);
        }
    }
    return fx_count(10) == 10 ? 0 : 1;
}
