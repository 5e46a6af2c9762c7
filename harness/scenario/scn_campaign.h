/* A campaign: the runs of one scenario, in one loop (Shuttle's Runner::run):
 * a strategy says what the next run is -- the seeded strategies (random
 * walk, PCT) a seed after another, the bounded-exhaustive search (DFS, the
 * verify command) the next leaf of its tree -- the loop runs it (scn_run)
 * and an observer hears of each run.  run and verify (harness/cli/cmd_run.c),
 * stress-batch (harness/stress/stress_batch.c) and bench (scn_bench.c) all
 * make their runs here, so a seed means one run whichever of them made it,
 * and PCT's step count has one definition (scn_campaign_pct_steps). */
#ifndef TPHEAL_SCN_CAMPAIGN_H
#define TPHEAL_SCN_CAMPAIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "rt_sched.h"
#include "scn_ast.h"
#include "scn_run.h"

struct sched_dfs;

/* A bit per sched_strategy_kind: the seeded strategies run in this order,
 * random first; SCHED_STRATEGY_DFS runs alone. */
#define SCN_CAMPAIGN_BIT(k) (1u << (unsigned)(k))

typedef struct scn_campaign_opts {
    unsigned strategies;   /* SCN_CAMPAIGN_BIT of each; DFS alone */
    /* seeded: run j (from 0) of strategy st has seed seed_at(seed_ctx, st, j),
     * or first_seed + j when seed_at is NULL; `runs` of them per strategy */
    uint64_t first_seed, runs;
    uint64_t (*seed_at)(void *seed_ctx, sched_strategy_kind st, uint64_t j);
    void *seed_ctx;
    unsigned depth;        /* PCT depth (0: the scheduler's) */
    uint64_t pct_steps;    /* PCT k; 0: scn_campaign_pct_steps, measured once */
    bool native;           /* free-running on OS threads (PCT's k is not measured) */
    const char *schedule;  /* every run replays this schedule string */
    /* DFS: the preemption bound, the reduction, at most `runs` runs */
    unsigned preemptions;
    bool por;
    uint64_t max_failures; /* stop at the campaign's Nth failing run (0: never) */
    bool tail_on_failure;  /* scn_run_opts.tail_on_failure */
} scn_campaign_opts;

/* What hears of the runs (any member NULL: not heard). */
typedef struct scn_campaign_observer {
    void *ctx;
    /* Run j of a strategy is about to be made with these options (stress:
     * the command a crash line names). */
    void (*before)(void *ctx, uint64_t j, const scn_run_opts *ro);
    /* Run j was made; false stops the campaign (a time budget). */
    bool (*after)(void *ctx, uint64_t j, const scn_run_opts *ro, const scn_run_out *r);
    /* Run j could not start (scn_run refused it: r->failures says why); true
     * goes on to the next run, false (and NULL) ends the campaign with
     * SCN_CAMPAIGN_BAD_RUN. */
    bool (*refused)(void *ctx, uint64_t j, const scn_run_opts *ro, const scn_run_out *r);
} scn_campaign_observer;

typedef enum scn_campaign_end {
    SCN_CAMPAIGN_DONE,      /* every seed run, the search complete, or its --max-runs */
    SCN_CAMPAIGN_STOPPED,   /* max_failures reached, or the observer said stop */
    SCN_CAMPAIGN_DECLINED,  /* a run was declined: the real pool's process outlives a
                               run and the scenario needs a fresh one (declined_seed) */
    SCN_CAMPAIGN_BAD_RUN,   /* a run could not start (reason says why) */
    SCN_CAMPAIGN_NO_MEMORY
} scn_campaign_end;

typedef struct scn_campaign_result {
    scn_campaign_end end;
    uint64_t runs, failures; /* runs made (declined ones not counted), failing ones */
    uint64_t pct_steps;      /* the k the PCT runs used (0: none ran) */
    uint64_t declined_seed;
    char *reason;            /* SCN_CAMPAIGN_BAD_RUN: scn_run's, malloc'd */
    struct sched_dfs *dfs;   /* DFS: the search, its figures for the caller (sched_dfs.h) */
} scn_campaign_result;

/* Runs the campaign.  Returns the result's end. */
scn_campaign_end scn_campaign_run(const scn_scenario *, const scn_campaign_opts *, const scn_campaign_observer *,
                                  scn_campaign_result *);
void scn_campaign_result_free(scn_campaign_result *);

/* PCT's k for s when none is given: the choice points of its seed-0
 * random-walk run.  PCT spreads its d-1 priority change points over k
 * expected choice points, so a k past the run's end wastes them: the
 * scheduler's default of 200 exceeds the probe in 54 of the corpus's 59
 * scenarios (median 48), and over 200 PCT seeds each the probe's k gave 29%
 * more distinct interleavings (docs/scenarios.md, "The CLI").  The probe is
 * deterministic, so k is an input of the run like its seed, printed in
 * every replay command. */
uint64_t scn_campaign_pct_steps(const scn_scenario *s);

#endif
