/* The checker's loop (docs/check.md): the seeded strategies over their
 * seeds, random walk first, then PCT with its k measured once (the seed-0
 * random run's choice points, as the scenario engine's campaign measures
 * it, scn_campaign_pct_steps), each failing run printed with its replay;
 * or, when TPHEAL_CHECK_REPLAY names one run, that run alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tpheal/check.h>

#include "check_internal.h"
#include "sched_dfs.h"

void tph_check_options_default(tph_check_options *o) {
    memset(o, 0, sizeof *o);
    o->name = "check";
    o->command = "<this test>";
    o->runs = 100;
    o->first_seed = 1;
    o->strategies = TPH_CHECK_RANDOM | TPH_CHECK_PCT;
    o->pct_depth = 3;
    o->show = 3;
    o->preemptions = -1;
    o->search_runs = TPH_CHECK_MAX_RUNS;
}

/* One line on stderr, TPH_CHECK_BAD_INPUT. */
static int bad(const char *what, const char *detail) {
    fprintf(stderr, "tph_check: %s%s\n", what, detail ? detail : "");
    return TPH_CHECK_BAD_INPUT;
}

static const char *options_problem(const tph_check_options *o) {
    if (o->runs < 1 || o->runs > TPH_CHECK_MAX_RUNS) return "runs out of range (1..1000000)";
    if (!o->strategies || (o->strategies & ~(TPH_CHECK_RANDOM | TPH_CHECK_PCT)))
        return "strategies must be TPH_CHECK_RANDOM, TPH_CHECK_PCT or both";
    if (o->pct_depth < 1 || o->pct_depth > TPH_CHECK_MAX_DEPTH) return "pct_depth out of range (1..16)";
    if (o->first_seed > UINT64_MAX - o->runs) return "first_seed + runs overflows";
    if (o->preemptions < -1 || o->preemptions > TPH_CHECK_MAX_PREEMPTIONS)
        return "preemptions out of range (-1: seeded runs, or 0..8)";
    if (o->search_runs < 1 || o->search_runs > TPH_CHECK_MAX_RUNS) return "search_runs out of range (1..1000000)";
    return NULL;
}

/* A decimal uint64 at *p (no sign, no overflow); advances p. */
static bool read_u64(const char **p, uint64_t *v) {
    const char *s = *p;
    uint64_t x = 0;
    if (*s < '0' || *s > '9') return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) return false;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *p = s;
    *v = x;
    return true;
}

/* "SEED random" or "SEED pct [K]"; on error a "TPHEAL_CHECK_REPLAY:1:COL:"
 * line and false. */
static bool parse_replay(const char *text, check_run_spec *spec) {
    const char *p = text;
    size_t wl;
    if (text[0] == 'T') { /* a schedule string: sched_run parses it */
        spec->schedule = text;
        return true;
    }
    while (*p == ' ') p++;
    if (!read_u64(&p, &spec->seed)) goto bad_seed;
    while (*p == ' ') p++;
    wl = strcspn(p, " ");
    if (wl == 6 && !strncmp(p, "random", 6)) spec->strategy = SCHED_STRATEGY_RANDOM;
    else if (wl == 3 && !strncmp(p, "pct", 3)) spec->strategy = SCHED_STRATEGY_PCT;
    else {
        fprintf(stderr, "TPHEAL_CHECK_REPLAY:1:%d: expected a strategy, random or pct\n", (int)(p - text) + 1);
        return false;
    }
    p += wl;
    while (*p == ' ') p++;
    if (*p && spec->strategy == SCHED_STRATEGY_PCT) {
        const char *k = p;
        if (!read_u64(&p, &spec->pct_steps) || spec->pct_steps == 0) {
            fprintf(stderr, "TPHEAL_CHECK_REPLAY:1:%d: expected PCT's step count k (1 or more)\n",
                    (int)(k - text) + 1);
            return false;
        }
        while (*p == ' ') p++;
    }
    if (*p) {
        fprintf(stderr, "TPHEAL_CHECK_REPLAY:1:%d: unexpected text after the replay\n", (int)(p - text) + 1);
        return false;
    }
    return true;
bad_seed:
    fprintf(stderr, "TPHEAL_CHECK_REPLAY:1:%d: expected a seed (a decimal number): \"SEED random\" or \"SEED pct K\"\n",
            (int)(p - text) + 1);
    return false;
}

