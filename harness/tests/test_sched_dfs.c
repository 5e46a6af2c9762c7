/* The DFS strategy (sched_dfs.h): exact interleaving counts on programs
 * small enough to count by hand, the preemption bound, a lost update that
 * only a preempting interleaving shows (found at bound 1, never at 0, and
 * replayed from its schedule string), and a nondeterministic program
 * reported instead of explored wrongly. */
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sched_dfs.h"
#include "sched_dfs_internal.h" /* a node's records (por_keeps_one_record_per_explored_thread) */
#include "test_sched_util.h"

static char *copy_text(const char *s) {
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    assert_non_null(c);
    memcpy(c, s, n);
    return c;
}

typedef struct dfs_stats {
    uint64_t runs, failures;
    bool complete;
    unsigned max_used;
    char *failing_schedule; /* the first failing run's */
} dfs_stats;

/* Runs the whole search; `check` returns true when a run failed. */
static dfs_stats explore(unsigned bound, rt_thread_fn fn, void *arg, void (*reset)(void *),
                         bool (*check)(void *), uint64_t limit) {
    dfs_stats st;
    sched_dfs *d = sched_dfs_new(bound);
    memset(&st, 0, sizeof st);
    assert_non_null(d);
    do {
        sched_options o;
        sched_result r;
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_DFS;
        o.dfs = d;
        if (reset) reset(arg);
        assert_int_equal(sched_run(&o, fn, arg, &r), 0);
        assert_int_equal(r.status, SCHED_OK);
        if (check && check(arg)) {
            st.failures++;
            if (!st.failing_schedule) st.failing_schedule = copy_text(r.schedule);
        }
        sched_result_free(&r);
    } while (sched_dfs_advance(d) && sched_dfs_runs(d) < limit);
    assert_null(sched_dfs_error(d));
    st.runs = sched_dfs_runs(d);
    st.complete = sched_dfs_complete(d);
    st.max_used = sched_dfs_max_used(d);
    sched_dfs_free(d);
    return st;
}

/* main: spawn A; join A.   A: yield.
 * Choice points (two runnable): main's spawn {main, A}; and, when A ran
 * first, A's yield {A, main}.  Leaves:
 *   main continues (0 preemptions): main blocks in join, A runs alone;
 *   A first (1), A continues at its yield (1);
 *   A first (1), main at A's yield (2).
 * So 1, 2, 3 interleavings at bounds 0, 1, 2, and 3 at any larger bound. */
static void yield_once(void *p) { (void)p; rt_yield(); }
static void spawn_join_main(void *p) { rt_join(rt_spawn("a", yield_once, p, false)); }

static void dfs_counts_a_spawn_and_a_yield_by_hand(void **state) {
    static const uint64_t want[] = {1, 2, 3, 3, 3};
    unsigned b;
    (void)state;
    for (b = 0; b < 5; b++) {
        dfs_stats st = explore(b, spawn_join_main, NULL, NULL, NULL, 1000);
        assert_int_equal(st.runs, want[b]);
        assert_true(st.complete);
        assert_true(st.max_used <= b);
        assert_int_equal(st.max_used, b < 2 ? b : 2);
    }
}

/* Without preemptions the thread at a point keeps running even when a
 * thread with a lower id is runnable: B wakes A and goes on to log twice
 * before A logs.  Bound 0 still explores free switches: when main blocks in
 * its join, A or B may run (A waits, B runs: "bba"; B first: "bba"), so 2
 * interleavings, both "bba". */
typedef struct handoff {
    rt_lock lock;
    rt_waitq q;
    int flag;
    char log[8];
    int n;
} handoff;

static void handoff_a(void *p) {
    handoff *h = (handoff *)p;
    rt_lock_acquire(&h->lock);
    while (!h->flag) rt_wait(&h->q, &h->lock, RT_FOREVER, "flag");
    rt_lock_release(&h->lock);
    h->log[h->n++] = 'a';
}

static void handoff_b(void *p) {
    handoff *h = (handoff *)p;
    rt_lock_acquire(&h->lock);
    h->flag = 1;
    rt_wake_all(&h->q);
    rt_lock_release(&h->lock);
    h->log[h->n++] = 'b';
    rt_yield();
    h->log[h->n++] = 'b';
}

static void handoff_main(void *p) {
    rt_thread *a = rt_spawn("a", handoff_a, p, false);
    rt_thread *b = rt_spawn("b", handoff_b, p, false);
    rt_join(a);
    rt_join(b);
}

static void handoff_reset(void *p) { memset(p, 0, sizeof(handoff)); }
static bool handoff_not_bba(void *p) { return strcmp(((handoff *)p)->log, "bba") != 0; }

static void dfs_bound_zero_never_switches_from_a_runnable_thread(void **state) {
    handoff h;
    dfs_stats st;
    (void)state;
    st = explore(0, handoff_main, &h, handoff_reset, handoff_not_bba, 1000);
    assert_int_equal(st.runs, 2);
    assert_int_equal(st.failures, 0);
    assert_true(st.complete);
    st = explore(1, handoff_main, &h, handoff_reset, handoff_not_bba, 1000);
    assert_true(st.runs > 1);
    assert_true(st.failures > 0); /* "bab", "abb": one preemption each */
    free(st.failing_schedule);
}

/* rt_choose values are data, not preemptions, explored at their extremes:
 * rt_choose(5) gives 0 and 4, rt_choose(2) both values: 2 x 2 = 4 runs at
 * every bound, each pair once; rt_choose(1) is no choice. */
static uint32_t seen_values[5][2];
static void choose_main(void *p) {
    uint32_t a = rt_choose(5), b = rt_choose(2);
    (void)p;
    (void)rt_choose(1);
    seen_values[a][b]++;
}

static void dfs_explores_the_extremes_of_every_choose(void **state) {
    (void)state;
    memset(seen_values, 0, sizeof seen_values);
    dfs_stats st = explore(0, choose_main, NULL, NULL, NULL, 1000);
    assert_int_equal(st.runs, 4);
    assert_true(st.complete);
    assert_int_equal(seen_values[0][0], 1);
    assert_int_equal(seen_values[0][1], 1);
    assert_int_equal(seen_values[4][0], 1);
    assert_int_equal(seen_values[4][1], 1);
}

/* A delay's late extreme spends one of the bound; its on-time one and a
 * free choose's values spend nothing.  rt_choose_delay(5), rt_choose_delay(3)
 * and rt_choose(2): at bound 0 both delays on time (2 runs), at 1 at most
 * one late (3 pairs, 6 runs), at 2 both (4 pairs, 8 runs). */
static uint32_t seen_delays[5][3];
static void delay_main(void *p) {
    uint32_t a = rt_choose_delay(5), b = rt_choose_delay(3);
    (void)p;
    (void)rt_choose(2);
    seen_delays[a][b]++;
}

static void dfs_spends_the_bound_on_a_late_delay(void **state) {
    static const uint64_t want[] = {2, 6, 8, 8};
    unsigned bound;
    (void)state;
    for (bound = 0; bound <= 3; bound++) {
        memset(seen_delays, 0, sizeof seen_delays);
        dfs_stats st = explore(bound, delay_main, NULL, NULL, NULL, 1000);
        assert_true(st.complete);
        assert_int_equal(st.runs, want[bound]);
        assert_int_equal(st.max_used, bound < 2 ? bound : 2);
        assert_int_equal(seen_delays[0][0], 2);
        assert_int_equal(seen_delays[4][0], bound >= 1 ? 2 : 0);
        assert_int_equal(seen_delays[0][2], bound >= 1 ? 2 : 0);
        assert_int_equal(seen_delays[4][2], bound >= 2 ? 2 : 0);
    }
}

/* A lost update: each thread reads the counter in one critical section and
 * writes it back in another.  Without preemption each thread runs its two
 * sections back to back; one preemption between them loses an increment. */
typedef struct lost {
    rt_lock lock;
    int counter;
} lost;

static void lost_worker(void *p) {
    lost *l = (lost *)p;
    int v;
    rt_lock_acquire(&l->lock);
    v = l->counter;
    rt_lock_release(&l->lock);
    rt_lock_acquire(&l->lock);
    l->counter = v + 1;
    rt_lock_release(&l->lock);
}

static void lost_main(void *p) {
    rt_thread *a = rt_spawn("a", lost_worker, p, false);
    rt_thread *b = rt_spawn("b", lost_worker, p, false);
    rt_join(a);
    rt_join(b);
}

static void lost_reset(void *p) { memset(p, 0, sizeof(lost)); }
static bool lost_failed(void *p) { return ((lost *)p)->counter != 2; }

