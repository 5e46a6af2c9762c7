/* tpheal-harness: runs scenario files (docs/scenarios.md) under the
 * controlled scheduler, one seed per simulated process.
 * tpheal-harness-realpool (Windows builds) is the same program linked with
 * the core's win32 backend and the real-pool backend of the runner
 * (scenario/scn_pool.h): free-running runs on the real Windows thread pool;
 * a scenario that needs the model is declined, with the reason.
 *
 *   tpheal-harness run FILE... [options]        (tpheal-harness help run)
 *   tpheal-harness replay SEED-OR-SCHEDULE FILE  (tpheal-harness help replay)
 *   tpheal-harness list [DIR]
 *   tpheal-harness bench [--seeds N]
 *   tpheal-harness help [COMMAND]   and   tpheal-harness COMMAND --help
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
#include <errno.h>
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
#include "scn_json.h"
#include "scn_pool.h"
#include "scn_report.h"
#include "scn_run.h"
#include "scn_text.h"
#include "stress.h" /* stress-batch, stress-faultloop: harness/stress/ (ci/stress.py) */
#include "scn_suggest.h"

/* --strategy as a set: a bit per sched_strategy_kind; `both` is the two
 * seeded ones, dfs runs alone. */
#define STRATEGY_BIT(k) (1u << (unsigned)(k))
#define STRATEGIES_SEEDED (STRATEGY_BIT(SCHED_STRATEGY_RANDOM) | STRATEGY_BIT(SCHED_STRATEGY_PCT))
#define STRATEGIES_DFS STRATEGY_BIT(SCHED_STRATEGY_DFS)


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
    unsigned strategies; /* a bit per sched_strategy_kind (STRATEGY_BIT); dfs alone */
    unsigned preemptions; /* dfs: the preemption bound */
    bool por;             /* dfs: partial-order reduction */
    bool verify;          /* the verify command: dfs + por, one line a scenario and a total */
    bool preemptions_given, max_runs_given, por_given;
    uint64_t max_runs;    /* dfs: stop after this many runs */
    uint64_t max_failures; /* stop a scenario's runs at its Nth failure (0: never) */
    double min_reach;     /* NOT-EXERCISED below this % of a strategy's runs (0: below one run) */
    unsigned depth;
    uint64_t pct_steps;
    bool native;
    bool json;
    bool replay_failures;
    const char *schedule;
    /* what was given (replay needs a seed's whole recipe; --seeds and --seed
     * exclude each other) */
    bool seeds_given, strategy_given, depth_given, pct_steps_given;
    bool require_reach;         /* run: a scenario with no `require` is NOT-EXERCISED */
    bool trace;                 /* replay: print every trace record */
    const char *save_schedules; /* run: write each reported schedule to a file here */
    char *schedule_owned;       /* --schedule-file's contents */
} options;

static const char *argv0;
/* The controlled-mode harness for a free-running failure's reproduction: this
 * one, except in the real-pool build (which has no controlled mode). */
static char model_exe[1024];

typedef struct command_help {
    const char *name, *synopsis, *text;
} command_help;

static const command_help HELP[] = {
    {"run", "run FILE... [--seeds N | --seed S] [--first-seed S] [--strategy random|pct|both]\n"
            "          [--depth D] [--pct-steps K] [--mode controlled|native] [--json] [--no-replay]\n"
            "          [--save-schedules DIR] [--min-reach PCT] [--require-reach] [--max-failures N]\n"
            "       tpheal-harness run FILE... --strategy dfs [--preemptions P] [--max-runs M] [--por]",
     "Runs each scenario for N seeds (default 100) from --first-seed (default 0), or the one\n"
     "seed S, with each strategy asked for (default random; pct: depth D, default 3, and K\n"
     "expected choice points, default measured by a seed-0 probe run).  Every failure prints a\n"
     "report and the commands that replay it; --save-schedules writes each reported schedule\n"
     "to DIR and the replay command names the file.  --mode native runs on OS threads\n"
     "(free-running, real time: a seed does not replay its interleaving).  Progress goes to\n"
     "stderr every 5 s of a long run (TPHEAL_PROGRESS_SECONDS).  Each `require` line reports\n"
     "the share of each strategy's runs that reached it; one reached by no run (or by less\n"
     "than --min-reach PCT) makes the scenario NOT-EXERCISED; a scenario with no `require`\n"
     "gets a warning (its passes say nothing of what it reached), and with --require-reach\n"
     "is NOT-EXERCISED.  --max-failures N stops a scenario's runs at its Nth failure\n"
     "(schedules to first catch: N = 1).  --strategy dfs explores every interleaving with\n"
     "at most P preemptions (default 2), up to M runs (default 100000); --por adds the\n"
     "partial-order reduction (see verify).  An option only one strategy reads (--depth,\n"
     "--pct-steps: pct; --preemptions, --max-runs, --por: dfs) is refused without it.\n"
     "Exit 0 all passed, 1 a failure, 2 bad input, 3 all declined, 4 not exercised."},
    {"verify", "verify FILE... [--preemptions P] [--max-runs M] [--no-por] [--json]",
     "A bounded proof: every interleaving of each scenario with at most P preemptions (default\n"
     "1), up to M runs a scenario (default 20000), with the partial-order reduction (one run\n"
     "per class of equivalent schedules; --no-por for the plain bounded search).  One line a\n"
     "scenario: PROVEN (complete, no failure), INCOMPLETE (stopped at M) or FAILED, with traces,\n"
     "runs, options pruned and wall time; then a total.  Exit 0 all proven, 1 a failure, 4 some\n"
     "incomplete, 2 bad input."},
    {"replay", "replay (--seed S --strategy random | --seed S --strategy pct --depth D --pct-steps K\n"
               "          | --schedule STRING | --schedule-file PATH) [--trace] FILE",
     "Re-runs one controlled run of FILE: by its seed with everything the run used (a seed\n"
     "alone is refused: replayed with another strategy it is another run), or by the exact\n"
     "schedule a failure report printed (the string, or the file --save-schedules wrote).\n"
     "--trace prints every trace record of the run.  Exit 0 passed, 1 failed, 2 bad input."},
    {"list", "list [DIR]",
     "The scenarios in DIR (default scenarios), the trace points (a scenario names one as\n"
     "NAME or TARGET/NAME), operations, object kinds, entry fields and faults."},
    {"bench", "bench [--seeds N]",
     "Schedules per CPU second of the reference race against the raw fiber switch rate."},
    {"help", "help [COMMAND]", "This text, or one command's."},
};
#define NHELP (sizeof HELP / sizeof HELP[0])

