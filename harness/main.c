/* tpheal-harness: runs scenario files (docs/scenarios.md) under the
 * controlled scheduler, one seed per simulated process.
 * tpheal-harness-realpool (Windows builds) is the same program linked with
 * the core's win32 backend and the real-pool backend of the runner
 * (scenario/scn_pool.h): free-running runs on the real Windows thread pool;
 * a scenario that needs the model is declined, with the reason.
 *
 *   tpheal-harness run FILE... [--seeds N | --seed S] [--first-seed S]
 *                  [--strategy random|pct|both] [--depth D] [--pct-steps K]
 *                  [--mode controlled|native] [--json] [--no-replay] [--min-reach PCT]
 *   tpheal-harness run FILE... --strategy dfs [--preemptions P] [--max-runs M]
 *   tpheal-harness replay (--seed S [--strategy X] [--depth D] | --schedule STRING) FILE
 *   tpheal-harness list [DIR]
 *   tpheal-harness bench [--seeds N]
 *
 * Exit: 0 everything passed, 1 a failure, 2 bad input (usage or a scenario
 * that does not parse: `file:line:col: message`), 3 nothing ran (every
 * scenario given was declined by this pool backend), 4 no failure but a
 * scenario was NOT-EXERCISED (a `require` no run reached, or reached by
 * fewer than --min-reach percent of a strategy's runs).
 *
 * A scenario that says `build fail-fast` needs the core built with
 * TPHEAL_FAIL_FAST; this binary hands it to its sibling
 * tpheal-harness-failfast (same directory) with the same options. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L /* dirent, sys/wait */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif

#include <tpheal/config.h>

#include "rt_sched.h"
#include "sched_dfs.h"
#include "scn_ast.h"
#include "scn_bench.h"
#include "scn_clock.h"
#include "scn_pool.h"
#include "scn_run.h"
#include "scn_text.h"
#include "stress.h" /* stress-batch, stress-faultloop: harness/stress/ (ci/stress.py) */

#ifndef TPHEAL_BUILD_ID
#define TPHEAL_BUILD_ID "unknown"
#endif
#if TPHEAL_FAIL_FAST
#define BUILD_KIND "fail-fast"
#define SIBLING "tpheal-harness"
#else
#define BUILD_KIND "default"
#define SIBLING "tpheal-harness-failfast"
#endif

#ifndef _WIN32
#include <sys/wait.h>
#endif

typedef struct options {
    uint64_t seeds;
    uint64_t first_seed;
    bool one_seed;
    int strategies; /* bit 0 random, bit 1 pct, bit 2 dfs (alone) */
    unsigned preemptions; /* dfs: the preemption bound */
    uint64_t max_runs;    /* dfs: stop after this many runs */
    double min_reach;     /* NOT-EXERCISED below this % of a strategy's runs (0: below one run) */
    unsigned depth;
    uint64_t pct_steps;
    bool native;
    bool json;
    bool replay_failures;
    const char *schedule;
} options;

static const char *argv0;

static int usage(const char *why) {
    if (why) fprintf(stderr, "tpheal-harness: %s\n", why);
    fprintf(stderr,
            "usage: tpheal-harness run FILE... [--seeds N | --seed S] [--first-seed S]\n"
            "                      [--strategy random|pct|both] [--depth D] [--pct-steps K]\n"
            "                      [--mode controlled|native] [--json] [--no-replay] [--min-reach PCT]\n"
            "       tpheal-harness run FILE... --strategy dfs [--preemptions P] [--max-runs M]\n"
            "       tpheal-harness replay (--seed S [--strategy random|pct] [--depth D] | --schedule STRING) FILE\n"
            "       tpheal-harness list [DIR]\n"
            "       tpheal-harness bench [--seeds N]\n");
    return 2;
}

static bool parse_u64(const char *s, uint64_t *out) {
    char *end;
    unsigned long long v;
    if (!s || !*s || *s == '-') return false;
    v = strtoull(s, &end, 10);
    if (*end) return false;
    *out = v;
    return true;
}