static void dfs_finds_a_bug_only_a_preemption_shows(void **state) {
    lost l;
    dfs_stats st0, st1;
    sched_options o;
    sched_result r;
    (void)state;
    st0 = explore(0, lost_main, &l, lost_reset, lost_failed, 100000);
    assert_true(st0.complete);
    assert_int_equal(st0.failures, 0);
    st1 = explore(1, lost_main, &l, lost_reset, lost_failed, 100000);
    assert_true(st1.complete);
    assert_true(st1.failures > 0);
    assert_true(st1.runs > st0.runs);
    /* the failing run replays from its schedule string */
    assert_non_null(st1.failing_schedule);
    lost_reset(&l);
    sched_options_default(&o);
    o.schedule = st1.failing_schedule;
    assert_int_equal(sched_run(&o, lost_main, &l, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(l.counter, 1);
    sched_result_free(&r);
    free(st1.failing_schedule);
}

/* Every run is a different leaf: distinct choice streams, and more of them
 * as the bound rises, until the tree is exhausted. */
static uint64_t hashes[20000];
static uint64_t nhashes;

static void dfs_runs_are_distinct_and_grow_with_the_bound(void **state) {
    uint64_t prev = 0;
    unsigned b;
    (void)state;
    for (b = 0; b < 3; b++) {
        sched_dfs *d = sched_dfs_new(b);
        uint64_t i, j;
        nhashes = 0;
        do {
            counter_prog c;
            sched_options o;
            sched_result r;
            memset(&c, 0, sizeof c);
            c.nthreads = 2;
            c.iterations = 2;
            sched_options_default(&o);
            o.strategy = SCHED_STRATEGY_DFS;
            o.dfs = d;
            assert_int_equal(sched_run(&o, counter_main, &c, &r), 0);
            assert_int_equal(r.status, SCHED_OK);
            assert_int_equal(c.counter, 4);
            assert_true(nhashes < 20000);
            hashes[nhashes++] = r.choice_hash;
            sched_result_free(&r);
        } while (sched_dfs_advance(d));
        assert_true(sched_dfs_complete(d));
        assert_int_equal(sched_dfs_runs(d), nhashes);
        for (i = 0; i < nhashes; i++)
            for (j = i + 1; j < nhashes; j++) assert_true(hashes[i] != hashes[j]);
        assert_true(nhashes > prev);
        prev = nhashes;
        sched_dfs_free(d);
    }
}

/* A program whose behaviour depends on something outside its choices. */
static int outside;
static void nondet_main(void *p) {
    (void)p;
    if (outside++ == 0) rt_join(rt_spawn("a", yield_once, NULL, false));
}

static void dfs_reports_a_nondeterministic_program(void **state) {
    sched_dfs *d = sched_dfs_new(2);
    sched_options o;
    sched_result r;
    (void)state;
    outside = 0;
    sched_options_default(&o);
    o.strategy = SCHED_STRATEGY_DFS;
    o.dfs = d;
    assert_int_equal(sched_run(&o, nondet_main, NULL, &r), 0);
    sched_result_free(&r);
    assert_true(sched_dfs_advance(d));
    assert_int_equal(sched_run(&o, nondet_main, NULL, &r), 0);
    sched_result_free(&r);
    assert_false(sched_dfs_advance(d));
    assert_false(sched_dfs_complete(d));
    assert_non_null(sched_dfs_error(d));
    sched_dfs_free(d);
}


/* A program whose options at a replayed choice differ from the previous
 * run's: the first run's only choice is an rt_choose(2), the second run
 * spawns a thread there instead, so choice 1 of run 2 is a pick where the
 * tree holds a data choice.  The run ends diverged with the run and the
 * choice named (1-based, the first), the search stops, and the same
 * message is the search's error.  The same program under --por: the pick
 * is a reduction node there (strategy_dfs_por.c), which checks the
 * recorded node on its own. */
static int flips;
static void flip_main(void *p) {
    (void)p;
    if (flips++ == 0) (void)rt_choose(2);
    else rt_join(rt_spawn("a", yield_once, NULL, false));
}

#define DIFFER_TEXT "run 2, choice 1: the options differ from the previous run's at this choice (nondeterministic program)"

static void dfs_reports_options_that_differ_at_a_replayed_choice(void **state) {
    int por;
    (void)state;
    for (por = 0; por <= 1; por++) {
        sched_dfs *d = sched_dfs_new(2);
        sched_options o;
        sched_result r;
        assert_non_null(d);
        assert_false(sched_dfs_por(d));
        sched_dfs_set_por(d, por != 0);
        assert_int_equal(sched_dfs_por(d), por != 0);
        flips = 0;
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_DFS;
        o.dfs = d;
        assert_int_equal(sched_run(&o, flip_main, NULL, &r), 0);
        assert_int_equal(r.status, SCHED_OK);
        assert_string_equal(r.schedule, "T1:=0");
        sched_result_free(&r);
        assert_true(sched_dfs_advance(d)); /* the choose's other extreme */
        assert_int_equal(sched_run(&o, flip_main, NULL, &r), 0);
        assert_int_equal(r.status, SCHED_REPLAY_DIVERGED);
        assert_string_equal(r.reason, "dfs: " DIFFER_TEXT);
        sched_result_free(&r);
        assert_non_null(sched_dfs_error(d));
        assert_string_equal(sched_dfs_error(d), DIFFER_TEXT);
        assert_false(sched_dfs_advance(d));
        assert_false(sched_dfs_complete(d));
        assert_int_equal(sched_dfs_runs(d), 2);
        sched_dfs_free(d);
    }
}


/* The shape of group-release-cancelling-stops-rearms.scn: a daemon pool
 * worker whose callback re-arms itself stays runnable forever (a lock
 * round trip per callback), and the thread that stops it sleeps first, so
 * when it wakes the worker holds the CPU.  A search that never preempts
 * never takes the CPU from the worker: every run at bound 0 is a
 * "livelock" no real machine shows.  Fairness demotes the worker after
 * the fair bound, for free, and every run at every bound ends. */
typedef struct rearm {
    rt_lock lock;
    int stop;
    uint64_t callbacks;
} rearm;

static void rearm_worker(void *p) {
    rearm *r = (rearm *)p;
    for (;;) {
        rt_lock_acquire(&r->lock);
        if (r->stop) {
            rt_lock_release(&r->lock);
            return;
        }
        r->callbacks++;
        rt_lock_release(&r->lock);
    }
}

static void rearm_releaser(void *p) {
    rearm *r = (rearm *)p;
    rt_sleep_until(rt_now() + 500);
    rt_lock_acquire(&r->lock);
    r->stop = 1;
    rt_lock_release(&r->lock);
}

static void rearm_main(void *p) {
    (void)rt_spawn("worker", rearm_worker, p, true);
    rt_join(rt_spawn("releaser", rearm_releaser, p, false));
}

typedef struct fair_stats {
    uint64_t runs, ok, livelocks, fair_runs;
    bool complete;
    char reason[256];
    const char *fairness;
} fair_stats;

static fair_stats explore_fair(unsigned bound, uint64_t fair_bound, rt_thread_fn fn, void *arg, size_t argsize,
                               uint64_t limit) {
    fair_stats st;
    sched_dfs *d = sched_dfs_new(bound);
    memset(&st, 0, sizeof st);
    assert_non_null(d);
    sched_dfs_set_fair_bound(d, fair_bound);
    do {
        sched_options o;
        sched_result r;
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_DFS;
        o.dfs = d;
        o.max_steps = 20000;
        memset(arg, 0, argsize);
        assert_int_equal(sched_run(&o, fn, arg, &r), 0);
        if (r.status == SCHED_OK) st.ok++;
        else if (r.status == SCHED_LIVELOCK) {
            st.livelocks++;
            if (!st.reason[0]) {
                memcpy(st.reason, r.reason, sizeof st.reason);
                st.fairness = r.fairness;
            }
        } else fail_msg("unexpected status %s: %s", sched_status_name(r.status), r.reason);
        sched_result_free(&r);
    } while (sched_dfs_advance(d) && sched_dfs_runs(d) < limit);
    assert_null(sched_dfs_error(d));
    st.runs = sched_dfs_runs(d);
    st.complete = sched_dfs_complete(d);
    st.fair_runs = sched_dfs_fair_runs(d);
    sched_dfs_free(d);
    return st;
}

static void dfs_fairness_ends_a_rearming_worker(void **state) {
    rearm r;
    fair_stats st;
    unsigned b;
    (void)state;
    /* unfair (the search before fairness): the first run is a livelock */
    st = explore_fair(0, 0, rearm_main, &r, sizeof r, 1);
    assert_int_equal(st.livelocks, 1);
    /* fair, small bound so the test is cheap: every run ends, at bounds
     * 0..2, the bounded tree is complete, and some runs needed a demotion */
    for (b = 0; b < 3; b++) {
        st = explore_fair(b, 8, rearm_main, &r, sizeof r, 200000);
        assert_int_equal(st.livelocks, 0);
        assert_int_equal(st.ok, st.runs);
        assert_true(st.complete);
        assert_true(st.fair_runs > 0);
    }
    /* the default bound also ends it (one run, bound 0) */
    st = explore_fair(0, SCHED_DFS_FAIR_BOUND, rearm_main, &r, sizeof r, 1);
    assert_int_equal(st.ok, 1);
}

/* A livelock that every fair schedule shows -- two threads spinning on a
 * flag nobody sets -- is still reported, its result says the schedule was
 * fair, and the reason (what a replay reproduces) does not. */
static void spin_forever(void *p) {
    rearm *r = (rearm *)p;
    for (;;) {
        rt_lock_acquire(&r->lock);
        r->callbacks++;
        rt_lock_release(&r->lock);
    }
}

static void spin_main(void *p) {
    rt_thread *a = rt_spawn("a", spin_forever, p, false);
    rt_thread *b = rt_spawn("b", spin_forever, p, false);
    rt_join(a);
    rt_join(b);
}

static void dfs_fair_livelock_is_reported_as_fair(void **state) {
    rearm r;
    fair_stats st;
    (void)state;
    st = explore_fair(0, 8, spin_main, &r, sizeof r, 3);
    assert_int_equal(st.livelocks, st.runs);
    assert_int_equal(st.fair_runs, st.runs);
    assert_non_null(st.fairness);
    assert_non_null(strstr(st.fairness, "under a fair schedule"));
    assert_null(strstr(st.reason, "fair"));
}

/* A forced step of the fair schedule -- the thread at the point demoted,
 * one other eligible -- is no choice and adds no node to the tree.  By
 * hand, fair bound 2, bound 0 (one run).  main: spawn A; yield x3; join A.
 * A: yield x3.  Picks (two runnable):
 *   1 main's spawn: main kept (streak 1)                      node 1
 *   2 main's 1st yield: main kept (streak 2)                  node 2
 *   3 main's 2nd yield: main demoted, A the only option       forced
 *   4 A's 1st yield: main waits for a pick of A after pick 3,
 *     the one it was demoted at: A the only option            forced
 *   5 A's 2nd yield: main eligible again, A kept (streak 2)   node 3
 *   6 A's 3rd yield: A demoted, main the only option          forced
 *   7 main's 3rd yield: A waits for main's next pick          forced
 * then main blocks in its join and A finishes alone.  So 3 nodes, 7
 * choice points; counting the forced steps as nodes would make it 5. */
static void yield_thrice(void *p) {
    int i;
    (void)p;
    for (i = 0; i < 3; i++) rt_yield();
}

static void demote_main(void *p) {
    rt_thread *a = rt_spawn("a", yield_thrice, p, false);
    yield_thrice(p);
    rt_join(a);
}

static void dfs_forced_fair_steps_are_no_nodes(void **state) {
    sched_dfs *d = sched_dfs_new(0);
    sched_options o;
    sched_result r;
    (void)state;
    assert_non_null(d);
    sched_dfs_set_fair_bound(d, 2);
    sched_options_default(&o);
    o.strategy = SCHED_STRATEGY_DFS;
    o.dfs = d;
    assert_int_equal(sched_run(&o, demote_main, NULL, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(r.choice_points, 7);
    assert_string_equal(r.schedule, "T1:1*2.2*3.1*2");
    assert_int_equal(sched_dfs_max_depth(d), 3);
    sched_result_free(&r);
    assert_false(sched_dfs_advance(d)); /* bound 0: no other run */
    assert_true(sched_dfs_complete(d));
    assert_int_equal(sched_dfs_runs(d), 1);
    sched_dfs_free(d);
}

/* The fairness lapse (strategy_dfs_fair.c): every runnable thread waits for
 * another, so all demotions end and every runnable thread is an option.  It
 * takes a thread made current by forced switches (one runnable thread, no
 * pick): its last pick stays old while the streak the last pick left runs on.
 * Fair bound 1.  main: spawn b; sleep to 1; spawn y; wait on q for the flag;
 * join.  b: sleep to 1000; set the flag, wake q.  y: yield; sleep to 100000.
 * The picks (two runnable) of the run T1:2.1.3*2.2.1*2:
 *   1 main's spawn of b: b (a preemption), which sleeps; main sleeps too
 *   2 main, woken at 1, spawns y: main kept (streak 1)
 *   3 main's next call: main demoted at 3, y the only option (streak 0)
 *   4 y's yield: main waits for a pick of y after 3, y kept (streak 1)
 *   then y sleeps, main alone waits on q, the clock jumps to 1000 and b,
 *   alone, runs by forced switches and wakes main:
 *   5 b, streak 1: demoted at 5; b waits for a pick of main after 5, main
 *     for a pick of b after 3 (b's last was pick 1): no option, the lapse.
 * Both are options there, a node: b continues, or main runs (a second
 * preemption), the run T1:2.1.3*2.1.2 -- at bound 2 the search has it.  A
 * lapse that offered only the current thread (or only runnable[0]) would
 * make pick 5 a forced step and never run main there. */
typedef struct lapse_prog {
    rt_lock lock;
    rt_waitq q;
    int flag;
} lapse_prog;

static void lapse_b(void *p) {
    lapse_prog *l = (lapse_prog *)p;
    rt_sleep_until(1000);
    rt_lock_acquire(&l->lock);
    l->flag = 1;
    rt_wake_one(&l->q);
    rt_lock_release(&l->lock);
}

static void lapse_y(void *p) {
    (void)p;
    rt_yield();
    rt_sleep_until(100000);
}

static void lapse_main(void *p) {
    lapse_prog *l = (lapse_prog *)p;
    rt_thread *b = rt_spawn("b", lapse_b, p, false), *y;
    rt_sleep_until(1);
    y = rt_spawn("y", lapse_y, p, false);
    rt_lock_acquire(&l->lock);
    while (!l->flag) rt_wait(&l->q, &l->lock, RT_FOREVER, "flag");
    rt_lock_release(&l->lock);
    rt_join(b);
    rt_join(y);
}

static void dfs_fair_lapse_offers_every_runnable_thread(void **state) {
    sched_dfs *d = sched_dfs_new(2);
    bool lapse_run = false, other_option = false;
    (void)state;
    assert_non_null(d);
    sched_dfs_set_fair_bound(d, 1);
    do {
        lapse_prog l;
        sched_options o;
        sched_result r;
        memset(&l, 0, sizeof l);
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_DFS;
        o.dfs = d;
        assert_int_equal(sched_run(&o, lapse_main, &l, &r), 0);
        assert_int_equal(r.status, SCHED_OK);
        if (strcmp(r.schedule, "T1:2.1.3*2.2.1*2") == 0) lapse_run = true;
        if (strcmp(r.schedule, "T1:2.1.3*2.1.2") == 0) other_option = true;
        sched_result_free(&r);
    } while (sched_dfs_advance(d));
    assert_null(sched_dfs_error(d));
    assert_true(sched_dfs_complete(d));
    assert_true(lapse_run);
    assert_true(other_option);
    sched_dfs_free(d);
}

/* The lapse itself, driven by hand: every runnable thread's demotion ends,
 * the first in the runnable list's as well as the others', and none is
 * counted as demoted after it (a demotion left behind would be checked again
 * at a later pick, with the count saying there is none). */
static void dfs_fair_lapse_ends_every_demotion(void **state) {
    sched_dfs *d = sched_dfs_new(1);
    sched s;
    rt_thread th[3], *run[3];
    unsigned i;
    (void)state;
    assert_non_null(d);
    memset(&s, 0, sizeof s);
    memset(th, 0, sizeof th);
    d->tcap = 4;
    d->demoted_at = calloc(d->tcap, sizeof *d->demoted_at);
    d->last_pick = calloc(d->tcap, sizeof *d->last_pick);
    assert_non_null(d->demoted_at);
    assert_non_null(d->last_pick);
    for (i = 0; i < 3; i++) {
        th[i].id = i + 1;
        run[i] = &th[i];
        d->demoted_at[i + 1] = 5 + i;
    }
    d->ndemoted = 3;
    s.runnable = run;
    s.nrunnable = 3;
    sched_dfs_fair_lapse(d, &s);
    for (i = 1; i <= 3; i++)
        if (d->demoted_at[i]) fail_msg("thread %u still demoted (at pick %llu)", i, (unsigned long long)d->demoted_at[i]);
    assert_int_equal(d->ndemoted, 0);
    sched_dfs_free(d);
}

/* ---- partial-order reduction (sched_dfs_set_por) ---- */

typedef struct por_stats {
    uint64_t runs, traces, failures;
    uint64_t classes; /* distinct sched_result.trace_hash over every run explored */
    bool complete;
    size_t hcap;   /* the object table's slots at the end (--por) */
    uint32_t nobj; /* objects the last run numbered, virtual time included (--por) */
} por_stats;

/* Runs the whole bounded search (plain or reduced) and counts the runs
 * whose `check` is true; `may_end`: a run may end the process (fail-fast
 * programs), which is an outcome like a normal end. */
static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static por_stats explore_runs_on(sched_time_model time, unsigned bound, bool por, rt_thread_fn fn, void *arg,
                                 void (*reset)(void *), bool (*check)(void *), bool may_end) {
    por_stats st;
    sched_dfs *d = sched_dfs_new(bound);
    static uint64_t class_of[100000];
    size_t n = 0, i;
    memset(&st, 0, sizeof st);
    assert_non_null(d);
    sched_dfs_set_por(d, por);
    do {
        sched_options o;
        sched_result r;
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_DFS;
        o.dfs = d;
        o.time = time;
        if (reset) reset(arg);
        assert_int_equal(sched_run(&o, fn, arg, &r), 0);
        if (r.status != SCHED_OK && !(may_end && r.status == SCHED_PROCESS_ENDED))
            fail_msg("run %llu: %s: %s", (unsigned long long)sched_dfs_runs(d), sched_status_name(r.status), r.reason);
        if (check && check(arg)) st.failures++;
        assert_true(r.trace_hash != 0);
        if (n < sizeof class_of / sizeof class_of[0]) class_of[n++] = r.trace_hash;
        sched_result_free(&r);
    } while (sched_dfs_advance(d) && sched_dfs_runs(d) < 100000);
    qsort(class_of, n, sizeof class_of[0], cmp_u64);
    for (i = 0; i < n; i++) st.classes += i == 0 || class_of[i] != class_of[i - 1];
    assert_null(sched_dfs_error(d));
    st.runs = sched_dfs_runs(d);
    st.traces = por ? sched_dfs_traces(d) : st.runs;
    st.complete = sched_dfs_complete(d);
    st.hcap = d->hcap;
    st.nobj = d->nobj;
    sched_dfs_free(d);
    return st;
}

static por_stats explore_runs(unsigned bound, bool por, rt_thread_fn fn, void *arg, void (*reset)(void *),
                              bool (*check)(void *), bool may_end) {
    return explore_runs_on(SCHED_TIME_STEPS, bound, por, fn, arg, reset, check, may_end);
}

static por_stats explore_por(unsigned bound, bool por, rt_thread_fn fn, void *arg, void (*reset)(void *),
                             bool (*check)(void *)) {
    return explore_runs(bound, por, fn, arg, reset, check, false);
}

/* Two threads, each a yield then one atomic write, nobody joins (the run
 * ends when both are done).  Same address: the two writes race, 2 traces;
 * different addresses: every interleaving is one trace.  By hand, at every
 * bound (the reversal is a free switch when main exits). */
typedef struct two_writes {
    uint32_t x, y;
    bool same;
    char order[4];
    int n;
} two_writes;

static void tw_a(void *p) {
    two_writes *w = (two_writes *)p;
    rt_yield();
    rt_access(&w->x, RT_WRITE);
    w->order[w->n++] = 'a';
}
static void tw_b(void *p) {
    two_writes *w = (two_writes *)p;
    rt_yield();
    rt_access(w->same ? &w->x : &w->y, RT_WRITE);
    w->order[w->n++] = 'b';
}
static void tw_main(void *p) {
    (void)rt_spawn("a", tw_a, p, false);
    (void)rt_spawn("b", tw_b, p, false);
}
static void tw_reset_same(void *p) {
    memset(p, 0, sizeof(two_writes));
    ((two_writes *)p)->same = true;
}
static void tw_reset_diff(void *p) { memset(p, 0, sizeof(two_writes)); }
static bool tw_b_first(void *p) { return ((two_writes *)p)->order[0] == 'b'; }

static void por_counts_traces_by_hand(void **state) {
    two_writes w;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats full = explore_por(b, false, tw_main, &w, tw_reset_same, tw_b_first);
        por_stats same = explore_por(b, true, tw_main, &w, tw_reset_same, tw_b_first);
        por_stats diff = explore_por(b, true, tw_main, &w, tw_reset_diff, NULL);
        assert_true(full.complete && same.complete && diff.complete);
        assert_int_equal(same.traces, 2);
        assert_int_equal(diff.traces, 1);
        assert_true(same.runs <= full.runs);
        /* b-first is a failure here: the reduced search finds it whenever
         * the full one does */
        assert_true(full.failures > 0);
        assert_true(same.failures > 0);
    }
}

/* The lost update of dfs_finds_a_bug_only_a_preemption_shows and the
 * hand-off: at every bound up to 2, the reduced search fails exactly when
 * the full one does, in no more runs. */
static void por_finds_every_failure_the_full_search_finds(void **state) {
    lost l;
    handoff h;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats f = explore_por(b, false, lost_main, &l, lost_reset, lost_failed);
        por_stats r = explore_por(b, true, lost_main, &l, lost_reset, lost_failed);
        assert_true(f.complete && r.complete);
        assert_int_equal(f.failures > 0, r.failures > 0);
        assert_true(r.runs <= f.runs);
        f = explore_por(b, false, handoff_main, &h, handoff_reset, handoff_not_bba);
        r = explore_por(b, true, handoff_main, &h, handoff_reset, handoff_not_bba);
        assert_true(f.complete && r.complete);
        assert_int_equal(f.failures > 0, r.failures > 0);
        assert_true(r.runs <= f.runs);
    }
}

/* The lost update made to need a late delay as well: a fails only when its
 * first step's rt_choose_delay(2) came late and an increment was lost.  One
 * late value plus one preemption: found at bound 2, never at 1, by the full
 * and the reduced search alike (the two spend one bound). */
typedef struct late_lost {
    lost l;
    bool late;
} late_lost;
static void late_lost_worker(void *p) {
    late_lost *ll = (late_lost *)p;
    if (rt_choose_delay(2)) ll->late = true;
    lost_worker(&ll->l);
}
static void late_lost_main(void *p) {
    late_lost *ll = (late_lost *)p;
    rt_thread *a = rt_spawn("a", late_lost_worker, ll, false);
    rt_thread *b = rt_spawn("b", lost_worker, &ll->l, false);
    rt_join(a);
    rt_join(b);
}
static void late_lost_reset(void *p) { memset(p, 0, sizeof(late_lost)); }
static bool late_lost_failed(void *p) {
    late_lost *ll = (late_lost *)p;
    return ll->late && ll->l.counter != 2;
}

static void por_a_delay_and_a_preemption_share_the_bound(void **state) {
    late_lost ll;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats f = explore_por(b, false, late_lost_main, &ll, late_lost_reset, late_lost_failed);
        por_stats r = explore_por(b, true, late_lost_main, &ll, late_lost_reset, late_lost_failed);
        assert_true(f.complete && r.complete);
        assert_int_equal(f.failures > 0, b >= 2);
        assert_int_equal(r.failures > 0, b >= 2);
        assert_true(r.runs <= f.runs);
    }
}

/* The spawn-and-yield tree by hand: its leaves at bounds 0, 1, 2 are 1, 2,
 * 3, its traces 1, 2, 2 -- the third leaf (A first, main at A's yield:
 * main's join blocks, then A ends) swaps only main's join with A's yield,
 * which touch nothing in common: the same trace as the first leaf.  The
 * second stays (main's join reads A finished: another trace). */
/* Three threads, each: a yield, a read of x[0], a yield, a write (a and b
 * their own word, c x[0]), a free choose, a yield.  Sleep sets find runs
 * that only repeat a trace; every run below the pick of such a run's first
 * sleeping step repeats one too, and the search no longer explores them:
 * 106, 130, 142 runs at bounds 1-3 where it took 120, 160, 176, for the
 * same 96, 104, 112 traces.  c writing x[0] before a or b read it is a
 * "failure" both searches find at every bound. */
typedef struct three {
    uint32_t x[3];
    bool c_first;
    int reads;
} three;
static void three_fn(void *p) {
    three *t = (three *)p;
    uint32_t i = rt_thread_id() - 2;
    rt_yield();
    rt_access(&t->x[0], RT_READ);
    t->reads++;
    rt_yield();
    rt_access(&t->x[i == 2 ? 0 : i], RT_WRITE);
    if (i == 2 && t->reads < 3) t->c_first = true;
    (void)rt_choose(2);
    rt_yield();
}
static void three_main(void *p) {
    (void)rt_spawn("a", three_fn, p, false);
    (void)rt_spawn("b", three_fn, p, false);
    (void)rt_spawn("c", three_fn, p, false);
}
static void three_reset(void *p) { memset(p, 0, sizeof(three)); }
static bool three_c_first(void *p) { return ((three *)p)->c_first; }

static void por_leaves_the_subtree_of_a_redundant_run(void **state) {
    static const uint64_t runs[] = {48, 106, 130, 142}, traces[] = {48, 96, 104, 112};
    three t;
    unsigned b;
    (void)state;
    for (b = 0; b <= 3; b++) {
        por_stats r = explore_por(b, true, three_main, &t, three_reset, three_c_first);
        por_stats f = explore_por(b, false, three_main, &t, three_reset, three_c_first);
        assert_true(r.complete && f.complete);
        assert_int_equal(r.traces, traces[b]);
        assert_int_equal(r.runs, runs[b]);
        assert_true(f.failures > 0 && r.failures > 0);
    }
}

/* The behaviour class (sched_result.trace_hash) on the hand-counted
 * programs.  two_writes: 2 traces on one word, 1 on two; spawn-and-join: 1,
 * 2, 2 at bounds 0-2; in both the classes of every run explored, plain or
 * reduced, are the traces the reduced search proves.  `three` by hand: its
 * dependent pairs are a's and c's writes of x[0] with each other and with
 * the other threads' reads of it, 12 orders of them, times 8 values of the
 * three free chooses: 96 traces, all within one preemption (48 at bound 0,
 * where only the free switches order them).  The plain search's classes
 * are exactly those.  The reduced search's "traces" (runs the sleep sets
 * did not show redundant) are no class count there: 96, 104, 112 runs at
 * bounds 1-3 repeat classes (8 and 16 of them at bounds 2 and 3), and at
 * bound 1 they cover 72 of the 96 classes the plain search reaches within
 * the same bound (its failure, c first, is found all the same:
 * por_leaves_the_subtree_of_a_redundant_run). */
static void trace_classes_are_the_traces_the_search_proves(void **state) {
    static const uint64_t three_by_hand[] = {48, 96, 96, 96}, three_reduced[] = {48, 72, 96, 96};
    static const uint64_t spawn_traces[] = {1, 2, 2};
    two_writes w;
    three t;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats full = explore_por(b, false, tw_main, &w, tw_reset_same, NULL);
        por_stats same = explore_por(b, true, tw_main, &w, tw_reset_same, NULL);
        por_stats diff = explore_por(b, true, tw_main, &w, tw_reset_diff, NULL);
        por_stats diff_full = explore_por(b, false, tw_main, &w, tw_reset_diff, NULL);
        por_stats sj = explore_por(b, true, spawn_join_main, NULL, NULL, NULL);
        por_stats sj_full = explore_por(b, false, spawn_join_main, NULL, NULL, NULL);
        assert_int_equal(same.classes, same.traces);
        assert_int_equal(same.classes, 2);
        assert_int_equal(full.classes, 2);
        assert_int_equal(diff.classes, diff.traces);
        assert_int_equal(diff.classes, 1);
        assert_int_equal(diff_full.classes, 1);
        assert_int_equal(sj.classes, sj.traces);
        assert_int_equal(sj.classes, spawn_traces[b]);
        assert_int_equal(sj_full.classes, spawn_traces[b]);
    }
    for (b = 0; b <= 3; b++) {
        por_stats r = explore_por(b, true, three_main, &t, three_reset, NULL);
        por_stats f = explore_por(b, false, three_main, &t, three_reset, NULL);
        assert_int_equal(f.classes, three_by_hand[b]);
        assert_int_equal(r.classes, three_reduced[b]);
        assert_true(r.classes <= r.traces);
    }
}

