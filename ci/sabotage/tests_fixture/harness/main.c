/* tpheal-harness stand-in: run [--seeds N] [--strategy S] [--no-replay] FILE.scn.
 * Each "check" line of the scenario calls fx_check(seed) for seeds 0..N-1;
 * the report has the real harness's text shape: a FAILURE block per failing
 * seed, then a PASS/FAIL summary line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib.h"
int main(int argc, char **argv)
{
    int seeds = 10, i, checks = 0, failures = 0;
    const char *file = NULL;
    char line[256];
    FILE *f;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--strategy") && i + 1 < argc) ++i;
        else if (argv[i][0] != '-' && strcmp(argv[i], "run")) file = argv[i];
    }
    if (!file || !(f = fopen(file, "r"))) {
        fprintf(stderr, "usage: tpheal-harness run [--seeds N] FILE.scn\n");
        return 2;
    }
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "check", 5)) checks++;
    fclose(f);
    for (i = 0; i < seeds; i++) {
        if (checks && !fx_check((unsigned)i)) {
            failures++;
            printf("FAILURE %s\n  purpose: fixture\n  seed: %d  strategy: pct depth 3 steps 0\n"
                   "  status: ok  steps: 12  interleaving: 0000000000000000\n"
                   "  failures:\n    oracle: fx_check(%d) is false\n", file, i, i);
        }
    }
    printf("%s %s  runs=%d failures=%d schedules/s=1.0 steps/run=12\n", failures ? "FAIL" : "PASS",
           file, seeds, failures);
    return failures ? 1 : 0;
}
