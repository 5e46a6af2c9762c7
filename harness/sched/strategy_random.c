/* Uniform random walk: at each choice point every runnable thread is
 * equally likely.  O(1): one bounded pcg32 draw indexes the runnable array. */
#include "sched_internal.h"

static void random_run_start(sched *s) { (void)s; }
static void random_thread_spawned(sched *s, rt_thread *t) { (void)s; (void)t; }

static rt_thread *random_pick(sched *s) { return s->runnable[pcg32_bounded(&s->rng, s->nrunnable)]; }

const sched_strategy sched_strategy_random = {"random", random_run_start, random_thread_spawned,
                                              random_pick, NULL, NULL};

const sched_strategy *sched_strategy_for(sched_strategy_kind kind) {
    switch (kind) {
    case SCHED_STRATEGY_PCT: return &sched_strategy_pct;
    case SCHED_STRATEGY_DFS: return &sched_strategy_dfs;
    case SCHED_STRATEGY_RANDOM: break;
    }
    return &sched_strategy_random;
}