static void por_keeps_distinct_traces(void **state) {
    static const uint64_t want[] = {1, 2, 2};
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats st = explore_por(b, true, spawn_join_main, NULL, NULL, NULL);
        assert_true(st.complete);
        assert_int_equal(st.traces, want[b]);
    }
}

/* A step that reads an object and then writes it is a write: after a
 * yield, A's step reads x then writes it, B's only reads it.  Dependent,
 * so 2 traces at every bound (A's step first or B's; at bounds 1-2 a third
 * run, A preempted at its yield, is redundant); were A's step taken for a
 * read, the two would be independent and one trace would hide B first. */
static void rw_a(void *p) {
    two_writes *w = (two_writes *)p;
    rt_yield();
    rt_access(&w->x, RT_READ);
    rt_access(&w->x, RT_WRITE);
    w->order[w->n++] = 'a';
}
static void rw_b(void *p) {
    two_writes *w = (two_writes *)p;
    rt_yield();
    rt_access(&w->x, RT_READ);
    w->order[w->n++] = 'b';
}
static void rw_main(void *p) {
    (void)rt_spawn("a", rw_a, p, false);
    (void)rt_spawn("b", rw_b, p, false);
}

static void por_a_read_then_write_is_a_write(void **state) {
    two_writes w;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats st = explore_por(b, true, rw_main, &w, tw_reset_diff, tw_b_first);
        assert_true(st.complete);
        assert_int_equal(st.traces, 2);
        assert_true(st.failures > 0); /* the b-first order is among them */
    }
}

