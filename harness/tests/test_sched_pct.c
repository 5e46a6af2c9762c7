/* PCT: a depth-2 ordering bug (B must run between two steps of A) is found
 * at least as often as Burckhardt et al.'s bound 1/(n*k) promises, and
 * never without change points (so the hits are PCT's doing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sched_internal.h"
#include "test_sched_util.h"

typedef struct depth2 {
    int x;
    int bug;
} depth2;

static void thread_a(void *p) {
    depth2 *d = (depth2 *)p;
    int i;
    for (i = 0; i < 5; i++) rt_yield();
    d->x = 1;
    for (i = 0; i < 5; i++) rt_yield();
    d->x = 2;
}

static void thread_b(void *p) {
    depth2 *d = (depth2 *)p;
    int i;
    for (i = 0; i < 5; i++) rt_yield();
    if (d->x == 1) d->bug = 1; /* needs a1 < b < a2: two ordering constraints */
}

static void depth2_main(void *p) {
    rt_thread *a = rt_spawn("a", thread_a, p, false);
    rt_thread *b = rt_spawn("b", thread_b, p, false);
    rt_join(a);
    rt_join(b);
}

static int run_pct(uint64_t seed, unsigned depth, uint64_t k, uint64_t *choice_points) {
    depth2 d;
    sched_options o;
    sched_result r;
    memset(&d, 0, sizeof d);
    sched_options_default(&o);
    o.strategy = SCHED_STRATEGY_PCT;
    o.seed = seed;
    o.pct_depth = depth;
    o.pct_steps = k;
    sched_run(&o, depth2_main, &d, &r);
    assert_int_equal(r.status, SCHED_OK);
    if (choice_points) *choice_points = r.choice_points;
    sched_result_free(&r);
    return d.bug;
}

static uint64_t estimate_k(void) {
    uint64_t k = 0, seed, cp;
    for (seed = 0; seed < 100; seed++) {
        run_pct(900000 + seed, 2, 0, &cp);
        if (cp > k) k = cp;
    }
    return k;
}

static void pct_depth2_meets_its_bound(void **state) {
    enum { RUNS = 2000 };
    const double n = 3.0; /* main, a, b */
    uint64_t k = estimate_k(), seed, hits = 0;
    double rate, bound;
    (void)state;
    for (seed = 0; seed < RUNS; seed++) hits += (uint64_t)run_pct(seed, 2, k, NULL);
    rate = (double)hits / RUNS;
    bound = 1.0 / (n * (double)k);
    print_message("pct d=2: k=%llu, %llu/%d hits, rate %.4f, bound %.4f\n", (unsigned long long)k,
                  (unsigned long long)hits, RUNS, rate, bound);
    assert_true(k > 5);
    assert_true(rate >= bound);
}

static void pct_without_change_points_never_hits_it(void **state) {
    uint64_t seed, hits = 0;
    (void)state;
    for (seed = 0; seed < 500; seed++) hits += (uint64_t)run_pct(seed, 1, 20, NULL);
    assert_int_equal(hits, 0);
}

static void pct_is_deterministic_per_seed(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 200; seed++) {
        depth2 d1, d2;
        sched_options o;
        sched_result r1, r2;
        memset(&d1, 0, sizeof d1);
        memset(&d2, 0, sizeof d2);
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_PCT;
        o.seed = seed;
        o.pct_steps = 30;
        sched_run(&o, depth2_main, &d1, &r1);
        sched_run(&o, depth2_main, &d2, &r2);
        assert_int_equal(r1.interleaving_hash, r2.interleaving_hash);
        assert_int_equal(d1.bug, d2.bug);
        /* and a PCT run replays like any other */
        sched_result_free(&r2);
        memset(&d2, 0, sizeof d2);
        o.schedule = r1.schedule;
        o.strategy = SCHED_STRATEGY_RANDOM;
        sched_run(&o, depth2_main, &d2, &r2);
        assert_int_equal(r2.status, SCHED_OK);
        assert_int_equal(r1.interleaving_hash, r2.interleaving_hash);
        sched_result_free(&r1);
        sched_result_free(&r2);
    }
}

typedef struct flag {
    int set;
} flag;

static void setter(void *p) {
    rt_yield();
    rt_yield();
    ((flag *)p)->set = 1;
}

