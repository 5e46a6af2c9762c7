/* The strategy interface: who runs next.  A strategy sees the run (its
 * pcg32, the runnable set, the step counters) and is asked only at choice
 * points -- scheduling points with two or more runnable threads -- so a
 * forced step costs nothing.  Adding one (bounded preemption, exhaustive
 * DFS over the recorded choice stream, URW) means: a state struct in the
 * union in sched_internal.h, a const sched_strategy, a case in
 * sched_strategy_for(). */
#ifndef TPHEAL_SCHED_STRATEGY_H
#define TPHEAL_SCHED_STRATEGY_H

#include <stdint.h>

#include "rt_sched.h"

struct sched;

typedef struct sched_strategy {
    const char *name;
    /* Once per run, after the run's pcg32 is seeded, before thread 1 exists. */
    void (*run_start)(struct sched *);
    /* Each new thread (thread 1 included), before it is first runnable. */
    void (*thread_spawned)(struct sched *, rt_thread *);
    /* The next thread: one of s->runnable[0 .. s->nrunnable), nrunnable >= 2. */
    rt_thread *(*pick)(struct sched *);
    /* rt_choose(n) or, `delay`, rt_choose_delay(n); n >= 2: the value;
     * NULL = a pcg32 draw. */
    uint32_t (*choose)(struct sched *, uint32_t n, bool delay);
    /* A livelock's sched_result.fairness: the fairness the search gave the
     * schedule, so a report says whether the livelock persists under a fair
     * schedule.  Kept out of the reason: a replay of the schedule is the same
     * run and must report the same failure, though it is no search. */
    const char *livelock_note;
} sched_strategy;

extern const sched_strategy sched_strategy_random;
extern const sched_strategy sched_strategy_pct;
extern const sched_strategy sched_strategy_dfs;

const sched_strategy *sched_strategy_for(sched_strategy_kind);

/* PCT's per-run state. */
#define SCHED_PCT_MAX_DEPTH 16
typedef struct sched_pct_state {
    unsigned depth;
    unsigned nchange;                          /* change points, depth - 1 */
    unsigned next_change;                      /* index into change[] */
    uint64_t change[SCHED_PCT_MAX_DEPTH];      /* sorted choice-point numbers in [1, k] */
    uint64_t count;                            /* choice points seen */
    uint64_t low;                              /* next demoted priority (counts down) */
    uint64_t fair_after;                       /* choice points of pure PCT (2k) */
} sched_pct_state;

#endif
