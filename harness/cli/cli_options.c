/* The options of run, verify and replay, parsed once for all three. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool cli_option_is_flag(const char *a) {
    static const char *const FLAGS[] = {"--json", "--no-replay", "--trace", "--require-reach", "--por", "--no-por",
                                        "--continue"};
    size_t i;
    for (i = 0; i < sizeof FLAGS / sizeof FLAGS[0]; i++)
        if (strcmp(a, FLAGS[i]) == 0) return true;
    return false;
}

/* A whole decimal number in lo..hi: no sign, no exponent, no wrap past 2^64
 * (strtoull saturates and says so only in errno). */
static bool parse_num(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
    char *end;
    unsigned long long x;
    if (v && *v >= '0' && *v <= '9') {
        errno = 0;
        x = strtoull(v, &end, 10);
        if (!*end && errno != ERANGE && x >= lo && x <= hi) {
            *out = x;
            return true;
        }
    }
    fprintf(stderr, "tpheal-harness: %s %s: not a whole number in %llu..%llu\n", opt, v ? v : "(missing)",
            (unsigned long long)lo, (unsigned long long)hi);
    return false;
}

bool cli_parse_u64(const char *s, uint64_t *out) {
    char *end;
    unsigned long long v;
    if (!s || !(*s >= '0' && *s <= '9')) return false;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE) return false;
    *out = v;
    return true;
}

/* The schedule a --schedule-file holds (whitespace around it dropped). */
static char *read_schedule_file(const char *path) {
    FILE *f = fopen(path, "rb");
    scn_text t = {0};
    char buf[4096];
    size_t n;
    char *s, *e;
    if (!f) {
        fprintf(stderr, "tpheal-harness: --schedule-file %s: %s\n", path, strerror(errno));
        return NULL;
    }
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) scn_text_printf(&t, "%.*s", (int)n, buf);
    if (ferror(f)) {
        fprintf(stderr, "tpheal-harness: --schedule-file %s: %s\n", path, strerror(errno));
        fclose(f);
        scn_text_free(&t);
        return NULL;
    }
    fclose(f);
    s = scn_text_take(&t);
    if (!s) s = scn_strdup("");
    for (e = s + strlen(s); e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t');) *--e = '\0';
    return s;
}

