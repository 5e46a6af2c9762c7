/* The shortest failing schedule: one shrinker for every failure a seeded
 * run (random walk, PCT) or a generated program finds.  A seeded failure's
 * schedule runs to thousands of choices with preemptions anywhere; the
 * shrinker looks for a schedule that fails the same way -- the caller's
 * `same`, for a report the same kind at the same check (scn_failure_same of
 * the first failure) -- with the fewest preemptions, then the shortest
 * choice prefix:
 *
 *   0. the failing schedule itself, when there is one: its shortest prefix
 *      that, followed by the non-preemptive default, still fails the same
 *      way (bisection), then each of its switches of thread, last first,
 *      turned into a non-switch while it still fails -- tens of runs, and
 *      what a large scenario needs (the healer started twice on
 *      many-pools-churn.scn: 2,222 preemptions in the random walk's run;
 *      the bounded search found nothing at 0-2 preemptions in 120 s);
 *   1. the bounded search with the partial-order reduction (sched_dfs.h) at
 *      0, 1, ... max_preemptions preemptions; the first bound with a failing
 *      run is the fewest a bounded search proves, when every lower bound's
 *      search completed;
 *   2. at that bound the search goes on for prefix_runs more runs, keeping
 *      the failing run whose choice prefix (the choice points up to its last
 *      one off the non-preemptive default: past it every thread runs until
 *      it blocks, sched_dfs_run_prefix) is shortest.
 *
 * Bounded: runs per bound and a wall-time budget for the whole; the result
 * says which cut it (the runs are deterministic, the time is not: a cut by
 * time is named so, never silent).  The found schedule replays exactly by
 * `replay --schedule` (it is recorded on idle time, "T1/idle:"). */
#ifndef TPHEAL_SCN_SHRINK_H
#define TPHEAL_SCN_SHRINK_H

#include <stdbool.h>
#include <stdint.h>

#include "scn_ast.h"
#include "scn_run.h"
#include "scn_text.h"

typedef struct scn_shrink_budget {
    unsigned max_preemptions; /* the last bound searched */
    uint64_t runs_per_bound;  /* the search's runs at one bound (0: none) */
    uint64_t prefix_runs;     /* step 2's runs past the first hit (0: keep the first) */
    double max_seconds;       /* the whole shrink's wall time (0: no limit) */
} scn_shrink_budget;

/* The defaults `run` and `stress-batch` shrink with: 10 s, as the target
 * says; 2,000 runs a bound (the corpus's failures were found at most a few
 * hundred runs into their bound, docs/scenarios.md "The shortest failing
 * schedule"), 200 runs for a shorter prefix. */
#define SCN_SHRINK_PREEMPTIONS 3u
#define SCN_SHRINK_RUNS_PER_BOUND 2000u
#define SCN_SHRINK_PREFIX_RUNS 200u
#define SCN_SHRINK_SECONDS 10.0

typedef enum scn_shrink_cut {
    SCN_SHRINK_CUT_NONE = 0, /* every bound it needed searched to its end */
    SCN_SHRINK_CUT_RUNS,     /* a bound's search stopped at runs_per_bound */
    SCN_SHRINK_CUT_TIME      /* the wall-time budget ran out */
} scn_shrink_cut;

typedef struct scn_shrink_result {
    bool found;
    unsigned preemptions;  /* the found run's */
    uint64_t prefix;       /* its choice prefix (sched_dfs_run_prefix) */
    uint64_t runs;         /* runs the shrink made */
    double seconds;        /* wall time it took (reports print it in --json only) */
    unsigned max_bound;    /* the budget's max_preemptions */
    scn_shrink_cut cut;    /* what stopped the search short, if anything */
    /* found: every bound below `preemptions` was searched to its end, so no
     * schedule with fewer preemptions fails the same way (within what the
     * reduction keeps, strategy_dfs_por.c) */
    bool fewest_proven;
    scn_run_out hit;       /* found: the run, its schedule and failures */
} scn_shrink_result;

/* Whether run r fails "the same way"; ctx is the caller's. */
typedef bool (*scn_shrink_same_fn)(void *ctx, const scn_run_out *r);

/* The report's "same": r failed, and its first failure is the same kind at
 * the same check (scn_failure_same) as `original`'s, with the same status. */
bool scn_shrink_same_check(void *original, const scn_run_out *r);

/* Shrinks; `origin` (may be NULL) is the failing run's schedule, shrunk
 * first (step 0 above).  Returns 0, or -1 when out of memory (result then
 * holds what was found). */
int scn_shrink(const scn_scenario *, const scn_shrink_budget *, scn_shrink_same_fn same, void *ctx,
               const char *origin, scn_shrink_result *);
void scn_shrink_result_free(scn_shrink_result *);

/* "1 preemption, choice prefix 12 (fewest: every lower bound searched)" and
 * the cut, for the text reports; `runs` adds the runs it made. */
void scn_shrink_describe(scn_text *, const scn_shrink_result *, bool runs);
/* The cut's word for --json: "" (none), "runs", "time". */
const char *scn_shrink_cut_name(scn_shrink_cut);


/* ---- a campaign's shrinks ------------------------------------------------------- */

/* The shrink of a failure is a function of the scenario, the failure's
 * identity (status, first failure's kind, line, subject) and the budget:
 * the seed that found it plays no part.  So a campaign shrinks each distinct
 * failure once and its later reports reuse the result: a broken build
 * failing the same check in 100 seeds costs one shrink, not 100.  At most
 * SCN_SHRINKS_KEPT distinct failures a scenario are shrunk; later ones are
 * reported as they ran (`scn_shrinks_for` returns NULL). */
#define SCN_SHRINKS_KEPT 8

typedef struct scn_shrinks {
    size_t n;
    struct {
        int status;
        scn_failure first; /* message NULL: the identity only */
        scn_shrink_result res;
    } v[SCN_SHRINKS_KEPT];
} scn_shrinks;

/* The shrink of failing run r of s (made now or earlier in the campaign),
 * or NULL: no room, or the budget's max_seconds is 0 (shrinking off). */
const scn_shrink_result *scn_shrinks_for(scn_shrinks *, const scn_scenario *, const scn_shrink_budget *,
                                         const scn_run_out *r);
void scn_shrinks_free(scn_shrinks *);

/* The JSON contract's shrunk_* fields of a failure (harness/json-schema.json):
 * when a schedule was found shrunk_schedule, shrunk_preemptions,
 * shrunk_prefix, shrunk_choices, shrunk_fewest_proven and shrunk_replay (the
 * command, by schedule, exe as invoked); always shrunk_runs, shrunk_seconds
 * and shrunk_cut. */
struct scn_json;
void scn_shrink_json(struct scn_json *, const scn_shrink_result *, const char *exe, const char *path);

#endif