static void print_synopses(FILE *f) {
    size_t i;
    for (i = 0; i < NHELP; i++) fprintf(f, "%s tpheal-harness %s\n", i ? "      " : "usage:", HELP[i].synopsis);
    fprintf(f, "       tpheal-harness COMMAND --help\n");
}

static int usage(const char *why) {
    if (why) fprintf(stderr, "tpheal-harness: %s\n", why);
    print_synopses(stderr);
    return 2;
}

static const char *const COMMANDS[] = {"run", "verify", "replay", "list", "bench", "help", "stress-batch",
                                       "stress-faultloop", "--version"};

/* Names what was typed and the nearest command, if it looks like a slip. */
static int unknown_command(const char *cmd) {
    char why[160];
    const char *nearest = scn_suggest(cmd, COMMANDS, sizeof COMMANDS / sizeof COMMANDS[0]);
    if (nearest) snprintf(why, sizeof why, "unknown command '%s' (did you mean '%s'?)", cmd, nearest);
    else snprintf(why, sizeof why, "unknown command '%s'", cmd);
    return usage(why);
}

/* `help [CMD]` / `CMD --help`: to stdout, exit 0; an unknown CMD is usage. */
static int cmd_help(const char *cmd) {
    size_t i;
    if (!cmd) {
        print_synopses(stdout);
        printf("\nExit: 0 passed, 1 a failure, 2 bad input or usage, 3 nothing ran (all declined), 4 not exercised.\n");
        return 0;
    }
    for (i = 0; i < NHELP; i++)
        if (strcmp(cmd, HELP[i].name) == 0) {
            printf("usage: tpheal-harness %s\n\n%s\n", HELP[i].synopsis, HELP[i].text);
            return 0;
        }
    {
        char why[160];
        const char *nearest = scn_suggest(cmd, COMMANDS, sizeof COMMANDS / sizeof COMMANDS[0]);
        snprintf(why, sizeof why, "help: unknown command '%s'%s%s%s", cmd, nearest ? " (did you mean '" : "",
                 nearest ? nearest : "", nearest ? "'?)" : "");
        return usage(why);
    }
}

