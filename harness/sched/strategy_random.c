/* Uniform random walk: at each choice point every runnable thread is
 * equally likely.  O(1): one bounded pcg32 draw indexes the runnable array. */
#include <string.h>

#include "sched_internal.h"

static void random_run_start(sched *s) { (void)s; }
static void random_thread_spawned(sched *s, rt_thread *t) { (void)s; (void)t; }

static rt_thread *random_pick(sched *s) { return s->runnable[pcg32_bounded(&s->rng, s->nrunnable)]; }

const sched_strategy sched_strategy_random = {"random", random_run_start, random_thread_spawned,
                                              random_pick, NULL, NULL};

const sched_strategy *sched_strategy_for(sched_strategy_kind kind) {
    switch (kind) {
#define SCHED_STRATEGY_FOR_(k, name) \
    case SCHED_STRATEGY_##k: return &sched_strategy_##name;
        SCHED_STRATEGY_MAP(SCHED_STRATEGY_FOR_)
#undef SCHED_STRATEGY_FOR_
    case SCHED_STRATEGY_COUNT: break;
    }
    return &sched_strategy_random;
}

const char *sched_strategy_name(sched_strategy_kind kind) {
    switch (kind) {
#define SCHED_STRATEGY_NAME_(k, name) \
    case SCHED_STRATEGY_##k: return #name;
        SCHED_STRATEGY_MAP(SCHED_STRATEGY_NAME_)
#undef SCHED_STRATEGY_NAME_
    case SCHED_STRATEGY_COUNT: break;
    }
    return "?";
}

int sched_strategy_find(const char *name) {
    int k;
    for (k = 0; k < SCHED_STRATEGY_COUNT; k++)
        if (strcmp(name, sched_strategy_name((sched_strategy_kind)k)) == 0) return k;
    return -1;
}
