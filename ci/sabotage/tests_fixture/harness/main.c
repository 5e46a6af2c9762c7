/* tpheal-harness stand-in: run [--seeds N] [--strategy S] [--no-replay] FILE.scn.
 * Each "check" line of the scenario calls fx_check(seed) for seeds 0..N-1;
 * the report has the real harness's text shape: a FAILURE block per failing
 * seed, then a PASS/FAIL summary line.
 * Two more commands give the fixture's pytest layer (ci/test_cli.py)
 * something of its own to check: `version` and `add A B`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib.h"
#define FX_VERSION "1.2.0"
int main(int argc, char **argv)
{
    int seeds = 10, i, checks = 0, failures = 0;
    const char *file = NULL;
    char line[256];
    FILE *f;
    if (argc == 2 && !strcmp(argv[1], "version")) {
        printf("fixture-harness %s\n", FX_VERSION);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "add")) {
        printf("%d\n", fx_add(atoi(argv[2]), atoi(argv[3])));
        return 0;
    }
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