/* Objects first touched after a node are numbered in touch order, so one
 * object may have different numbers in two runs through the node: a
 * sleeping step's key at or above the node's `fresh` meets every such key.
 * A reads p (and exits a step later, so its exit's key is not in that
 * step); B reads q, then a step later writes p.  Explored A first, p is the
 * node's first new object; in the branch where B goes first, q takes that
 * number and p the next one.  A sleeps there, and B's write of p must still
 * wake it: 2 traces (A's read before B's write or after), by hand at every
 * bound.  Were only the keys above `fresh` taken as unknown, A's key
 * (exactly `fresh`) would meet B's write of p only by number, and at bound
 * 1 the branch would end with A asleep: 1 trace. */
typedef struct late_objects {
    uint32_t p, q;
    bool a_after_write;
    bool written;
} late_objects;

static void lo_a(void *arg) {
    late_objects *l = (late_objects *)arg;
    rt_yield();
    rt_access(&l->p, RT_READ);
    l->a_after_write = l->written;
    rt_yield(); /* A's exit is a step of its own */
}
static void lo_b(void *arg) {
    late_objects *l = (late_objects *)arg;
    rt_yield();
    rt_access(&l->q, RT_READ);
    rt_yield();
    rt_access(&l->p, RT_WRITE);
    l->written = true;
}
static void lo_main(void *arg) {
    (void)rt_spawn("a", lo_a, arg, false);
    (void)rt_spawn("b", lo_b, arg, false);
}
static void lo_reset(void *arg) { memset(arg, 0, sizeof(late_objects)); }
static bool lo_a_after(void *arg) { return ((late_objects *)arg)->a_after_write; }

