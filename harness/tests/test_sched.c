/* The controlled scheduler's run contract: outcomes, determinism,
 * deadlock / livelock detection, virtual time, daemons, fail-fast. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#if defined(__linux__)
#include <sys/resource.h>
#endif

#include "sched_strategy.h"
#include "test_sched_util.h"

static void counter_run_completes_with_every_increment(void **state) {
    counter_prog c;
    sched_result r;
    (void)state;
    counter_init(&c, 4, 25);
    r = run_counter(1, NULL, &c);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(c.counter, 100);
    assert_int_equal(r.threads, 5);
    assert_true(r.steps >= 200);
    assert_true(r.switches > 0);
    assert_null(r.blocked_report);
    assert_non_null(r.schedule);
    assert_ptr_equal(rt_installed(), &rt_native_ops); /* restored after the run */
    sched_result_free(&r);
}

static char *heap_copy(const char *text) {
    char *p = malloc(strlen(text) + 1);
    assert_non_null(p);
    return strcpy(p, text);
}

static void same_seed_same_interleaving(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 1000; seed++) {
        counter_prog a, b;
        sched_result ra, rb;
        counter_init(&a, 3, 6);
        counter_init(&b, 3, 6);
        ra = run_counter(seed, NULL, &a);
        rb = run_counter(seed, NULL, &b);
        assert_int_equal(ra.status, SCHED_OK);
        assert_int_equal(ra.interleaving_hash, rb.interleaving_hash);
        assert_int_equal(ra.choice_hash, rb.choice_hash);
        assert_int_equal(ra.steps, rb.steps);
        assert_int_equal(a.order, b.order);
        assert_string_equal(ra.schedule, rb.schedule);
        sched_result_free(&ra);
        sched_result_free(&rb);
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void different_seeds_different_interleavings(void **state) {
    enum { N = 500 };
    uint64_t h[N], order[N];
    unsigned i, distinct = 1, distinct_order = 1;
    (void)state;
    for (i = 0; i < N; i++) {
        counter_prog c;
        sched_result r;
        counter_init(&c, 3, 6);
        r = run_counter(1000 + i, NULL, &c);
        h[i] = r.interleaving_hash;
        order[i] = c.order;
        sched_result_free(&r);
    }
    qsort(h, N, sizeof h[0], cmp_u64);
    qsort(order, N, sizeof order[0], cmp_u64);
    for (i = 1; i < N; i++) {
        distinct += h[i] != h[i - 1];
        distinct_order += order[i] != order[i - 1];
    }
    /* 3 threads x 6 increments: about 17 million orders; collisions are rare. */
    assert_true(distinct >= N * 95 / 100);
    /* The program saw it too: not just the hash. */
    assert_true(distinct_order >= N * 90 / 100);
}

/* ---- deadlock ---- */

typedef struct abba {
    rt_lock a, b;
} abba;

static void take_ab(void *p) {
    abba *x = (abba *)p;
    rt_lock_acquire(&x->a);
    rt_yield();
    rt_lock_acquire(&x->b);
    rt_lock_release(&x->b);
    rt_lock_release(&x->a);
}

static void take_ba(void *p) {
    abba *x = (abba *)p;
    rt_lock_acquire(&x->b);
    rt_yield();
    rt_lock_acquire(&x->a);
    rt_lock_release(&x->a);
    rt_lock_release(&x->b);
}

static void abba_main(void *p) {
    rt_thread *t1 = rt_spawn("ab", take_ab, p, false);
    rt_thread *t2 = rt_spawn("ba", take_ba, p, false);
    rt_join(t1);
    rt_join(t2);
}

static void lock_order_inversion_deadlocks_on_some_seeds(void **state) {
    unsigned seed, deadlocks = 0, ok = 0;
    (void)state;
    for (seed = 0; seed < 200; seed++) {
        abba x;
        sched_options o;
        sched_result r;
        memset(&x, 0, sizeof x);
        sched_options_default(&o);
        o.seed = seed;
        assert_int_equal(sched_run(&o, abba_main, &x, &r), 0);
        if (r.status == SCHED_DEADLOCK) {
            deadlocks++;
            assert_non_null(r.blocked_report);
            assert_non_null(strstr(r.blocked_report, "thread 2 \"ab\": wants lock#"));
            assert_non_null(strstr(r.blocked_report, "thread 3 \"ba\": wants lock#"));
            assert_non_null(strstr(r.blocked_report, "held by thread 3 \"ba\""));
            assert_non_null(strstr(r.blocked_report, "held by thread 2 \"ab\""));
            assert_non_null(strstr(r.blocked_report, "thread 1 \"main\": joins thread 2 \"ab\""));
            assert_non_null(strstr(r.reason, "deadlock"));
        } else {
            assert_int_equal(r.status, SCHED_OK);
            ok++;
        }
        sched_result_free(&r);
    }
    assert_true(deadlocks > 0);
    assert_true(ok > 0);
}

typedef struct forever {
    rt_lock lock;
    rt_waitq q;
} forever;

static void wait_forever(void *p) {
    forever *f = (forever *)p;
    rt_lock_acquire(&f->lock);
    rt_wait(&f->q, &f->lock, RT_FOREVER, "Nobody(wakes#1)");
    rt_lock_release(&f->lock);
}

static void forever_main(void *p) {
    rt_thread *t = rt_spawn("sleeper", wait_forever, p, false);
    rt_join(t);
}

static void wait_nobody_wakes_is_a_deadlock_naming_both(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 20; seed++) {
        forever f;
        sched_options o;
        sched_result r;
        memset(&f, 0, sizeof f);
        sched_options_default(&o);
        o.seed = seed;
        sched_run(&o, forever_main, &f, &r);
        assert_int_equal(r.status, SCHED_DEADLOCK);
        assert_non_null(strstr(r.blocked_report, "thread 2 \"sleeper\": waits on Nobody(wakes#1)"));
        assert_non_null(strstr(r.blocked_report, "thread 1 \"main\": joins thread 2 \"sleeper\""));
        sched_result_free(&r);
    }
}

