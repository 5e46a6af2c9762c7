/* Small programs run under the controlled scheduler by test_sched*.c. */
#ifndef TPHEAL_TEST_SCHED_UTIL_H
#define TPHEAL_TEST_SCHED_UTIL_H

#include <stdint.h>
#include <string.h>

#include "rt.h"
#include "rt_impl.h"
#include "rt_sched.h"

/* A few threads taking turns on a shared counter under one lock, with
 * yields and a seeded choice: many interleavings, all correct. */
typedef struct counter_prog {
    rt_lock lock;
    rt_waitq q;
    int nthreads;
    int iterations;
    uint64_t counter;
    uint64_t order; /* a digest of who incremented when */
} counter_prog;

static void counter_worker(void *p) {
    counter_prog *c = (counter_prog *)p;
    int i;
    for (i = 0; i < c->iterations; i++) {
        rt_lock_acquire(&c->lock);
        c->counter++;
        c->order = c->order * 31u + rt_thread_id();
        rt_lock_release(&c->lock);
        if (rt_choose(3) == 0) rt_yield();
    }
}

static void counter_main(void *p) {
    counter_prog *c = (counter_prog *)p;
    rt_thread *t[16];
    int i;
    for (i = 0; i < c->nthreads; i++) t[i] = rt_spawn("worker", counter_worker, c, false);
    for (i = 0; i < c->nthreads; i++) rt_join(t[i]);
}

static inline void counter_init(counter_prog *c, int nthreads, int iterations) {
    memset(c, 0, sizeof *c);
    c->nthreads = nthreads;
    c->iterations = iterations;
}

static inline sched_result run_counter(uint64_t seed, const char *schedule, counter_prog *c) {
    sched_options o;
    sched_result r;
    sched_options_default(&o);
    o.seed = seed;
    o.schedule = schedule;
    sched_run(&o, counter_main, c, &r);
    return r;
}

#endif