/* The failure's lines, each indented. */
static void print_indented(FILE *f, const char *text) {
    while (text && *text) {
        size_t l = strcspn(text, "\n");
        fprintf(f, "  %.*s\n", (int)l, text);
        text += l + (text[l] == '\n');
    }
}

/* "17 random" / "17 pct 45" / the schedule: what TPHEAL_CHECK_REPLAY takes back. */
static void replay_words(const check_run_spec *s, char *buf, size_t n) {
    if (s->schedule) snprintf(buf, n, "%s", s->schedule);
    else if (s->strategy == SCHED_STRATEGY_PCT)
        snprintf(buf, n, "%llu pct %llu", (unsigned long long)s->seed, (unsigned long long)s->pct_steps);
    else snprintf(buf, n, "%llu random", (unsigned long long)s->seed);
}

/* PCT's k for this check: the choice points of its seed-0 random run. */
static uint64_t pct_steps_of(const check_run_spec *base) {
    check_run_spec probe = *base;
    check_outcome r;
    uint64_t k = 0;
    probe.strategy = SCHED_STRATEGY_RANDOM;
    probe.seed = 0;
    if (check_run_one(&probe, &r)) k = r.choice_points;
    check_outcome_free(&r);
    return k ? k : 1;
}

static int replay(const tph_check_options *o, check_run_spec *spec, const char *text) {
    check_outcome r;
    char words[4096];
    bool passed;
    if (!parse_replay(text, spec)) return TPH_CHECK_BAD_INPUT;
    if (spec->strategy == SCHED_STRATEGY_PCT && !spec->pct_steps) spec->pct_steps = pct_steps_of(spec);
    if (!check_run_one(spec, &r)) return bad("out of memory", NULL);
    if (r.bad_schedule) { /* "schedule:1:COL: message" */
        const char *at = strncmp(r.failure, "schedule:", 9) ? r.failure : r.failure + 9;
        fprintf(stderr, "TPHEAL_CHECK_REPLAY:%.*s\n", (int)strcspn(at, "\n"), at);
        check_outcome_free(&r);
        return TPH_CHECK_BAD_INPUT;
    }
    replay_words(spec, words, sizeof words);
    fprintf(o->out, "check %s: replay %s: %s\n", o->name, words, r.passed ? "passed" : "FAILED");
    print_indented(o->out, r.failure);
    passed = r.passed;
    check_outcome_free(&r);
    fflush(o->out);
    return passed ? TPH_CHECK_PASSED : TPH_CHECK_FAILED;
}

typedef struct tally {
    uint64_t runs[2], failed;
    uint64_t k;
} tally;

/* The runs of one strategy; false when the campaign stops (max_failures, memory). */
static bool strategy_runs(const tph_check_options *o, check_run_spec *spec, tally *t, int *status) {
    uint64_t j;
    for (j = 0; j < o->runs; j++) {
        check_outcome r;
        char words[64];
        spec->seed = o->first_seed + j;
        if (!check_run_one(spec, &r)) {
            *status = bad("out of memory", NULL);
            return false;
        }
        t->runs[spec->strategy == SCHED_STRATEGY_PCT]++;
        if (!r.passed) {
            t->failed++;
            *status = TPH_CHECK_FAILED;
            if (t->failed <= o->show) {
                replay_words(spec, words, sizeof words);
                fprintf(o->out, "check %s: FAILED seed %llu %s\n", o->name, (unsigned long long)spec->seed,
                        sched_strategy_name(spec->strategy));
                print_indented(o->out, r.failure);
                fprintf(o->out, "  replay: TPHEAL_CHECK_REPLAY=\"%s\" %s\n", words, o->command);
            }
        }
        check_outcome_free(&r);
        if (o->max_failures && t->failed >= o->max_failures) return false;
    }
    return true;
}

