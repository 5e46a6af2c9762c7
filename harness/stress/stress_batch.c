/* `tpheal-harness stress-batch`: many seeded runs of one scenario in one
 * process, one JSON object out.  Process start-up and scenario parsing cost
 * about as much as thousands of controlled runs, so ci/stress.py hands out
 * batches instead of single runs (docs/stress.md: the measured rates).
 *
 *   stress-batch --mode controlled|native [--strategy random|pct] [--depth D]
 *                [--pct-steps K] --base SEED [--first J] [--count N]
 *                [--max-ms MS] [--max-run-ms MS] [--max-failures F] [--shrink-seconds S] FILE
 *
 * Runs j = first, first+1, ... with seed stress_run_seed(base, j) until
 * count runs were made or max-ms of wall time has passed (checked between
 * runs) -- one campaign (scn_campaign.h) with this file as its observer; PCT's
 * k without --pct-steps is the campaign's probe, as `run`'s -- and prints (a scenario the linked pool backend declines -- the real
 * pool of tpheal-harness-realpool has no stalls, severed state, ... -- and a native
 * batch whose scenario expects a deadlock, or whose one run would take longer
 * than --max-run-ms of real time, print the same object with runs 0 and
 * "skipped": why):
 *   {"v":1,"type":"batch","scenario":..., "mode":..., "strategy":..., "depth":D, "pct_steps":K, "base":"0x..",
 *    "first":J, "runs":N, "steps":S, "max_choice_points":C, "elapsed_ms":T,
 *    "hashes":["<16 hex>",...],          distinct interleaving hashes (controlled)
 *    "classes":["<16 hex>",...],         distinct behaviour classes (controlled):
 *                                        runs differing only in independent steps' order are one
 *    "reached":[I,...],                  the `require` lines (0-based) some run reached (controlled)
 *    "sampled":"why",                    the file's `sampled` reason, when it gives one
 *    "failures_total":F, "failures":[{"j":J,"seed":"0x..","status":..,"line":L,
 *    "reason":..,"kind":..,"schedule":..,"replay":..,"replay_schedule":..}, ...]}
 *                                     (the first max-failures of them)
 * (harness/json-schema.json, type "batch", is the contract; scn_json.c writes it.)
 *
 * A failure carries the commands `run` prints for the same run, built by the
 * same functions (scn_report.h) from this harness's argv[0]: "replay" (by
 * seed, with the strategy's whole recipe) and "replay_schedule" (by the
 * recorded schedule); a free-running run, which nothing replays, carries
 * "model_hint" instead, the command that looks for its failure on the model.
 * A controlled failure also carries its shortest failing schedule, the
 * shrunk_* fields (scn_shrink.h: each distinct failure shrunk once, within
 * --shrink-seconds S, default 10, 0: none; the time counts in max-ms).
 * ci/stress.py prints these; it builds no replay line of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_sched.h"
#include "scn_campaign.h"
#include "scn_json.h"
#include "scn_pool.h" /* scn_pool_is_model, scn_pool_backend_name */
#include "scn_shrink.h"
#include "scn_report.h" /* the replay commands, as the run path prints them */
#include "scn_run.h"  /* SCN_SETTLE_DEFAULT, scn_run_unsupported */
#include "stress.h"
#include "stress_runner.h"
#include "stress_util.h"

#define CMD "stress-batch"
#define MAX_KEPT 100

typedef struct kept_failure {
    uint64_t j, seed;
    int line; /* the failing check's scenario line, 0: none */
    char status[32];
    char reason[320];
    scn_failure_kind kind;
    char *schedule;
    char *command;         /* the run's replay by seed, or its model hint (native) */
    char *replay_schedule; /* by its schedule, when it has one */
    const scn_shrink_result *shrunk; /* its shortest failing schedule (the batch's cache), or NULL */
} kept_failure;

/* The labels of the run path's report (scn_report.c), for the crash line. */
#define LABEL_REPLAY "replay by seed"
#define LABEL_MODEL_HINT "look for a deterministic reproduction on the model"

typedef struct batch_args {
    stress_run_cfg cfg;
    uint64_t base, first, count, max_ms, max_failures;
    uint64_t max_run_ms; /* native: skip a scenario whose one run takes longer */
    uint64_t shrink_seconds; /* each distinct failure's shrink budget (0: none) */
    const char *path;
} batch_args;

