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
#include <string.h>

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
    memset(&b, 0, sizeof b); /* fibers start zeroed, as every rt_thread's (calloc'd) */
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

/* PCT's hit rate on a bug of known depth d (sched_bench_pct, rt_sched.h).
 * Two threads alternate through d+1 stages: a owns the even ones, b the odd
 * ones, and stage i+1 is taken only by a step that sees stage i.  The bug
 * (every stage taken) is a1 < b1 < a2 < b2 < ...: d ordering constraints,
 * so depth d -- a run needs a above b at the start and each of its d-1
 * change points at the one step that hands the stage over.  Each step is
 * preceded by 5 yields, so k is a few dozen choice points. */
typedef struct pct_chain {
    unsigned stages; /* d + 1 */
    unsigned stage;
} pct_chain;

static void chain_thread(pct_chain *c, unsigned parity) {
    unsigned st, y;
    for (st = parity; st < c->stages; st += 2) {
        for (y = 0; y < 5; y++) rt_yield();
        if (c->stage == st) c->stage = st + 1;
    }
}

static void chain_a(void *p) { chain_thread((pct_chain *)p, 0); }
static void chain_b(void *p) { chain_thread((pct_chain *)p, 1); }

static void chain_main(void *p) {
    rt_thread *a = rt_spawn("a", chain_a, p, false);
    rt_thread *b = rt_spawn("b", chain_b, p, false);
    rt_join(a);
    rt_join(b);
}

static int chain_run(unsigned bug_depth, unsigned pct_depth, uint64_t k, uint64_t seed, uint64_t *choice_points) {
    pct_chain c;
    sched_options o;
    sched_result r;
    int hit;
    c.stages = bug_depth + 1;
    c.stage = 0;
    sched_options_default(&o);
    o.strategy = SCHED_STRATEGY_PCT;
    o.seed = seed;
    o.pct_depth = pct_depth;
    o.pct_steps = k;
    if (sched_run(&o, chain_main, &c, &r) != 0) return -1;
    hit = r.status == SCHED_OK ? c.stage == c.stages : -1;
    if (choice_points) *choice_points = r.choice_points;
    sched_result_free(&r);
    return hit;
}

int sched_bench_pct(unsigned bug_depth, unsigned pct_depth, uint64_t runs, uint64_t first_seed, sched_bench_pct_out *out) {
    uint64_t i, cp;
    int h;
    double kd = 1.0;
    unsigned j;
    memset(out, 0, sizeof *out);
    if (bug_depth < 1 || pct_depth < 1 || runs == 0) return -1;
    /* k: the most choice points of 100 probe runs, as the runner measures
     * it for a scenario (harness/cli/cmd_run.c, pct_steps_for) */
    for (i = 0; i < 100; i++) {
        if (chain_run(bug_depth, pct_depth, 0, first_seed + runs + i, &cp) < 0) return -1;
        if (cp > out->k) out->k = cp;
    }
    out->threads = 3; /* main, a, b */
    for (i = 0; i < runs; i++) {
        if ((h = chain_run(bug_depth, pct_depth, out->k, first_seed + i, NULL)) < 0) return -1;
        out->hits += (uint64_t)h;
    }
    out->runs = runs;
    for (j = 1; j < bug_depth; j++) kd *= (double)out->k;
    out->bound = 1.0 / ((double)out->threads * kd);
    return 0;
}