/* Parses options from argv[i..]; file names go to files. Returns 0 or 2. */
static int parse_options(int argc, char **argv, int i, options *o, const char **files, int *nfiles) {
    memset(o, 0, sizeof *o);
    /* the real pool runs free only (scn_pool_is_model) */
    o->native = !scn_pool_is_model();
    o->seeds = 100;
    o->strategies = 1;
    o->depth = 3;
    o->preemptions = 2;
    o->max_runs = 100000;
    o->replay_failures = true;
    *nfiles = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (strcmp(a, "--seeds") == 0) {
            if (!parse_u64(v, &o->seeds) || o->seeds == 0) return usage("--seeds needs a positive number");
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            if (!parse_u64(v, &o->first_seed)) return usage("--seed needs a number");
            o->one_seed = true;
            o->seeds = 1;
            i++;
        } else if (strcmp(a, "--first-seed") == 0) {
            if (!parse_u64(v, &o->first_seed)) return usage("--first-seed needs a number");
            i++;
        } else if (strcmp(a, "--strategy") == 0) {
            if (v && strcmp(v, "random") == 0) o->strategies = 1;
            else if (v && strcmp(v, "pct") == 0) o->strategies = 2;
            else if (v && strcmp(v, "both") == 0) o->strategies = 3;
            else if (v && strcmp(v, "dfs") == 0) o->strategies = 4;
            else return usage("--strategy is random, pct, both or dfs");
            i++;
        } else if (strcmp(a, "--preemptions") == 0) {
            uint64_t p;
            if (!parse_u64(v, &p) || p > 64) return usage("--preemptions needs 0..64");
            o->preemptions = (unsigned)p;
            i++;
        } else if (strcmp(a, "--max-runs") == 0) {
            if (!parse_u64(v, &o->max_runs) || o->max_runs == 0) return usage("--max-runs needs a positive number");
            i++;
        } else if (strcmp(a, "--min-reach") == 0) {
            uint64_t p;
            if (!parse_u64(v, &p) || p > 100) return usage("--min-reach needs a percentage 0..100");
            o->min_reach = (double)p;
            i++;
        } else if (strcmp(a, "--depth") == 0) {
            uint64_t d;
            if (!parse_u64(v, &d) || d == 0 || d > 16) return usage("--depth needs 1..16");
            o->depth = (unsigned)d;
            i++;
        } else if (strcmp(a, "--pct-steps") == 0) {
            if (!parse_u64(v, &o->pct_steps)) return usage("--pct-steps needs a number");
            i++;
        } else if (strcmp(a, "--mode") == 0) {
            if (v && strcmp(v, "controlled") == 0) o->native = false;
            else if (v && strcmp(v, "native") == 0) o->native = true;
            else return usage("--mode is controlled or native");
            i++;
        } else if (strcmp(a, "--schedule") == 0) {
            if (!v) return usage("--schedule needs a string");
            o->schedule = v;
            i++;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--no-replay") == 0) {
            o->replay_failures = false;
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "tpheal-harness: unknown option %s\n", a);
            return 2;
        } else {
            files[(*nfiles)++] = a;
        }
    }
    return 0;
}

static void print_parse_error(const char *path, const scn_error *e) {
    fprintf(stderr, "%s:%d:%d: %s\n", path, e->line, e->col, e->msg);
}

/* ---- the failure report ------------------------------------------------------ */

static void print_indented(const char *title, const char *text) {
    const char *p = text;
    if (!text || !*text) return;
    printf("  %s:\n", title);
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        printf("    %.*s\n", (int)n, p);
        p += n + (e ? 1 : 0);
    }
}

static const char *strategy_name(int s) { return s == 2 ? "dfs" : s ? "pct" : "random"; }

static void print_report(const scn_scenario *s, const scn_run_opts *ro, const scn_run_out *r,
                         const char *replay_verdict) {
    printf("FAILURE %s\n", s->path);
    printf("  purpose: %s\n", s->purpose);
    if (ro->native)
        printf("  mode: native (free-running; a seed does not replay the interleaving)  seed: %llu\n",
               (unsigned long long)ro->seed);
    else if (ro->schedule)
        printf("  replayed from a schedule string\n");
    else if (ro->strategy == 2)
        printf("  dfs run %llu of the search (bounded-exhaustive; replay by the schedule below)",
               (unsigned long long)ro->seed);
    else
        printf("  seed: %llu  strategy: %s", (unsigned long long)ro->seed, strategy_name(ro->strategy));
    if (!ro->native && !ro->schedule && ro->strategy == 1)
        printf(" depth %u steps %llu", ro->depth, (unsigned long long)ro->pct_steps);
    if (!ro->native && !ro->schedule) printf("\n");
    printf("  scenario: %s  content hash: %016llx\n", s->path, (unsigned long long)s->content_hash);
    printf("  build: %s (%s core, %s pool)\n", TPHEAL_BUILD_ID, BUILD_KIND, scn_pool_backend_name());
    if (r->status >= 0)
        printf("  status: %s  steps: %llu  interleaving: %016llx\n", sched_status_name((sched_status)r->status),
               (unsigned long long)r->steps, (unsigned long long)r->interleaving_hash);
    print_indented("failures", r->failures);
    print_indented("blocked threads", r->blocked_report);
    print_indented("misuse reported by the sim", r->misuse);
    print_indented("faults injected", r->faults);
    print_indented("last trace records", r->trace_tail);
    if (r->schedule) printf("  schedule: %s\n", r->schedule);
    if (replay_verdict) printf("  replayed once by its schedule: %s\n", replay_verdict);
    if (r->schedule)
        printf("  replay: tpheal-harness%s replay --schedule '%s' %s\n", TPHEAL_FAIL_FAST ? "-failfast" : "",
               r->schedule, s->path);
    if (ro->native)
        printf("  look for a deterministic reproduction on the model: tpheal-harness run --mode controlled "
               "--strategy both --seeds 100 --first-seed %llu %s\n",
               (unsigned long long)ro->seed, s->path);
    if (!ro->native && !ro->schedule && ro->strategy != 2)
        printf("  replay by seed: tpheal-harness%s replay --seed %llu --strategy %s --depth %u --pct-steps %llu %s\n",
               TPHEAL_FAIL_FAST ? "-failfast" : "", (unsigned long long)ro->seed, strategy_name(ro->strategy),
               ro->depth, (unsigned long long)ro->pct_steps, s->path);
}

