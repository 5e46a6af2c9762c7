/* Running a parsed scenario: one seed = one simulated process = one
 * sched_run (or one native run), with every oracle checked.  The failures
 * come back as data (scn_failure.h) and as the report's text; scn_report.c
 * turns the pieces into the failure report.  Many runs are a campaign
 * (scn_campaign.h). */
#ifndef TPHEAL_SCN_RUN_H
#define TPHEAL_SCN_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "rt_sched.h"
#include "scn_ast.h"
#include "scn_failure.h"

struct sched_dfs;

typedef struct scn_run_opts {
    uint64_t seed;
    sched_strategy_kind strategy;
    unsigned depth;      /* PCT depth */
    uint64_t pct_steps;  /* PCT k (0 = the scheduler's default) */
    const char *schedule;/* replay string, or NULL */
    struct sched_dfs *dfs;/* SCHED_STRATEGY_DFS: the search this run is the next leaf of */
    bool native;         /* free-running mode on OS threads */
    bool tail_on_failure;/* leave trace_tail NULL on a passing run: formatting the
                            last 40 records was 68% of a passing bench run's
                            instructions (callgrind), and `run` prints it only
                            in failure reports */
    bool full_trace;     /* keep every trace record, formatted (replay --trace) */
    bool timeline;       /* draw the run as a page (replay --timeline, scn_timeline.c) */
    bool replay_continue;/* schedule: past where it stops fitting, go on seeded (replay --continue) */
} scn_run_opts;

typedef struct scn_run_out {
    bool passed;
    bool bad_options;        /* the schedule string was rejected, or the mode is not
                                available on this pool backend: failures says why */
    char *declined;          /* not run: what the scenario needs that this pool
                                backend lacks (scn_pool_unsupported); passed is false */
    int status;              /* sched_status, or -1 for a native run */
    char *failures;          /* NULL when passed: the report's text of failure_list */
    /* Every failure, in report order, as data (scn_failure.h): what any
     * verdict reads.  kind is the first one's (SCN_FAILURE_NONE: passed). */
    scn_failures failure_list;
    scn_failure_kind kind;
    char *schedule;          /* replay string (controlled runs) */
    char *blocked_report;    /* the scheduler's, for deadlocks/livelocks */
    const char *fairness;    /* static: sched_result.fairness (a dfs livelock), or NULL */
    char *race;              /* the race build's first report of the run (also in
                                failures), or NULL: sched_result.race */
    char *trace_tail;        /* the last trace records, names not addresses */
    char *misuse;            /* the sim's misuse reports */
    char *faults;            /* which of the scenario's faults fired (runs that finished) */
    uint64_t steps, choice_points, interleaving_hash;
    uint64_t preemptions;    /* sched_result.preemptions */
    uint64_t trace_hash;     /* the behaviour class: sched_result.trace_hash */
    uint32_t fibers_peak;    /* most fibers alive at once (controlled runs) */
    /* failed_check: a check failed (not only the run's outcome); then
     * fail_record is how many trace records came before it, fail_time its
     * virtual time, and trace_tail the records up to it. */
    bool failed_check;
    uint64_t fail_record, fail_time;
    int fail_line;           /* the failing check's scenario line; 0: no line (an oracle
                                every run checks, or the run's outcome) */
    char *trace_full;        /* every record (opts.full_trace), one a line */
    char *timeline_html;     /* the run as one self-contained HTML page (opts.timeline) */
    uint64_t diverged_at;    /* replay_continue: the schedule item that did not fit (from 1), 0: all fit */
    char *diverged;          /* ... and why, or NULL */
    uint64_t reached;        /* bit i: the scenario's requirement i was reached (scn_reach.h) */
} scn_run_out;

int scn_run(const scn_scenario *, const scn_run_opts *, scn_run_out *);
/* Why s cannot run in this mode (native: free-running) on this pool
 * backend, in buf, or NULL: the backend's declines (scn_pool_unsupported)
 * and free-running mode's own.  scn_run, run and stress-batch ask it. */
const char *scn_run_unsupported(const scn_scenario *, bool native, char *buf, size_t n);
void scn_run_out_free(scn_run_out *);

/* Settling after the scenario's threads end, when the scenario asks for no
 * more: the healer's period (250 ms) plus its window (250 ms) plus a margin
 * for the repair to dispatch and the next tick to retire the entry. */
#define SCN_SETTLE_DEFAULT (1000ull * SCN_MS)

#endif