/* ---- livelock ---- */

static void spin(void *p) {
    (void)p;
    for (;;) rt_yield();
}

static void spin_main(void *p) {
    rt_thread *t = rt_spawn("spinner", spin, p, false);
    rt_join(t);
}

static void spinning_on_yield_is_a_livelock(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.max_steps = 5000;
    sched_run(&o, spin_main, NULL, &r);
    assert_int_equal(r.status, SCHED_LIVELOCK);
    assert_int_equal(r.steps, 5001);
    assert_non_null(strstr(r.reason, "5000"));
    assert_non_null(strstr(r.blocked_report, "thread 2 \"spinner\": runnable"));
    sched_result_free(&r);
}

/* Time moved by steps alone (10 units a scheduling point, no sleep to jump
 * over) passes the bound too: a spinner with max_virtual_time 1000 and the
 * step bound far away ends at the first step past 1000 units, as a
 * virtual-time livelock. */
static void steps_pass_the_virtual_time_bound(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.max_steps = 1000000;
    o.max_virtual_time = 1000;
    sched_run(&o, spin_main, NULL, &r);
    assert_int_equal(r.status, SCHED_LIVELOCK);
    assert_non_null(strstr(r.reason, "virtual time 1010 passed max_virtual_time 1000"));
    assert_int_equal(r.steps, 101);
    sched_result_free(&r);
}

/* The bound is inclusive: a jump to a deadline exactly at max_virtual_time
 * is within it, one unit further is past it. */
static uint64_t sleep_to;
static void sleep_to_main(void *p) {
    (void)p;
    rt_sleep_until(sleep_to);
}

static void a_jump_to_the_bound_itself_is_within_it(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.max_virtual_time = 1000;
    sleep_to = 1000;
    sched_run(&o, sleep_to_main, NULL, &r);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(r.virtual_time, 1000);
    sched_result_free(&r);
    sleep_to = 1001;
    sched_run(&o, sleep_to_main, NULL, &r);
    assert_int_equal(r.status, SCHED_LIVELOCK);
    assert_non_null(strstr(r.reason, "virtual time 1001 passed max_virtual_time 1000"));
    sched_result_free(&r);
}

static void daemon_tick(void *p) {
    (void)p;
    for (;;) rt_sleep_until(rt_now() + 2500000); /* 250 ms */
}

static void forever_with_timer_main(void *p) {
    rt_spawn("timer", daemon_tick, NULL, true);
    forever_main(p);
}