static void por_wakes_a_sleeper_on_an_object_numbered_otherwise(void **state) {
    late_objects l;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats st = explore_por(b, true, lo_main, &l, lo_reset, lo_a_after);
        assert_true(st.complete);
        assert_int_equal(st.traces, 2);
        assert_true(st.failures > 0); /* A reading after B's write is among them */
    }
}

/* A search whose runs may end the process. */
static por_stats explore_ending(unsigned bound, bool por, rt_thread_fn fn, void *arg, void (*reset)(void *),
                                bool (*check)(void *)) {
    return explore_runs(bound, por, fn, arg, reset, check, true);
}

/* Fail-fast: main spawns A and B and returns; A ends the process at once,
 * B yields and then logs.  At the switch when main ends, A first (lower
 * id) ends the run with B never run; B first logs (it keeps the CPU at its
 * yield at bound 0) and A ends after.  2 runs at bound 0, both distinct
 * traces: B's unknown next step races with A's ending step, the last step
 * of the run, so the reduction must put B at that switch. */
static void (*volatile end_process)(const char *) = rt_end_process;
static void ender_a(void *p) {
    (void)p;
    end_process("fail-fast");
}
static void logger_b(void *p) {
    two_writes *w = (two_writes *)p;
    rt_yield();
    w->order[w->n++] = 'b';
}
static void fail_fast_main(void *p) {
    (void)rt_spawn("a", ender_a, p, false);
    (void)rt_spawn("b", logger_b, p, false);
}
static bool b_logged(void *p) { return ((two_writes *)p)->n > 0; }

/* The same with A yielding once before it ends the process: its ending
 * step is the second of its run of steps, and the switch to B at A's yield
 * would be a preemption, which bound 0 does not allow.  B must be put where
 * A's run of steps began, the free switch when main ends (Coons et al.'s
 * bounded backtrack), or B first is never run: still 2 traces. */
static void ender_after_yield_a(void *p) {
    (void)p;
    rt_yield();
    end_process("fail-fast");
}
static void fail_fast_after_yield_main(void *p) {
    (void)rt_spawn("a", ender_after_yield_a, p, false);
    (void)rt_spawn("b", logger_b, p, false);
}

static void por_runs_the_thread_an_ending_step_cuts_off(void **state) {
    static void (*const mains[])(void *) = {fail_fast_main, fail_fast_after_yield_main};
    two_writes w;
    por_stats full, red;
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        full = explore_ending(0, false, mains[i], &w, tw_reset_diff, b_logged);
        red = explore_ending(0, true, mains[i], &w, tw_reset_diff, b_logged);
        assert_true(full.complete && red.complete);
        assert_int_equal(full.runs, 2);
        assert_int_equal(full.failures, 1);
        assert_int_equal(red.traces, 2);
        assert_int_equal(red.failures, 1);
    }
}

/* Address 0 is an object like any other (the object table marks a free
 * slot with 0, so it keys it as 1): two threads writing it race, 2 traces;
 * were each access of it numbered afresh, 1. */
static void null_writer(void *p) {
    (void)p;
    rt_access(NULL, RT_WRITE);
}
static void null_writers_main(void *p) {
    (void)rt_spawn("a", null_writer, p, false);
    (void)rt_spawn("b", null_writer, p, false);
}
static void nothing_to_reset(void *p) { (void)p; }

static void por_takes_address_0_for_one_object(void **state) {
    por_stats st;
    (void)state;
    st = explore_por(0, true, null_writers_main, NULL, nothing_to_reset, NULL);
    assert_true(st.complete);
    assert_int_equal(st.traces, 2);
}

/* Every step reads virtual time (POR_ALL), a read the footprint must keep
 * however many objects the step touched.  A spawns B, then writes `ncells`
 * cells and exits (its exit writes A's thread key) in one step; B reads
 * the clock (a write of virtual time) and exits.  B's step comes after A's
 * first (the spawn), so it races with two steps, both through the time:
 * A's second and main's exit (main spawned A and ends).  B before or after
 * each: 4 traces at bound 1, at 6, 7 and 8 cells.  With 7, the cells and
 * the thread key fill POR_MAXK; had A's read of the time been dropped for
 * want of room, 3 (measured). */
typedef struct full_step {
    uint32_t cell[POR_MAXK];
    int ncells;
} full_step;
static int fs_ncells;
static void fs_b(void *p) {
    (void)p;
    (void)rt_now();
}
static void fs_a(void *p) {
    full_step *f = (full_step *)p;
    int i;
    (void)rt_spawn("b", fs_b, p, false);
    for (i = 0; i < f->ncells; i++) rt_access(&f->cell[i], RT_WRITE);
}
static void fs_main(void *p) { (void)rt_spawn("a", fs_a, p, false); }
static void fs_reset(void *p) {
    memset(p, 0, sizeof(full_step));
    ((full_step *)p)->ncells = fs_ncells;
}

/* An allocator that hands out a freed address again: A writes its object
 * and frees it; B allocates one -- at A's old address once A has freed it
 * (the allocator's own state, announced to nobody, as glibc's is), else
 * elsewhere -- and writes it twice.  The two objects are distinct whatever
 * the address, so the search must not depend on the reuse: with rt_forget
 * at the free, the reusing allocator gives the same tree as one that never
 * reuses; without it, B's new object is A's old one to the search (the
 * default build and ASan counted different races on one scenario). */
typedef struct reuse {
    uint64_t old_obj, fresh_obj;
    bool freed, reuses, forgets;
} reuse;
static reuse ru_cfg;
static void ru_a(void *p) {
    reuse *r = (reuse *)p;
    rt_access(&r->old_obj, RT_WRITE);
    rt_yield();
    r->freed = true;
    if (r->forgets) rt_forget(&r->old_obj, sizeof r->old_obj);
}
static void ru_b(void *p) {
    reuse *r = (reuse *)p;
    uint64_t *o;
    rt_yield();
    o = r->reuses && r->freed ? &r->old_obj : &r->fresh_obj;
    rt_access(o, RT_WRITE);
    rt_yield();
    rt_access(o, RT_WRITE);
}
static void ru_main(void *p) {
    (void)rt_spawn("a", ru_a, p, false);
    (void)rt_spawn("b", ru_b, p, false);
}
static void ru_reset(void *p) { *(reuse *)p = ru_cfg; }

static por_stats reuse_search(bool reuses, bool forgets) {
    reuse r;
    memset(&ru_cfg, 0, sizeof ru_cfg);
    ru_cfg.reuses = reuses;
    ru_cfg.forgets = forgets;
    return explore_por(2, true, ru_main, &r, ru_reset, NULL);
}

static void por_forgets_a_freed_address(void **state) {
    por_stats never = reuse_search(false, true), forgot = reuse_search(true, true), merged = reuse_search(true, false);
    (void)state;
    assert_true(never.complete && forgot.complete && merged.complete);
    assert_int_equal(forgot.runs, never.runs);
    assert_int_equal(forgot.traces, never.traces);
    assert_true(merged.traces > never.traces); /* the hazard the forgetting removes */
}

static void por_keeps_the_time_read_of_a_full_footprint(void **state) {
    full_step f;
    unsigned i;
    (void)state;
    for (i = 0; i < 3; i++) {
        por_stats st;
        fs_ncells = (int)(POR_MAXK - 2 + i);
        st = explore_por(1, true, fs_main, &f, fs_reset, NULL);
        assert_true(st.complete);
        if (st.traces != 4)
            fail_msg("%d cells: %llu traces, want 4", fs_ncells, (unsigned long long)st.traces);
    }
}

