/* tpheal-harness run and verify: the options, then per file one campaign
 * (harness/scenario/scn_campaign.h: the loop over seeds and strategies, or
 * the bounded search) whose observer here tallies each run and prints its
 * failure report; then the tallies, the reach report and the JSON lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
    /* distinct behaviour classes (sched_result.trace_hash), the same way:
     * runs that differ only in the order of independent steps are one */
    uint64_t *class_seen;
    uint64_t classes;
    /* reach: runs per strategy (sched_strategy_kind) and, per
     * requirement, the runs that reached it */
    uint64_t runs_by[SCHED_STRATEGY_COUNT];
    uint64_t reached[SCHED_STRATEGY_COUNT][SCN_MAX_REQUIRES];
} tally;

static void note_distinct(uint64_t **seen, uint64_t *n, uint64_t h) {
    uint64_t i;
    if (!*seen) *seen = calloc(DISTINCT_CAP, sizeof **seen);
    if (!*seen || *n >= DISTINCT_CAP / 2) return;
    if (h == 0) h = 1;
    for (i = h & (DISTINCT_CAP - 1);; i = (i + 1) & (DISTINCT_CAP - 1)) {
        if ((*seen)[i] == h) return;
        if ((*seen)[i] == 0) {
            (*seen)[i] = h;
            (*n)++;
            return;
        }
    }
}

/* Runs below this many seeds are too few to call a scenario unexercised. */
#define NOT_EXERCISED_MIN_RUNS 20

/* The same failure: the same status and the same checks failing the same
 * way (scn_failures_same: kinds and identities, not the messages). */
static bool same_failure(const scn_run_out *a, const scn_run_out *b) {
    return a->status == b->status && scn_failures_same(&a->failure_list, &b->failure_list);
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
                    cli_strategy_name(ro->strategy), (unsigned long long)ro->seed);
    f = fopen(path->s, "wb");
    if (!f || fprintf(f, "%s\n", schedule) < 0 || fclose(f) != 0) {
        fprintf(stderr, "tpheal-harness: --save-schedules: cannot write %s: %s\n", path->s, strerror(errno));
        return false;
    }
    return true;
}

/* The campaign's observer: a scenario's tally and the options it prints by. */
typedef struct run_watch {
    const scn_scenario *s;
    const options *o;
    tally *t;
    uint64_t max_choice;
    double t0, last_note, every;
    scn_shrinks shrinks; /* each distinct failure's shortest schedule, found once */
} run_watch;

/* The shortest failing schedule of a seeded failure (scn_shrink.h), or NULL:
 * a DFS run or a replayed schedule is short already, a free-running run
 * replays by nothing, and --shrink-seconds 0 turns it off. */
static const scn_shrink_result *shrink_failure(run_watch *w, const scn_run_opts *ro, const scn_run_out *r) {
    scn_shrink_budget b;
    if (ro->native || ro->schedule || ro->strategy == SCHED_STRATEGY_DFS || r->status < 0) return NULL;
    b.max_preemptions = SCN_SHRINK_PREEMPTIONS;
    b.runs_per_bound = w->o->shrink_runs;
    b.prefix_runs = SCN_SHRINK_PREFIX_RUNS;
    b.max_seconds = (double)w->o->shrink_seconds;
    return scn_shrinks_for(&w->shrinks, w->s, &b, r);
}

/* One failing run's report: in full (the first FULL_REPORTS of a scenario,
 * with the replay check), as JSON, or as one line after that, so a broken
 * build does not bury the summary under hundreds of identical reports. */