/* The bounded search: every leaf of the tree of schedules within the
 * preemption bound, or search_runs of them.  No reduction: a check's plain
 * memory is not announced to the dependency relation (rt_access), and with
 * the reduction on, config_race_bug's complete search at one preemption
 * ran 18 schedules and passed; without it, 193 runs and 2 failures. */
static int search(const tph_check_options *o, check_run_spec *spec) {
    sched_dfs *d = sched_dfs_new((unsigned)o->preemptions);
    uint64_t failed = 0;
    int status = TPH_CHECK_PASSED;
    if (!d) return bad("out of memory", NULL);
    spec->strategy = SCHED_STRATEGY_DFS;
    spec->dfs = d;
    for (;;) {
        check_outcome r;
        spec->seed = sched_dfs_runs(d) + 1;
        if (!check_run_one(spec, &r)) {
            sched_dfs_free(d);
            return bad("out of memory", NULL);
        }
        if (!r.passed && ++failed <= o->show) {
            fprintf(o->out, "check %s: FAILED search run %llu (preemptions %d)\n", o->name,
                    (unsigned long long)sched_dfs_runs(d), o->preemptions);
            print_indented(o->out, r.failure);
            fprintf(o->out, "  replay: TPHEAL_CHECK_REPLAY=\"%s\" %s\n", r.schedule ? r.schedule : "", o->command);
        }
        check_outcome_free(&r);
        if (failed) status = TPH_CHECK_FAILED;
        if (o->max_failures && failed >= o->max_failures) break;
        if (!sched_dfs_advance(d) || sched_dfs_runs(d) >= o->search_runs) break;
    }
    if (sched_dfs_error(d)) {
        fprintf(o->out, "check %s: the check is not a function of its schedule: %s\n", o->name, sched_dfs_error(d));
        status = TPH_CHECK_FAILED;
    }
    if (failed > o->show)
        fprintf(o->out, "check %s: %llu more failing runs not shown\n", o->name, (unsigned long long)(failed - o->show));
    fprintf(o->out, "check %s: bounded search, preemptions %d: %llu runs, %s: ", o->name,
            o->preemptions, (unsigned long long)sched_dfs_runs(d),
            sched_dfs_complete(d) ? "complete" : "not complete (stopped)");
    if (failed) fprintf(o->out, "%llu FAILED\n", (unsigned long long)failed);
    else fprintf(o->out, "%s\n", status == TPH_CHECK_PASSED ? "passed" : "FAILED");
    fflush(o->out);
    sched_dfs_free(d);
    return status;
}

static int seeded(const tph_check_options *, check_run_spec *);

/* TPHEAL_CHECK_TIMEOUT: whole seconds, 1..3600; unset or empty: the default. */
static bool timeout_of(const char *text, unsigned *seconds) {
    const char *p = text;
    uint64_t v;
    *seconds = CHECK_TIMEOUT_DEFAULT;
    if (!text || !*text) return true;
    if (!read_u64(&p, &v) || *p || v < 1 || v > 3600) {
        fprintf(stderr, "TPHEAL_CHECK_TIMEOUT: expected whole seconds, 1..3600: %s\n", text);
        return false;
    }
    *seconds = (unsigned)v;
    return true;
}

int tph_check_run(const tph_check_options *opts, void (*test)(void *), void *arg) {
    tph_check_options o;
    check_run_spec spec;
    int status;
    const char *problem, *rp;
    if (tph_check_active()) return bad("tph_check_run called from inside a check", NULL);
    if (!test) return bad("no test function", NULL);
    if (opts) o = *opts;
    else tph_check_options_default(&o);
    if (!o.out) o.out = stdout;
    if (!o.name) o.name = "check";
    if (!o.command) o.command = "<this test>";
    if ((problem = options_problem(&o)) != NULL) return bad(problem, NULL);
    memset(&spec, 0, sizeof spec);
    spec.test = test;
    spec.arg = arg;
    spec.pct_depth = o.pct_depth;
    spec.name = o.name;
    spec.command = o.command;
    if (!timeout_of(getenv("TPHEAL_CHECK_TIMEOUT"), &spec.timeout)) return TPH_CHECK_BAD_INPUT;
    spec.watchdog = check_watchdog_start(spec.timeout, o.out);
    if (!spec.watchdog) return bad("could not start the watchdog thread", NULL);
    rp = getenv("TPHEAL_CHECK_REPLAY");
    if (rp && *rp) status = replay(&o, &spec, rp);
    else if (o.preemptions >= 0) status = search(&o, &spec);
    else status = seeded(&o, &spec);
    check_watchdog_stop(spec.watchdog);
    return status;
}