static int usage(const char *msg, const char *arg) {
    fprintf(stderr, CMD ": %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    fprintf(stderr, "usage: tpheal-harness " CMD " --mode controlled|native "
                    "[--strategy random|pct] [--depth D] [--pct-steps K] --base SEED "
                    "[--first J] [--count N] [--max-ms MS] [--max-run-ms MS] [--max-failures F] "
                    "[--shrink-seconds S] FILE\n");
    return 2;
}

static int parse(int argc, char **argv, batch_args *a) {
    memset(a, 0, sizeof *a);
    a->count = UINT64_MAX;
    a->max_ms = UINT64_MAX;
    a->max_run_ms = UINT64_MAX;
    a->max_failures = 20;
    a->shrink_seconds = (uint64_t)SCN_SHRINK_SECONDS;
    a->cfg.depth = 3;
    bool have_mode = false, have_base = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t *num = NULL, depth = 0;
        if (strncmp(o, "--", 2) != 0) {
            if (a->path) return usage("more than one scenario file", o);
            a->path = o;
            continue;
        }
        if (!v) return usage("option needs a value", o);
        i++;
        if (!strcmp(o, "--mode")) {
            if (!strcmp(v, "controlled")) a->cfg.mode = STRESS_CONTROLLED;
            else if (!strcmp(v, "native")) a->cfg.mode = STRESS_NATIVE;
            else return usage("--mode must be controlled or native", v);
            have_mode = true;
        } else if (!strcmp(o, "--strategy")) {
            if (!strcmp(v, "random")) a->cfg.pct = false;
            else if (!strcmp(v, "pct")) a->cfg.pct = true;
            else return usage("--strategy must be random or pct", v);
        } else if (!strcmp(o, "--depth")) {
            if (!stress_parse_u64(CMD, o, v, &depth) || depth > 64) return 2;
            a->cfg.depth = (unsigned)depth;
        } else if (!strcmp(o, "--pct-steps")) num = &a->cfg.pct_steps;
        else if (!strcmp(o, "--base")) { num = &a->base; have_base = true; }
        else if (!strcmp(o, "--first")) num = &a->first;
        else if (!strcmp(o, "--count")) num = &a->count;
        else if (!strcmp(o, "--max-ms")) num = &a->max_ms;
        else if (!strcmp(o, "--max-failures")) num = &a->max_failures;
        else if (!strcmp(o, "--max-run-ms")) num = &a->max_run_ms;
        else if (!strcmp(o, "--shrink-seconds")) num = &a->shrink_seconds;
        else return usage("unknown option", o);
        if (num && !stress_parse_u64(CMD, o, v, num)) return 2;
    }
    if (!have_mode) return usage("--mode is required", NULL);
    if (!have_base) return usage("--base is required", NULL);
    if (!a->path) return usage("no scenario file", NULL);
    if (a->cfg.pct && a->cfg.depth == 0) return usage("--depth must be >= 1 for pct", NULL);
    return 0;
}

/* Virtual time a block sleeps for, repeats included (saturating). */
static uint64_t block_sleep(const scn_block *b) {
    uint64_t t = 0;
    for (size_t i = 0; i < b->n; i++) {
        const scn_op *op = &b->ops[i];
        uint64_t d = 0;
        if (op->kind == SCN_OP_SLEEP) d = op->time;
        else if (op->kind == SCN_OP_REPEAT && op->body) {
            uint64_t inner = block_sleep(op->body);
            d = op->count && inner > UINT64_MAX / op->count ? UINT64_MAX : inner * op->count;
        }
        t = d > UINT64_MAX - t ? UINT64_MAX : t + d;
    }
    return t;
}

/* What a free-running run of `scn` takes at least, in real milliseconds:
 * the longest thread's sleeps, held callbacks, then the runner's two
 * settles (scn_run.c).  Virtual time is real time there. */
static uint64_t native_estimate_ms(const scn_scenario *scn) {
    uint64_t longest = 0, holds = 0;
    for (size_t i = 0; i < scn->nthreads; i++) {
        uint64_t t = block_sleep(&scn->threads[i].body);
        if (t > longest) longest = t;
    }
    for (size_t i = 0; i < scn->nholds; i++)
        if (scn->holds[i].release == SCN_HOLD_FOR) holds += scn->holds[i].duration;
    uint64_t settle = scn->settle > SCN_SETTLE_DEFAULT ? scn->settle : SCN_SETTLE_DEFAULT;
    uint64_t total = longest + holds + settle + SCN_SETTLE_DEFAULT;
    return total / SCN_MS;
}