static void report_failure(run_watch *w, const scn_run_opts *ro, const scn_run_out *r) {
    const scn_scenario *s = w->s;
    const options *o = w->o;
    const char *verdict = NULL;
    const scn_shrink_result *shrunk = shrink_failure(w, ro, r);
    scn_run_out again;
    if (w->t->failures > FULL_REPORTS && !o->json) {
        const char *nl = r->failures ? strchr(r->failures, '\n') : NULL;
        scn_text cmd = {0};
        /* the run's own replay: the line quotes its failure (the full
         * reports above led with the shortest schedule of each distinct one) */
        scn_replay_command(&cmd, o->exe->argv0, ro, r, s->path);
        printf("FAILURE %s seed %llu %s: %.*s  (replay: %s)\n", s->path, (unsigned long long)ro->seed,
               cli_strategy_name(ro->strategy), r->failures ? (nl ? (int)(nl - r->failures) : (int)strlen(r->failures)) : 0,
               r->failures ? r->failures : "", cmd.s ? cmd.s : "free-running: a seed does not replay");
        scn_text_free(&cmd);
        return;
    }
    if (o->replay_failures && r->schedule && !o->native) {
        scn_run_opts rr = *ro;
        rr.schedule = r->schedule;
        rr.dfs = NULL; /* a replay is no step of the search */
        rr.strategy = ro->strategy == SCHED_STRATEGY_DFS ? SCHED_STRATEGY_RANDOM : ro->strategy;
        if (scn_run(s, &rr, &again) != 0) verdict = "could not replay (schedule rejected)";
        else
            verdict = same_failure(r, &again)
                          ? (again.interleaving_hash == r->interleaving_hash
                                 ? "reproduced (same failure, same interleaving)"
                                 : "reproduced the failure with a different interleaving")
                          : (again.passed ? "did NOT reproduce (the replay passed)"
                                          : "did NOT reproduce the same failure");
        scn_run_out_free(&again);
    }
    if (!o->json) {
        scn_text file = {0};
        const char *lead = shrunk && shrunk->found ? shrunk->hit.schedule : r->schedule;
        if (o->save_schedules && lead && !save_schedule(o->save_schedules, s, ro, lead, &file)) scn_text_free(&file);
        cli_print_report(o->exe, s, ro, r, verdict, file.s, shrunk);
        scn_text_free(&file);
    } else {
        scn_json j;
        scn_text cmd = {0};
        scn_json_begin(&j, stdout, "failure");
        scn_json_str(&j, "failure", s->path);
        scn_json_u64(&j, "seed", ro->seed);
        scn_json_str(&j, "strategy", cli_strategy_name(ro->strategy));
        scn_json_u64(&j, "depth", ro->depth);
        scn_json_u64(&j, "pct_steps", ro->pct_steps);
        scn_json_str(&j, "status", r->status >= 0 ? sched_status_name((sched_status)r->status) : "native");
        scn_json_str(&j, "failures", r->failures);
        scn_failures_json(&j, &r->failure_list);
        scn_json_u64(&j, "line", (uint64_t)(r->failed_check && r->fail_line > 0 ? r->fail_line : 0));
        scn_json_str(&j, "schedule", r->schedule);
        scn_json_u64(&j, "preemptions", r->preemptions);
        scn_json_str(&j, "race", r->race);
        scn_json_str(&j, "fairness", r->fairness);
        scn_json_str(&j, "replayed", verdict);
        if (scn_replay_command(&cmd, o->exe->argv0, ro, r, s->path)) scn_json_str(&j, "replay", cmd.s);
        scn_text_free(&cmd);
        if (shrunk) scn_shrink_json(&j, shrunk, o->exe->argv0, s->path);
        scn_json_end(&j);
    }
}

/* After each run: the tally, the report of a failure, and for a long
 * seeded campaign a progress line on stderr (stdout stays a pure function
 * of the seeds). */
static bool after_run(void *ctx, uint64_t j, const scn_run_opts *ro, const scn_run_out *r) {
    run_watch *w = (run_watch *)ctx;
    tally *t = w->t;
    size_t q;
    t->runs++;
    t->runs_by[ro->strategy]++;
    for (q = 0; q < w->s->nrequires; q++)
        if (r->reached >> q & 1) t->reached[ro->strategy][q]++;
    t->steps += r->steps;
    note_distinct(&t->seen, &t->distinct, r->interleaving_hash);
    note_distinct(&t->class_seen, &t->classes, r->trace_hash);
    if (r->choice_points > w->max_choice) w->max_choice = r->choice_points;
    if (!r->passed) {
        t->failures++;
        report_failure(w, ro, r);
    }
    if (ro->strategy != SCHED_STRATEGY_DFS && (j & 63) == 63 && scn_wall_seconds() - w->last_note >= w->every) {
        w->last_note = scn_wall_seconds();
        fprintf(stderr, "tpheal-harness: %s: %s %llu of %llu seeds, %llu failures, %.0f s\n", w->s->path,
                cli_strategy_name(ro->strategy), (unsigned long long)(j + 1), (unsigned long long)w->o->seeds,
                (unsigned long long)t->failures, w->last_note - w->t0);
    }
    return true;
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
                    scn_json_pair(&j, cli_strategy_name((sched_strategy_kind)st), t->reached[st][q], t->runs_by[st]);
            scn_json_end(&j);
            continue;
        }
        printf("  reach line %d `require %s`:", r->line, r->text);
        for (st = 0; st < SCHED_STRATEGY_COUNT; st++)
            if (t->runs_by[st])
                printf("  %s reached %llu/%llu (%.1f%%)", cli_strategy_name((sched_strategy_kind)st), (unsigned long long)t->reached[st][q],
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
    uint64_t sampled; /* incomplete files that say `sampled`: not a failure to prove */
    double seconds;
} verify_total;