/* Parses options from argv[i..]; file names go to files. Returns 0 or 2. */
int cli_parse_options(int argc, char **argv, int i, options *o, const char **files, int *nfiles) {
    memset(o, 0, sizeof *o);
    /* the real pool runs free only (scn_pool_is_model) */
    o->native = !scn_pool_is_model();
    o->seeds = 100;
    o->strategies = STRATEGY_BIT(SCHED_STRATEGY_RANDOM);
    o->depth = 3;
    o->preemptions = 2;
    o->max_runs = 100000;
    o->replay_failures = true;
    o->shrink_seconds = (uint64_t)SCN_SHRINK_SECONDS;
    o->shrink_runs = SCN_SHRINK_RUNS_PER_BOUND;
    *nfiles = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (strcmp(a, "--seeds") == 0) {
            if (!parse_num(a, v, 1, UINT64_MAX, &o->seeds)) return 2;
            o->seeds_given = true;
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            if (!parse_num(a, v, 0, UINT64_MAX, &o->first_seed)) return 2;
            o->one_seed = true;
            i++;
        } else if (strcmp(a, "--first-seed") == 0) {
            if (!parse_num(a, v, 0, UINT64_MAX, &o->first_seed)) return 2;
            i++;
        } else if (strcmp(a, "--strategy") == 0) {
            o->strategy_given = true;
            int k = v ? sched_strategy_find(v) : -1;
            if (k >= 0) o->strategies = STRATEGY_BIT(k);
            else if (v && strcmp(v, "both") == 0) o->strategies = STRATEGIES_SEEDED;
            else return cli_usage("--strategy is random, pct, both or dfs");
            i++;
        } else if (strcmp(a, "--preemptions") == 0) {
            uint64_t p;
            if (!cli_parse_u64(v, &p) || p > 64) return cli_usage("--preemptions needs 0..64");
            o->preemptions = (unsigned)p;
            o->preemptions_given = true;
            i++;
        } else if (strcmp(a, "--max-runs") == 0) {
            if (!cli_parse_u64(v, &o->max_runs) || o->max_runs == 0) return cli_usage("--max-runs needs a positive number");
            o->max_runs_given = true;
            i++;
        } else if (strcmp(a, "--max-failures") == 0) {
            if (!cli_parse_u64(v, &o->max_failures) || o->max_failures == 0)
                return cli_usage("--max-failures needs a positive number");
            i++;
        } else if (strcmp(a, "--min-reach") == 0) {
            uint64_t p;
            if (!cli_parse_u64(v, &p) || p > 100) return cli_usage("--min-reach needs a percentage 0..100");
            o->min_reach = (double)p;
            i++;
        } else if (strcmp(a, "--depth") == 0) {
            uint64_t d;
            if (!parse_num(a, v, 1, 16, &d)) return 2;
            o->depth = (unsigned)d;
            o->depth_given = true;
            i++;
        } else if (strcmp(a, "--pct-steps") == 0) {
            if (!parse_num(a, v, 1, UINT64_MAX, &o->pct_steps)) return 2;
            o->pct_steps_given = true;
            i++;
        } else if (strcmp(a, "--mode") == 0) {
            if (v && strcmp(v, "controlled") == 0) o->native = false;
            else if (v && strcmp(v, "native") == 0) o->native = true;
            else return cli_usage("--mode is controlled or native");
            i++;
        } else if (strcmp(a, "--schedule") == 0) {
            if (!v) return cli_usage("--schedule needs a string");
            if (o->schedule) return cli_usage("one --schedule or --schedule-file");
            o->schedule = v;
            i++;
        } else if (strcmp(a, "--schedule-file") == 0) {
            if (!v) return cli_usage("--schedule-file needs a path");
            if (o->schedule) return cli_usage("one --schedule or --schedule-file");
            if (!(o->schedule = o->schedule_owned = read_schedule_file(v))) return 2;
            i++;
        } else if (strcmp(a, "--save-schedules") == 0) {
            if (!v) return cli_usage("--save-schedules needs a directory");
            o->save_schedules = v;
            i++;
        } else if (strcmp(a, "--shrink-seconds") == 0) {
            if (!parse_num(a, v, 0, 3600, &o->shrink_seconds)) return 2;
            i++;
        } else if (strcmp(a, "--shrink-runs") == 0) {
            if (!parse_num(a, v, 1, UINT64_MAX, &o->shrink_runs)) return 2;
            i++;
        } else if (strcmp(a, "--timeline") == 0) {
            if (!v) return cli_usage("--timeline needs a file name (FILE.html)");
            o->timeline = v;
            i++;
        } else if (strcmp(a, "--continue") == 0) {
            o->replay_continue = true;
        } else if (strcmp(a, "--trace") == 0) {
            o->trace = true;
        } else if (strcmp(a, "--por") == 0) {
            o->por = o->por_given = true;
        } else if (strcmp(a, "--no-por") == 0) {
            o->por = false;
            o->por_given = true;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--no-replay") == 0) {
            o->replay_failures = false;
        } else if (strcmp(a, "--require-reach") == 0) {
            o->require_reach = true;
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "tpheal-harness: unknown option %s\n", a);
            return 2;
        } else {
            files[(*nfiles)++] = a;
        }
    }
    if (o->one_seed && o->seeds_given)
        return cli_usage("--seeds and --seed exclude each other (--seed S runs one seed; "
                     "--first-seed S --seeds N runs N seeds from S)");
    if (o->one_seed) o->seeds = 1;
    if (o->seeds - 1 > UINT64_MAX - o->first_seed)
        return cli_usage("--first-seed + --seeds goes past the last seed (2^64 - 1)");
    return 0;
}

void cli_print_parse_error(const char *path, const scn_error *e) {
    fprintf(stderr, "%s:%d:%d: %s\n", path, e->line, e->col, e->msg);
}