static void spinner(void *p) {
    while (!((flag *)p)->set) rt_yield();
}

static void spin_main(void *p) {
    rt_thread *a = rt_spawn("spinner", spinner, p, false);
    rt_thread *b = rt_spawn("setter", setter, p, false);
    rt_join(a);
    rt_join(b);
}

static void pct_is_fair_after_its_window(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 200; seed++) {
        flag f = {0};
        sched_options o;
        sched_result r;
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_PCT;
        o.seed = seed;
        o.pct_steps = 20;
        o.max_steps = 100000;
        sched_run(&o, spin_main, &f, &r);
        /* pure PCT starves the setter whenever the spinner ranks higher */
        assert_int_equal(r.status, SCHED_OK);
        assert_true(r.steps < 1000);
        sched_result_free(&r);
    }
}

/* ---- the definition, step by step: the strategy driven by hand ---------- */

#define DEF_THREADS 5

/* One run's decisions, for n threads all runnable: the change points drawn,
 * the priorities given, and per choice point who ran and what was demoted. */
static void pct_follows_its_definition_for(unsigned depth, uint64_t k, uint64_t seed) {
    sched s;
    rt_thread th[DEF_THREADS], *run[DEF_THREADS];
    sched_pct_state *p = &s.st.pct;
    uint64_t step, demotions = 0, last_demoted = UINT64_MAX;
    unsigned i, j;
    memset(&s, 0, sizeof s);
    memset(th, 0, sizeof th);
    s.opt.pct_depth = depth;
    s.opt.pct_steps = k;
    pcg32_seed(&s.rng, seed, 54u);
    sched_strategy_pct.run_start(&s);
    /* d-1 change points, sorted, each in [1, k] */
    assert_int_equal(p->nchange, depth - 1);
    for (i = 0; i < p->nchange; i++) {
        assert_true(p->change[i] >= 1 && p->change[i] <= k);
        if (i) assert_true(p->change[i - 1] <= p->change[i]);
    }
    /* distinct initial priorities, all above every demoted one (< 2^32) */
    for (i = 0; i < DEF_THREADS; i++) {
        th[i].id = i + 1;
        sched_strategy_pct.thread_spawned(&s, &th[i]);
        assert_true(th[i].priority >= (uint64_t)1 << 32);
        for (j = 0; j < i; j++) assert_true(th[i].priority != th[j].priority);
        run[i] = &th[i];
    }
    s.runnable = run;
    s.nrunnable = DEF_THREADS;
    for (step = 1; step <= 2 * k; step++) {
        uint64_t before[DEF_THREADS];
        rt_thread *t, *top = NULL;
        unsigned changed = 0, due = 0;
        for (i = 0; i < DEF_THREADS; i++) before[i] = th[i].priority;
        for (i = 0; i < p->nchange; i++) due += p->change[i] == step;
        t = sched_strategy_pct.pick(&s);
        uint64_t lowest_now = UINT64_MAX;
        for (i = 0; i < DEF_THREADS; i++) {
            if (th[i].priority != before[i]) {
                changed++;
                /* a demotion goes below every thread not demoted at this
                 * step, and below every earlier demotion */
                for (j = 0; j < DEF_THREADS; j++)
                    if (th[j].priority == before[j]) assert_true(th[i].priority < th[j].priority);
                assert_true(th[i].priority < last_demoted);
                if (th[i].priority < lowest_now) lowest_now = th[i].priority;
            }
            if (!top || th[i].priority > top->priority) top = &th[i];
            for (j = 0; j < i; j++) assert_true(th[i].priority != th[j].priority);
        }
        if (changed) last_demoted = lowest_now;
        /* a change point demotes exactly at its step (one thread each:
         * points drawn on one step demote the top, then the next top);
         * none elsewhere */
        assert_int_equal(changed, due);
        demotions += changed;
        /* the highest priority runs while pure PCT lasts (2k choice points) */
        assert_ptr_equal(t, top);
    }
    /* every change point fell in the first k steps and was taken */
    assert_int_equal(demotions, depth - 1);
}

/* The rank is drawn from the whole 32-bit range, its lowest draw included:
 * a generator whose state is 0 yields 0 next (XSH-RR of 0), and the thread
 * drawn it still ranks above every demotion (>= 2^32), not at its id. */