/* The exit status rc with a scenario's r folded in: a failure (1) outranks
 * NOT-EXERCISED (4), a run that could not start (2) outranks both. */
static int worse(int rc, int r) {
    if (r == 2) return 2;
    if (r == 1 && (rc < 1 || rc == 4)) return 1;
    if (r == 4 && rc == 0) return 4;
    return rc;
}

static void print_declined(const scn_scenario *s, const options *o, const char *why) {
    if (o->json) {
        scn_json j;
        scn_json_begin(&j, stdout, "declined");
        scn_json_str(&j, "scenario", s->path);
        scn_json_str(&j, "pool", scn_pool_backend_name());
        scn_json_str(&j, "declined", why);
        scn_json_end(&j);
    } else {
        printf("DECLINED %s  (%s pool: %s)\n", s->path, scn_pool_backend_name(), why);
    }
}

/* run --strategy dfs: the search's line (DFS / its JSON) and its reduction's. */
static void print_search(const scn_scenario *s, const options *o, const tally *t, sched_dfs *d) {
    if (!o->json)
        printf("DFS %s  explored %llu distinct interleavings with <= %u preemptions (%s), %llu failures; "
               "deepest run %llu choices, most preemptions used %u; fair schedule: %llu runs demoted a "
               "thread (%llu demotions), longest streak %llu\n",
               s->path, (unsigned long long)sched_dfs_runs(d), o->preemptions,
               sched_dfs_complete(d) ? "complete" : "stopped at limit", (unsigned long long)t->failures,
               (unsigned long long)sched_dfs_max_depth(d), sched_dfs_max_used(d),
               (unsigned long long)sched_dfs_fair_runs(d), (unsigned long long)sched_dfs_fair_switches(d),
               (unsigned long long)sched_dfs_max_streak(d));
    else {
        scn_json j;
        scn_json_begin(&j, stdout, "dfs");
        scn_json_str(&j, "dfs", s->path);
        scn_json_u64(&j, "interleavings", sched_dfs_runs(d));
        scn_json_u64(&j, "preemptions", o->preemptions);
        scn_json_bool(&j, "complete", sched_dfs_complete(d));
        scn_json_u64(&j, "failures", t->failures);
        scn_json_u64(&j, "fair_runs", sched_dfs_fair_runs(d));
        scn_json_u64(&j, "fair_switches", sched_dfs_fair_switches(d));
        scn_json_u64(&j, "max_streak", sched_dfs_max_streak(d));
        scn_json_u64(&j, "max_depth", sched_dfs_max_depth(d));
        scn_json_u64(&j, "max_used", sched_dfs_max_used(d));
        scn_json_u64(&j, "races", sched_dfs_races(d));
        scn_json_end(&j);
    }
    if (!sched_dfs_complete(d) && !sched_dfs_error(d) && !o->json)
        printf("  (stopped at --max-runs %llu)\n", (unsigned long long)o->max_runs);
    if (o->por && !o->json)
        printf("  partial-order reduction: %llu traces, %llu redundant runs (sleep sets), %llu options pruned, "
               "%llu races\n",
               (unsigned long long)sched_dfs_traces(d), (unsigned long long)sched_dfs_blocked_runs(d),
               (unsigned long long)sched_dfs_pruned(d), (unsigned long long)sched_dfs_races(d));
}

/* verify: the scenario's proof line (VERIFY / its JSON), added to the total.
 * Returns 4 for a search that ended incomplete without a failure. */
