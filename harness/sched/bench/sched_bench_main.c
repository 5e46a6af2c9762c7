/* tpheal_sched_bench: the scheduler's own figures (README.md).
 *   raw fiber switches/s, scheduling points/s and ns per point on a run of
 *   yielding threads, schedules/s on a small lock-and-choose program with a
 *   few hundred points per run.
 * Usage: tpheal_sched_bench [runs]   (default 20000) */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt.h"
#include "rt_sched.h"

/* Rates on the benchmarks' one clock (sched_bench_seconds, rt_sched.h). */
typedef struct prog {
    rt_lock lock;
    uint64_t counter;
    int threads, iterations;
} prog;

static void worker(void *p) {
    prog *g = (prog *)p;
    int i;
    for (i = 0; i < g->iterations; i++) {
        rt_lock_acquire(&g->lock);
        g->counter++;
        rt_lock_release(&g->lock);
        if (rt_choose(4) == 0) rt_yield();
    }
}

static void yielder(void *p) {
    int i, n = ((prog *)p)->iterations;
    for (i = 0; i < n; i++) rt_yield();
}

static void prog_main(void *p) {
    prog *g = (prog *)p;
    rt_thread *t[16];
    int i;
    for (i = 0; i < g->threads; i++) t[i] = rt_spawn("w", worker, g, false);
    for (i = 0; i < g->threads; i++) rt_join(t[i]);
}

static void yield_main(void *p) {
    prog *g = (prog *)p;
    rt_thread *a = rt_spawn("a", yielder, g, false);
    rt_thread *b = rt_spawn("b", yielder, g, false);
    rt_join(a);
    rt_join(b);
}

static void bench_runs(const char *label, rt_thread_fn fn, int threads, int iterations, long runs,
                       sched_strategy_kind strategy, double raw) {
    uint64_t steps = 0, switches = 0;
    long i;
    double t0 = sched_bench_seconds(), dt;
    for (i = 0; i < runs; i++) {
        prog g;
        sched_options o;
        sched_result r;
        memset(&g, 0, sizeof g);
        g.threads = threads;
        g.iterations = iterations;
        sched_options_default(&o);
        o.seed = (uint64_t)i;
        o.strategy = strategy;
        sched_run(&o, fn, &g, &r);
        if (r.status != SCHED_OK) {
            fprintf(stderr, "run %ld: %s\n", i, r.reason);
            exit(1);
        }
        steps += r.steps;
        switches += r.switches;
        sched_result_free(&r);
    }
    dt = sched_bench_seconds() - t0;
    printf("%-26s %8.0f schedules/s  %6.0f points/run  %10.0f points/s  %5.1f ns/point  "
           "%4.0f%% of raw switch rate  (%.0f switches/run)\n",
           label, runs / dt, (double)steps / runs, (double)steps / dt, dt * 1e9 / (double)steps,
           100.0 * ((double)steps / dt) / raw, (double)switches / runs);
}

int main(int argc, char **argv) {
    long runs = argc > 1 ? atol(argv[1]) : 20000;
    double raw = sched_bench_raw_switches_per_sec(20000000);
    printf("raw fiber switch: %.0f switches/s (%.1f ns per switch)\n", raw, 1e9 / raw);
    bench_runs("yield 2x150 (random)", yield_main, 2, 150, runs, SCHED_STRATEGY_RANDOM, raw);
    bench_runs("lock 4x50 (random)", prog_main, 4, 50, runs, SCHED_STRATEGY_RANDOM, raw);
    bench_runs("lock 4x50 (pct)", prog_main, 4, 50, runs, SCHED_STRATEGY_PCT, raw);
    bench_runs("lock 16x10 (random)", prog_main, 16, 10, runs, SCHED_STRATEGY_RANDOM, raw);
    sched_release_cache();
    return 0;
}