static bool wants_help(int argc, char **argv) {
    int i;
    for (i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
    return false;
}

/* The options that take no value: the sibling re-execution (run_sibling)
 * copies every other option with the word after it.  One list, so a new flag
 * cannot be copied with the file name as its "value" (--trace was). */
static bool option_is_flag(const char *a) {
    static const char *const FLAGS[] = {"--json", "--no-replay", "--trace", "--require-reach", "--por", "--no-por"};
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

static bool parse_u64(const char *s, uint64_t *out) {
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
static int parse_options(int argc, char **argv, int i, options *o, const char **files, int *nfiles) {
    memset(o, 0, sizeof *o);
    /* the real pool runs free only (scn_pool_is_model) */
    o->native = !scn_pool_is_model();
    o->seeds = 100;
    o->strategies = STRATEGY_BIT(SCHED_STRATEGY_RANDOM);
    o->depth = 3;
    o->preemptions = 2;
    o->max_runs = 100000;
    o->replay_failures = true;
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
            else return usage("--strategy is random, pct, both or dfs");
            i++;
        } else if (strcmp(a, "--preemptions") == 0) {
            uint64_t p;
            if (!parse_u64(v, &p) || p > 64) return usage("--preemptions needs 0..64");
            o->preemptions = (unsigned)p;
            o->preemptions_given = true;
            i++;
        } else if (strcmp(a, "--max-runs") == 0) {
            if (!parse_u64(v, &o->max_runs) || o->max_runs == 0) return usage("--max-runs needs a positive number");
            o->max_runs_given = true;
            i++;
        } else if (strcmp(a, "--max-failures") == 0) {
            if (!parse_u64(v, &o->max_failures) || o->max_failures == 0)
                return usage("--max-failures needs a positive number");
            i++;
        } else if (strcmp(a, "--min-reach") == 0) {
            uint64_t p;
            if (!parse_u64(v, &p) || p > 100) return usage("--min-reach needs a percentage 0..100");
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
            else return usage("--mode is controlled or native");
            i++;
        } else if (strcmp(a, "--schedule") == 0) {
            if (!v) return usage("--schedule needs a string");
            if (o->schedule) return usage("one --schedule or --schedule-file");
            o->schedule = v;
            i++;
        } else if (strcmp(a, "--schedule-file") == 0) {
            if (!v) return usage("--schedule-file needs a path");
            if (o->schedule) return usage("one --schedule or --schedule-file");
            if (!(o->schedule = o->schedule_owned = read_schedule_file(v))) return 2;
            i++;
        } else if (strcmp(a, "--save-schedules") == 0) {
            if (!v) return usage("--save-schedules needs a directory");
            o->save_schedules = v;
            i++;
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
        return usage("--seeds and --seed exclude each other (--seed S runs one seed; "
                     "--first-seed S --seeds N runs N seeds from S)");
    if (o->one_seed) o->seeds = 1;
    if (o->seeds - 1 > UINT64_MAX - o->first_seed)
        return usage("--first-seed + --seeds goes past the last seed (2^64 - 1)");
    return 0;
}

static void print_parse_error(const char *path, const scn_error *e) {
    fprintf(stderr, "%s:%d:%d: %s\n", path, e->line, e->col, e->msg);
}

/* ---- the failure report (scn_report.c) ------------------------------------------ */

static const char *strategy_name(sched_strategy_kind s) { return sched_strategy_name(s); }

static void build_line(char *buf, size_t n) {
    snprintf(buf, n, "%s (%s core, %s pool)", TPHEAL_BUILD_ID, BUILD_KIND, scn_pool_backend_name());
}

static void print_report(const scn_scenario *s, const scn_run_opts *ro, const scn_run_out *r,
                         const char *replay_verdict, const char *schedule_file) {
    char build[256];
    scn_report_ctx c;
    build_line(build, sizeof build);
    c.exe = argv0;
    c.model_exe = model_exe;
    c.build = build;
    c.verdict = replay_verdict;
    c.schedule_file = schedule_file;
    scn_report_print(stdout, s, ro, r, &c);
}

/* ---- re-executing the sibling build ------------------------------------------ */

/* One word of a system() line.  system() hands the line to /bin/sh on POSIX
 * and to cmd.exe on Windows, which does not know '...' quoting (the sibling
 * was never found there: issue 11).  POSIX: '...' with ' written '\''.
 * Windows: "..." (a file name cannot hold "; one in an option value is
 * written \" as the C runtime's argv parser reads it). */
static void shell_word(scn_text *cmd, const char *s) {
#ifdef _WIN32
    const char q = '"';
#else
    const char q = '\'';
#endif
    scn_text_printf(cmd, "%c", q);
    for (; *s; s++) {
#ifdef _WIN32
        if (*s == '"') scn_text_printf(cmd, "\\\"");
#else
        if (*s == '\'') scn_text_printf(cmd, "'\\''");
#endif
        else scn_text_printf(cmd, "%c", *s);
    }
    scn_text_printf(cmd, "%c", q);
}

static int run_sibling(int argc, char **argv, const char *file) {
    scn_text cmd = {0}, exe = {0};
    const char *slash = strrchr(argv0, '/');
    int i, rc;
    bool skip_next = false;
#ifdef _WIN32
    const char *bslash = strrchr(argv0, '\\');
    if (bslash && (!slash || bslash > slash)) slash = bslash;
    /* cmd.exe /c strips the first and the last quote of a line that starts
     * with one: a pair around the whole line keeps the words' own quotes. */
    scn_text_printf(&cmd, "\"");
#endif
    /* next to this binary, with its own separator */
    if (slash) scn_text_printf(&exe, "%.*s%s", (int)(slash - argv0 + 1), argv0, SIBLING);
    else scn_text_printf(&exe, "%s", SIBLING);
    shell_word(&cmd, exe.s);
    scn_text_free(&exe);
    /* same command, options kept, files replaced by this one */
    scn_text_printf(&cmd, " %s", argv[1]);
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (skip_next) {
            scn_text_printf(&cmd, " ");
            shell_word(&cmd, a);
            skip_next = false;
            continue;
        }
        if (a[0] == '-' && a[1] == '-') {
            scn_text_printf(&cmd, " %s", a);
            skip_next = !option_is_flag(a);
        }
    }
    scn_text_printf(&cmd, " ");
    shell_word(&cmd, file);
#ifdef _WIN32
    scn_text_printf(&cmd, "\"");
#endif
    fflush(stdout);
    rc = system(cmd.s);
    scn_text_free(&cmd);
#ifndef _WIN32
    if (rc == -1 || !WIFEXITED(rc)) return 1;
    rc = WEXITSTATUS(rc);
#else
    if (rc == 9009) rc = 127; /* cmd.exe's "is not recognized as a command" */
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
/* A long run's progress line on stderr, at most this often (seconds;
 * TPHEAL_PROGRESS_SECONDS overrides: 0 = at every 64th seed). */
static double progress_seconds(void) {
    const char *v = getenv("TPHEAL_PROGRESS_SECONDS");
    char *end;
    double d;
    if (!v || !*v) return 5.0;
    d = strtod(v, &end);
    return (*end || d < 0) ? 5.0 : d;
}

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
    /* reach: runs per strategy (sched_strategy_kind) and, per
     * requirement, the runs that reached it */
    uint64_t runs_by[SCHED_STRATEGY_COUNT];
    uint64_t reached[SCHED_STRATEGY_COUNT][SCN_MAX_REQUIRES];
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


/* --save-schedules DIR: the schedule of a reported failure goes to
 * DIR/STEM-STRATEGY-SEED.schedule (a schedule string runs to kilobytes; a
 * file is easier to paste than that), and the replay command names it. */
static bool save_schedule(const char *dir, const scn_scenario *s, const scn_run_opts *ro, const char *schedule,
                          scn_text *path) {
    const char *base = strrchr(s->path, '/'), *dot;
    FILE *f;
#ifdef _WIN32
    if (strrchr(s->path, '\\') > base) base = strrchr(s->path, '\\');
#endif
    base = base ? base + 1 : s->path;
    dot = strrchr(base, '.');
    scn_text_printf(path, "%s/%.*s-%s-%llu.schedule", dir, (int)(dot ? (size_t)(dot - base) : strlen(base)), base,
                    strategy_name(ro->strategy), (unsigned long long)ro->seed);
    f = fopen(path->s, "wb");
    if (!f || fprintf(f, "%s\n", schedule) < 0 || fclose(f) != 0) {
        fprintf(stderr, "tpheal-harness: --save-schedules: cannot write %s: %s\n", path->s, strerror(errno));
        return false;
    }
    return true;
}

static int run_one_seed(const scn_scenario *s, const options *o, sched_strategy_kind strategy, uint64_t seed, tally *t,
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
            scn_text cmd = {0};
            scn_replay_command(&cmd, argv0, &ro, &r, s->path);
            printf("FAILURE %s seed %llu %s: %.*s  (replay: %s)\n", s->path, (unsigned long long)seed,
                   strategy_name(strategy), r.failures ? (nl ? (int)(nl - r.failures) : (int)strlen(r.failures)) : 0,
                   r.failures ? r.failures : "", cmd.s ? cmd.s : "free-running: a seed does not replay");
            scn_text_free(&cmd);
            scn_run_out_free(&r);
            return 0;
        }
        if (o->replay_failures && r.schedule && !o->native) {
            scn_run_opts rr = ro;
            rr.schedule = r.schedule;
            rr.dfs = NULL; /* a replay is no step of the search */
            rr.strategy = strategy == SCHED_STRATEGY_DFS ? SCHED_STRATEGY_RANDOM : strategy;
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
            scn_text file = {0};
            if (o->save_schedules && r.schedule && !save_schedule(o->save_schedules, s, &ro, r.schedule, &file))
                scn_text_free(&file);
            print_report(s, &ro, &r, verdict, file.s);
            scn_text_free(&file);
        } else {
            scn_json j;
            scn_text cmd = {0};
            scn_json_begin(&j, stdout, "failure");
            scn_json_str(&j, "failure", s->path);
            scn_json_u64(&j, "seed", ro.seed);
            scn_json_str(&j, "strategy", strategy_name(ro.strategy));
            scn_json_u64(&j, "depth", ro.depth);
            scn_json_u64(&j, "pct_steps", ro.pct_steps);
            scn_json_str(&j, "status", r.status >= 0 ? sched_status_name((sched_status)r.status) : "native");
            scn_json_str(&j, "failures", r.failures);
            scn_json_str(&j, "schedule", r.schedule);
            scn_json_str(&j, "race", r.race);
            scn_json_str(&j, "fairness", r.fairness);
            scn_json_str(&j, "replayed", verdict);
            if (scn_replay_command(&cmd, argv0, &ro, &r, s->path)) scn_json_str(&j, "replay", cmd.s);
            scn_text_free(&cmd);
            scn_json_end(&j);
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

/* Per requirement, the share of each strategy's runs that reached it; true
 * when one was reached by no run, or by fewer than --min-reach percent of
 * some strategy's runs: the scenario did not get where it exists to go. */
static bool report_reach(const scn_scenario *s, const tally *t, const options *o) {
    bool short_of = false;
    size_t q;
    int st;
    for (q = 0; q < s->nrequires; q++) {
        const scn_require *r = &s->requires[q];
        uint64_t total = 0;
        bool below = false;
        for (st = 0; st < SCHED_STRATEGY_COUNT; st++) {
            total += t->reached[st][q];
            /* every strategy that ran must reach it: a state only PCT's
             * change points find is luck the random walk never has */
            if (t->runs_by[st] && (t->reached[st][q] == 0 ||
                                   100.0 * (double)t->reached[st][q] < o->min_reach * (double)t->runs_by[st]))
                below = true;
        }
        if (total == 0 || below) short_of = true;
        if (o->json) {
            scn_json j;
            scn_json_begin(&j, stdout, "reach");
            scn_json_str(&j, "reach", s->path);
            scn_json_u64(&j, "line", (uint64_t)r->line);
            scn_json_str(&j, "require", r->text);
            for (st = 0; st < SCHED_STRATEGY_COUNT; st++)
                if (t->runs_by[st])
                    scn_json_pair(&j, strategy_name((sched_strategy_kind)st), t->reached[st][q], t->runs_by[st]);
            scn_json_end(&j);
            continue;
        }
        printf("  reach line %d `require %s`:", r->line, r->text);
        for (st = 0; st < SCHED_STRATEGY_COUNT; st++)
            if (t->runs_by[st])
                printf("  %s reached %llu/%llu (%.1f%%)", strategy_name((sched_strategy_kind)st), (unsigned long long)t->reached[st][q],
                       (unsigned long long)t->runs_by[st], 100.0 * (double)t->reached[st][q] / (double)t->runs_by[st]);
        printf("%s\n", total == 0 ? "  NOT REACHED" : below ? "  SHORT (a strategy below --min-reach or at 0)" : "");
    }
    return short_of;
}

/* An option that only one strategy reads, given without that strategy, would
 * be ignored in silence (`--preemptions 1` on a random walk ran the random
 * walk): refused, with the strategy that reads it. */
static const char *strategy_option_unread(const options *o) {
    if ((o->preemptions_given || o->max_runs_given || o->por_given) && o->strategies != STRATEGIES_DFS)
        return "--preemptions, --max-runs and --por are read only by --strategy dfs";
    if ((o->depth_given || o->pct_steps_given) && !(o->strategies & STRATEGY_BIT(SCHED_STRATEGY_PCT)))
        return "--depth and --pct-steps are PCT's: give them with --strategy pct or both";
    return NULL;
}

/* verify's total over the scenarios this process ran (a fail-fast one runs
 * in the sibling binary, which prints its own line and total) */
typedef struct verify_total {
    uint64_t scenarios, complete, failures, runs, traces, pruned;
    double seconds;
} verify_total;

static int cmd_run(int argc, char **argv) {
    verify_total vt;
    const char **files = calloc((size_t)argc, sizeof *files);
    scn_scenario **scns;
    options o;
    int nfiles, i, rc = 0, bad = 0, declined = 0;
    memset(&vt, 0, sizeof vt);
    if (!files) return 2;
    if (parse_options(argc, argv, 2, &o, files, &nfiles) != 0) { free(files); free(o.schedule_owned); return 2; }
    if (nfiles == 0) { free(files); free(o.schedule_owned); return usage("run needs at least one FILE"); }
    if (strcmp(argv[1], "verify") == 0) {
        /* bounded proof: DFS with the reduction, P = 1 and 20,000 runs a
         * scenario unless told otherwise */
        o.verify = true;
        o.strategies = STRATEGIES_DFS;
        if (!o.por_given) o.por = true;
        if (!o.preemptions_given) o.preemptions = 1;
        if (!o.max_runs_given) o.max_runs = 20000;
    }
    {
        const char *why = strategy_option_unread(&o);
        if (why) { free(files); free(o.schedule_owned); return usage(why); }
    }
    scns = calloc((size_t)nfiles, sizeof *scns);
    if (!scns) { free(files); return 2; }
    /* every file parses before anything runs: bad input is exit 2 */
    for (i = 0; i < nfiles; i++) {
        scn_error e;
        scns[i] = scn_parse_file(files[i], &e);
        if (!scns[i]) { print_parse_error(files[i], &e); bad = 1; }
        else if (scns[i]->note[0])
            fprintf(stderr, "%s:%d:%d: note: %s\n", files[i], scns[i]->note_line, scns[i]->note_col, scns[i]->note);
    }
    if (bad) rc = 2;
    for (i = 0; i < nfiles && !bad; i++) {
        scn_scenario *s = scns[i];
        tally t;
        uint64_t k, max_choice = 0;
        int st;
        double t0, last_note, every = progress_seconds();
        char why[256];
        bool stopped = false;
        memset(&t, 0, sizeof t);
        if (scn_run_unsupported(s, o.native, why, sizeof why)) {
            declined++;
            if (o.json) {
                scn_json j;
                scn_json_begin(&j, stdout, "declined");
                scn_json_str(&j, "scenario", s->path);
                scn_json_str(&j, "pool", scn_pool_backend_name());
                scn_json_str(&j, "declined", why);
                scn_json_end(&j);
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
        t0 = last_note = scn_wall_seconds();
        if (o.strategies == STRATEGIES_DFS && !o.native) {
            /* bounded-exhaustive: one search, each run its next leaf */
            sched_dfs *d = sched_dfs_new(o.preemptions);
            if (!d) { rc = 2; break; }
            sched_dfs_set_por(d, o.por);
            for (k = 0;; k++) {
                int r = run_one_seed(s, &o, 2, k + 1, &t, &max_choice, d);
                if (r == 2) { rc = 2; break; }
                if (r == 3) { stopped = true; break; }
                if (o.max_failures && t.failures >= o.max_failures) break;
                if (!sched_dfs_advance(d) || sched_dfs_runs(d) >= o.max_runs) break;
            }
            if (sched_dfs_error(d)) {
                printf("DFS-ERROR %s: %s\n", s->path, sched_dfs_error(d));
                if (rc < 1) rc = 1;
            }
            if (!o.json && !o.verify)
                printf("DFS %s  explored %llu distinct interleavings with <= %u preemptions (%s), %llu failures; "
                       "deepest run %llu choices, most preemptions used %u; fair schedule: %llu runs demoted a "
                       "thread (%llu demotions), longest streak %llu\n",
                       s->path, (unsigned long long)sched_dfs_runs(d), o.preemptions,
                       sched_dfs_complete(d) ? "complete" : "stopped at limit", (unsigned long long)t.failures,
                       (unsigned long long)sched_dfs_max_depth(d), sched_dfs_max_used(d),
                       (unsigned long long)sched_dfs_fair_runs(d), (unsigned long long)sched_dfs_fair_switches(d),
                       (unsigned long long)sched_dfs_max_streak(d));
            else if (!o.verify) {
                scn_json j;
                scn_json_begin(&j, stdout, "dfs");
                scn_json_str(&j, "dfs", s->path);
                scn_json_u64(&j, "interleavings", sched_dfs_runs(d));
                scn_json_u64(&j, "preemptions", o.preemptions);
                scn_json_bool(&j, "complete", sched_dfs_complete(d));
                scn_json_u64(&j, "failures", t.failures);
                scn_json_u64(&j, "fair_runs", sched_dfs_fair_runs(d));
                scn_json_u64(&j, "fair_switches", sched_dfs_fair_switches(d));
                scn_json_u64(&j, "max_streak", sched_dfs_max_streak(d));
                scn_json_end(&j);
            }
            if (!sched_dfs_complete(d) && !sched_dfs_error(d) && !o.json && !o.verify)
                printf("  (stopped at --max-runs %llu)\n", (unsigned long long)o.max_runs);
            if (o.verify) {
                double secs = scn_wall_seconds() - t0;
                bool ok = !t.failures && sched_dfs_complete(d) && !sched_dfs_error(d);
                vt.scenarios++;
                vt.complete += sched_dfs_complete(d) ? 1u : 0u;
                vt.failures += t.failures;
                vt.runs += sched_dfs_runs(d);
                vt.traces += sched_dfs_traces(d);
                vt.pruned += sched_dfs_pruned(d);
                vt.seconds += secs;
                if (o.json) {
                    scn_json j;
                    scn_json_begin(&j, stdout, "verify");
                    scn_json_str(&j, "verify", s->path);
                    scn_json_u64(&j, "preemptions", o.preemptions);
                    scn_json_bool(&j, "por", o.por);
                    scn_json_bool(&j, "complete", sched_dfs_complete(d));
                    scn_json_u64(&j, "failures", t.failures);
                    scn_json_u64(&j, "runs", sched_dfs_runs(d));
                    scn_json_u64(&j, "traces", sched_dfs_traces(d));
                    scn_json_u64(&j, "redundant_runs", sched_dfs_blocked_runs(d));
                    scn_json_u64(&j, "pruned", sched_dfs_pruned(d));
                    scn_json_fixed(&j, "seconds", 3, secs);
                    scn_json_end(&j);
                } else
                    printf("VERIFY %s  %s at <= %u preemptions%s: %llu traces, %llu runs, %llu redundant, %llu options "
                           "pruned, %llu failures, %.2f s\n",
                           s->path, ok ? "PROVEN" : t.failures ? "FAILED" : "INCOMPLETE", o.preemptions,
                           o.por ? "" : " (no reduction)", (unsigned long long)sched_dfs_traces(d),
                           (unsigned long long)sched_dfs_runs(d), (unsigned long long)sched_dfs_blocked_runs(d),
                           (unsigned long long)sched_dfs_pruned(d), (unsigned long long)t.failures, secs);
                if (!ok && !t.failures && rc == 0) rc = 4;
            }
            if (o.por && !o.json && !o.verify)
                printf("  partial-order reduction: %llu traces, %llu redundant runs (sleep sets), %llu options pruned, "
                       "%llu races\n",
                       (unsigned long long)sched_dfs_traces(d), (unsigned long long)sched_dfs_blocked_runs(d),
                       (unsigned long long)sched_dfs_pruned(d), (unsigned long long)sched_dfs_races(d));
            sched_dfs_free(d);
        }
        for (st = 0; st < SCHED_STRATEGY_DFS && o.strategies != STRATEGIES_DFS; st++) {
            options so = o;
            if (!(o.strategies & STRATEGY_BIT(st))) continue;
            if (st == SCHED_STRATEGY_PCT && so.pct_steps == 0 && !so.native) so.pct_steps = pct_steps_for(s);
            for (k = 0; k < o.seeds && !stopped && !(o.max_failures && t.failures >= o.max_failures); k++) {
                int r = run_one_seed(s, &so, (sched_strategy_kind)st, o.first_seed + k, &t, &max_choice, NULL);
                if (r == 2) { rc = 2; break; }
                /* a long run says how far it is (stderr: stdout stays a
                 * pure function of the seeds) */
                if ((k & 63) == 63 && scn_wall_seconds() - last_note >= every) {
                    last_note = scn_wall_seconds();
                    fprintf(stderr, "tpheal-harness: %s: %s %llu of %llu seeds, %llu failures, %.0f s\n", s->path,
                            strategy_name((sched_strategy_kind)st), (unsigned long long)(k + 1), (unsigned long long)o.seeds,
                            (unsigned long long)t.failures, last_note - t0);
                }
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
        bool unexercised = !o.native && !o.schedule && o.strategies != STRATEGIES_DFS && t.runs >= NOT_EXERCISED_MIN_RUNS &&
                           t.distinct == 1;
        bool unreached = !o.verify && report_reach(s, &t, &o) && !o.native && !o.schedule && t.runs > 0;
        /* No `require`: nothing says the runs got where the scenario exists to go. */
        bool no_goal = !o.verify && s->nrequires == 0 && !o.schedule && t.runs > 0;
        if (no_goal && !o.json)
            fprintf(stderr, "tpheal-harness: %s: warning: no `require` line, so its passes prove nothing "
                            "about what its runs reached (--require-reach makes this NOT-EXERCISED)\n", s->path);
        if (no_goal && o.require_reach && !o.json)
            printf("NOT-EXERCISED %s: no `require` line (--require-reach)\n", s->path);
        if (o.verify) {
            /* its VERIFY line is the scenario's line */
            if (t.failures && (rc < 1 || rc == 4)) rc = 1;
            free(t.seen);
            fflush(stdout);
            continue;
        }
        if (unexercised)
            printf("NOT-EXERCISED %s: all %llu runs produced one interleaving: the scheduler is not racing "
                   "this scenario's threads\n",
                   s->path, (unsigned long long)t.runs);
        if (unreached && !o.json)
            printf("NOT-EXERCISED %s: a requirement above was reached by no run of a strategy%s\n", s->path,
                   o.min_reach > 0 ? ", or by fewer than --min-reach percent of its runs" : "");
        /* a failure outranks NOT-EXERCISED (4), bad input (2) outranks both */
        if ((t.failures || unexercised) && (rc < 1 || rc == 4)) rc = 1;
        if (no_goal && o.require_reach) unreached = true; /* after its own message above */
        if (unreached && rc == 0) rc = 4;
        if (o.json) {
            scn_json j;
            scn_json_begin(&j, stdout, "summary");
            scn_json_str(&j, "scenario", s->path);
            scn_json_str(&j, "purpose", s->purpose);
            scn_json_str(&j, "build", BUILD_KIND);
            scn_json_str(&j, "pool", scn_pool_backend_name());
            scn_json_u64(&j, "runs", t.runs);
            scn_json_u64(&j, "failures", t.failures);
            scn_json_u64(&j, "steps", t.steps);
            scn_json_u64(&j, "max_choice_points", max_choice);
            scn_json_fixed(&j, "seconds", 3, t.seconds);
            scn_json_fixed(&j, "schedules_per_sec", 1, t.seconds > 0 ? (double)t.runs / t.seconds : 0.0);
            scn_json_u64(&j, "distinct_interleavings", t.distinct);
            scn_json_bool(&j, "distinct_is_lower_bound", t.distinct >= DISTINCT_CAP / 2);
            scn_json_bool(&j, "exercised", !unexercised);
            scn_json_bool(&j, "reached", !unreached);
            scn_json_end(&j);
        } else if (o.native) {
            /* OS threads: no scheduling points counted, no interleaving hashed */
            printf("%s %s  runs=%llu failures=%llu runs/s=%.2f (free-running, %s pool)\n",
                   t.failures ? "FAIL" : "PASS", s->path, (unsigned long long)t.runs,
                   (unsigned long long)t.failures, t.seconds > 0 ? (double)t.runs / t.seconds : 0.0,
                   scn_pool_backend_name());
        } else {
            /* the count stops at DISTINCT_CAP / 2: say so, not a silent 2048 */
            printf("%s %s  runs=%llu failures=%llu schedules/s=%.1f steps/run=%.0f interleavings=%s%llu\n",
                   t.failures || unexercised ? "FAIL" : unreached ? "NOT-EXERCISED" : "PASS", s->path, (unsigned long long)t.runs,
                   (unsigned long long)t.failures, t.seconds > 0 ? (double)t.runs / t.seconds : 0.0,
                   t.runs ? (double)t.steps / (double)t.runs : 0.0,
                   t.distinct >= DISTINCT_CAP / 2 ? "at least " : "", (unsigned long long)t.distinct);
        }
        free(t.seen);
        fflush(stdout);
    }
    if (!bad && declined == nfiles) rc = 3;
    if (o.verify && vt.scenarios) {
        if (o.json) {
            scn_json j;
            scn_json_begin(&j, stdout, "verify-total");
            scn_json_u64(&j, "verify_total", vt.scenarios);
            scn_json_u64(&j, "complete", vt.complete);
            scn_json_u64(&j, "preemptions", o.preemptions);
            scn_json_u64(&j, "failures", vt.failures);
            scn_json_u64(&j, "runs", vt.runs);
            scn_json_u64(&j, "traces", vt.traces);
            scn_json_u64(&j, "pruned", vt.pruned);
            scn_json_fixed(&j, "seconds", 3, vt.seconds);
            scn_json_end(&j);
        } else
            printf("VERIFY TOTAL  %llu of %llu scenarios complete at <= %u preemptions (%.0f%%), %llu failures, "
                   "%llu traces, %llu runs, %llu options pruned, %.2f s\n",
                   (unsigned long long)vt.complete, (unsigned long long)vt.scenarios, o.preemptions,
                   100.0 * (double)vt.complete / (double)vt.scenarios, (unsigned long long)vt.failures,
                   (unsigned long long)vt.traces, (unsigned long long)vt.runs, (unsigned long long)vt.pruned,
                   vt.seconds);
    }
    for (i = 0; i < nfiles; i++) scn_free(scns[i]);
    free(scns);
    free(files);
    free(o.schedule_owned);
    return rc;
}

/* ---- replay ---------------------------------------------------------------------- */

/* A seed names a run only together with its strategy and the strategy's
 * parameters: `replay --seed S FILE` once replayed a PCT failure as a random
 * walk (another interleaving, another failure).  So they are required. */
static const char *replay_recipe_missing(const options *o) {
    if (o->schedule) {
        if (o->one_seed || o->strategy_given || o->depth_given || o->pct_steps_given)
            return "replay: a schedule is the whole run: give it without --seed, --strategy, --depth or --pct-steps";
        return NULL;
    }
    if (!o->one_seed) return "replay needs --seed S (with its strategy) or --schedule STRING or --schedule-file PATH";
    if (!o->strategy_given || o->strategies == STRATEGIES_SEEDED)
        return "replay --seed S needs the run's strategy: --strategy random, or --strategy pct --depth D "
               "--pct-steps K (a failure report prints the whole command)";
    if (o->strategies == STRATEGY_BIT(SCHED_STRATEGY_PCT) && (!o->depth_given || !o->pct_steps_given))
        return "replay --seed S --strategy pct needs the run's --depth D and --pct-steps K "
               "(a failure report prints the whole command)";
    if (o->strategies == STRATEGY_BIT(SCHED_STRATEGY_RANDOM) && (o->depth_given || o->pct_steps_given))
        return "replay: --depth and --pct-steps are PCT's; a random walk has neither";
    return NULL;
}

static int cmd_replay(int argc, char **argv) {
    options o;
    int nfiles = 0, rc;
    scn_scenario *s;
    scn_error e;
    scn_run_opts ro;
    scn_run_out r;
    const char *why;
    const char **all = calloc((size_t)argc, sizeof *all);
    if (!all) return 2;
    rc = parse_options(argc, argv, 2, &o, all, &nfiles);
    if (rc == 0 && nfiles != 1) rc = usage("replay takes exactly one FILE");
    if (rc == 0 && (why = replay_recipe_missing(&o)) != NULL) rc = usage(why);
    if (rc == 0 && (o.native || !scn_pool_is_model()))
        rc = usage("replay re-runs a controlled run, which only the model has: use tpheal-harness replay");
    s = rc == 0 ? scn_parse_file(all[0], &e) : NULL;
    if (rc == 0 && !s) {
        print_parse_error(all[0], &e);
        rc = 2;
    }
    if (rc == 0 && s->fail_fast_build && !TPHEAL_FAIL_FAST) rc = run_sibling(argc, argv, all[0]);
    else if (rc == 0) {
        memset(&ro, 0, sizeof ro);
        ro.seed = o.first_seed;
        ro.strategy = o.strategies == STRATEGY_BIT(SCHED_STRATEGY_PCT) ? SCHED_STRATEGY_PCT : SCHED_STRATEGY_RANDOM;
        ro.depth = o.depth;
        ro.pct_steps = o.pct_steps;
        ro.schedule = o.schedule;
        ro.full_trace = o.trace;
        if (scn_run(s, &ro, &r) != 0) {
            fprintf(stderr, "tpheal-harness: %s\n", r.failures ? r.failures : "bad schedule");
            rc = 2;
        } else {
            if (r.passed) {
                printf("PASS %s  status: %s  steps: %llu  interleaving: %016llx\n", s->path,
                       sched_status_name((sched_status)r.status), (unsigned long long)r.steps,
                       (unsigned long long)r.interleaving_hash);
                if (!o.trace) scn_report_block(stdout, "last trace records", r.trace_tail);
                if (r.schedule) printf("  schedule: %s\n", r.schedule);
            } else {
                print_report(s, &ro, &r, NULL, NULL);
            }
            if (o.trace) scn_report_block(stdout, "trace (every record of the run)", r.trace_full);
            /* what this one run reached: a recount of run's shares from the
             * runs' schedules (ci/test_scenarios.py) reads these */
            {
                size_t q;
                for (q = 0; q < s->nrequires; q++)
                    printf("  require line %d `%s`: %s\n", s->requires[q].line, s->requires[q].text,
                           (r.reached >> q & 1) ? "reached" : "not reached");
            }
            rc = r.passed ? 0 : 1;
        }
        scn_run_out_free(&r);
    }
    scn_free(s);
    free(all);
    free(o.schedule_owned);
    return rc;
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
    printf("\npool options: min N, max N (private), stall always|never|N%%, start-delay D -- a pool "
           "severs only while its first worker has not started: a stall scenario needs start-delay\n");
    printf("faults:");
    for (k = 0; k < SCN_FAULT_KIND_COUNT; k++) printf(" %s", scn_fault_name((scn_fault_kind)k));
    printf("\n");
    return 0;
}

/* ---- bench ------------------------------------------------------------------------- */

/* The race build beside the plain one (BUILD/tsan/harness/scenario/...), or
 * the plain one beside the race build: the bench compares their rates in
 * one run (docs/races.md).  TPHEAL_BENCH_OTHER names it explicitly. */
static bool other_build_exe(char *out, size_t n) {
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

static int cmd_bench(int argc, char **argv) {
    uint64_t n = SCN_BENCH_DEFAULT_SEEDS;
    bool rate_only = argc > 2 && strcmp(argv[argc - 1], "--rate") == 0;
    char other[1024];
    int rc;
    if (rate_only) argc--;
    if (!scn_pool_is_model()) return usage("bench measures the controlled scheduler on the model: use tpheal-harness bench");
    if (argc > 2 && (argc != 4 || strcmp(argv[2], "--seeds") != 0 || !parse_u64(argv[3], &n) || n == 0))
        return usage("bench takes only --seeds N (N > 0)");
    if (rate_only) {
        double r = scn_bench_rate(n);
        if (r < 0) return 1;
        printf("%.1f\n", r);
        return 0;
    }
    rc = scn_bench_main(n);
    if (other_build_exe(other, sizeof other)) {
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

/* The model harness beside this one: the real-pool build's free-running
 * failures are reproduced there (tpheal-harness-realpool -> tpheal-harness). */
static void find_model_exe(void) {
    const char *real = strstr(argv0, "tpheal-harness-realpool");
    if (scn_pool_is_model() || !real) {
        snprintf(model_exe, sizeof model_exe, "%s", argv0);
        return;
    }
    snprintf(model_exe, sizeof model_exe, "%.*stpheal-harness%s", (int)(real - argv0), argv0,
             real + strlen("tpheal-harness-realpool"));
}

int main(int argc, char **argv) {
    argv0 = argc > 0 && argv[0] && *argv[0] ? argv[0] : "tpheal-harness";
    /* A race inside a controlled run fails that run, with its replay command;
     * TSan's exit status is left for the ones outside any run (native mode). */
    sched_race_reports_claimed();
    find_model_exe();
    if (argc < 2) return usage(NULL);
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cmd_help(argc > 2 ? argv[2] : NULL);
    if ((strcmp(argv[1], "run") == 0 || strcmp(argv[1], "verify") == 0 || strcmp(argv[1], "replay") == 0 || strcmp(argv[1], "list") == 0 ||
         strcmp(argv[1], "bench") == 0) && wants_help(argc, argv))
        return cmd_help(argv[1]);
    if (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "verify") == 0) return cmd_run(argc, argv);
    if (strcmp(argv[1], "replay") == 0) return cmd_replay(argc, argv);
    if (strcmp(argv[1], "list") == 0) return cmd_list(argc, argv);
    if (strcmp(argv[1], "bench") == 0) return cmd_bench(argc, argv);
    if (strcmp(argv[1], "stress-batch") == 0) return tph_stress_batch_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "stress-faultloop") == 0) return tph_stress_faultloop_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "--version") == 0) {
        printf("tpheal-harness %s (%s core, %s pool)\n", TPHEAL_BUILD_ID, BUILD_KIND, scn_pool_backend_name());
        return 0;
    }
    return unknown_command(argv[1]);
}
