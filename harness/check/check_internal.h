/* The checker's two parts (docs/check.md): one run of a check under the
 * controlled scheduler with every oracle (check_run.c), and the loop over
 * seeds and strategies with its report and replay (check_campaign.c). */
#ifndef TPHEAL_CHECK_INTERNAL_H
#define TPHEAL_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rt_sched.h"

/* Virtual time the process settles for after the check returns, before the
 * oracles read it: the healer's period (250 ms) plus its window (250 ms)
 * plus a margin for the repair to dispatch and the next tick to retire the
 * entry -- the scenario runner's default settle. */
#define CHECK_SETTLE (1000ull * 10000ull)

struct sched_dfs;

/* The bound on one run's real time, in seconds, when TPHEAL_CHECK_TIMEOUT
 * does not set one (1..3600): a run of a check takes milliseconds (the
 * example's 10,000 runs: 0.2 s), so only a run stopped outside the
 * scheduler reaches it, even on a loaded machine. */
#define CHECK_TIMEOUT_DEFAULT 60u

/* An OS thread that ends the process with `report` printed when an armed
 * run has not been disarmed within its bound (check_watchdog.c). */
typedef struct check_watchdog check_watchdog;
check_watchdog *check_watchdog_start(unsigned seconds, FILE *out); /* NULL: out of resources */
void check_watchdog_arm(check_watchdog *, const char *report);
void check_watchdog_disarm(check_watchdog *);
void check_watchdog_stop(check_watchdog *);

typedef struct check_run_spec {
    void (*test)(void *);
    void *arg;
    sched_strategy_kind strategy;
    uint64_t seed;
    unsigned pct_depth;
    uint64_t pct_steps;
    struct sched_dfs *dfs; /* SCHED_STRATEGY_DFS: the search this run is the next leaf of */
    const char *schedule;  /* a schedule string to replay, or NULL */
    /* what a run that never ends reports (NULL watchdog: nothing) */
    check_watchdog *watchdog;
    unsigned timeout;      /* the watchdog's bound, seconds */
    const char *name, *command;
} check_run_spec;

typedef struct check_outcome {
    bool passed;
    bool bad_schedule;      /* the schedule string was refused: failure says where */
    char *failure;          /* malloc'd, NULL when passed: what failed, one or more lines */
    char *schedule;         /* malloc'd: the run's schedule string (replays it exactly) */
    uint64_t choice_points; /* of the run: PCT's k is the random probe's */
} check_outcome;

/* One run; false when it could not be made (out of memory: failure says). */
bool check_run_one(const check_run_spec *, check_outcome *);
void check_outcome_free(check_outcome *);

#endif
