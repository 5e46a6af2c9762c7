/* `tpheal-harness bench` (scn_bench.h): the reference race, timed.
 *
 * Honesty rules (issue 3):
 * - every rate printed comes from this one process and this one invocation:
 *   the scenario runs and the raw fiber switch ceiling are measured back to
 *   back, with the same clock;
 * - the clock is the thread's CPU time (on POSIX; Windows: below): the
 *   machine is shared and a wall clock measured the neighbours (load 9: 4x
 *   slower).  Wall time is printed next to it, so a reader sees how loaded
 *   the machine was;
 * - enough runs to be stable: 200 runs took 0.023 s and swung by 2x between
 *   invocations; the default is 5,000 seeds (about half a second), and the
 *   seed count is printed.
 * Memory: a 16-thread scenario is run too, and the most fibers alive at once,
 * the per-fiber stack and the process's peak RSS are printed against the
 * targets (<= 64 KiB a fiber, <= 32 MiB for a 16-thread run). */
#include "scn_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_sched.h"
#include "sched_dfs.h"
#include "scn_ast.h"
#include "scn_campaign.h"
#include "scn_clock.h"
#include "scn_run.h"
#include "scn_text.h"

/* Peak resident set of this process in KiB, or 0 where it is not read.
 * VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across execve
 * (docs/sabotage.md), so under a big parent it reports the parent. */
static unsigned long peak_rss_kib(void) {
    unsigned long kib = 0;
#if defined(__linux__)
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = strtoul(line + 6, NULL, 10);
            break;
        }
    fclose(f);
#endif
    return kib;
}

/* The reference scenario: three threads race a cancellation, a tick and a
 * retirement on the default pool; a few hundred scheduling points a run. */
static const char bench_scenario[] =
    "# purpose: bench reference: a cancellation, a tick and a retirement racing\n"
    "event E manual\n"
    "wait X event E\n"
    "work W\n"
    "thread canceller\n"
    "  arm X\n"
    "  signal E\n"
    "  try_cancel_pending X\n"
    "  submit W\n"
    "end\n"
    "thread ticker\n"
    "  tick\n"
    "  tick\n"
    "end\n"
    "thread retirer\n"
    "  retire_idle\n"
    "  sleep 1ms\n"
    "  retire_idle\n"
    "end\n";

/* The memory figure: 16 scenario threads at once, each submitting and
 * ticking, so the default pool's workers and the timer service are alive
 * too. */
#define MEM_THREADS 16
#define MEM_SEEDS 200

static scn_scenario *parse_mem_scenario(scn_error *e) {
    scn_text t = {0};
    scn_scenario *s;
    int i;
    scn_text_printf(&t, "# purpose: bench memory: %d threads submit and tick at once\nwork W\n", MEM_THREADS);
    for (i = 0; i < MEM_THREADS; i++) scn_text_printf(&t, "thread t%d\n  submit W\n  tick\n  yield\nend\n", i + 1);
    s = scn_parse("bench-memory", t.s, t.n, e);
    scn_text_free(&t);
    return s;
}

typedef struct bench_tally {
    uint64_t runs, failures, steps;
    uint32_t fibers_peak;
} bench_tally;

/* The campaign's observer: the tally. */
static bool tally_run(void *ctx, uint64_t j, const scn_run_opts *ro, const scn_run_out *r) {
    bench_tally *t = (bench_tally *)ctx;
    (void)j;
    (void)ro;
    t->runs++;
    t->steps += r->steps;
    if (!r->passed) t->failures++;
    if (r->fibers_peak > t->fibers_peak) t->fibers_peak = r->fibers_peak;
    return true;
}

/* Seeds 0..n-1, random walk and PCT alternately: random the even ones, PCT
 * the odd ones, each strategy a campaign of its own. */
static uint64_t alternate_seed(void *ctx, sched_strategy_kind st, uint64_t j) {
    (void)ctx;
    return 2 * j + (st == SCHED_STRATEGY_PCT);
}

