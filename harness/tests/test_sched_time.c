/* Idle time (rt_sched.h, SCHED_TIME_IDLE): the clock stands while a thread
 * can run, jumps to the earliest deadline when none can, and jumps anyway
 * after SCHED_IDLE_BUSY_POINTS points with a deadline pending; a schedule
 * recorded on it says so and replays on it whatever the options say.  And
 * the diagnostic section (rt_lock_acquire_diagnostic): no scheduling point
 * may fall inside one; the atomic section (rt_lock_atomic_sections): on
 * idle time nobody else runs inside one unless its holder blocks; a
 * scoped section (rt_lock_acquire_scoped) only on a lock so marked; and a
 * settling thread (rt_settle_until) wakes only once the process is quiet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_sched_util.h"

static sched_result run_on(sched_time_model time, rt_thread_fn fn, void *arg, uint64_t seed, const char *schedule) {
    sched_options o;
    sched_result r;
    sched_options_default(&o);
    o.seed = seed;
    o.time = time;
    o.schedule = schedule;
    assert_int_equal(sched_run(&o, fn, arg, &r), 0);
    return r;
}

/* Runs fn on step time: the run must end as misuse saying `what`. */
static void expect_misuse(rt_thread_fn fn, void *arg, const char *what) {
    sched_result r = run_on(SCHED_TIME_STEPS, fn, arg, 0, NULL);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_non_null(strstr(r.reason, what));
    sched_result_free(&r);
}

/* main reads the clock, yields 50 times with a sleeper pending, reads it
 * again, then sleeps until 1000 with nobody else to run. */
typedef struct clock_reads {
    uint64_t before, after_yields, after_sleep;
} clock_reads;
static void sleeper(void *p) {
    (void)p;
    rt_sleep_until(5000);
}
static void clock_main(void *p) {
    clock_reads *c = (clock_reads *)p;
    int i;
    (void)rt_spawn("sleeper", sleeper, NULL, false);
    c->before = rt_now();
    for (i = 0; i < 50; i++) rt_yield();
    c->after_yields = rt_now();
    rt_sleep_until(1000);
    c->after_sleep = rt_now();
}

static void idle_time_stands_while_a_thread_runs_and_jumps_when_none_can(void **state) {
    clock_reads c;
    sched_result r;
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 20; seed++) {
        memset(&c, 0, sizeof c);
        r = run_on(SCHED_TIME_IDLE, clock_main, &c, seed, NULL);
        assert_int_equal(r.status, SCHED_OK);
        assert_true(c.before == 0 && c.after_yields == 0);
        assert_true(c.after_sleep == 1000); /* the earliest deadline exactly */
        assert_true(r.virtual_time == 5000);
        sched_result_free(&r);
    }
    /* on step time the yields move the clock */
    memset(&c, 0, sizeof c);
    r = run_on(SCHED_TIME_STEPS, clock_main, &c, 0, NULL);
    assert_true(c.after_yields >= c.before + 50u * 10u);
    sched_result_free(&r);
}

/* A spinner yields until a sleeper's flag is up; nobody ever waits, so only
 * the busy jump lets the sleeper's deadline come.  It comes after exactly
 * SCHED_IDLE_BUSY_POINTS points since the last jump: with one choice at the
 * spawn, the run's step count is fixed within a few points. */
typedef struct busy {
    volatile int flag;
    uint64_t woke_at, steps_seen;
} busy;
static void busy_sleeper(void *p) {
    busy *b = (busy *)p;
    rt_sleep_until(20000);
    b->woke_at = rt_now();
    b->flag = 1;
}
static void busy_main(void *p) {
    busy *b = (busy *)p;
    (void)rt_spawn("sleeper", busy_sleeper, p, false);
    while (!b->flag) rt_yield();
}

static void idle_time_jumps_after_a_busy_stretch(void **state) {
    busy b;
    sched_result r;
    (void)state;
    memset(&b, 0, sizeof b);
    r = run_on(SCHED_TIME_IDLE, busy_main, &b, 7, NULL);
    assert_int_equal(r.status, SCHED_OK);
    assert_true(b.woke_at == 20000);
    assert_true(r.steps >= SCHED_IDLE_BUSY_POINTS && r.steps <= SCHED_IDLE_BUSY_POINTS + 10u);
    sched_result_free(&r);
}

/* The header names the model, and a replay runs on the schedule's model:
 * the idle run's schedule replayed with step time in the options gives the
 * same interleaving and the same clock. */