/* The reduction's masks and clocks hold 64 threads: a program of exactly
 * 64 runs under it.  Main first spawns and joins 62 fillers (ids 2..63), so
 * the thread that matters is id 64, the last one the clocks hold.  Then
 * main waits on a queue; thread 64 sets the flag, wakes main, releases the
 * lock and ends the process.  Main logs only if it runs between that
 * release and the end: a preemption (bound 1), which the full search
 * finds.  In the reduced search only the race of main's unknown next step
 * (main is runnable when the run ends) with the last step of thread 64
 * puts main there. */
typedef struct wide {
    rt_lock lock;
    rt_waitq q;
    int flag, logged;
} wide;
static void wide_filler(void *p) { (void)p; }
static void wide_last(void *p) {
    wide *w = (wide *)p;
    rt_lock_acquire(&w->lock);
    w->flag = 1;
    rt_wake_all(&w->q);
    rt_lock_release(&w->lock);
    end_process("fail-fast");
}
static void wide_main(void *p) {
    wide *w = (wide *)p;
    int i;
    for (i = 0; i < 62; i++) rt_join(rt_spawn("filler", wide_filler, p, false));
    rt_lock_acquire(&w->lock);
    (void)rt_spawn("last", wide_last, p, false);
    while (!w->flag) rt_wait(&w->q, &w->lock, RT_FOREVER, "flag");
    rt_lock_release(&w->lock);
    w->logged = 1;
}
static void wide_reset(void *p) { memset(p, 0, sizeof(wide)); }
/* 63 fillers joined one by one (ids 2..64), then the 65th, then a log. */
static void many_threads_main(void *p) {
    wide *w = (wide *)p;
    int i;
    for (i = 0; i < 63; i++) rt_join(rt_spawn("filler", wide_filler, p, false));
    (void)rt_spawn("65th", wide_filler, p, false);
    w->logged = 1;
}
static bool wide_logged(void *p) { return ((wide *)p)->logged != 0; }

static void por_holds_64_threads(void **state) {
    wide w;
    por_stats full, red;
    (void)state;
    full = explore_ending(1, false, wide_main, &w, wide_reset, wide_logged);
    red = explore_ending(1, true, wide_main, &w, wide_reset, wide_logged);
    assert_true(full.complete && red.complete);
    assert_true(full.failures > 0);
    assert_true(red.failures > 0);
    assert_true(red.runs <= full.runs);
}

/* Races are counted once each (sched_dfs_races).  W writes x and ends; the
 * daemon D reads x, then hands a flag to main and waits; main, woken,
 * wakes D and ends the run with D runnable.  The first run at bound 0 (the
 * lowest id at every free switch) has these steps:
 *   0-3 main: spawn W, spawn D, reach the lock, wait on q (L and q written)
 *   4   W: writes x, ends
 *   5   D: reads x                      race 1: with step 4
 *   6   D: takes L, sets ready, wakes q race 2: with step 3
 *   7   D: waits on q (L, q written)
 *   8   main: takes L, sets done, wakes q  race 3: with step 7
 *   9-10 main: releases L, ends the run
 * and at the end D, runnable, has an unknown next step: race 4 with main's
 * last step 10.  Not one with W's last step 4: D's read ordered it before
 * D already (race 1).  4 races. */
typedef struct handback {
    rt_lock lock;
    rt_waitq q;
    uint32_t x;
    int ready, done;
} handback;
static void hb_writer(void *p) { rt_access(&((handback *)p)->x, RT_WRITE); }
static void hb_daemon(void *p) {
    handback *h = (handback *)p;
    rt_access(&h->x, RT_READ);
    rt_lock_acquire(&h->lock);
    h->ready = 1;
    rt_wake_all(&h->q);
    while (!h->done) rt_wait(&h->q, &h->lock, RT_FOREVER, "done");
    rt_lock_release(&h->lock);
}
static void hb_main(void *p) {
    handback *h = (handback *)p;
    (void)rt_spawn("w", hb_writer, p, false);
    (void)rt_spawn("d", hb_daemon, p, true);
    rt_lock_acquire(&h->lock);
    while (!h->ready) rt_wait(&h->q, &h->lock, RT_FOREVER, "ready");
    h->done = 1;
    rt_wake_all(&h->q);
    rt_lock_release(&h->lock);
}

static void por_counts_each_race_once(void **state) {
    handback h;
    sched_dfs *d = sched_dfs_new(0);
    sched_options o;
    sched_result r;
    (void)state;
    assert_non_null(d);
    sched_dfs_set_por(d, true);
    memset(&h, 0, sizeof h);
    sched_options_default(&o);
    o.strategy = SCHED_STRATEGY_DFS;
    o.dfs = d;
    assert_int_equal(sched_run(&o, hb_main, &h, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    sched_result_free(&r);
    assert_int_equal(sched_dfs_races(d), 4);
    sched_dfs_free(d);
}

/* A timed wait reads virtual time, which every step may move: its step is
 * taken to depend on everything.  Main, holding L, spawns A and waits on q
 * until a deadline nobody beats; A writes x, which the wait never touches.
 * At bound 0 main keeps the CPU through its wait: 1 trace.  At bounds 1-2
 * A's step races with the wait's (sched_por_clock: the wait writes every
 * key), so the reduction also runs A first, a preemption: 2 traces.  Were
 * the wait taken for its lock and queue alone, A's write would be
 * independent of it and one trace would stand for both. */
typedef struct timed_wait {
    rt_lock lock;
    rt_waitq q;
    uint32_t x;
} timed_wait;
static void tmw_a(void *p) { rt_access(&((timed_wait *)p)->x, RT_WRITE); }
static void tmw_main(void *p) {
    timed_wait *t = (timed_wait *)p;
    rt_lock_acquire(&t->lock);
    (void)rt_spawn("a", tmw_a, p, false);
    (void)rt_wait(&t->q, &t->lock, 10, "nobody");
    rt_lock_release(&t->lock);
}
static void tmw_reset(void *p) { memset(p, 0, sizeof(timed_wait)); }

static void por_takes_a_timed_wait_for_dependent_on_everything(void **state) {
    static const uint64_t want[] = {1, 2, 2};
    timed_wait t;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats st = explore_por(b, true, tmw_main, &t, tmw_reset, NULL);
        assert_true(st.complete);
        assert_int_equal(st.traces, want[b]);
    }
}

/* On idle time the same program is one trace at every bound: the clock
 * stands while A can run, so the wait's deadline reads a time A's step
 * cannot move, and the wait touches only its lock and queue. */
static void por_on_idle_time_a_timed_wait_commutes_with_other_objects(void **state) {
    timed_wait t;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats st = explore_runs_on(SCHED_TIME_IDLE, b, true, tmw_main, &t, tmw_reset, NULL, false);
        assert_true(st.complete);
        assert_int_equal(st.traces, 1);
    }
}

/* An idle-time jump is a barrier.  A writes x; B sleeps until 100, then
 * writes x.  The clock jumps only once A has ended (nobody else can run), so
 * B's write always follows A's: the plain search never sees B first, and the
 * reduction runs one trace.  Were the jump not ordering the steps, B's
 * write would race with A's and the reduction would try to reverse them:
 * 2 traces at every bound from 1, for one behaviour. */
typedef struct across_jump {
    uint32_t x;
    char first;
} across_jump;
static void aj_a(void *p) {
    across_jump *j = (across_jump *)p;
    rt_access(&j->x, RT_WRITE);
    if (!j->first) j->first = 'a';
}
static void aj_b(void *p) {
    across_jump *j = (across_jump *)p;
    rt_sleep_until(100);
    rt_access(&j->x, RT_WRITE);
    if (!j->first) j->first = 'b';
}
static void aj_main(void *p) {
    (void)rt_spawn("a", aj_a, p, false);
    (void)rt_spawn("b", aj_b, p, false);
}
static void aj_reset(void *p) { memset(p, 0, sizeof(across_jump)); }
static bool aj_b_first(void *p) { return ((across_jump *)p)->first == 'b'; }

static void por_takes_an_idle_time_jump_for_a_barrier(void **state) {
    across_jump j;
    unsigned b;
    (void)state;
    for (b = 0; b <= 2; b++) {
        por_stats full = explore_runs_on(SCHED_TIME_IDLE, b, false, aj_main, &j, aj_reset, aj_b_first, false);
        por_stats red = explore_runs_on(SCHED_TIME_IDLE, b, true, aj_main, &j, aj_reset, aj_b_first, false);
        assert_true(full.complete && red.complete);
        assert_int_equal(full.failures, 0);
        assert_int_equal(red.failures, 0);
        assert_int_equal(red.traces, 1);
    }
}

/* Diagnostic sections commute.  A and B each yield, then take L and give it
 * back.  Taken with rt_lock_acquire the two sections race: 2 traces at
 * every bound from 1 (the yield makes the reversal a free switch at 0 too).
 * Taken with rt_lock_acquire_diagnostic they touch nothing: 1 trace.  A
 * section that calls rt_lock_observed is an ordinary one again: 2. */
typedef struct diag_sections {
    rt_lock l;
    int mode; /* 0 plain, 1 diagnostic, 2 diagnostic then observed */
} diag_sections;
static void ds_t(void *p) {
    diag_sections *d = (diag_sections *)p;
    rt_yield();
    if (d->mode == 0) rt_lock_acquire(&d->l);
    else rt_lock_acquire_diagnostic(&d->l);
    if (d->mode == 2) rt_lock_observed(&d->l);
    rt_lock_release(&d->l);
}
static void ds_main(void *p) {
    (void)rt_spawn("a", ds_t, p, false);
    (void)rt_spawn("b", ds_t, p, false);
}
static void ds_reset_plain(void *p) { memset(p, 0, sizeof(diag_sections)); }
static void ds_reset_diag(void *p) {
    ds_reset_plain(p);
    ((diag_sections *)p)->mode = 1;
}
static void ds_reset_observed(void *p) {
    ds_reset_plain(p);
    ((diag_sections *)p)->mode = 2;
}