static void virtual_time_bound_is_a_livelock(void **state) {
    forever f;
    sched_options o;
    sched_result r;
    (void)state;
    memset(&f, 0, sizeof f);
    sched_options_default(&o);
    o.max_virtual_time = 600ull * 10000000ull; /* 10 minutes */
    sched_run(&o, forever_with_timer_main, &f, &r);
    /* Without the bound this would run until max_steps: the daemon timer
     * keeps time moving, so it is never a deadlock. */
    assert_int_equal(r.status, SCHED_LIVELOCK);
    assert_non_null(strstr(r.reason, "virtual time"));
    assert_true(r.virtual_time > o.max_virtual_time);
    assert_true(r.steps < 20000);
    assert_non_null(strstr(r.blocked_report, "thread 2 \"timer\" (daemon): "));
    sched_result_free(&r);
}

/* ---- virtual time ---- */

typedef struct sleeper {
    uint64_t before, after;
} sleeper;

/* Half an hour: inside the default max_virtual_time (an hour), and so long
 * that the run's real duration can be bounded far above what a loaded
 * machine stretches it to and still far below a real sleep. */
#define VIRTUAL_SLEEP (1800ull * 10000000ull)

static void sleep_long(void *p) {
    sleeper *s = (sleeper *)p;
    s->before = rt_now();
    rt_sleep_until(s->before + VIRTUAL_SLEEP);
    s->after = rt_now();
}

/* Real time, to show a virtual sleep takes none (mingw's C library has no
 * timespec_get). */