static const char *strategy_name(const batch_args *a) {
    if (a->cfg.mode == STRESS_NATIVE) return "";
    return a->cfg.pct ? "pct" : "random";
}

/* The command the run path prints for the run of `ro` (the same functions,
 * so the same text and quoting): its replay by seed, or for a free-running
 * run, which nothing replays, the model hint.  Returns the label it goes by. */
static const char *run_command(scn_text *t, const scn_run_opts *ro, const char *exe, const char *model_exe,
                               const char *path) {
    static const scn_run_out no_schedule; /* a seeded run is replayed by its seed */
    if (scn_replay_command(t, exe, ro, &no_schedule, path)) return LABEL_REPLAY;
    scn_model_hint(t, model_exe, ro->seed, path);
    return LABEL_MODEL_HINT;
}

/* The batch as its campaign's observer (scn_campaign.h) sees it: what it
 * keeps of each run, and its budget. */
typedef struct batch {
    const batch_args *a;
    const char *exe, *model_exe;
    uint64_t t0, steps, max_cp, nfail;
    stress_hashset seen, classes; /* interleavings; behaviour classes (sched_result.trace_hash) */
    uint64_t reached;             /* bit i: some run reached the scenario's requirement i */
    kept_failure *kept;
    const scn_scenario *scn;
    scn_shrinks shrinks; /* each distinct failure's shortest schedule, found once (scn_shrink.h) */
    /* Each run's command is built before it runs (a crash prints it after
     * the crash line), into the buffer the crash line is not reading: a
     * signal between two runs finds the last run's command whole. */
    scn_text cmds[2];
    unsigned cur;
} batch;

/* Run j of the batch has seed stress_run_seed(base, first + j). */
static uint64_t batch_seed(void *ctx, sched_strategy_kind st, uint64_t j) {
    const batch *b = (const batch *)ctx;
    (void)st;
    return stress_run_seed(b->a->base, b->a->first + j);
}

static void before_run(void *ctx, uint64_t j, const scn_run_opts *ro) {
    batch *b = (batch *)ctx;
    b->cur ^= 1u;
    b->cmds[b->cur].n = 0;
    const char *label = run_command(&b->cmds[b->cur], ro, b->exe, b->model_exe, b->a->path);
    stress_crash_current(ro->seed, b->a->first + j);
    stress_crash_command(label, b->cmds[b->cur].s);
}

/* Keeps what the batch prints of run j; false once max-ms of wall time has
 * passed (checked between runs). */
static bool after_run(void *ctx, uint64_t j, const scn_run_opts *ro, const scn_run_out *r) {
    batch *b = (batch *)ctx;
    const batch_args *a = b->a;
    stress_run_cfg cfg = a->cfg;
    stress_run_out out;
    cfg.want_schedule = true;
    stress_run_read(r, &cfg, &out);
    b->steps += out.steps;
    if (out.choice_points > b->max_cp) b->max_cp = out.choice_points;
    if (a->cfg.mode == STRESS_CONTROLLED) {
        stress_hashset_add(&b->seen, out.interleaving_hash);
        stress_hashset_add(&b->classes, out.trace_hash);
    }
    b->reached |= out.reached;
    if (!out.passed) {
        if (b->nfail < a->max_failures) {
            kept_failure *k = &b->kept[b->nfail];
            k->j = a->first + j;
            k->seed = ro->seed;
            memcpy(k->status, out.status, sizeof k->status);
            memcpy(k->reason, out.reason, sizeof k->reason);
            k->kind = out.kind;
            k->line = out.line;
            k->schedule = out.schedule;
            out.schedule = NULL;
            k->command = scn_strdup(b->cmds[b->cur].s);
            k->replay_schedule = NULL;
            if (k->schedule) {
                scn_text by_schedule = {0};
                scn_replay_by_schedule(&by_schedule, b->exe, k->schedule, NULL, a->path);
                k->replay_schedule = scn_text_take(&by_schedule);
            }
            k->shrunk = NULL;
            if (a->cfg.mode == STRESS_CONTROLLED) {
                scn_shrink_budget sb = {SCN_SHRINK_PREEMPTIONS, SCN_SHRINK_RUNS_PER_BOUND, SCN_SHRINK_PREFIX_RUNS,
                                        (double)a->shrink_seconds};
                k->shrunk = scn_shrinks_for(&b->shrinks, b->scn, &sb, r);
            }
        }
        b->nfail++;
    }
    stress_run_out_free(&out);
    return stress_wall_ms() - b->t0 < a->max_ms;
}