static void por_takes_diagnostic_sections_for_independent(void **state) {
    diag_sections d;
    unsigned b;
    (void)state;
    for (b = 1; b <= 2; b++) {
        por_stats plain = explore_por(b, true, ds_main, &d, ds_reset_plain, NULL);
        por_stats diag = explore_por(b, true, ds_main, &d, ds_reset_diag, NULL);
        por_stats observed = explore_por(b, true, ds_main, &d, ds_reset_observed, NULL);
        assert_true(plain.complete && diag.complete && observed.complete);
        assert_int_equal(plain.traces, 2);
        assert_int_equal(diag.traces, 1);
        assert_int_equal(observed.traces, 2);
    }
}

/* Two threads each yield, then take one lock (marked atomic sections) for a
 * section that announces one word, and give it back.  Scoped
 * (rt_lock_acquire_scoped), the sections only read the lock: on different
 * words 1 trace, on one word 2.  One of them ordinary writes the lock: 2
 * whatever they announce -- on idle time, where a section runs through its
 * inner yield.  On step time the search switches there too, b can find a's
 * section held, and a section seen held is ordered as an ordinary one. */
typedef struct scoped_sections {
    rt_lock l;
    uint32_t x, y;
    bool same, a_ordinary;
} scoped_sections;
static void ss_t(void *p) {
    scoped_sections *d = (scoped_sections *)p;
    bool a = rt_thread_id() == 2;
    rt_yield();
    if (a && d->a_ordinary) rt_lock_acquire(&d->l);
    else rt_lock_acquire_scoped(&d->l);
    rt_access(a || d->same ? &d->x : &d->y, RT_WRITE);
    rt_yield();
    rt_lock_release(&d->l);
}
static void ss_main(void *p) {
    rt_lock_atomic_sections(&((scoped_sections *)p)->l);
    (void)rt_spawn("a", ss_t, p, false);
    (void)rt_spawn("b", ss_t, p, false);
}
static void ss_reset_apart(void *p) { memset(p, 0, sizeof(scoped_sections)); }
static void ss_reset_same(void *p) {
    ss_reset_apart(p);
    ((scoped_sections *)p)->same = true;
}
static void ss_reset_ordinary(void *p) {
    ss_reset_apart(p);
    ((scoped_sections *)p)->a_ordinary = true;
}

static void por_orders_scoped_sections_by_what_they_announce(void **state) {
    scoped_sections d;
    unsigned b;
    int time;
    (void)state;
    for (time = 0; time <= 1; time++)
        for (b = 1; b <= 2; b++) {
            sched_time_model tm = time ? SCHED_TIME_IDLE : SCHED_TIME_STEPS;
            por_stats apart = explore_runs_on(tm, b, true, ss_main, &d, ss_reset_apart, NULL, false);
            por_stats same = explore_runs_on(tm, b, true, ss_main, &d, ss_reset_same, NULL, false);
            por_stats ordinary = explore_runs_on(tm, b, true, ss_main, &d, ss_reset_ordinary, NULL, false);
            assert_true(apart.complete && same.complete && ordinary.complete);
            if (tm == SCHED_TIME_IDLE) {
                assert_int_equal(apart.traces, 1);
                assert_int_equal(same.traces, 2);
                assert_int_equal(ordinary.traces, 2);
            } else {
                /* b can find a's section held: the sections are ordered */
                assert_int_equal(apart.traces, ordinary.traces);
                assert_int_equal(same.traces, ordinary.traces);
                assert_true(apart.traces > 2);
            }
        }
}

/* A POR node keeps its arrival sleep set and then one record per thread
 * explored from it (sched_dfs_internal.h), updated, never appended again,
 * when a later run replays the same pick: three threads of four yielding
 * writes to one word, 158 runs at bound 2, and after every run no node of
 * the prefix holds two records of one thread (nor more than its options). */
typedef struct three_writers {
    uint32_t x;
} three_writers;
static void thw_t(void *p) {
    int i;
    for (i = 0; i < 4; i++) {
        rt_yield();
        rt_access(&((three_writers *)p)->x, RT_WRITE);
    }
}
static void thw_main(void *p) {
    (void)rt_spawn("a", thw_t, p, false);
    (void)rt_spawn("b", thw_t, p, false);
    (void)rt_spawn("c", thw_t, p, false);
}

static void por_keeps_one_record_per_explored_thread(void **state) {
    three_writers w;
    sched_dfs *d = sched_dfs_new(2);
    uint64_t replayed = 0;
    (void)state;
    assert_non_null(d);
    sched_dfs_set_por(d, true);
    do {
        sched_options o;
        sched_result r;
        size_t k;
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_DFS;
        o.dfs = d;
        assert_int_equal(sched_run(&o, thw_main, &w, &r), 0);
        assert_int_equal(r.status, SCHED_OK);
        sched_result_free(&r);
        for (k = 0; k < d->len; k++) {
            const dfs_node *x = &d->nodes[k];
            unsigned i, j;
            if (x->kind != SCHED_ITEM_PICK) continue;
            assert_true((unsigned)(x->nent - x->nsleep) <= popcount64(x->opts));
            for (i = x->nsleep; i < x->nent; i++)
                for (j = i + 1; j < x->nent; j++) assert_int_not_equal(x->ent[i].thread, x->ent[j].thread);
            replayed += x->nent - x->nsleep > 1;
        }
    } while (sched_dfs_advance(d));
    assert_true(sched_dfs_complete(d));
    assert_int_equal(sched_dfs_runs(d), 158);
    assert_true(replayed > 0); /* nodes with two explored threads were seen */
    sched_dfs_free(d);
}

/* Vector clocks start from zero in every run.  Main spawns A, B and C, each
 * one write to x, and joins A.  At bound 0 main blocks in the join, and at
 * each free switch any writer may go next: the writes, pairwise dependent
 * (one word), come in each of their 3! orders, 6 traces.  Nothing else
 * varies the trace: main's join reads A's end and always follows it, and
 * main's exit touches only main.  So the reduced search runs exactly 6
 * runs, one per order.  The run's first clocks matter because a thread's
 * clock starts as its spawner's: main's clock at the end of a run knows
 * A's steps (the join), and carried into the next run it would order A's
 * write before B's and C's there, hiding their races with it -- with the
 * reset left out, 5 runs, and C B A never ran (measured). */
typedef struct three_orders {
    uint32_t x;
    int n;
    char order[4];
    int seen[6]; /* runs per order, across the search (not reset) */
} three_orders;
static const char *const tho_orders[] = {"abc", "acb", "bac", "bca", "cab", "cba"};
static void tho_reset(void *p) {
    three_orders *t = (three_orders *)p;
    t->x = 0;
    t->n = 0;
    memset(t->order, 0, sizeof t->order);
}
static bool tho_tally(void *p) {
    three_orders *t = (three_orders *)p;
    unsigned i;
    for (i = 0; i < 6; i++)
        if (strcmp(t->order, tho_orders[i]) == 0) t->seen[i]++;
    return false;
}
static void tho_w(void *p) {
    three_orders *t = (three_orders *)p;
    rt_access(&t->x, RT_WRITE);
    t->order[t->n++] = (char)('a' + (rt_thread_id() - 2)); /* ids 2, 3, 4 */
}
static void tho_main(void *p) {
    rt_thread *a = rt_spawn("a", tho_w, p, false);
    (void)rt_spawn("b", tho_w, p, false);
    (void)rt_spawn("c", tho_w, p, false);
    rt_join(a);
}

static void por_starts_every_run_with_fresh_clocks(void **state) {
    three_orders t;
    por_stats st;
    unsigned i;
    (void)state;
    memset(&t, 0, sizeof t);
    st = explore_por(0, true, tho_main, &t, tho_reset, tho_tally);
    assert_true(st.complete);
    assert_int_equal(st.runs, 6);
    assert_int_equal(st.traces, 6);
    for (i = 0; i < 6; i++) assert_int_equal(t.seen[i], 1);
}

/* A run touching more objects than the object table was made for: the
 * table (1024 slots, sched_dfs_internal.h) grows when half full, and every
 * object numbered before must be found again after the rehash.  A writes
 * x and then reads 600 cells of its own, four a step (a step touching more
 * than POR_MAXK objects is taken to touch everything, which would hide
 * what is looked up); B writes x.  At bound 0 the run goes main, A, B:
 * x is numbered at A's first step, the table grows during A's reads, and
 * B's write finds x again -- the race, whose reversal runs B first.  2
 * traces, B first in one.  Were x numbered anew after the growth, B's
 * write would race with nothing: 1 trace (measured with the rehash loop
 * skipped).  The ASan build also checks that the rehash reads only the old
 * table's 1024 slots (a loop running one slot past them is a
 * heap-buffer-overflow there, and changes nothing the plain build sees). */
#define MANY_CELLS 600
typedef struct many_objects {
    uint32_t x;
    uint32_t cell[MANY_CELLS];
    int n;
    char order[4];
} many_objects;
static void many_a(void *p) {
    many_objects *m = (many_objects *)p;
    int i;
    rt_access(&m->x, RT_WRITE);
    for (i = 0; i < MANY_CELLS; i++) {
        if (i % 4 == 0) rt_yield();
        rt_access(&m->cell[i], RT_READ);
    }
    m->order[m->n++] = 'a';
}
static void many_b(void *p) {
    many_objects *m = (many_objects *)p;
    rt_access(&m->x, RT_WRITE);
    m->order[m->n++] = 'b';
}
static void many_main(void *p) {
    (void)rt_spawn("a", many_a, p, false);
    (void)rt_spawn("b", many_b, p, false);
}