static int print_proof(const scn_scenario *s, const options *o, const tally *t, sched_dfs *d, double secs,
                       verify_total *vt) {
    bool ok = !t->failures && sched_dfs_complete(d) && !sched_dfs_error(d);
    vt->scenarios++;
    vt->complete += sched_dfs_complete(d) ? 1u : 0u;
    vt->failures += t->failures;
    vt->runs += sched_dfs_runs(d);
    vt->traces += sched_dfs_traces(d);
    vt->pruned += sched_dfs_pruned(d);
    vt->seconds += secs;
    if (o->json) {
        scn_json j;
        scn_json_begin(&j, stdout, "verify");
        scn_json_str(&j, "verify", s->path);
        scn_json_u64(&j, "preemptions", o->preemptions);
        scn_json_bool(&j, "por", o->por);
        scn_json_bool(&j, "complete", sched_dfs_complete(d));
        if (s->sampled[0]) scn_json_str(&j, "sampled", s->sampled);
        scn_json_u64(&j, "failures", t->failures);
        scn_json_u64(&j, "runs", sched_dfs_runs(d));
        scn_json_u64(&j, "traces", sched_dfs_traces(d));
        scn_json_u64(&j, "redundant_runs", sched_dfs_blocked_runs(d));
        scn_json_u64(&j, "pruned", sched_dfs_pruned(d));
        scn_json_u64(&j, "races", sched_dfs_races(d));
        scn_json_fixed(&j, "seconds", 3, secs);
        scn_json_end(&j);
    } else
        printf("VERIFY %s  %s at <= %u preemptions%s: %llu traces, %llu runs, %llu redundant, %llu options "
               "pruned, %llu failures, %.2f s\n",
               s->path, ok ? "PROVEN" : t->failures ? "FAILED" : s->sampled[0] ? "SAMPLED" : "INCOMPLETE",
               o->preemptions, o->por ? "" : " (no reduction)", (unsigned long long)sched_dfs_traces(d),
               (unsigned long long)sched_dfs_runs(d), (unsigned long long)sched_dfs_blocked_runs(d),
               (unsigned long long)sched_dfs_pruned(d), (unsigned long long)t->failures, secs);
    /* a file that says it is sampled is left to stress, by its own reason */
    if (!ok && !t->failures && s->sampled[0]) {
        vt->sampled++;
        if (!o->json) printf("  sampled: %s\n", s->sampled);
        return 0;
    }
    return !ok && !t->failures ? 4 : 0;
}

static void print_verify_total(const options *o, const verify_total *vt) {
    if (o->json) {
        scn_json j;
        scn_json_begin(&j, stdout, "verify-total");
        scn_json_u64(&j, "verify_total", vt->scenarios);
        scn_json_u64(&j, "complete", vt->complete);
        scn_json_u64(&j, "preemptions", o->preemptions);
        scn_json_u64(&j, "failures", vt->failures);
        scn_json_u64(&j, "runs", vt->runs);
        scn_json_u64(&j, "traces", vt->traces);
        scn_json_u64(&j, "pruned", vt->pruned);
        if (vt->sampled) scn_json_u64(&j, "sampled", vt->sampled);
        scn_json_fixed(&j, "seconds", 3, vt->seconds);
        scn_json_end(&j);
    } else {
        printf("VERIFY TOTAL  %llu of %llu scenarios complete at <= %u preemptions (%.0f%%), %llu failures, "
               "%llu traces, %llu runs, %llu options pruned, %.2f s",
               (unsigned long long)vt->complete, (unsigned long long)vt->scenarios, o->preemptions,
               100.0 * (double)vt->complete / (double)vt->scenarios, (unsigned long long)vt->failures,
               (unsigned long long)vt->traces, (unsigned long long)vt->runs, (unsigned long long)vt->pruned,
               vt->seconds);
        if (vt->sampled) printf("; %llu sampled (left to stress)", (unsigned long long)vt->sampled);
        printf("\n");
    }
}

/* A seeded campaign's summary line (PASS/FAIL/NOT-EXERCISED, or its JSON),
 * with the NOT-EXERCISED verdicts; returns the exit status it adds. */