static void pct_ranks_the_lowest_draw_above_the_demotions(void **state) {
    sched s;
    rt_thread t;
    (void)state;
    memset(&s, 0, sizeof s);
    memset(&t, 0, sizeof t);
    s.opt.pct_depth = 3;
    s.opt.pct_steps = 10;
    pcg32_seed(&s.rng, 1, 54u);
    sched_strategy_pct.run_start(&s);
    t.id = 1;
    s.rng.state = 0;
    sched_strategy_pct.thread_spawned(&s, &t);
    if (t.priority < (uint64_t)1 << 32) fail_msg("priority %llu, below the demotion range", (unsigned long long)t.priority);
}

static void pct_follows_its_definition(void **state) {
    unsigned d;
    uint64_t seed, ks[] = {1, 2, 7, 40, 300};
    size_t ki;
    (void)state;
    for (d = 1; d <= 6; d++)
        for (ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (seed = 0; seed < 40; seed++) pct_follows_its_definition_for(d, ks[ki], seed);
}

/* ---- the bound, measured: a bug of depth d is hit at >= 1/(n k^(d-1)) ------ */

/* Runs per depth: enough that the bound predicts >= 20 hits (a rate at the
 * bound is then told from one at half of it), which the test checks.  k,
 * the program's choice points, is its own: 5 yields before each of its d+1
 * steps and the spawns around them (sched_bench.c), the same every run. */
static void pct_meets_its_bound_at_depth(unsigned d, uint64_t runs, uint64_t want_k) {
    sched_bench_pct_out o, below;
    double rate;
    assert_int_equal(sched_bench_pct(d, d, runs, 0, &o), 0);
    rate = (double)o.hits / (double)o.runs;
    print_message("pct on a depth-%u bug: n=%llu k=%llu, %llu/%llu hits, rate %.5f, bound %.5f\n", d,
                  (unsigned long long)o.threads, (unsigned long long)o.k, (unsigned long long)o.hits,
                  (unsigned long long)o.runs, rate, o.bound);
    assert_int_equal(o.k, want_k);
    assert_true(o.bound * (double)o.runs >= 20.0);
    assert_true(rate >= o.bound);
    /* one change point short, the bug is out of reach: the hits above are
     * the change points' doing, and the program's depth is what it says */
    assert_int_equal(sched_bench_pct(d, d - 1, runs / 4, 0, &below), 0);
    assert_int_equal(below.hits, 0);
}

static void pct_meets_its_bound_at_depths_2_and_3(void **state) {
    (void)state;
    pct_meets_its_bound_at_depth(2, 4000, 18);
    pct_meets_its_bound_at_depth(3, 40000, 22);
}

/* Depth 1, the smallest bug PCT has: a1 < b1, one ordering constraint, hit
 * by a run that starts a above b -- with no change points (depth 1 means
 * none), at >= 1/n.  Nothing below depth 1 to compare with. */
static void pct_meets_its_bound_at_depth_1(void **state) {
    sched_bench_pct_out o;
    double rate;
    (void)state;
    assert_int_equal(sched_bench_pct(1, 1, 60, 0, &o), 0);
    rate = (double)o.hits / (double)o.runs;
    print_message("pct on a depth-1 bug: n=%llu k=%llu, %llu/%llu hits, rate %.5f, bound %.5f\n",
                  (unsigned long long)o.threads, (unsigned long long)o.k, (unsigned long long)o.hits,
                  (unsigned long long)o.runs, rate, o.bound);
    assert_int_equal(o.runs, 60);
    assert_int_equal(o.k, 12);
    assert_true(o.bound * (double)o.runs >= 20.0);
    assert_true(rate >= o.bound);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pct_depth2_meets_its_bound),
        cmocka_unit_test(pct_without_change_points_never_hits_it),
        cmocka_unit_test(pct_is_deterministic_per_seed),
        cmocka_unit_test(pct_is_fair_after_its_window),
        cmocka_unit_test(pct_follows_its_definition),
        cmocka_unit_test(pct_ranks_the_lowest_draw_above_the_demotions),
        cmocka_unit_test(pct_meets_its_bound_at_depth_1),
        cmocka_unit_test(pct_meets_its_bound_at_depths_2_and_3),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
