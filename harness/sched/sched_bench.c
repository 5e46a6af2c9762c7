/* Raw fiber switch rate: the ceiling a scheduling point is measured
 * against (tpheal-harness bench prints points/s as a share of it).  Timed
 * with the thread's CPU clock on POSIX: on the shared 2-core CI machines a
 * wall clock measured the neighbours (load 9: 4x slower, ratios swinging
 * from 24% to 64% between two runs).  For the bench command only, never
 * inside a run. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include <stdint.h>

#include "fiber.h"
#include "rt_sched.h"

#if defined(_WIN32)
#include <windows.h>
double sched_bench_seconds(void) {
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
}
#else
#include <time.h>
double sched_bench_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif

const char *sched_bench_clock_name(void) {
#if defined(_WIN32)
    return "performance-counter";
#else
    return "thread CPU";
#endif
}

typedef struct bench {
    sched_fiber main, other;
    uint64_t n;
} bench;

static void bench_fiber(void *p) {
    bench *b = (bench *)p;
    for (;;) sched_fiber_switch(&b->other, &b->main);
}

double sched_bench_raw_switches_per_sec(uint64_t n) {
    bench b;
    uint64_t i;
    double t0, dt;
    if (n < 2) n = 2;
    sched_fiber_main(&b.main);
    if (sched_fiber_make(&b.other, 64u * 1024u, bench_fiber, &b) != 0) return 0.0;
    b.n = n;
    t0 = sched_bench_seconds();
    for (i = 0; i < n / 2; i++) sched_fiber_switch(&b.main, &b.other); /* two switches each */
    dt = sched_bench_seconds() - t0;
    /* The other fiber is parked mid-loop: it is abandoned, like a daemon. */
    sched_fiber_drop(&b.other);
    sched_fiber_main_done(&b.main);
    return dt > 0 ? (double)(n / 2 * 2) / dt : 0.0;
}