#if defined(_WIN32)
#include <windows.h>
static double wall_seconds(void) {
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
}
#else
static double wall_seconds(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif

static void a_long_sleep_is_virtual(void **state) {
    sleeper s;
    sched_options o;
    sched_result r;
    double t0, dt;
    (void)state;
    sched_options_default(&o);
    t0 = wall_seconds();
    sched_run(&o, sleep_long, &s, &r);
    dt = wall_seconds() - t0;
    assert_int_equal(r.status, SCHED_OK);
    assert_true(s.after - s.before >= VIRTUAL_SLEEP);
    assert_true(r.virtual_time >= VIRTUAL_SLEEP);
    /* A real sleep would take 1800 s; the run takes milliseconds, and a
     * minute is a bound no loaded runner misses. */
    assert_true(dt < 60.0);
    sched_result_free(&r);
}

typedef struct timed_wait {
    rt_lock lock;
    rt_waitq q;
    bool first, second;
    uint64_t t_timeout;
} timed_wait;

static void waker(void *p) {
    timed_wait *w = (timed_wait *)p;
    rt_sleep_until(rt_now() + 10000000ull); /* 1 s */
    rt_lock_acquire(&w->lock);
    rt_wake_all(&w->q);
    rt_lock_release(&w->lock);
}

static void timed_wait_main(void *p) {
    timed_wait *w = (timed_wait *)p;
    rt_thread *t;
    uint64_t start;
    rt_lock_acquire(&w->lock);
    start = rt_now();
    w->first = rt_wait(&w->q, &w->lock, start + 1000000ull, "100ms"); /* nobody wakes */
    w->t_timeout = rt_now() - start;
    t = rt_spawn("waker", waker, w, false);
    w->second = rt_wait(&w->q, &w->lock, RT_FOREVER, "woken");
    rt_lock_release(&w->lock);
    rt_join(t);
}

/* sched_result_free leaves the result empty: every string NULL, so a second
 * free (a caller's error path after its normal one) frees nothing twice.
 * A deadlocked run fills the schedule and the blocked report; the race text
 * is set by hand, as only a TSan build fills it from a run. */
static void stuck_main(void *p) {
    rt_lock l;
    rt_waitq q;
    (void)p;
    memset(&l, 0, sizeof l);
    memset(&q, 0, sizeof q);
    rt_lock_acquire(&l);
    (void)rt_wait(&q, &l, RT_FOREVER, "nobody");
}
static void a_result_freed_is_empty(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    assert_int_equal(sched_run(&o, stuck_main, NULL, &r), 0);
    assert_int_equal(r.status, SCHED_DEADLOCK);
    assert_non_null(r.schedule);
    assert_non_null(r.blocked_report);
    if (!r.race) r.race = heap_copy("race");
    sched_result_free(&r);
    assert_null(r.schedule);
    assert_null(r.blocked_report);
    assert_null(r.race);
    sched_result_free(&r); /* a double free under ASan if a pointer was kept */
}

/* A lock is the run's: one left held by an ended run (its holder ended the
 * process inside it) is free in the next run, with nobody queued on it. */
static rt_lock carried_lock;
static void end_holding(void *p) {
    (void)p;
    rt_lock_acquire(&carried_lock);
    rt_end_process("ended holding the lock");
}
static void take_carried(void *p) {
    rt_lock_acquire(&carried_lock);
    *(int *)p = 1;
    rt_lock_release(&carried_lock);
}
static void a_lock_held_when_a_run_ended_is_free_in_the_next(void **state) {
    sched_options o;
    sched_result r;
    int took = 0;
    (void)state;
    sched_options_default(&o);
    assert_int_equal(sched_run(&o, end_holding, NULL, &r), 0);
    assert_int_equal(r.status, SCHED_PROCESS_ENDED);
    sched_result_free(&r);
    assert_int_equal(sched_run(&o, take_carried, &took, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(took, 1);
    sched_result_free(&r);
}

/* sched_options_default gives every field the default rt_sched.h states,
 * whatever the struct held before. */
static void options_default_to_what_the_header_says(void **state) {
    sched_options o;
    (void)state;
    memset(&o, 0xa5, sizeof o);
    sched_options_default(&o);
    assert_true(o.seed == 0);
    assert_int_equal(o.strategy, SCHED_STRATEGY_RANDOM);
    assert_int_equal(o.pct_depth, 3);
    assert_true(o.pct_steps == 0); /* SCHED_PCT_DEFAULT_STEPS */
    assert_true(o.max_steps == 1000000u);
    assert_true(o.max_virtual_time == 3600ull * 10000000ull); /* an hour in rt_now units */
    assert_null(o.schedule);
    assert_int_equal(o.stack_size, 64u * 1024u);
    assert_null(o.dfs);
}

/* The blocked report grows its buffer for every line it appends, the
 * terminator included: deadlocks of 1 to 12 waiting threads named with 1 to
 * 31 letters make reports whose lines end at every offset around the
 * buffer's 256- and 512-byte sizes (the ASan build sees a byte written past
 * one), and each report holds one line per thread, main's too. */
typedef struct named_waiters {
    rt_lock lock;
    rt_waitq q;
    int n, len;
} named_waiters;
static void named_wait_forever(void *p) {
    named_waiters *w = (named_waiters *)p;
    rt_lock_acquire(&w->lock);
    (void)rt_wait(&w->q, &w->lock, RT_FOREVER, "forever");
}
static void named_waiters_main(void *p) {
    named_waiters *w = (named_waiters *)p;
    char name[32];
    int i;
    memset(name, 'x', sizeof name);
    name[w->len] = '\0';
    for (i = 0; i < w->n; i++) (void)rt_spawn(name, named_wait_forever, w, false);
    named_wait_forever(w);
}
static void the_blocked_report_grows_for_every_line(void **state) {
    named_waiters w;
    (void)state;
    for (w.n = 1; w.n <= 12; w.n++)
        for (w.len = 1; w.len <= 31; w.len++) {
            sched_options o;
            sched_result r;
            const char *c;
            int lines = 0;
            memset(&w.lock, 0, sizeof w.lock);
            memset(&w.q, 0, sizeof w.q);
            sched_options_default(&o);
            assert_int_equal(sched_run(&o, named_waiters_main, &w, &r), 0);
            assert_int_equal(r.status, SCHED_DEADLOCK);
            assert_non_null(r.blocked_report);
            for (c = r.blocked_report; *c; c++) lines += *c == '\n';
            if (lines != w.n + 1) fail_msg("%d threads named %d letters: %d lines", w.n, w.len, lines);
            sched_result_free(&r);
        }
}

/* One run of fn under the random strategy at seed, which must end normally. */
static sched_result run_ok(rt_thread_fn fn, void *arg, uint64_t seed) {
    sched_options o;
    sched_result r;
    sched_options_default(&o);
    o.seed = seed;
    assert_int_equal(sched_run(&o, fn, arg, &r), 0);
    if (r.status != SCHED_OK) fail_msg("seed %llu: %s: %s", (unsigned long long)seed, sched_status_name(r.status), r.reason);
    return r;
}

/* A waiter that times out from the middle of a queue leaves it linked:
 * A, B and C queue in that order (main sleeps after each spawn, so each
 * gets there alone), B's deadline passes, and a wake-all then finds A and
 * C -- were B unlinked through a stale back link, A would be lost and main's
 * join of it a deadlock. */
typedef struct three_waiters {
    rt_lock lock;
    rt_waitq q;
    int woken[3]; /* 0: not back yet, 1: woken, 2: timed out */
} three_waiters;
static three_waiters tw3;
static void queued_waiter(void *p) {
    uintptr_t k = (uintptr_t)p;
    rt_lock_acquire(&tw3.lock);
    tw3.woken[k] = rt_wait(&tw3.q, &tw3.lock, k == 1 ? rt_now() + 50000u : RT_FOREVER, "queued") ? 1 : 2;
    rt_lock_release(&tw3.lock);
}
static void three_waiters_main(void *p) {
    rt_thread *t[3];
    uintptr_t k;
    (void)p;
    for (k = 0; k < 3; k++) {
        t[k] = rt_spawn("waiter", queued_waiter, (void *)k, false);
        rt_sleep_until(rt_now() + 10000u); /* 1 ms: the waiter queues */
    }
    rt_sleep_until(rt_now() + 100000u); /* 10 ms: B has timed out */
    rt_lock_acquire(&tw3.lock);
    rt_wake_all(&tw3.q);
    rt_lock_release(&tw3.lock);
    for (k = 0; k < 3; k++) rt_join(t[k]);
}
static void a_waiter_timing_out_mid_queue_leaves_it_linked(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 4; seed++) {
        sched_result r;
        memset(&tw3, 0, sizeof tw3);
        r = run_ok(three_waiters_main, NULL, seed);
        assert_int_equal(tw3.woken[0], 1);
        assert_int_equal(tw3.woken[1], 2);
        assert_int_equal(tw3.woken[2], 1);
        sched_result_free(&r);
    }
}

static void wait_times_out_false_and_wakes_true(void **state) {
    timed_wait w;
    sched_options o;
    sched_result r;
    (void)state;
    memset(&w, 0, sizeof w);
    sched_options_default(&o);
    sched_run(&o, timed_wait_main, &w, &r);
    assert_int_equal(r.status, SCHED_OK);
    assert_false(w.first);
    assert_true(w.t_timeout >= 1000000ull);
    assert_true(w.t_timeout < 1000000ull + 1000u);
    assert_true(w.second);
    sched_result_free(&r);
}

/* ---- daemons, fail-fast, misuse ---- */

static void daemon_main(void *p) {
    int *ran = (int *)p;
    rt_spawn("timer", daemon_tick, NULL, true);
    rt_sleep_until(rt_now() + 10000000ull);
    *ran = 1;
}

static void daemons_are_abandoned_when_main_ends(void **state) {
    int ran = 0;
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    sched_run(&o, daemon_main, &ran, &r);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(ran, 1);
    assert_true(r.virtual_time >= 10000000ull);
    assert_true(r.virtual_time < 20000000ull);
    sched_result_free(&r);
}

static int after_end;

/* Called through a volatile pointer: MSVC /W4 proves the statement after a
 * call that never returns unreachable (C4702, an error with /WX); that it is
 * never reached is what the test checks, at run time. */
static void (*volatile end_process)(const char *) = rt_end_process;

static void ender(void *p) {
    (void)p;
    rt_yield();
    end_process("fail-fast: obligation dropped");
    after_end = 1; /* never reached */
}

static void end_main(void *p) {
    rt_thread *t = rt_spawn("ender", ender, p, false);
    rt_join(t);
    after_end = 2;
}

static void end_process_stops_the_run(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    after_end = 0;
    sched_options_default(&o);
    sched_run(&o, end_main, NULL, &r);
    assert_int_equal(r.status, SCHED_PROCESS_ENDED);
    assert_string_equal(r.reason, "fail-fast: obligation dropped");
    assert_int_equal(after_end, 0);
    sched_result_free(&r);
}

static void release_unheld(void *p) {
    rt_lock *l = (rt_lock *)p;
    rt_lock_release(l);
}

static void misuse_is_reported(void **state) {
    rt_lock l;
    sched_options o;
    sched_result r;
    (void)state;
    memset(&l, 0, sizeof l);
    sched_options_default(&o);
    sched_run(&o, release_unheld, &l, &r);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_non_null(strstr(r.reason, "not held"));
    sched_result_free(&r);
}

/* Joining a thread twice is a misuse also when it had finished before the
 * first join (no join ever waited for it): main sleeps, so the thread
 * runs to its end whatever the seed, then main joins it twice. */
static void done_quickly(void *p) { (*(int *)p)++; }

static void join_twice_main(void *p) {
    rt_thread *t = rt_spawn("quick", done_quickly, p, false);
    rt_sleep_until(rt_now() + 10000000ull);
    rt_join(t);
    (*(int *)p) += 10;
    rt_join(t);
    (*(int *)p) += 100; /* never reached */
}

static void joining_a_finished_thread_twice_is_misuse(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 10; seed++) {
        int progress = 0;
        sched_options o;
        sched_result r;
        sched_options_default(&o);
        o.seed = seed;
        assert_int_equal(sched_run(&o, join_twice_main, &progress, &r), 0);
        assert_int_equal(r.status, SCHED_MISUSE);
        assert_non_null(strstr(r.reason, "rt_join of self or twice"));
        assert_int_equal(progress, 11); /* the thread ran, the first join returned */
        sched_result_free(&r);
    }
}

#define GOLDEN_SCHEDULE \
    "T1:1.2.1.3.4*2.2.1.2.=2.3.2*2.=2.3.=2.2*2.=2.2.4.=0.3.2.=2.4*2.1.3.=1.4.=2.4.3.4.=1.3.=0.4.3.4.=0.4.=0"
#define GOLDEN_HASH 0x015c0cf5ab4d0c1bull

static void short_lived(void *p) {
    (*(int *)p)++;
    rt_yield();
}

static void churn_main(void *p) {
    int i;
    for (i = 0; i < 5000; i++) rt_join(rt_spawn("short", short_lived, p, false));
}

static void finished_threads_give_their_stack_back_at_once(void **state) {
    int count = 0;
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    sched_run(&o, churn_main, &count, &r);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(count, 5000);
    assert_int_equal(r.threads, 5001);
    assert_true(r.fibers_peak <= 3); /* main, the live one, the one being reclaimed */
    sched_result_free(&r);
}

/* ... also when the thread that runs next is not a new one but one
 * resuming: waves of 50 threads that yield once and end, each wave joined
 * before the next is spawned, keep at most a wave's fibers (and main's, and
 * the one being reclaimed) -- a wave's stacks left to the end would pile up
 * to 150. */
static void yield_once(void *p) {
    (void)p;
    rt_yield();
}
static void waves_main(void *p) {
    rt_thread *t[50];
    int wave, i;
    (void)p;
    for (wave = 0; wave < 3; wave++) {
        for (i = 0; i < 50; i++) t[i] = rt_spawn("wave", yield_once, NULL, false);
        for (i = 0; i < 50; i++) rt_join(t[i]);
    }
}
static void threads_resumed_after_an_exit_reclaim_its_stack(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 4; seed++) {
        sched_result r = run_ok(waves_main, NULL, seed);
        if (r.fibers_peak > 52) fail_msg("seed %llu: %u fibers at once", (unsigned long long)seed, (unsigned)r.fibers_peak);
        sched_result_free(&r);
    }
}