/* ---- re-executing the sibling build ------------------------------------------ */

static int run_sibling(int argc, char **argv, const char *file) {
    scn_text cmd = {0};
    const char *slash = strrchr(argv0, '/');
    int i, rc;
    bool skip_next = false;
    if (slash) scn_text_printf(&cmd, "'%.*s/%s'", (int)(slash - argv0), argv0, SIBLING);
    else scn_text_printf(&cmd, "'%s'", SIBLING);
    /* same command, options kept, files replaced by this one */
    scn_text_printf(&cmd, " %s", argv[1]);
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (skip_next) {
            scn_text_printf(&cmd, " '%s'", a);
            skip_next = false;
            continue;
        }
        if (a[0] == '-' && a[1] == '-') {
            scn_text_printf(&cmd, " %s", a);
            skip_next = strcmp(a, "--json") != 0 && strcmp(a, "--no-replay") != 0;
        }
    }
    scn_text_printf(&cmd, " '%s'", file);
    fflush(stdout);
    rc = system(cmd.s);
    scn_text_free(&cmd);
#ifndef _WIN32
    if (rc == -1 || !WIFEXITED(rc)) return 1;
    rc = WEXITSTATUS(rc);
#endif
    if (rc == 127) {
        fprintf(stderr, "tpheal-harness: %s needs the %s build and %s was not found next to this binary\n",
                file, TPHEAL_FAIL_FAST ? "default" : "fail-fast", SIBLING);
        return 2;
    }
    return rc;
}

/* ---- run ----------------------------------------------------------------------- */

#define FULL_REPORTS 3

#define DISTINCT_CAP 4096u /* interleavings remembered per scenario (a power of two) */

typedef struct tally {
    uint64_t runs, failures, steps;
    double seconds;
    /* distinct interleaving hashes seen (open addressing; 0 marks empty, so a
     * hash of 0 is stored as 1): a scenario whose seeds all produce one
     * interleaving is not being raced at all -- the verdict a broken
     * scheduler (one that never preempts) must get */
    uint64_t *seen;
    uint64_t distinct;
    /* reach: runs per strategy (0 random, 1 pct, 2 dfs) and, per
     * requirement, the runs that reached it */
    uint64_t runs_by[3];
    uint64_t reached[3][SCN_MAX_REQUIRES];
} tally;

static void note_interleaving(tally *t, uint64_t h) {
    uint64_t i;
    if (!t->seen) t->seen = calloc(DISTINCT_CAP, sizeof *t->seen);
    if (!t->seen || t->distinct >= DISTINCT_CAP / 2) return;
    if (h == 0) h = 1;
    for (i = h & (DISTINCT_CAP - 1);; i = (i + 1) & (DISTINCT_CAP - 1)) {
        if (t->seen[i] == h) return;
        if (t->seen[i] == 0) {
            t->seen[i] = h;
            t->distinct++;
            return;
        }
    }
}

/* Runs below this many seeds are too few to call a scenario unexercised. */
#define NOT_EXERCISED_MIN_RUNS 20

static bool same_failure(const scn_run_out *a, const scn_run_out *b) {
    if (a->status != b->status) return false;
    if (!a->failures || !b->failures) return a->failures == b->failures;
    return strcmp(a->failures, b->failures) == 0;
}