/* A run that could not start counts as failed, and the runs go on. */
static bool tally_refused(void *ctx, uint64_t j, const scn_run_opts *ro, const scn_run_out *r) {
    (void)j;
    (void)ro;
    (void)r;
    ((bench_tally *)ctx)->failures++;
    return true;
}

/* A campaign's runs into t. */
static void campaign(const scn_scenario *s, const scn_campaign_opts *co, bench_tally *t, bool *complete) {
    scn_campaign_observer obs = {t, NULL, tally_run, tally_refused};
    scn_campaign_result res;
    scn_campaign_run(s, co, &obs, &res);
    if (complete) *complete = res.dfs && sched_dfs_complete(res.dfs);
    scn_campaign_result_free(&res);
}

/* PCT's k is k, the campaign's probe made once by the caller, outside
 * what the bench times. */
static void run_seeds(const scn_scenario *s, uint64_t n, uint64_t k, bench_tally *t) {
    scn_campaign_opts co;
    memset(t, 0, sizeof *t);
    memset(&co, 0, sizeof co);
    co.seed_at = alternate_seed;
    co.depth = 3;
    co.pct_steps = k;
    co.tail_on_failure = true;
    co.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_RANDOM);
    co.runs = (n + 1) / 2;
    campaign(s, &co, t, NULL);
    co.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_PCT);
    co.runs = n / 2;
    campaign(s, &co, t, NULL);
}

/* The DFS strategy on the same scenario: up to n runs of the bounded
 * search (a replay of its prefix and an extension each). */
static void run_dfs(const scn_scenario *s, uint64_t n, unsigned bound, bench_tally *t, bool *complete) {
    scn_campaign_opts co;
    memset(t, 0, sizeof *t);
    memset(&co, 0, sizeof co);
    co.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_DFS);
    co.runs = n;
    co.preemptions = bound;
    co.tail_on_failure = true;
    campaign(s, &co, t, complete);
}

double scn_bench_rate(uint64_t seeds) {
    scn_error e;
    bench_tally t;
    double c0, cpu;
    scn_scenario *s = scn_parse("bench", bench_scenario, sizeof bench_scenario - 1, &e);
    if (!s) return -1.0;
    /* Warm first, untimed: the race build's first runs map every fiber
     * stack and create every TSan fiber it later recycles (fiber_stack.c),
     * which a short bench would otherwise mostly measure. */
    uint64_t k = scn_campaign_pct_steps(s);
    run_seeds(s, seeds < 200 ? seeds : 200, k, &t);
    c0 = sched_bench_seconds();
    run_seeds(s, seeds, k, &t);
    cpu = sched_bench_seconds() - c0;
    scn_free(s);
    sched_release_cache();
    if (t.failures) return -1.0;
    return cpu > 0 ? (double)t.runs / cpu : 0.0;
}