typedef struct nested_out {
    int ret;
    sched_status status;
    char reason[256];
} nested_out;

static void nested(void *p) {
    nested_out *n = (nested_out *)p;
    sched_options o;
    sched_result r;
    sched_options_default(&o);
    n->ret = sched_run(&o, nested, NULL, &r);
    n->status = r.status;
    memcpy(n->reason, r.reason, sizeof n->reason);
    sched_result_free(&r);
}

static void a_run_inside_a_run_is_refused(void **state) {
    nested_out inner;
    sched_options o;
    sched_result r;
    (void)state;
    memset(&inner, 0, sizeof inner);
    sched_options_default(&o);
    assert_int_equal(sched_run(&o, nested, &inner, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    /* refused, and its result says why: a misuse, not an OK run */
    assert_int_equal(inner.ret, -1);
    assert_int_equal(inner.status, SCHED_MISUSE);
    assert_string_equal(inner.reason, "sched_run called inside a run");
    sched_result_free(&r);
}

static void many_runs_reuse_stacks(void **state) {
    unsigned i;
    (void)state;
    for (i = 0; i < 3000; i++) {
        counter_prog c;
        sched_result r;
        counter_init(&c, 16, 2);
        r = run_counter(i, NULL, &c);
        assert_int_equal(r.status, SCHED_OK);
        assert_int_equal(c.counter, 32);
        assert_true(r.fibers_peak <= 17);
        sched_result_free(&r);
    }
    assert_ptr_equal(rt_installed(), &rt_native_ops);
#if defined(__linux__) && !defined(TPHEAL_ASAN) && !defined(TPHEAL_TSAN)
    {
        /* 3000 runs of 17 fibers: stacks leaked per run would be ~50,000 x at
         * least one touched 4 KiB page = 200 MiB.  (Not under the sanitizers:
         * their shadow counts, and the race build never reuses a stack.) */
        /* VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a
         * test started by a large parent (pytest, the sabotage sweep) would
         * read the parent's peak.  VmHWM belongs to this image alone. */
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        long hwm_kib = -1;
        assert_non_null(f);
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "VmHWM:", 6) == 0) hwm_kib = strtol(line + 6, NULL, 10);
        fclose(f);
        assert_true(hwm_kib > 0);
        assert_true(hwm_kib < 32 * 1024); /* KiB */
    }
#endif
}

