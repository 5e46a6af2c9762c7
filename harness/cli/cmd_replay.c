/* tpheal-harness replay: one run from its seed recipe or its schedule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- replay ---------------------------------------------------------------------- */

/* A seed names a run only together with its strategy and the strategy's
 * parameters: `replay --seed S FILE` once replayed a PCT failure as a random
 * walk (another interleaving, another failure).  So they are required. */
static const char *replay_recipe_missing(const options *o) {
    if (o->replay_continue && !o->schedule)
        return "replay --continue goes on past where a schedule stops fitting: give it --schedule or --schedule-file";
    if (o->schedule && o->replay_continue) {
        /* the continuation is a seeded run: a random walk from --seed (default 0) */
        if (o->strategy_given || o->depth_given || o->pct_steps_given)
            return "replay --continue goes on as a random walk from --seed S (default 0): give no --strategy, "
                   "--depth or --pct-steps";
        return NULL;
    }
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

/* The page scn_timeline.c drew, to path; says where on stderr. */
static int write_timeline(const char *path, const char *html) {
    FILE *f = html ? fopen(path, "wb") : NULL;
    bool written = f && fputs(html, f) >= 0;
    if (f && fclose(f) != 0) written = false;
    if (!written) {
        fprintf(stderr, "tpheal-harness: --timeline: cannot write %s\n", path);
        return 2;
    }
    fprintf(stderr, "timeline: %s\n", path);
    return 0;
}

int cmd_replay(const cli_exe *x, int argc, char **argv) {
    options o;
    int nfiles = 0, rc;
    scn_scenario *s;
    scn_error e;
    scn_run_opts ro;
    scn_run_out r;
    const char *why;
    const char **all = calloc((size_t)argc, sizeof *all);
    if (!all) return 2;
    rc = cli_parse_options(argc, argv, 2, &o, all, &nfiles);
    o.exe = x;
    if (rc == 0 && nfiles != 1) rc = cli_usage("replay takes exactly one FILE");
    if (rc == 0 && (why = replay_recipe_missing(&o)) != NULL) rc = cli_usage(why);
    if (rc == 0 && (o.native || !scn_pool_is_model()))
        rc = cli_usage("replay re-runs a controlled run, which only the model has: use tpheal-harness replay");
    s = rc == 0 ? scn_parse_file(all[0], &e) : NULL;
    if (rc == 0 && !s) {
        cli_print_parse_error(all[0], &e);
        rc = 2;
    }
    if (rc == 0 && s->fail_fast_build && !TPHEAL_FAIL_FAST) rc = cli_run_sibling(x, argc, argv, all[0]);
    else if (rc == 0) {
        memset(&ro, 0, sizeof ro);
        ro.seed = o.first_seed;
        ro.strategy = o.strategies == STRATEGY_BIT(SCHED_STRATEGY_PCT) ? SCHED_STRATEGY_PCT : SCHED_STRATEGY_RANDOM;
        ro.depth = o.depth;
        ro.pct_steps = o.pct_steps;
        ro.schedule = o.schedule;
        ro.full_trace = o.trace;
        ro.timeline = o.timeline != NULL;
        ro.replay_continue = o.replay_continue;
        if (scn_run(s, &ro, &r) != 0) {
            fprintf(stderr, "tpheal-harness: %s\n", r.failures ? r.failures : "bad schedule");
            rc = 2;
        } else {
            /* Where the old schedule and this program part, first: "does the
             * old failure still fail?" is answered by what follows. */
            if (o.replay_continue && r.diverged_at)
                printf("CONTINUED %s: the schedule fit up to item %llu, then %s; went on as a random walk "
                       "from seed %llu (the run's own schedule, printed below, replays it exactly)\n",
                       s->path, (unsigned long long)r.diverged_at - 1, r.diverged ? r.diverged : "?",
                       (unsigned long long)ro.seed);
            else if (o.replay_continue)
                printf("CONTINUED %s: the whole schedule fit; the run is the one it recorded\n", s->path);
            if (o.replay_continue && r.diverged_at && r.schedule) {
                /* the report's replay commands name this run's schedule, not the old one */
                ro.schedule = r.schedule;
                ro.replay_continue = false;
            }
            if (r.passed) {
                printf("PASS %s  status: %s  steps: %llu  interleaving: %016llx\n", s->path,
                       sched_status_name((sched_status)r.status), (unsigned long long)r.steps,
                       (unsigned long long)r.interleaving_hash);
                if (!o.trace) scn_report_block(stdout, "last trace records", r.trace_tail);
                if (r.schedule) printf("  schedule: %s\n", r.schedule);
            } else {
                cli_print_report(x, s, &ro, &r, NULL, NULL, NULL);
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
            if (o.timeline && write_timeline(o.timeline, r.timeline_html) != 0) rc = 2;
        }
        scn_run_out_free(&r);
    }
    scn_free(s);
    free(all);
    free(o.schedule_owned);
    return rc;
}