static int print_summary(const scn_scenario *s, const options *o, tally *t, uint64_t max_choice) {
    int rc = 0;
    bool unexercised = !o->native && !o->schedule && o->strategies != STRATEGIES_DFS && t->runs >= NOT_EXERCISED_MIN_RUNS &&
                       t->distinct == 1;
    bool unreached = !o->verify && report_reach(s, t, o) && !o->native && !o->schedule && t->runs > 0;
    /* No `require`: nothing says the runs got where the scenario exists to go. */
    bool no_goal = !o->verify && s->nrequires == 0 && !o->schedule && t->runs > 0;
    if (no_goal && !o->json)
        fprintf(stderr, "tpheal-harness: %s: warning: no `require` line, so its passes prove nothing "
                        "about what its runs reached (--require-reach makes this NOT-EXERCISED)\n", s->path);
    if (no_goal && o->require_reach && !o->json)
        printf("NOT-EXERCISED %s: no `require` line (--require-reach)\n", s->path);
    if (o->verify) return t->failures ? 1 : 0; /* its VERIFY line is the scenario's line */
    if (unexercised)
        printf("NOT-EXERCISED %s: all %llu runs produced one interleaving: the scheduler is not racing "
               "this scenario's threads\n",
               s->path, (unsigned long long)t->runs);
    if (unreached && !o->json)
        printf("NOT-EXERCISED %s: a requirement above was reached by no run of a strategy%s\n", s->path,
               o->min_reach > 0 ? ", or by fewer than --min-reach percent of its runs" : "");
    if (t->failures || unexercised) rc = 1;
    if (no_goal && o->require_reach) unreached = true; /* after its own message above */
    if (unreached && rc == 0) rc = 4;
    if (o->json) {
        scn_json j;
        scn_json_begin(&j, stdout, "summary");
        scn_json_str(&j, "scenario", s->path);
        scn_json_str(&j, "purpose", s->purpose);
        scn_json_str(&j, "build", BUILD_KIND);
        scn_json_str(&j, "pool", scn_pool_backend_name());
        scn_json_u64(&j, "runs", t->runs);
        scn_json_u64(&j, "failures", t->failures);
        scn_json_u64(&j, "steps", t->steps);
        scn_json_u64(&j, "max_choice_points", max_choice);
        scn_json_fixed(&j, "seconds", 3, t->seconds);
        scn_json_fixed(&j, "schedules_per_sec", 1, t->seconds > 0 ? (double)t->runs / t->seconds : 0.0);
        scn_json_u64(&j, "distinct_interleavings", t->distinct);
        scn_json_bool(&j, "distinct_is_lower_bound", t->distinct >= DISTINCT_CAP / 2);
        if (!o->native) {
            scn_json_u64(&j, "behaviour_classes", t->classes);
            scn_json_bool(&j, "classes_is_lower_bound", t->classes >= DISTINCT_CAP / 2);
        }
        scn_json_bool(&j, "exercised", !unexercised);
        scn_json_bool(&j, "reached", !unreached);
        scn_json_end(&j);
    } else if (o->native) {
        /* OS threads: no scheduling points counted, no interleaving hashed */
        printf("%s %s  runs=%llu failures=%llu runs/s=%.2f (free-running, %s pool)\n",
               t->failures ? "FAIL" : "PASS", s->path, (unsigned long long)t->runs,
               (unsigned long long)t->failures, t->seconds > 0 ? (double)t->runs / t->seconds : 0.0,
               scn_pool_backend_name());
    } else {
        /* the count stops at DISTINCT_CAP / 2: say so, not a silent 2048 */
        printf("%s %s  runs=%llu failures=%llu schedules/s=%.1f steps/run=%.0f interleavings=%s%llu "
               "classes=%s%llu\n",
               t->failures || unexercised ? "FAIL" : unreached ? "NOT-EXERCISED" : "PASS", s->path, (unsigned long long)t->runs,
               (unsigned long long)t->failures, t->seconds > 0 ? (double)t->runs / t->seconds : 0.0,
               t->runs ? (double)t->steps / (double)t->runs : 0.0,
               t->distinct >= DISTINCT_CAP / 2 ? "at least " : "", (unsigned long long)t->distinct,
               t->classes >= DISTINCT_CAP / 2 ? "at least " : "", (unsigned long long)t->classes);
    }
    return rc;
}

/* One scenario: its campaign, then its lines.  Returns the exit status rc
 * with the scenario's folded in, or -1 when nothing more may run (out of
 * memory). */