/* The raw switch rate is n switches over the time the bench measured
 * around them on sched_bench_seconds, so that time, n / rate, lies inside
 * the same clock's interval around the whole call.  A sanity bound on the
 * measurement, no claim about speed.  The clock is first taken past 0.05 s
 * (the thread's CPU time on POSIX starts near 0): an elapsed time that
 * kept the start reading in it (a sum, not a difference) is then over
 * 0.1 s, beyond the interval around a call of a few milliseconds. */
static void bench_switch_rate_is_timed_inside_the_call(void **state) {
    const uint64_t n = 100000;
    volatile uint64_t spin = 0;
    double before, after, rate;
    (void)state;
    while (sched_bench_seconds() < 0.05) spin++;
    before = sched_bench_seconds();
    rate = sched_bench_raw_switches_per_sec(n);
    after = sched_bench_seconds();
    assert_true(rate > 0.0); /* 100,000 switches move a nanosecond clock */
    /* the quotient's rounding: a relative 1e-9 */
    if ((double)n / rate > (after - before) * (1.0 + 1e-9))
        fail_msg("bench timed %.9f s of a %.9f s call", (double)n / rate, after - before);
}

/* The seed -> interleaving mapping is part of the contract: a seed printed
 * by a failing CI run must replay on every later build and every platform
 * (this value is the same from gcc, clang, mingw under wine).  Changing
 * pcg32, the pick rule or the recording breaks it: update this golden run
 * only together with a note that old seeds no longer replay. */