static void json_string(const char *s);

static int run_one_seed(const scn_scenario *s, const options *o, int strategy, uint64_t seed, tally *t,
                        uint64_t *max_choice, sched_dfs *dfs) {
    scn_run_opts ro;
    scn_run_out r;
    memset(&ro, 0, sizeof ro);
    ro.seed = seed;
    ro.strategy = strategy;
    ro.depth = o->depth;
    ro.pct_steps = o->pct_steps;
    ro.native = o->native;
    ro.schedule = o->schedule;
    ro.dfs = dfs;
    ro.tail_on_failure = true; /* only failure reports print it */
    if (scn_run(s, &ro, &r) != 0) {
        fprintf(stderr, "tpheal-harness: %s\n", r.failures ? r.failures : "run could not start");
        scn_run_out_free(&r);
        return 2;
    }
    if (r.declined) {
        scn_run_out_free(&r);
        return 3;
    }
    t->runs++;
    t->runs_by[strategy]++;
    {
        size_t q;
        for (q = 0; q < s->nrequires; q++)
            if (r.reached >> q & 1) t->reached[strategy][q]++;
    }
    t->steps += r.steps;
    note_interleaving(t, r.interleaving_hash);
    if (r.choice_points > *max_choice) *max_choice = r.choice_points;
    if (!r.passed) {
        const char *verdict = NULL;
        scn_run_out again;
        t->failures++;
        /* Full reports (and the replay check) for the first few failures of
         * a scenario; a line each after that, so a broken build does not
         * bury the summary under hundreds of identical reports. */
        if (t->failures > FULL_REPORTS && !o->json) {
            const char *nl = r.failures ? strchr(r.failures, '\n') : NULL;
            if (strategy == 2)
                printf("FAILURE %s dfs run %llu: %.*s  (replay --schedule '%s')\n", s->path, (unsigned long long)seed,
                       r.failures ? (nl ? (int)(nl - r.failures) : (int)strlen(r.failures)) : 0,
                       r.failures ? r.failures : "", r.schedule ? r.schedule : "");
            else
                printf("FAILURE %s seed %llu %s: %.*s  (replay --seed %llu --strategy %s --pct-steps %llu)\n", s->path,
                       (unsigned long long)seed, strategy_name(strategy),
                       r.failures ? (nl ? (int)(nl - r.failures) : (int)strlen(r.failures)) : 0,
                       r.failures ? r.failures : "", (unsigned long long)seed, strategy_name(strategy),
                       (unsigned long long)o->pct_steps);
            scn_run_out_free(&r);
            return 0;
        }
        if (o->replay_failures && r.schedule && !o->native) {
            scn_run_opts rr = ro;
            rr.schedule = r.schedule;
            rr.dfs = NULL; /* a replay is no step of the search */
            rr.strategy = strategy == 2 ? 0 : strategy;
            if (scn_run(s, &rr, &again) != 0) verdict = "could not replay (schedule rejected)";
            else {
                verdict = same_failure(&r, &again)
                              ? (again.interleaving_hash == r.interleaving_hash
                                     ? "reproduced (same failure, same interleaving)"
                                     : "reproduced the failure with a different interleaving")
                              : (again.passed ? "did NOT reproduce (the replay passed)"
                                              : "did NOT reproduce the same failure");
                scn_run_out_free(&again);
            }
        }
        if (!o->json) {
            print_report(s, &ro, &r, verdict);
        } else {
            printf("{\"failure\":");
            json_string(s->path);
            printf(",\"seed\":%llu,\"strategy\":\"%s\",\"depth\":%u,\"pct_steps\":%llu,\"status\":",
                   (unsigned long long)ro.seed, strategy_name(ro.strategy), ro.depth,
                   (unsigned long long)ro.pct_steps);
            json_string(r.status >= 0 ? sched_status_name((sched_status)r.status) : "native");
            printf(",\"failures\":");
            json_string(r.failures ? r.failures : "");
            printf(",\"schedule\":");
            json_string(r.schedule ? r.schedule : "");
            printf(",\"replayed\":");
            json_string(verdict ? verdict : "");
            printf("}\n");
        }
    }
    scn_run_out_free(&r);
    return 0;
}

/* PCT spreads its d-1 priority change points over k expected choice points;
 * k far from the real count bunches them at one end of the run.  k is an
 * input of the run (so a seed replays only with the same k): it is measured
 * once per scenario by a probe run -- seed 0, random walk -- which is itself
 * deterministic, and printed in every replay command. */