int tph_stress_batch_main(int argc, char **argv, const char *exe, const char *model_exe) {
    batch_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc;
    scn_error err;
    scn_scenario *scn = scn_parse_file(a.path, &err);
    if (!scn) {
        fprintf(stderr, "%s:%d:%d: %s\n", a.path, err.line, err.col, err.msg);
        return 2;
    }
    char skip[256] = "";
    /* Asked before the build check: the real pool has no fail-fast sibling. */
    bool declined = scn_run_unsupported(scn, a.cfg.mode == STRESS_NATIVE, skip, sizeof skip) != NULL;
    if (!declined && stress_wrong_build(a.path, scn->fail_fast_build)) {
        scn_free(scn);
        return STRESS_EXIT_OTHER_BUILD;
    }
    if (!declined && a.cfg.mode == STRESS_CONTROLLED && !scn_pool_is_model()) {
        scn_free(scn);
        return usage("controlled mode schedules the model's threads: use tpheal-harness", NULL);
    }
    uint64_t est = native_estimate_ms(scn);
    if (declined) {
        /* skip already says why */
    } else if (a.cfg.mode == STRESS_NATIVE && est > a.max_run_ms)
        /* Its sleeps and settles are real time here: 20-30 s for the
         * overdue-episode scenarios, more than a short budget has left. */
        snprintf(skip, sizeof skip, "a free-running run takes at least %llu ms of real time, "
                 "more than the %llu ms allowed", (unsigned long long)est,
                 (unsigned long long)a.max_run_ms);
    if (skip[0]) {
        scn_json j;
        scn_json_begin(&j, stdout, "batch");
        scn_json_str(&j, "scenario", a.path);
        scn_json_str(&j, "mode", a.cfg.mode == STRESS_NATIVE ? "native" : "controlled");
        scn_json_str(&j, "pool", scn_pool_backend_name());
        scn_json_u64(&j, "runs", 0);
        scn_json_u64(&j, "failures_total", 0);
        scn_json_array(&j, "failures");
        scn_json_close(&j);
        scn_json_array(&j, "hashes");
        scn_json_close(&j);
        scn_json_str(&j, "skipped", skip);
        scn_json_end(&j);
        scn_free(scn);
        return 0;
    }
    stress_crash_install(a.path);
    /* The first failures are kept (the summary is printed at the end). */
    if (a.max_failures > MAX_KEPT) a.max_failures = MAX_KEPT;
    static kept_failure kept[MAX_KEPT];
    batch bt;
    memset(&bt, 0, sizeof bt);
    bt.a = &a;
    bt.exe = exe;
    bt.model_exe = model_exe;
    bt.kept = kept;
    bt.scn = scn;
    stress_hashset_init(&bt.seen);
    stress_hashset_init(&bt.classes);
    bt.t0 = stress_wall_ms();
    /* One campaign, the strategy's seeds from the batch's base.  PCT's k,
     * when not given, is the campaign's one definition (a probe run), and
     * every replay command says the k the runs used. */
    scn_campaign_opts co;
    memset(&co, 0, sizeof co);
    co.strategies = SCN_CAMPAIGN_BIT(a.cfg.pct ? SCHED_STRATEGY_PCT : SCHED_STRATEGY_RANDOM);
    co.runs = a.count;
    co.seed_at = batch_seed;
    co.seed_ctx = &bt;
    co.depth = a.cfg.depth;
    co.pct_steps = a.cfg.pct_steps;
    co.native = a.cfg.mode == STRESS_NATIVE;
    co.tail_on_failure = true; /* the batch prints no trace */
    scn_campaign_observer obs = {&bt, before_run, after_run, NULL}; /* a refused run ends the batch */
    scn_campaign_result res;
    scn_campaign_run(scn, &co, &obs, &res);
    stress_crash_command(NULL, NULL);
    scn_text_free(&bt.cmds[0]);
    scn_text_free(&bt.cmds[1]);
    if (res.end == SCN_CAMPAIGN_BAD_RUN || res.end == SCN_CAMPAIGN_NO_MEMORY) {
        fprintf(stderr, "%s: run could not start: %.*s\n", a.path,
                res.reason ? (int)strcspn(res.reason, "\n") : 13, res.reason ? res.reason : "out of memory");
        for (uint64_t i = 0; i < bt.nfail && i < a.max_failures; i++) {
            free(kept[i].schedule);
            free(kept[i].command);
            free(kept[i].replay_schedule);
        }
        scn_shrinks_free(&bt.shrinks);
        scn_campaign_result_free(&res);
        stress_hashset_free(&bt.seen);
        stress_hashset_free(&bt.classes);
        scn_free(scn);
        return 3;
    }
    uint64_t runs = res.runs, nfail = bt.nfail, pct_steps = res.pct_steps;
    scn_campaign_result_free(&res);
    stress_hashset seen = bt.seen, classes = bt.classes;
    scn_json j;
    scn_json_begin(&j, stdout, "batch");
    scn_json_str(&j, "scenario", a.path);
    scn_json_str(&j, "mode", a.cfg.mode == STRESS_NATIVE ? "native" : "controlled");
    scn_json_str(&j, "pool", scn_pool_backend_name());
    scn_json_str(&j, "strategy", strategy_name(&a));
    scn_json_u64(&j, "depth", a.cfg.pct ? a.cfg.depth : 0u);
    scn_json_u64(&j, "pct_steps", pct_steps);
    scn_json_hex(&j, "base", a.base);
    scn_json_u64(&j, "first", a.first);
    scn_json_u64(&j, "runs", runs);
    scn_json_u64(&j, "steps", bt.steps);
    scn_json_u64(&j, "max_choice_points", bt.max_cp);
    scn_json_u64(&j, "elapsed_ms", stress_wall_ms() - bt.t0);
    scn_json_u64(&j, "failures_total", nfail);
    scn_json_array(&j, "failures");
    for (uint64_t i = 0; i < nfail && i < a.max_failures; i++) {
        kept_failure *k = &kept[i];
        /* an element of the array, not a line of its own: no version here */
        scn_json_item_object(&j);
        scn_json_u64(&j, "j", k->j);
        scn_json_hex(&j, "seed", k->seed);
        scn_json_str(&j, "status", k->status);
        scn_json_str(&j, "reason", k->reason);
        scn_json_u64(&j, "line", (uint64_t)k->line);
        scn_json_str(&j, "kind", scn_failure_kind_name(k->kind));
        if (k->schedule) scn_json_str(&j, "schedule", k->schedule);
        if (a.cfg.mode == STRESS_NATIVE) scn_json_str(&j, "model_hint", k->command);
        else scn_json_str(&j, "replay", k->command);
        if (k->replay_schedule) scn_json_str(&j, "replay_schedule", k->replay_schedule);
        if (k->shrunk) scn_shrink_json(&j, k->shrunk, exe, a.path);
        scn_json_close(&j);
        free(k->schedule);
        free(k->command);
        free(k->replay_schedule);
    }
    scn_json_close(&j);
    scn_json_array(&j, "hashes");
    char hex[17];
    if (seen.has_zero) scn_json_item_str(&j, "0000000000000000");
    for (size_t i = 0; i < seen.cap; i++) {
        if (!seen.slot[i]) continue;
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)seen.slot[i]);
        scn_json_item_str(&j, hex);
    }
    scn_json_close(&j);
    if (a.cfg.mode == STRESS_CONTROLLED) {
        scn_json_array(&j, "classes");
        if (classes.has_zero) scn_json_item_str(&j, "0000000000000000");
        for (size_t i = 0; i < classes.cap; i++) {
            if (!classes.slot[i]) continue;
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)classes.slot[i]);
            scn_json_item_str(&j, hex);
        }
        scn_json_close(&j);
        scn_json_array(&j, "reached");
        for (size_t i = 0; i < scn->nrequires && i < 64; i++)
            if (bt.reached >> i & 1) scn_json_item_u64(&j, (uint64_t)i);
        scn_json_close(&j);
    }
    if (scn->sampled[0]) scn_json_str(&j, "sampled", scn->sampled);
    scn_json_end(&j);
    scn_shrinks_free(&bt.shrinks);
    stress_hashset_free(&seen);
    stress_hashset_free(&classes);
    scn_free(scn);
    return 0;
}