static void golden_run_is_stable_across_builds(void **state) {
    counter_prog c;
    sched_result r;
    (void)state;
    counter_init(&c, 3, 4);
    r = run_counter(42, NULL, &c);
    print_message("golden: %s %016llx %llu\n", r.schedule, (unsigned long long)r.interleaving_hash,
                  (unsigned long long)c.order);
    assert_string_equal(r.schedule, GOLDEN_SCHEDULE);
    assert_int_equal(r.interleaving_hash, GOLDEN_HASH);
    sched_result_free(&r);
}

/* ---- a blocked report taken between a lock's release and its next owner -- */

static rt_lock handoff_lock;

static void handoff_waiter(void *p) {
    (void)p;
    rt_lock_acquire(&handoff_lock);
    rt_lock_release(&handoff_lock);
}

/* main holds the lock while two waiters queue on it (its sleep lets both
 * block), then releases it -- the release wakes the first, the second still
 * waits for a lock nobody holds -- and ends the process.  Whether the woken
 * waiter runs first is the seed's choice: on some seeds the process ends
 * with the second waiter queued on the free lock. */
static void handoff_main(void *p) {
    (void)p;
    rt_lock_acquire(&handoff_lock);
    rt_spawn("w1", handoff_waiter, NULL, false);
    rt_spawn("w2", handoff_waiter, NULL, false);
    rt_sleep_until(rt_now() + 1000);
    rt_lock_release(&handoff_lock);
    end_process("ended mid-handoff");
}

static void a_waiter_for_a_released_lock_is_reported_free(void **state) {
    sched_options o;
    sched_result r;
    uint64_t seed;
    int free_seen = 0;
    (void)state;
    for (seed = 1; seed <= 200; seed++) {
        memset(&handoff_lock, 0, sizeof handoff_lock);
        sched_options_default(&o);
        o.seed = seed;
        sched_run(&o, handoff_main, NULL, &r);
        assert_int_equal(r.status, SCHED_PROCESS_ENDED);
        assert_non_null(r.blocked_report);
        if (strstr(r.blocked_report, " (free, wake-up pending)\n")) {
            /* the first waiter queued was woken; the other is queued still, nobody owns the lock */
            bool w1_free = strstr(r.blocked_report, "thread 2 \"w1\": wants lock#1 (free, wake-up pending)\n") != NULL;
            bool w2_free = strstr(r.blocked_report, "thread 3 \"w2\": wants lock#1 (free, wake-up pending)\n") != NULL;
            if (w1_free == w2_free ||
                !strstr(r.blocked_report, w1_free ? "thread 3 \"w2\": runnable\n" : "thread 2 \"w1\": runnable\n"))
                fail_msg("seed %llu: %s", (unsigned long long)seed, r.blocked_report);
            free_seen++;
        } else if (strstr(r.blocked_report, "wants lock#") && !strstr(r.blocked_report, "held by thread 1 \"main\"")) {
            fail_msg("seed %llu: a waiter on a lock neither free nor main's: %s", (unsigned long long)seed,
                     r.blocked_report);
        }
        sched_result_free(&r);
    }
    if (free_seen == 0) fail_msg("no seed of 200 ended with a waiter on the free lock");
}