static int run_scenario(const scn_scenario *s, const options *o, verify_total *vt, int rc) {
    scn_campaign_opts co;
    scn_campaign_result res;
    scn_campaign_observer obs;
    tally t;
    run_watch w;
    char why[256];
    memset(&t, 0, sizeof t);
    memset(&w, 0, sizeof w);
    w.s = s;
    w.o = o;
    w.t = &t;
    w.every = progress_seconds();
    w.t0 = w.last_note = scn_wall_seconds();
    memset(&co, 0, sizeof co);
    co.strategies = o->strategies;
    co.first_seed = o->first_seed;
    co.runs = o->strategies == STRATEGIES_DFS ? o->max_runs : o->seeds;
    co.depth = o->depth;
    co.pct_steps = o->pct_steps;
    co.native = o->native;
    co.schedule = o->schedule;
    co.preemptions = o->preemptions;
    co.por = o->por;
    co.max_failures = o->max_failures;
    co.tail_on_failure = true; /* only failure reports print it */
    obs.ctx = &w;
    obs.before = NULL;
    obs.after = after_run;
    obs.refused = NULL; /* a run that cannot start ends the campaign: exit 2 */
    switch (scn_campaign_run(s, &co, &obs, &res)) {
    case SCN_CAMPAIGN_NO_MEMORY:
        scn_campaign_result_free(&res);
        scn_shrinks_free(&w.shrinks);
        free(t.seen);
        free(t.class_seen);
        return -1;
    case SCN_CAMPAIGN_BAD_RUN:
        fprintf(stderr, "tpheal-harness: %s\n", res.reason);
        rc = 2;
        break;
    case SCN_CAMPAIGN_DECLINED:
        /* Declined after its first run: the real pool's process outlives a
         * run, and the scenario needs a fresh one. */
        if (!res.dfs && !o->json && scn_pool_unsupported(s, why, sizeof why))
            printf("STOPPED %s after %llu run(s), at seed %llu: %s\n", s->path, (unsigned long long)t.runs,
                   (unsigned long long)res.declined_seed, why);
        break;
    default: break;
    }
    if (res.dfs) {
        if (sched_dfs_error(res.dfs)) {
            printf("DFS-ERROR %s: %s\n", s->path, sched_dfs_error(res.dfs));
            if (rc < 1) rc = 1;
        }
        if (!o->verify) print_search(s, o, &t, res.dfs);
        else rc = worse(rc, print_proof(s, o, &t, res.dfs, scn_wall_seconds() - w.t0, vt));
    }
    scn_campaign_result_free(&res);
    t.seconds = scn_wall_seconds() - w.t0;
    rc = worse(rc, print_summary(s, o, &t, w.max_choice));
    scn_shrinks_free(&w.shrinks);
    free(t.seen);
    free(t.class_seen);
    fflush(stdout);
    return rc;
}

int cmd_run(const cli_exe *x, int argc, char **argv) {
    verify_total vt;
    const char **files = calloc((size_t)argc, sizeof *files);
    scn_scenario **scns;
    options o;
    int nfiles, i, rc = 0, bad = 0, declined = 0;
    memset(&vt, 0, sizeof vt);
    if (!files) return 2;
    if (cli_parse_options(argc, argv, 2, &o, files, &nfiles) != 0) { free(files); free(o.schedule_owned); return 2; }
    o.exe = x;
    if (nfiles == 0) { free(files); free(o.schedule_owned); return cli_usage("run needs at least one FILE"); }
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
        if (why) { free(files); free(o.schedule_owned); return cli_usage(why); }
    }
    scns = calloc((size_t)nfiles, sizeof *scns);
    if (!scns) { free(files); return 2; }
    /* every file parses before anything runs: bad input is exit 2 */
    for (i = 0; i < nfiles; i++) {
        scn_error e;
        scns[i] = scn_parse_file(files[i], &e);
        if (!scns[i]) { cli_print_parse_error(files[i], &e); bad = 1; }
        else if (scns[i]->note[0])
            fprintf(stderr, "%s:%d:%d: note: %s\n", files[i], scns[i]->note_line, scns[i]->note_col, scns[i]->note);
    }
    if (bad) rc = 2;
    for (i = 0; i < nfiles && !bad; i++) {
        scn_scenario *s = scns[i];
        char why[256];
        if (scn_run_unsupported(s, o.native, why, sizeof why)) {
            declined++;
            print_declined(s, &o, why);
            continue;
        }
        if (s->fail_fast_build != (TPHEAL_FAIL_FAST != 0) && s->fail_fast_build) {
            int r = cli_run_sibling(x, argc, argv, s->path);
            if (r > rc) rc = r;
            continue;
        }
        rc = run_scenario(s, &o, &vt, rc);
        if (rc < 0) { rc = 2; break; }
    }
    if (!bad && declined == nfiles) rc = 3;
    if (o.verify && vt.scenarios) print_verify_total(&o, &vt);
    for (i = 0; i < nfiles; i++) scn_free(scns[i]);
    free(scns);
    free(files);
    free(o.schedule_owned);
    return rc;
}
