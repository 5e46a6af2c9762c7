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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pct_depth2_meets_its_bound),
        cmocka_unit_test(pct_without_change_points_never_hits_it),
        cmocka_unit_test(pct_is_deterministic_per_seed),
        cmocka_unit_test(pct_is_fair_after_its_window),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
