/* tpheal-harness stand-in: run --json --seeds N --strategy S FILE.scn.
 * Each line "check" of the scenario calls fx_check(seed) for every seed;
 * the first failing seed index is reported like the real harness does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib.h"
int main(int argc, char **argv)
{
    int seeds = 10, i, checks = 0;
    const char *file = NULL;
    char line[256];
    FILE *f;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--strategy") && i + 1 < argc) ++i;
        else if (argv[i][0] != '-' && strcmp(argv[i], "run")) file = argv[i];
    }
    if (!file || !(f = fopen(file, "r"))) {
        fprintf(stderr, "usage: tpheal-harness run --json --seeds N FILE.scn\n");
        return 2;
    }
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "check", 5)) checks++;
    fclose(f);
    for (i = 0; i < seeds; i++) {
        unsigned seed = 1000u + (unsigned)i * 7919u;
        if (checks && !fx_check(seed)) {
            printf("{\"ok\": false, \"schedules\": %d, \"first_failure\": {\"index\": %d, "
                   "\"seed\": \"%u\", \"kind\": \"oracle\"}}\n", i + 1, i, seed);
            return 1;
        }
    }
    printf("{\"ok\": true, \"schedules\": %d, \"exercised\": %s}\n", seeds, checks ? "true" : "false");
    return 0;
}