int scn_bench_main(uint64_t seeds) {
    scn_error e;
    scn_scenario *s, *mem;
    bench_tally t, m, dt;
    double d0, dcpu;
    bool dcomplete;
    sched_options so;
    double c0, w0, cpu, wall, raw, pts;
    unsigned long rss;
    size_t stack_kib;
    const char *clk;
    unsigned pd;
    bool pct_bad = false;
    uint64_t k;
    s = scn_parse("bench", bench_scenario, sizeof bench_scenario - 1, &e);
    if (!s) {
        fprintf(stderr, "bench:%d:%d: %s\n", e.line, e.col, e.msg);
        return 2;
    }
    mem = parse_mem_scenario(&e);
    if (!mem) {
        fprintf(stderr, "bench-memory:%d:%d: %s\n", e.line, e.col, e.msg);
        scn_free(s);
        return 2;
    }
    k = scn_campaign_pct_steps(s); /* untimed: PCT's k, the campaign's one definition */
    c0 = sched_bench_seconds();
    w0 = scn_wall_seconds();
    run_seeds(s, seeds, k, &t);
    cpu = sched_bench_seconds() - c0;
    wall = scn_wall_seconds() - w0;
    raw = sched_bench_raw_switches_per_sec(4000000);
    d0 = sched_bench_seconds();
    run_dfs(s, seeds, 1, &dt, &dcomplete);
    dcpu = sched_bench_seconds() - d0;
    run_seeds(mem, MEM_SEEDS, scn_campaign_pct_steps(mem), &m);
    rss = peak_rss_kib();
    sched_options_default(&so);
    stack_kib = so.stack_size / 1024u;
    clk = sched_bench_clock_name();
    pts = cpu > 0 ? (double)t.steps / cpu : 0.0;
    printf("bench: reference race, seeds 0..%llu (random and PCT alternately), %llu runs, %llu failed\n",
           (unsigned long long)(seeds - 1), (unsigned long long)t.runs, (unsigned long long)t.failures);
    printf("  time:                   %.3f s %s, %.3f s wall\n", cpu, clk, wall);
    printf("  schedules/s:            %.0f per %s second (%.0f wall)  target >= 10000\n",
           cpu > 0 ? (double)t.runs / cpu : 0.0, clk, wall > 0 ? (double)t.runs / wall : 0.0);
    printf("  scheduling points/run:  %.1f\n", t.runs ? (double)t.steps / (double)t.runs : 0.0);
    printf("  scheduling points/s:    %.0f per %s second (%.0f wall)\n", pts, clk,
           wall > 0 ? (double)t.steps / wall : 0.0);
    printf("  raw fiber switches/s:   %.0f per %s second (same process, after the runs)\n", raw, clk);
    printf("  points/s : raw switches/s = %.1f%%  target >= 30%%\n", raw > 0 ? 100.0 * pts / raw : 0.0);
    printf("dfs: the same scenario, <= 1 preemption, %llu runs (%s), %llu failed\n", (unsigned long long)dt.runs,
           dcomplete ? "the whole bounded tree" : "stopped at the seed count", (unsigned long long)dt.failures);
    printf("  schedules/s:            %.0f per %s second  (points/run %.1f)\n",
           dcpu > 0 ? (double)dt.runs / dcpu : 0.0, clk, dt.runs ? (double)dt.steps / (double)dt.runs : 0.0);
    printf("memory: %d-thread scenario, %llu runs (%llu failed)\n", MEM_THREADS, (unsigned long long)m.runs,
           (unsigned long long)m.failures);
    /* %lu, not %zu: mingw's msvcrt printf has no z */
    printf("  fiber stack:            %lu KiB each  target <= 64 KiB\n", (unsigned long)stack_kib);
    printf("  fibers alive at most:   %u (%lu KiB of stacks)\n", (unsigned)m.fibers_peak,
           (unsigned long)m.fibers_peak * (unsigned long)stack_kib);
    if (rss)
        printf("  peak RSS (VmHWM):       %.1f MiB, the whole bench process  target <= 32 MiB\n", rss / 1024.0);
    else
        printf("  peak RSS:               not read on this platform\n");
    /* PCT against its bound on a bug of known depth (sched_bench_pct): the
     * runs are deterministic, so the line is the same on every machine */
    for (pd = 2; pd <= 3; pd++) {
        sched_bench_pct_out po;
        uint64_t pr = pd == 2 ? 4000 : 40000;
        if (sched_bench_pct(pd, pd, pr, 0, &po) != 0) {
            printf("pct: depth-%u bug: a run did not end normally\n", pd);
            pct_bad = true;
            continue;
        }
        if ((double)po.hits < po.bound * (double)po.runs) pct_bad = true;
        printf("pct: depth-%u bug, n=%llu k=%llu: %llu/%llu runs hit it (%.4f)  bound 1/(n k^%u) = %.5f%s\n", pd,
               (unsigned long long)po.threads, (unsigned long long)po.k, (unsigned long long)po.hits,
               (unsigned long long)po.runs, (double)po.hits / (double)po.runs, pd - 1, po.bound,
               (double)po.hits < po.bound * (double)po.runs ? "  BELOW THE BOUND" : "");
    }
    scn_free(mem);
    scn_free(s);
    sched_release_cache();
    return t.failures || m.failures || dt.failures || pct_bad ? 1 : 0;
}