static void many_reset(void *p) { memset(p, 0, sizeof(many_objects)); }
static bool many_b_first(void *p) { return ((many_objects *)p)->order[0] == 'b'; }

static void por_finds_objects_again_after_the_table_grows(void **state) {
    many_objects *m = calloc(1, sizeof *m);
    por_stats st;
    (void)state;
    assert_non_null(m);
    st = explore_por(0, true, many_main, m, many_reset, many_b_first);
    assert_true(st.complete);
    assert_true(st.hcap > 1024); /* the table grew: the path under test ran */
    assert_int_equal(st.traces, 2);
    assert_int_equal(st.failures, 1); /* B first in one */
    free(m);
}

/* Every object is found again however full the table grew, collisions
 * included: one thread announces 600 addresses, four a step, then all of
 * them again.  The addresses are multiples of 2^31 (announced, never
 * dereferenced), so the hash (bits 20 and up of key * 2^64/phi) puts every
 * one at slot 0: one probe chain, which the growth rehashes.  The second
 * pass numbers nothing new, so the run numbers as many objects as a run
 * announcing them once.  A lookup that probed the other way from the
 * rehash would miss the moved keys and number them again. */
static int cell_passes;
static bool cell_forget_odd; /* between passes: rt_forget every odd cell */
static void cells_reader(void *p) {
    int pass, i;
    (void)p;
    for (pass = 0; pass < cell_passes; pass++) {
        if (pass > 0 && cell_forget_odd)
            for (i = 1; i < MANY_CELLS; i += 2) rt_forget((const void *)(((uintptr_t)i + 1u) << 31), 1);
        for (i = 0; i < MANY_CELLS; i++) {
            if (i % 4 == 0) rt_yield();
            rt_access((const volatile void *)(((uintptr_t)i + 1u) << 31), RT_READ);
        }
    }
}
static void cells_main(void *p) { (void)rt_spawn("a", cells_reader, p, false); }

static void por_numbers_each_object_once_across_the_tables_growth(void **state) {
    por_stats once, twice;
    (void)state;
    cell_passes = 1;
    once = explore_por(0, true, cells_main, NULL, NULL, NULL);
    cell_passes = 2;
    twice = explore_por(0, true, cells_main, NULL, NULL, NULL);
    assert_true(once.hcap > 1024); /* the table grew */
    assert_true(once.nobj > MANY_CELLS);
    if (twice.nobj != once.nobj) fail_msg("announced twice: %u objects, once: %u", twice.nobj, once.nobj);
}

/* Forgetting takes keys out of that one probe chain (deletion shifts the
 * chain's later keys back): with every odd cell forgotten between the two
 * passes, the second numbers exactly those again -- a live key the
 * deletion lost would be numbered anew too. */
static void por_forgets_only_the_freed_objects_of_a_full_chain(void **state) {
    por_stats once, forgot;
    (void)state;
    cell_passes = 1;
    cell_forget_odd = false;
    once = explore_por(0, true, cells_main, NULL, NULL, NULL);
    cell_passes = 2;
    cell_forget_odd = true;
    forgot = explore_por(0, true, cells_main, NULL, NULL, NULL);
    cell_forget_odd = false;
    if (forgot.nobj != once.nobj + MANY_CELLS / 2)
        fail_msg("%u objects after forgetting %d of %u", forgot.nobj, MANY_CELLS / 2, once.nobj);
}

/* A step's footprint holds POR_MAXK (8) objects; a step touching more is
 * taken to write every object (POR_ALL, which every step reads).  A:
 * yield, write `ncells` cells in one step, yield; B: yield, write y, which
 * A never touches.  So with 7 or 8 cells the two steps are independent, 1
 * trace; with 9, A's step overflows and is dependent with B's, 2 traces --
 * were the ninth cell just dropped (or A's step taken to read POR_ALL, or
 * to write only its first cell), 1. */
typedef struct wide_step {
    uint32_t cell[POR_MAXK + 1], y;
    int ncells;
} wide_step;
static void ws_a(void *p) {
    wide_step *w = (wide_step *)p;
    int i;
    rt_yield();
    for (i = 0; i < w->ncells; i++) rt_access(&w->cell[i], RT_WRITE);
    rt_yield(); /* the step ends here, not in the exit (a write of A itself) */
}
static void ws_b(void *p) {
    wide_step *w = (wide_step *)p;
    rt_yield();
    rt_access(&w->y, RT_WRITE);
}
static void ws_main(void *p) {
    (void)rt_spawn("a", ws_a, p, false);
    (void)rt_spawn("b", ws_b, p, false);
}
static int ws_ncells;
static void ws_reset(void *p) {
    memset(p, 0, sizeof(wide_step));
    ((wide_step *)p)->ncells = ws_ncells;
}

static void por_takes_a_step_past_its_footprint_for_dependent_on_everything(void **state) {
    static const uint64_t want[] = {1, 1, 2}; /* 7, 8, 9 cells */
    wide_step w;
    unsigned i;
    (void)state;
    for (i = 0; i < 3; i++) {
        por_stats st;
        ws_ncells = (int)(POR_MAXK - 1 + i);
        st = explore_por(0, true, ws_main, &w, ws_reset, NULL);
        assert_true(st.complete);
        if (st.traces != want[i])
            fail_msg("%d cells: %llu traces, want %llu", ws_ncells, (unsigned long long)st.traces,
                     (unsigned long long)want[i]);
    }
}

/* The reduction's masks and clocks hold 64 threads: the 65th ends the run
 * at the next pick as misuse, naming the limit (por_holds_64_threads runs
 * exactly 64).  Main spawns and joins 63 fillers (ids 2..64), then
 * spawns thread 65: main and it runnable, a pick, where the run ends. */
static void por_refuses_a_65th_thread(void **state) {
    sched_dfs *d = sched_dfs_new(0);
    sched_options o;
    sched_result r;
    wide w;
    (void)state;
    assert_non_null(d);
    sched_dfs_set_por(d, true);
    sched_options_default(&o);
    o.strategy = SCHED_STRATEGY_DFS;
    o.dfs = d;
    memset(&w, 0, sizeof w);
    assert_int_equal(sched_run(&o, many_threads_main, &w, &r), 0);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_string_equal(r.reason, "dfs --por: more than 64 threads (the reduction's masks and clocks hold 64)");
    assert_int_equal(r.threads, 65);
    assert_int_equal(w.logged, 0); /* main never got past the 65th spawn */
    sched_result_free(&r);
    sched_dfs_free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dfs_counts_a_spawn_and_a_yield_by_hand),
        cmocka_unit_test(trace_classes_are_the_traces_the_search_proves),
        cmocka_unit_test(dfs_bound_zero_never_switches_from_a_runnable_thread),
        cmocka_unit_test(dfs_explores_the_extremes_of_every_choose),
        cmocka_unit_test(dfs_spends_the_bound_on_a_late_delay),
        cmocka_unit_test(dfs_finds_a_bug_only_a_preemption_shows),
        cmocka_unit_test(dfs_runs_are_distinct_and_grow_with_the_bound),
        cmocka_unit_test(dfs_reports_a_nondeterministic_program),
        cmocka_unit_test(dfs_reports_options_that_differ_at_a_replayed_choice),
        cmocka_unit_test(dfs_fairness_ends_a_rearming_worker),
        cmocka_unit_test(dfs_fair_livelock_is_reported_as_fair),
        cmocka_unit_test(dfs_forced_fair_steps_are_no_nodes),
        cmocka_unit_test(dfs_fair_lapse_offers_every_runnable_thread),
        cmocka_unit_test(dfs_fair_lapse_ends_every_demotion),
        cmocka_unit_test(por_counts_traces_by_hand),
        cmocka_unit_test(por_finds_every_failure_the_full_search_finds),
        cmocka_unit_test(por_a_delay_and_a_preemption_share_the_bound),
        cmocka_unit_test(por_keeps_distinct_traces),
        cmocka_unit_test(por_leaves_the_subtree_of_a_redundant_run),
        cmocka_unit_test(por_a_read_then_write_is_a_write),
        cmocka_unit_test(por_wakes_a_sleeper_on_an_object_numbered_otherwise),
        cmocka_unit_test(por_runs_the_thread_an_ending_step_cuts_off),
        cmocka_unit_test(por_holds_64_threads),
        cmocka_unit_test(por_counts_each_race_once),
        cmocka_unit_test(por_takes_a_timed_wait_for_dependent_on_everything),
        cmocka_unit_test(por_keeps_one_record_per_explored_thread),
        cmocka_unit_test(por_starts_every_run_with_fresh_clocks),
        cmocka_unit_test(por_finds_objects_again_after_the_table_grows),
        cmocka_unit_test(por_takes_a_step_past_its_footprint_for_dependent_on_everything),
        cmocka_unit_test(por_keeps_the_time_read_of_a_full_footprint),
        cmocka_unit_test(por_on_idle_time_a_timed_wait_commutes_with_other_objects),
        cmocka_unit_test(por_takes_an_idle_time_jump_for_a_barrier),
        cmocka_unit_test(por_takes_diagnostic_sections_for_independent),
        cmocka_unit_test(por_orders_scoped_sections_by_what_they_announce),
        cmocka_unit_test(por_takes_address_0_for_one_object),
        cmocka_unit_test(por_forgets_a_freed_address),
        cmocka_unit_test(por_numbers_each_object_once_across_the_tables_growth),
        cmocka_unit_test(por_forgets_only_the_freed_objects_of_a_full_chain),
        cmocka_unit_test(por_refuses_a_65th_thread),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