static void an_idle_schedule_says_so_and_replays_on_idle_time(void **state) {
    clock_reads c, again;
    sched_result r, rr;
    char *schedule;
    (void)state;
    memset(&c, 0, sizeof c);
    r = run_on(SCHED_TIME_IDLE, clock_main, &c, 3, NULL);
    assert_int_equal(strncmp(r.schedule, "T1/idle:", 8), 0);
    schedule = r.schedule;
    memset(&again, 0, sizeof again);
    rr = run_on(SCHED_TIME_STEPS, clock_main, &again, 99, schedule);
    assert_int_equal(rr.status, SCHED_OK);
    assert_true(rr.interleaving_hash == r.interleaving_hash);
    assert_true(rr.virtual_time == r.virtual_time);
    assert_true(again.after_yields == 0 && again.after_sleep == 1000);
    sched_result_free(&rr);
    sched_result_free(&r);
    r = run_on(SCHED_TIME_STEPS, clock_main, &c, 3, NULL);
    assert_int_equal(strncmp(r.schedule, "T1:", 3), 0);
    sched_result_free(&r);
}

/* ---- diagnostic sections ---- */

static void yield_inside_diagnostic(void *p) {
    rt_lock *l = (rt_lock *)p;
    rt_lock_acquire_diagnostic(l);
    rt_yield();
    rt_lock_release(l);
}
static void wait_inside_diagnostic(void *p) {
    rt_lock *l = (rt_lock *)p;
    rt_waitq q;
    memset(&q, 0, sizeof q);
    rt_lock_acquire_diagnostic(l);
    (void)rt_wait(&q, l, 10, "never");
    rt_lock_release(l);
}
/* Observed first: an ordinary section, which may wait. */
static void wait_after_observed(void *p) {
    rt_lock *l = (rt_lock *)p;
    rt_waitq q;
    memset(&q, 0, sizeof q);
    rt_lock_acquire_diagnostic(l);
    rt_lock_observed(l);
    (void)rt_wait(&q, l, 10, "timeout");
    rt_lock_release(l);
}
static void nested_release(void *p) {
    rt_lock *l = (rt_lock *)p;
    rt_lock_acquire_diagnostic(l);
    rt_lock_release(l);
    rt_yield(); /* the section is over: allowed */
}

static void a_scheduling_point_inside_a_diagnostic_section_is_misuse(void **state) {
    static const rt_thread_fn bad[] = {yield_inside_diagnostic, wait_inside_diagnostic};
    static const rt_thread_fn good[] = {wait_after_observed, nested_release};
    rt_lock l;
    sched_result r;
    size_t i;
    (void)state;
    for (i = 0; i < 2; i++) {
        memset(&l, 0, sizeof l);
        expect_misuse(bad[i], &l, "inside a diagnostic section");
        memset(&l, 0, sizeof l);
        r = run_on(SCHED_TIME_IDLE, good[i], &l, 0, NULL);
        assert_int_equal(r.status, SCHED_OK);
        sched_result_free(&r);
    }
}

static void observed_unheld(void *p) { rt_lock_observed((rt_lock *)p); }

static void observing_a_lock_not_held_is_misuse(void **state) {
    rt_lock l;
    (void)state;
    memset(&l, 0, sizeof l);
    expect_misuse(observed_unheld, &l, "rt_lock_observed of a lock not held");
}

/* rt_lock_acquire_scoped needs a lock whose sections are atomic. */
static void scoped_on_unmarked(void *p) {
    rt_lock *l = (rt_lock *)p;
    rt_lock_acquire_scoped(l);
    rt_lock_release(l);
}
static void a_scoped_section_on_an_unmarked_lock_is_misuse(void **state) {
    rt_lock l;
    (void)state;
    memset(&l, 0, sizeof l);
    expect_misuse(scoped_on_unmarked, &l, "rt_lock_acquire_scoped of a lock not marked");
}

/* A holds L for three yields and a wake; B, which never takes L, yields and
 * looks whether A is inside.  With L marked, on idle time B never sees it
 * (200 seeds); on step time, or unmarked, the random walk switches at A's
 * points and B does. */
typedef struct inside {
    rt_lock l;
    rt_waitq q;
    bool marked, in, seen;
} inside;
static void inside_a(void *p) {
    inside *x = (inside *)p;
    rt_lock_acquire(&x->l);
    x->in = true;
    rt_yield();
    rt_wake_all(&x->q);
    rt_yield();
    rt_yield();
    x->in = false;
    rt_lock_release(&x->l);
}
static void inside_b(void *p) {
    inside *x = (inside *)p;
    int i;
    for (i = 0; i < 6; i++) {
        rt_yield();
        if (x->in) x->seen = true;
    }
}
static void inside_main_ab(void *p) {
    inside *x = (inside *)p;
    rt_thread *b;
    if (x->marked) rt_lock_atomic_sections(&x->l);
    b = rt_spawn("b", inside_b, x, false);
    inside_a(x);
    rt_join(b);
}
static unsigned seeds_seeing_inside(sched_time_model time, bool marked) {
    unsigned n = 0;
    uint64_t seed;
    for (seed = 0; seed < 200; seed++) {
        inside x;
        sched_result r;
        memset(&x, 0, sizeof x);
        x.marked = marked;
        r = run_on(time, inside_main_ab, &x, seed, NULL);
        assert_int_equal(r.status, SCHED_OK);
        sched_result_free(&r);
        if (x.seen) n++;
    }
    return n;
}
static void an_atomic_section_runs_through_its_points_on_idle_time(void **state) {
    (void)state;
    assert_int_equal(seeds_seeing_inside(SCHED_TIME_IDLE, true), 0);
    assert_true(seeds_seeing_inside(SCHED_TIME_IDLE, false) > 0);
    assert_true(seeds_seeing_inside(SCHED_TIME_STEPS, true) > 0);
}