static uint64_t pct_steps_for(const scn_scenario *s) {
    scn_run_opts ro;
    scn_run_out r;
    uint64_t k = 0;
    memset(&ro, 0, sizeof ro);
    ro.tail_on_failure = true;
    if (scn_run(s, &ro, &r) == 0) k = r.choice_points;
    scn_run_out_free(&r);
    return k > 0 ? k : 1;
}

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

/* Per requirement, the share of each strategy's runs that reached it; true
 * when one was reached by no run, or by fewer than --min-reach percent of
 * some strategy's runs: the scenario did not get where it exists to go. */
static bool report_reach(const scn_scenario *s, const tally *t, const options *o) {
    static const char *const names[3] = {"random", "pct", "dfs"};
    bool short_of = false;
    size_t q;
    int st;
    for (q = 0; q < s->nrequires; q++) {
        const scn_require *r = &s->requires[q];
        uint64_t total = 0;
        bool below = false;
        for (st = 0; st < 3; st++) {
            total += t->reached[st][q];
            /* every strategy that ran must reach it: a state only PCT's
             * change points find is luck the random walk never has */
            if (t->runs_by[st] && (t->reached[st][q] == 0 ||
                                   100.0 * (double)t->reached[st][q] < o->min_reach * (double)t->runs_by[st]))
                below = true;
        }
        if (total == 0 || below) short_of = true;
        if (o->json) {
            printf("{\"reach\":");
            json_string(s->path);
            printf(",\"line\":%d,\"require\":", r->line);
            json_string(r->text);
            for (st = 0; st < 3; st++)
                if (t->runs_by[st])
                    printf(",\"%s\":[%llu,%llu]", names[st], (unsigned long long)t->reached[st][q],
                           (unsigned long long)t->runs_by[st]);
            printf("}\n");
            continue;
        }
        printf("  reach line %d `require %s`:", r->line, r->text);
        for (st = 0; st < 3; st++)
            if (t->runs_by[st])
                printf("  %s reached %llu/%llu (%.1f%%)", names[st], (unsigned long long)t->reached[st][q],
                       (unsigned long long)t->runs_by[st], 100.0 * (double)t->reached[st][q] / (double)t->runs_by[st]);
        printf("%s\n", total == 0 ? "  NOT REACHED" : below ? "  SHORT (a strategy below --min-reach or at 0)" : "");
    }
    return short_of;
}