/* Every status and strategy by its name in reports and on the command line;
 * "?" outside the enums, and the random strategy for an unknown kind. */
static void statuses_and_strategies_have_names(void **state) {
    (void)state;
    assert_string_equal(sched_status_name(SCHED_OK), "ok");
    assert_string_equal(sched_status_name(SCHED_DEADLOCK), "deadlock");
    assert_string_equal(sched_status_name(SCHED_LIVELOCK), "livelock");
    assert_string_equal(sched_status_name(SCHED_PROCESS_ENDED), "process-ended");
    assert_string_equal(sched_status_name(SCHED_REPLAY_DIVERGED), "replay-diverged");
    assert_string_equal(sched_status_name(SCHED_MISUSE), "misuse");
    assert_string_equal(sched_status_name((sched_status)99), "?");
    assert_string_equal(sched_strategy_name(SCHED_STRATEGY_RANDOM), "random");
    assert_string_equal(sched_strategy_name(SCHED_STRATEGY_PCT), "pct");
    assert_string_equal(sched_strategy_name(SCHED_STRATEGY_DFS), "dfs");
    assert_string_equal(sched_strategy_name(SCHED_STRATEGY_COUNT), "?");
    assert_ptr_equal(sched_strategy_for(SCHED_STRATEGY_COUNT), sched_strategy_for(SCHED_STRATEGY_RANDOM));
    assert_ptr_not_equal(sched_strategy_for(SCHED_STRATEGY_PCT), sched_strategy_for(SCHED_STRATEGY_RANDOM));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_waiter_for_a_released_lock_is_reported_free),
        cmocka_unit_test(statuses_and_strategies_have_names),
        cmocka_unit_test(counter_run_completes_with_every_increment),
        cmocka_unit_test(same_seed_same_interleaving),
        cmocka_unit_test(different_seeds_different_interleavings),
        cmocka_unit_test(lock_order_inversion_deadlocks_on_some_seeds),
        cmocka_unit_test(wait_nobody_wakes_is_a_deadlock_naming_both),
        cmocka_unit_test(spinning_on_yield_is_a_livelock),
        cmocka_unit_test(virtual_time_bound_is_a_livelock),
        cmocka_unit_test(steps_pass_the_virtual_time_bound),
        cmocka_unit_test(a_long_sleep_is_virtual),
        cmocka_unit_test(wait_times_out_false_and_wakes_true),
        cmocka_unit_test(a_waiter_timing_out_mid_queue_leaves_it_linked),
        cmocka_unit_test(a_result_freed_is_empty),
        cmocka_unit_test(the_blocked_report_grows_for_every_line),
        cmocka_unit_test(options_default_to_what_the_header_says),
        cmocka_unit_test(a_lock_held_when_a_run_ended_is_free_in_the_next),
        cmocka_unit_test(daemons_are_abandoned_when_main_ends),
        cmocka_unit_test(end_process_stops_the_run),
        cmocka_unit_test(a_jump_to_the_bound_itself_is_within_it),
        cmocka_unit_test(misuse_is_reported),
        cmocka_unit_test(joining_a_finished_thread_twice_is_misuse),
        cmocka_unit_test(finished_threads_give_their_stack_back_at_once),
        cmocka_unit_test(threads_resumed_after_an_exit_reclaim_its_stack),
        cmocka_unit_test(a_run_inside_a_run_is_refused),
        cmocka_unit_test(many_runs_reuse_stacks),
        cmocka_unit_test(golden_run_is_stable_across_builds),
        cmocka_unit_test(bench_switch_rate_is_timed_inside_the_call),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