/* A holder that blocks inside its atomic section lets the others run: A
 * holds L (marked) and waits for M, which B holds until it has yielded. */
typedef struct blocker {
    rt_lock l, m;
    bool b_has_m;
} blocker;
static void blocker_b(void *p) {
    blocker *x = (blocker *)p;
    rt_lock_acquire(&x->m);
    x->b_has_m = true;
    rt_yield();
    rt_yield();
    rt_lock_release(&x->m);
}
static void blocker_main(void *p) {
    blocker *x = (blocker *)p;
    rt_thread *b;
    rt_lock_atomic_sections(&x->l);
    b = rt_spawn("b", blocker_b, x, false);
    while (!x->b_has_m) rt_yield();
    rt_lock_acquire(&x->l);
    rt_lock_acquire(&x->m);
    rt_lock_release(&x->m);
    rt_lock_release(&x->l);
    rt_join(b);
}
static void an_atomic_section_whose_holder_blocks_lets_others_run(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 50; seed++) {
        blocker x;
        sched_result r;
        memset(&x, 0, sizeof x);
        r = run_on(SCHED_TIME_IDLE, blocker_main, &x, seed, NULL);
        assert_int_equal(r.status, SCHED_OK);
        sched_result_free(&r);
    }
}

/* A ticker sleeps until 1000, 2000 and 3000 and yields five times after
 * each; main waits until 2000 and reads how many rounds the ticker has
 * finished.  Settling, it wakes after the round due with it and before the
 * next: 2 rounds, at a time in [2000, 3000).  A plain sleep due at the same
 * instant as the ticker may run before the round (shown: the test can fail). */
typedef struct settle_probe {
    bool settle;
    int rounds, seen;
    uint64_t woke_at;
} settle_probe;
static void settle_ticker(void *p) {
    settle_probe *x = (settle_probe *)p;
    int k, i;
    for (k = 1; k <= 3; k++) {
        rt_sleep_until(1000u * (uint64_t)k);
        for (i = 0; i < 5; i++) rt_yield();
        x->rounds = k;
    }
}
static void settle_main(void *p) {
    settle_probe *x = (settle_probe *)p;
    rt_thread *t = rt_spawn("ticker", settle_ticker, x, false);
    if (x->settle) rt_settle_until(2000);
    else rt_sleep_until(2000);
    x->seen = x->rounds;
    x->woke_at = rt_now();
    rt_join(t);
}
static unsigned seeds_waking_mid_round(sched_time_model time, bool settle) {
    unsigned n = 0;
    uint64_t seed;
    for (seed = 0; seed < 50; seed++) {
        settle_probe x;
        sched_result r;
        memset(&x, 0, sizeof x);
        x.settle = settle;
        r = run_on(time, settle_main, &x, seed, NULL);
        assert_int_equal(r.status, SCHED_OK);
        sched_result_free(&r);
        assert_true(x.woke_at >= 2000 && x.woke_at < 3000);
        if (x.seen != 2) n++;
    }
    return n;
}
static void a_settling_thread_wakes_once_the_process_is_quiet(void **state) {
    (void)state;
    assert_int_equal(seeds_waking_mid_round(SCHED_TIME_IDLE, true), 0);
    assert_int_equal(seeds_waking_mid_round(SCHED_TIME_STEPS, true), 0);
    assert_true(seeds_waking_mid_round(SCHED_TIME_IDLE, false) > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_time_stands_while_a_thread_runs_and_jumps_when_none_can),
        cmocka_unit_test(idle_time_jumps_after_a_busy_stretch),
        cmocka_unit_test(an_idle_schedule_says_so_and_replays_on_idle_time),
        cmocka_unit_test(a_scheduling_point_inside_a_diagnostic_section_is_misuse),
        cmocka_unit_test(observing_a_lock_not_held_is_misuse),
        cmocka_unit_test(a_scoped_section_on_an_unmarked_lock_is_misuse),
        cmocka_unit_test(an_atomic_section_runs_through_its_points_on_idle_time),
        cmocka_unit_test(an_atomic_section_whose_holder_blocks_lets_others_run),
        cmocka_unit_test(a_settling_thread_wakes_once_the_process_is_quiet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