static int cmd_run(int argc, char **argv) {
    const char **files = calloc((size_t)argc, sizeof *files);
    scn_scenario **scns;
    options o;
    int nfiles, i, rc = 0, bad = 0, declined = 0;
    if (!files) return 2;
    if (parse_options(argc, argv, 2, &o, files, &nfiles) != 0) { free(files); return 2; }
    if (nfiles == 0) { free(files); return usage("run needs at least one FILE"); }
    scns = calloc((size_t)nfiles, sizeof *scns);
    if (!scns) { free(files); return 2; }
    /* every file parses before anything runs: bad input is exit 2 */
    for (i = 0; i < nfiles; i++) {
        scn_error e;
        scns[i] = scn_parse_file(files[i], &e);
        if (!scns[i]) { print_parse_error(files[i], &e); bad = 1; }
    }
    if (bad) rc = 2;
    for (i = 0; i < nfiles && !bad; i++) {
        scn_scenario *s = scns[i];
        tally t;
        uint64_t k, max_choice = 0;
        int st;
        double t0;
        char why[256];
        bool stopped = false;
        memset(&t, 0, sizeof t);
        if (scn_pool_unsupported(s, why, sizeof why)) {
            declined++;
            if (o.json) {
                printf("{\"scenario\":");
                json_string(s->path);
                printf(",\"pool\":\"%s\",\"declined\":", scn_pool_backend_name());
                json_string(why);
                printf("}\n");
            } else {
                printf("DECLINED %s  (%s pool: %s)\n", s->path, scn_pool_backend_name(), why);
            }
            continue;
        }
        if (s->fail_fast_build != (TPHEAL_FAIL_FAST != 0) && s->fail_fast_build) {
            int r = run_sibling(argc, argv, s->path);
            if (r > rc) rc = r;
            continue;
        }
        t0 = scn_wall_seconds();
        if (o.strategies == 4 && !o.native) {
            /* bounded-exhaustive: one search, each run its next leaf */
            sched_dfs *d = sched_dfs_new(o.preemptions);
            if (!d) { rc = 2; break; }
            for (k = 0;; k++) {
                int r = run_one_seed(s, &o, 2, k + 1, &t, &max_choice, d);
                if (r == 2) { rc = 2; break; }
                if (r == 3) { stopped = true; break; }
                if (!sched_dfs_advance(d) || sched_dfs_runs(d) >= o.max_runs) break;
            }
            if (sched_dfs_error(d)) {
                printf("DFS-ERROR %s: %s\n", s->path, sched_dfs_error(d));
                if (rc < 1) rc = 1;
            }
            if (!o.json)
                printf("DFS %s  explored %llu distinct interleavings with <= %u preemptions (%s), %llu failures; "
                       "deepest run %llu choices, most preemptions used %u\n",
                       s->path, (unsigned long long)sched_dfs_runs(d), o.preemptions,
                       sched_dfs_complete(d) ? "complete" : "stopped at limit", (unsigned long long)t.failures,
                       (unsigned long long)sched_dfs_max_depth(d), sched_dfs_max_used(d));
            else
                printf("{\"dfs\":\"%s\",\"interleavings\":%llu,\"preemptions\":%u,\"complete\":%s,\"failures\":%llu}\n",
                       s->path, (unsigned long long)sched_dfs_runs(d), o.preemptions,
                       sched_dfs_complete(d) ? "true" : "false", (unsigned long long)t.failures);
            if (!sched_dfs_complete(d) && !sched_dfs_error(d) && !o.json)
                printf("  (stopped at --max-runs %llu)\n", (unsigned long long)o.max_runs);
            sched_dfs_free(d);
        }
        for (st = 0; st < 2 && o.strategies != 4; st++) {
            options so = o;
            if (!(o.strategies & (1 << st))) continue;
            if (st == 1 && so.pct_steps == 0 && !so.native) so.pct_steps = pct_steps_for(s);
            for (k = 0; k < o.seeds && !stopped; k++) {
                int r = run_one_seed(s, &so, st, o.first_seed + k, &t, &max_choice, NULL);
                if (r == 2) { rc = 2; break; }
                if (r == 3) {
                    /* Declined after its first run: the real pool's process
                     * outlives a run, and the scenario needs a fresh one. */
                    stopped = true;
                    if (!o.json && scn_pool_unsupported(s, why, sizeof why))
                        printf("STOPPED %s after %llu run(s), at seed %llu: %s\n", s->path,
                               (unsigned long long)t.runs, (unsigned long long)(o.first_seed + k), why);
                }
            }
        }
        t.seconds = scn_wall_seconds() - t0;
        bool unexercised = !o.native && !o.schedule && o.strategies != 4 && t.runs >= NOT_EXERCISED_MIN_RUNS &&
                           t.distinct == 1;
        bool unreached = report_reach(s, &t, &o) && !o.native && !o.schedule && t.runs > 0;
        if (unexercised)
            printf("NOT-EXERCISED %s: all %llu runs produced one interleaving: the scheduler is not racing "
                   "this scenario's threads\n",
                   s->path, (unsigned long long)t.runs);
        if (unreached && !o.json)
            printf("NOT-EXERCISED %s: a requirement above was reached by no run of a strategy%s\n", s->path,
                   o.min_reach > 0 ? ", or by fewer than --min-reach percent of its runs" : "");
        /* a failure outranks NOT-EXERCISED (4), bad input (2) outranks both */
        if ((t.failures || unexercised) && (rc < 1 || rc == 4)) rc = 1;
        if (unreached && rc == 0) rc = 4;
        if (o.json) {
            printf("{\"scenario\":");
            json_string(s->path);
            printf(",\"purpose\":");
            json_string(s->purpose);
            printf(",\"build\":\"%s\",\"pool\":\"%s\",\"runs\":%llu,\"failures\":%llu,\"steps\":%llu,\"max_choice_points\":%llu,"
                   "\"seconds\":%.3f,\"schedules_per_sec\":%.1f,\"distinct_interleavings\":%llu,"
                   "\"exercised\":%s,\"reached\":%s}\n",
                   BUILD_KIND, scn_pool_backend_name(), (unsigned long long)t.runs, (unsigned long long)t.failures,
                   (unsigned long long)t.steps, (unsigned long long)max_choice, t.seconds,
                   t.seconds > 0 ? (double)t.runs / t.seconds : 0.0, (unsigned long long)t.distinct,
                   unexercised ? "false" : "true", unreached ? "false" : "true");
        } else if (o.native) {
            /* OS threads: no scheduling points counted, no interleaving hashed */
            printf("%s %s  runs=%llu failures=%llu runs/s=%.2f (free-running, %s pool)\n",
                   t.failures ? "FAIL" : "PASS", s->path, (unsigned long long)t.runs,
                   (unsigned long long)t.failures, t.seconds > 0 ? (double)t.runs / t.seconds : 0.0,
                   scn_pool_backend_name());
        } else {
            printf("%s %s  runs=%llu failures=%llu schedules/s=%.1f steps/run=%.0f interleavings=%llu\n",
                   t.failures || unexercised ? "FAIL" : unreached ? "NOT-EXERCISED" : "PASS", s->path, (unsigned long long)t.runs,
                   (unsigned long long)t.failures, t.seconds > 0 ? (double)t.runs / t.seconds : 0.0,
                   t.runs ? (double)t.steps / (double)t.runs : 0.0, (unsigned long long)t.distinct);
        }
        free(t.seen);
        fflush(stdout);
    }
    if (!bad && declined == nfiles) rc = 3;
    for (i = 0; i < nfiles; i++) scn_free(scns[i]);
    free(scns);
    free(files);
    return rc;
}

