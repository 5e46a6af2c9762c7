/* tpheal-harness bench: the scheduler's rates, and the race build's against
 * the plain one. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L /* popen */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- bench ------------------------------------------------------------------------- */

/* The race build beside the plain one (BUILD/tsan/harness/scenario/...), or
 * the plain one beside the race build: the bench compares their rates in
 * one run (docs/races.md).  TPHEAL_BENCH_OTHER names it explicitly. */
static bool other_build_exe(const cli_exe *x, char *out, size_t n) {
    const char *argv0 = x->argv0;
    static const char tail[] = "harness/scenario/tpheal-harness";
    const char *env = getenv("TPHEAL_BENCH_OTHER");
    const char *at = strstr(argv0, tail);
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return true;
    }
    if (!at) return false;
#if defined(TPHEAL_TSAN)
    if (at - argv0 < 5 || strncmp(at - 5, "tsan/", 5) != 0) return false;
    snprintf(out, n, "%.*s%s", (int)(at - 5 - argv0), argv0, at);
#else
    snprintf(out, n, "%.*stsan/%s", (int)(at - argv0), argv0, at);
#endif
    return true;
}

/* The other build's bench --rate, or a negative number. */
static double other_build_rate(const char *exe, uint64_t seeds) {
#if defined(_WIN32)
    (void)exe, (void)seeds;
    return -1.0;
#else
    char cmd[1024 + 64];
    double rate = -1.0;
    FILE *p;
    FILE *f = fopen(exe, "rb");
    if (!f) return -1.0;
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' bench --seeds %llu --rate 2>/dev/null", exe, (unsigned long long)seeds);
    p = popen(cmd, "r");
    if (!p) return -1.0;
    if (fscanf(p, "%lf", &rate) != 1) rate = -1.0;
    pclose(p);
    return rate;
#endif
}

int cmd_bench(const cli_exe *x, int argc, char **argv) {
    uint64_t n = SCN_BENCH_DEFAULT_SEEDS;
    bool rate_only = argc > 2 && strcmp(argv[argc - 1], "--rate") == 0;
    char other[1024];
    int rc;
    if (rate_only) argc--;
    if (!scn_pool_is_model()) return cli_usage("bench measures the controlled scheduler on the model: use tpheal-harness bench");
    if (argc > 2 && (argc != 4 || strcmp(argv[2], "--seeds") != 0 || !cli_parse_u64(argv[3], &n) || n == 0))
        return cli_usage("bench takes only --seeds N (N > 0)");
    if (rate_only) {
        double r = scn_bench_rate(n);
        if (r < 0) return 1;
        printf("%.1f\n", r);
        return 0;
    }
    rc = scn_bench_main(n);
    if (other_build_exe(x, other, sizeof other)) {
        /* Run after this build's figures, on the same machine moments apart:
         * the ratio, not either rate, is the figure (a loaded machine moves
         * both). */
        double mine = scn_bench_rate(n), theirs = other_build_rate(other, n);
#if defined(TPHEAL_TSAN)
        double race = mine, plain = theirs;
#else
        double race = theirs, plain = mine;
#endif
        if (mine >= 0 && theirs > 0 && plain > 0)
            printf("race build: %.0f schedules/s against %.0f in the plain build = %.1f%%  target >= 10%%  (%s)\n",
                   race, plain, 100.0 * race / plain, other);
        else
            printf("race build: not compared (%s did not run: make build-tsan and make build)\n", other);
    }
    return rc;
}