/* The seeded strategies, random first, each over its seeds. */
static int seeded(const tph_check_options *opts, check_run_spec *specp) {
    tph_check_options o = *opts;
    check_run_spec spec = *specp;
    tally t;
    int status = TPH_CHECK_PASSED;
    memset(&t, 0, sizeof t);
    if (o.strategies & TPH_CHECK_RANDOM) {
        spec.strategy = SCHED_STRATEGY_RANDOM;
        if (!strategy_runs(&o, &spec, &t, &status)) goto done;
    }
    if (o.strategies & TPH_CHECK_PCT) {
        spec.strategy = SCHED_STRATEGY_PCT;
        spec.pct_steps = t.k = pct_steps_of(&spec);
        strategy_runs(&o, &spec, &t, &status);
    }
done:
    if (status == TPH_CHECK_BAD_INPUT) return status;
    if (t.failed > o.show)
        fprintf(o.out, "check %s: %llu more failing runs not shown\n", o.name,
                (unsigned long long)(t.failed - o.show));
    fprintf(o.out, "check %s: %llu runs (", o.name, (unsigned long long)(t.runs[0] + t.runs[1]));
    if (o.strategies & TPH_CHECK_RANDOM) fprintf(o.out, "random %llu", (unsigned long long)t.runs[0]);
    if (o.strategies == (TPH_CHECK_RANDOM | TPH_CHECK_PCT)) fprintf(o.out, ", ");
    if (o.strategies & TPH_CHECK_PCT)
        fprintf(o.out, "pct %llu depth %u k %llu", (unsigned long long)t.runs[1], o.pct_depth, (unsigned long long)t.k);
    fprintf(o.out, ") from seed %llu: ", (unsigned long long)o.first_seed);
    if (t.failed) fprintf(o.out, "%llu FAILED\n", (unsigned long long)t.failed);
    else fprintf(o.out, "passed\n");
    fflush(o.out);
    return status;
}

/* ---- the pattern for a test binary: prog NAME [--runs N] [--seed S] [--preemptions P] ---- */

static bool option_u64(const char *text, uint64_t *v) {
    const char *p = text;
    return read_u64(&p, v) && *p == '\0';
}

int tph_check_main(int argc, char **argv, const tph_check_case *cases, size_t ncases) {
    tph_check_options o;
    const tph_check_case *c = NULL;
    char command[512];
    size_t i;
    int a;
    if (argc < 2) return bad("usage: PROGRAM CHECK [--runs N] [--seed S] [--preemptions P]", NULL);
    for (i = 0; i < ncases; i++)
        if (!strcmp(cases[i].name, argv[1])) c = &cases[i];
    if (!c) return bad("no check called ", argv[1]);
    tph_check_options_default(&o);
    for (a = 2; a < argc; a += 2) { /* option, value */
        uint64_t v;
        if (a + 1 >= argc || !option_u64(argv[a + 1], &v)) return bad("expected a number after ", argv[a]);
        if (!strcmp(argv[a], "--runs")) o.runs = o.search_runs = v; /* a bound on each */
        else if (!strcmp(argv[a], "--seed")) o.first_seed = v;
        else if (!strcmp(argv[a], "--preemptions"))
            o.preemptions = v > TPH_CHECK_MAX_PREEMPTIONS ? TPH_CHECK_MAX_PREEMPTIONS + 1 : (int)v;
        else return bad("unknown option ", argv[a]);
    }
    snprintf(command, sizeof command, "%s %s", argv[0], c->name);
    o.name = c->name;
    o.command = command;
    return tph_check_run(&o, c->test, c->arg);
}