/* ---- replay ---------------------------------------------------------------------- */

static int cmd_replay(int argc, char **argv) {
    const char *files[4];
    options o;
    int nfiles = 0, i;
    scn_scenario *s;
    scn_error e;
    scn_run_opts ro;
    scn_run_out r;
    const char **all = calloc((size_t)argc, sizeof *all);
    if (!all) return 2;
    if (parse_options(argc, argv, 2, &o, all, &nfiles) != 0) { free(all); return 2; }
    if (nfiles != 1) { free(all); return usage("replay takes exactly one FILE"); }
    for (i = 0; i < nfiles && i < 4; i++) files[i] = all[i];
    free(all);
    if (!o.one_seed && !o.schedule) return usage("replay needs --seed S or --schedule STRING");
    if (!scn_pool_is_model())
        return usage("replay re-runs a controlled schedule, which only the model has: use tpheal-harness replay");
    s = scn_parse_file(files[0], &e);
    if (!s) { print_parse_error(files[0], &e); return 2; }
    if (s->fail_fast_build && !TPHEAL_FAIL_FAST) {
        int rc = run_sibling(argc, argv, files[0]);
        scn_free(s);
        return rc;
    }
    memset(&ro, 0, sizeof ro);
    ro.seed = o.first_seed;
    ro.strategy = o.strategies == 2 ? 1 : 0;
    ro.depth = o.depth;
    ro.pct_steps = o.pct_steps;
    /* the same k `run` used, measured the same way */
    if (ro.strategy == 1 && ro.pct_steps == 0 && !o.schedule) ro.pct_steps = pct_steps_for(s);
    ro.schedule = o.schedule;
    if (scn_run(s, &ro, &r) != 0) {
        fprintf(stderr, "%s\n", r.failures ? r.failures : "bad schedule");
        scn_run_out_free(&r);
        scn_free(s);
        return 2;
    }
    if (r.passed) {
        printf("PASS %s  status: %s  steps: %llu  interleaving: %016llx\n", s->path,
               sched_status_name((sched_status)r.status), (unsigned long long)r.steps,
               (unsigned long long)r.interleaving_hash);
        print_indented("last trace records", r.trace_tail);
        if (r.schedule) printf("  schedule: %s\n", r.schedule);
    } else {
        print_report(s, &ro, &r, NULL);
    }
    i = r.passed ? 0 : 1;
    scn_run_out_free(&r);
    scn_free(s);
    return i;
}

/* ---- list -------------------------------------------------------------------------- */

#ifndef _WIN32
#include <dirent.h>
#endif

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool add_name(char ***names, size_t *n, size_t *cap, const char *name) {
    size_t l = strlen(name);
    if (l < 5 || strcmp(name + l - 4, ".scn") != 0) return true;
    if (*n == *cap) {
        char **nn = realloc(*names, (*cap = *cap ? *cap * 2 : 32) * sizeof **names);
        if (!nn) return false;
        *names = nn;
    }
    (*names)[(*n)++] = scn_strdup(name);
    return true;
}

/* The *.scn names in dir, sorted (the same order on every platform); false
 * when the directory cannot be read. */
static bool scenario_names(const char *dir, char ***names, size_t *n) {
    size_t cap = 0;
    *names = NULL;
    *n = 0;
#ifndef _WIN32
    DIR *d = opendir(dir);
    struct dirent *de;
    if (!d) return false;
    while ((de = readdir(d)) != NULL)
        if (!add_name(names, n, &cap, de->d_name)) break;
    closedir(d);
#else
    WIN32_FIND_DATAA fd;
    scn_text pattern = {0};
    HANDLE h;
    scn_text_printf(&pattern, "%s\\*.scn", dir);
    h = FindFirstFileA(pattern.s, &fd);
    scn_text_free(&pattern);
    if (h == INVALID_HANDLE_VALUE) return GetLastError() == ERROR_FILE_NOT_FOUND;
    do {
        if (!add_name(names, n, &cap, fd.cFileName)) break;
    } while (FindNextFileA(h, &fd));
    FindClose(h);
#endif
    if (*n) qsort(*names, *n, sizeof **names, cmp_str);
    return true;
}

static void list_scenarios(const char *dir) {
    char **names;
    size_t n, i;
    if (!scenario_names(dir, &names, &n)) {
        printf("scenarios: (no directory %s)\n", dir);
        return;
    }
    printf("scenarios in %s (%s pool):\n", dir, scn_pool_backend_name());
    for (i = 0; i < n; i++) {
        scn_text path = {0};
        scn_error e;
        scn_scenario *s;
        char why[256];
        scn_text_printf(&path, "%s/%s", dir, names[i]);
        s = scn_parse_file(path.s, &e);
        if (s && scn_pool_unsupported(s, why, sizeof why))
            printf("  %-44s %s  [declined here: %s]\n", names[i], s->purpose, why);
        else if (s)
            printf("  %-44s %s%s\n", names[i], s->purpose, s->fail_fast_build ? "  [fail-fast build]" : "");
        else
            printf("  %-44s (does not parse: %d:%d: %s)\n", names[i], e.line, e.col, e.msg);
        scn_free(s);
        scn_text_free(&path);
        free(names[i]);
    }
    free(names);
}

static int cmd_list(int argc, char **argv) {
    size_t i;
    int k;
    list_scenarios(argc > 2 ? argv[2] : "scenarios");
    printf("trace points (target/name; * = carries a pool):\n");
    for (i = 0; i < scn_trace_point_count(); i++)
        printf("  %s/%s%s\n", scn_trace_point_target((int)i), scn_trace_point_name((int)i),
               scn_trace_point_has_pool((int)i) ? " *" : "");
    printf("operations (operand kinds):\n");
    for (k = 0; k < SCN_OP_KIND_COUNT; k++) {
        unsigned m = scn_op_operand_kinds((scn_op_kind)k);
        int j;
        printf("  %-20s", scn_op_name((scn_op_kind)k));
        for (j = 0; j < SCN_OBJ_KIND_COUNT; j++)
            if (m & (1u << j)) printf(" %s", scn_obj_kind_name((scn_obj_kind)j));
        printf("\n");
    }
    printf("object kinds:");
    for (k = 0; k < SCN_OBJ_KIND_COUNT; k++) printf(" %s", scn_obj_kind_name((scn_obj_kind)k));
    printf("\nentry fields:");
    for (k = 0; k < SCN_FIELD_COUNT; k++) printf(" %s", scn_field_name((scn_field)k));
    printf("\nfaults:");
    for (k = 0; k < SCN_FAULT_KIND_COUNT; k++) printf(" %s", scn_fault_name((scn_fault_kind)k));
    printf("\n");
    return 0;
}

/* ---- bench ------------------------------------------------------------------------- */

static int cmd_bench(int argc, char **argv) {
    uint64_t n = SCN_BENCH_DEFAULT_SEEDS;
    if (!scn_pool_is_model()) return usage("bench measures the controlled scheduler on the model: use tpheal-harness bench");
    if (argc > 2 && (argc != 4 || strcmp(argv[2], "--seeds") != 0 || !parse_u64(argv[3], &n) || n == 0))
        return usage("bench takes only --seeds N (N > 0)");
    return scn_bench_main(n);
}

int main(int argc, char **argv) {
    argv0 = argv[0];
    if (argc < 2) return usage(NULL);
    if (strcmp(argv[1], "run") == 0) return cmd_run(argc, argv);
    if (strcmp(argv[1], "replay") == 0) return cmd_replay(argc, argv);
    if (strcmp(argv[1], "list") == 0) return cmd_list(argc, argv);
    if (strcmp(argv[1], "bench") == 0) return cmd_bench(argc, argv);
    if (strcmp(argv[1], "stress-batch") == 0) return tph_stress_batch_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "stress-faultloop") == 0) return tph_stress_faultloop_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "--version") == 0) {
        printf("tpheal-harness %s (%s core, %s pool)\n", TPHEAL_BUILD_ID, BUILD_KIND, scn_pool_backend_name());
        return 0;
    }
    return usage("unknown command");
}
