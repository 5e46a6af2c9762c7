/* The race build's detector (docs/races.md): ThreadSanitizer inside the
 * controlled scheduler, with the pool's happens-before contract
 * (harness/sim/sim_hb.h) and nothing more.  Each edge of the contract is
 * checked both ways: an access ordered by it is no race, the same access
 * with the edge's call moved after it is one.  The model's lock, the fiber
 * switches and a virtual-time sleep must order nothing.  A report names both
 * threads and both sites and is the same, byte for byte, for the same seed.
 * Outside the race build every case is skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "os.h"
#include "rt.h"
#include "rt_sched.h"
#include "sim.h"

#include <tpheal/trace.h>

#define SEEDS 12u

/* The shared word the bodies race on (plain accesses: what TSan checks). */
typedef struct shared {
    volatile uint64_t x;
    tph_os_event *ev;
    void *file;
    tph_os_mutex m;
    uint32_t flag;
} shared;

/* On the heap, fresh for each run: TSan marks a word it reported a race on
 * so that it never reports it again in the process (tsan_rtl_access.cpp,
 * DoReportRace), so a global would be reported by the first run only. */
static shared *gp;
#define g (*gp)

static void body_run(void *arg) {
    void (*fn)(void) = (void (*)(void))(uintptr_t)arg;
    sim_process_begin(NULL);
    fn();
    sim_process_end();
}

/* The run's race report for `seed` (malloc'd), or NULL. */
static char *race_of(void (*fn)(void), uint64_t seed, sched_strategy_kind strategy) {
    sched_options o;
    sched_result r;
    char *race;
    gp = calloc(1, sizeof *gp);
    assert_non_null(gp);
    sched_options_default(&o);
    o.seed = seed;
    o.strategy = strategy;
    assert_int_equal(sched_run(&o, body_run, (void *)(uintptr_t)fn, &r), 0);
    if (sim_process_active()) sim_process_end();
    assert_int_equal(r.status, SCHED_OK);
    race = NULL;
    if (r.race) {
        size_t n = strlen(r.race) + 1;
        race = malloc(n);
        assert_non_null(race);
        memcpy(race, r.race, n);
    }
    sched_result_free(&r);
    free(gp);
    gp = NULL;
    return race;
}

/* Every seed under both strategies: a race, or none. */
static void expect(void (*fn)(void), bool race, const char *what) {
#if !defined(TPHEAL_TSAN)
    (void)fn, (void)race, (void)what, (void)race_of;
    skip();
#else
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        for (int st = 0; st < 2; st++) {
            char *r = race_of(fn, seed, st ? SCHED_STRATEGY_PCT : SCHED_STRATEGY_RANDOM);
            if (race && !r) fail_msg("%s: no race reported (seed %llu, %s)", what, (unsigned long long)seed,
                                     st ? "pct" : "random");
            if (!race && r) fail_msg("%s: a race reported (seed %llu, %s):\n%s", what, (unsigned long long)seed,
                                     st ? "pct" : "random", r);
            free(r);
        }
    }
#endif
}

static void TPH_OS_CALLBACK read_x(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i, (void)ctx, (void)w;
    if (g.x != 1) g.flag = 2; /* a read of x */
}
static void TPH_OS_CALLBACK write_x(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i, (void)ctx, (void)w;
    g.x = 2;
}

/* ---- submit -> callback start; callback return -> WaitFor*Callbacks ---- */
static void body_submit_ordered(void) {
    tph_os_work *w = tph_os_work_create(read_x, NULL, NULL);
    g.x = 1;
    tph_os_work_submit(w);
    tph_os_work_wait(w, false);
    g.x = 3; /* after the callback's read: the wait's return is ordered after it */
    tph_os_work_close(w);
}
static void body_submit_unordered(void) {
    tph_os_work *w = tph_os_work_create(read_x, NULL, NULL);
    tph_os_work_submit(w);
    g.x = 1; /* after the submit: nothing orders it before the callback */
    tph_os_work_wait(w, false);
    tph_os_work_close(w);
}
static void body_no_wait(void) {
    tph_os_work *w = tph_os_work_create(write_x, NULL, NULL);
    tph_os_work_submit(w);
    /* A virtual-time sleep and a seam call through the model's lock order
     * nothing: the callback's write races with this read. */
    rt_sleep_until(rt_now() + 100 * SIM_MS);
    tph_os_event_close(tph_os_event_create(false, false));
    if (g.x == 2) g.flag = 1;
    tph_os_work_wait(w, false);
    tph_os_work_close(w);
}
static void test_submit_and_wait(void **st) {
    (void)st;
    expect(body_submit_ordered, false, "write, submit, callback reads, wait, write");
    expect(body_submit_unordered, true, "submit, then write");
    expect(body_no_wait, true, "a callback's write read after a sleep and a model call, before the wait");
}

/* ---- SetEvent -> the wait callback ---------------------------------------- */
static void TPH_OS_CALLBACK wait_read_x(tph_os_instance *i, void *ctx, tph_os_wait *w, uint32_t r) {
    (void)i, (void)ctx, (void)w, (void)r;
    if (g.x != 1) g.flag = 2;
}
static void setter(void *arg) {
    (void)arg;
    g.x = 1;
    tph_os_event_set(g.ev);
}
static void late_setter(void *arg) {
    (void)arg;
    tph_os_event_set(g.ev);
    g.x = 1;
}
static void event_body(void (*fn)(void *)) {
    tph_os_wait *w = tph_os_wait_create(wait_read_x, NULL, NULL);
    g.ev = tph_os_event_create(false, false);
    tph_os_wait_set(w, g.ev, TPH_OS_INFINITE);
    rt_join(rt_spawn("setter", fn, NULL, false));
    tph_os_wait_wait(w, false);
    tph_os_wait_close(w);
    tph_os_event_close(g.ev);
}
static void body_event_ordered(void) { event_body(setter); }
static void body_event_unordered(void) {
    /* The setter is joined after the callback may have run: the join orders
     * the setter before main, never before the callback. */
    event_body(late_setter);
}
/* SetEvent -> a WaitForSingleObject that returns signalled.  The setter is
 * joined only after the read, so the join orders nothing the read needs. */
static void direct_body(void (*fn)(void *)) {
    g.ev = tph_os_event_create(false, false);
    rt_thread *t = rt_spawn("setter", fn, NULL, false);
    if (tph_os_event_wait(g.ev, TPH_OS_INFINITE) != TPH_OS_WAIT_SIGNALED) abort();
    if (g.x != 1) g.flag = 2;
    rt_join(t);
    tph_os_event_close(g.ev);
}
static void body_event_wait_ordered(void) { direct_body(setter); }
static void body_event_wait_unordered(void) { direct_body(late_setter); }
static void test_set_event(void **st) {
    (void)st;
    expect(body_event_ordered, false, "write, SetEvent, the wait callback reads");
    expect(body_event_unordered, true, "SetEvent, then write");
    expect(body_event_wait_ordered, false, "write, SetEvent, WaitForSingleObject returns, read");
    expect(body_event_wait_unordered, true, "SetEvent, then write, read after the wait");
}

/* ---- StartThreadpoolIo -> the completion callback ------------------------------- */
static void TPH_OS_CALLBACK io_read_x(tph_os_instance *i, void *ctx, void *ov, uint32_t r, uintptr_t n,
                                     tph_os_io *io) {
    (void)i, (void)ctx, (void)ov, (void)r, (void)n, (void)io;
    if (g.x != 1) g.flag = 2;
}
/* Spawned before main's write, so the spawn orders nothing; the sleep only
 * makes the completion come after the start (main never sleeps). */
static void completer(void *arg) {
    (void)arg;
    rt_sleep_until(rt_now() + 10 * SIM_MS);
    if (!sim_io_complete(g.file, NULL, 0, 0)) abort();
}
static void io_body(bool write_first) {
    g.file = sim_file_create();
    tph_os_io *io = tph_os_io_create(g.file, io_read_x, NULL, NULL);
    rt_thread *t = rt_spawn("completer", completer, NULL, false);
    if (write_first) g.x = 1;
    tph_os_io_start(io);
    if (!write_first) g.x = 1;
    tph_os_io_wait(io, false);
    rt_join(t);
    tph_os_io_close(io);
}
static void body_io_ordered(void) { io_body(true); }
static void body_io_unordered(void) { io_body(false); }
/* The completion is the other edge into the callback: what the thread that
 * completes the I/O wrote before completing it (as a driver fills the
 * buffer) comes before the callback.  Spawned after the start, so only the
 * completion orders its write. */
static void writing_completer(void *arg) {
    (void)arg;
    g.x = 1;
    if (!sim_io_complete(g.file, NULL, 0, 0)) abort();
}
static void body_io_completer_writes(void) {
    g.file = sim_file_create();
    tph_os_io *io = tph_os_io_create(g.file, io_read_x, NULL, NULL);
    tph_os_io_start(io);
    rt_thread *t = rt_spawn("completer", writing_completer, NULL, false);
    rt_join(t);
    tph_os_io_wait(io, false);
    tph_os_io_close(io);
}
/* WaitForThreadpoolIoCallbacks returns after the callback, and what the
 * callback wrote comes before what the waiter reads after it. */
static void TPH_OS_CALLBACK io_write_x(tph_os_instance *i, void *ctx, void *ov, uint32_t r, uintptr_t n,
                                      tph_os_io *io) {
    (void)i, (void)ctx, (void)ov, (void)r, (void)n, (void)io;
    g.x = 1;
}
static void plain_completer(void *arg) {
    (void)arg;
    if (!sim_io_complete(g.file, NULL, 0, 0)) abort();
}
static void body_io_wait_then_read(void) {
    g.file = sim_file_create();
    tph_os_io *io = tph_os_io_create(g.file, io_write_x, NULL, NULL);
    tph_os_io_start(io);
    rt_thread *t = rt_spawn("completer", plain_completer, NULL, false);
    tph_os_io_wait(io, false);
    if (g.x != 1) g.flag = 2;
    rt_join(t);
    tph_os_io_close(io);
}
static void test_io_start(void **st) {
    (void)st;
    expect(body_io_ordered, false, "write, StartThreadpoolIo, another thread completes, the callback reads");
    expect(body_io_unordered, true, "StartThreadpoolIo, then write");
    expect(body_io_completer_writes, false, "StartThreadpoolIo, another thread writes and completes, the callback reads");
    expect(body_io_wait_then_read, false, "the callback writes, WaitForThreadpoolIoCallbacks returns, read");
}

/* ---- timer set -> its tick -------------------------------------------------- */
static void TPH_OS_CALLBACK tick_read_x(tph_os_instance *i, void *ctx, tph_os_timer *t) {
    (void)i, (void)ctx, (void)t;
    if (g.x != 1) g.flag = 2;
}
static void timer_body(bool write_first) {
    tph_os_timer *t = tph_os_timer_create(tick_read_x, NULL, NULL);
    int64_t due = -10 * 10000; /* 10 ms, relative */
    if (write_first) g.x = 1;
    tph_os_timer_set(t, &due, 0, 0);
    if (!write_first) g.x = 1;
    rt_sleep_until(rt_now() + 100 * SIM_MS);
    tph_os_timer_wait(t, false);
    tph_os_timer_close(t);
}
static void body_timer_ordered(void) { timer_body(true); }
static void body_timer_unordered(void) { timer_body(false); }
static void test_timer_set(void **st) {
    (void)st;
    expect(body_timer_ordered, false, "write, SetThreadpoolTimer, the tick reads");
    expect(body_timer_unordered, true, "SetThreadpoolTimer, then write");
}

/* ---- cleanup-group release -> its return ------------------------------------ */
static void group_body(bool release) {
    tph_os_group *grp = tph_os_group_create();
    tph_os_env env = {NULL, grp, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_work *w = tph_os_work_create(write_x, NULL, &env);
    tph_os_work_submit(w);
    if (release) tph_os_group_close_members(grp, false, NULL);
    if (g.x == 2) g.flag = 1;
    if (!release) {
        rt_sleep_until(rt_now() + 100 * SIM_MS);
        tph_os_group_close_members(grp, false, NULL);
    }
    tph_os_group_close(grp);
}
static void body_group_ordered(void) { group_body(true); }
static void body_group_unordered(void) { group_body(false); }
static void test_group_release(void **st) {
    (void)st;
    expect(body_group_ordered, false, "a member's callback writes, the release returns, read");
    expect(body_group_unordered, true, "read before the release");
}

/* ---- seam mutex; seam atomics ------------------------------------------------ */
static void locked_inc(void *arg) {
    (void)arg;
    tph_os_mutex_lock(&g.m);
    g.x++;
    tph_os_mutex_unlock(&g.m);
}
static void plain_inc(void *arg) {
    (void)arg;
    tph_os_mutex_lock(&g.m);
    tph_os_mutex_unlock(&g.m);
    g.x++;
}
static void two(void (*fn)(void *)) {
    rt_thread *a = rt_spawn("a", fn, NULL, false);
    rt_thread *b = rt_spawn("b", fn, NULL, false);
    rt_join(a);
    rt_join(b);
}
static void body_mutex_ordered(void) { two(locked_inc); }
static void body_mutex_unordered(void) { two(plain_inc); }
static void publisher(void *arg) {
    (void)arg;
    g.x = 1;
    tph_os_store32(&g.flag, 1);
}
/* The publisher has no blocking call: by the end of the reader's sleep it
 * has finished, whatever the schedule. */
static void reader(void *arg) {
    (void)arg;
    rt_sleep_until(rt_now() + 10 * SIM_MS);
    if (tph_os_load32(&g.flag) && g.x != 1) abort();
}
static void plain_reader(void *arg) {
    (void)arg;
    rt_sleep_until(rt_now() + 10 * SIM_MS);
    if (g.x == 1) g.flag = 3;
}
static void body_atomic_ordered(void) {
    rt_thread *a = rt_spawn("publisher", publisher, NULL, false);
    rt_thread *b = rt_spawn("reader", reader, NULL, false);
    rt_join(a);
    rt_join(b);
}
static void body_atomic_unordered(void) {
    rt_thread *a = rt_spawn("publisher", publisher, NULL, false);
    rt_thread *b = rt_spawn("reader", plain_reader, NULL, false);
    rt_join(a);
    rt_join(b);
}
static void test_mutex_and_atomics(void **st) {
    (void)st;
    expect(body_mutex_ordered, false, "two threads increment under the seam mutex");
    expect(body_mutex_unordered, true, "two threads increment after it");
    expect(body_atomic_ordered, false, "a write published by a seam atomic store, read after its load");
    expect(body_atomic_unordered, true, "the same read without the load");
}

/* ---- the trace orders nothing ------------------------------------------------------ */
/* A user's process with the trace off never takes the trace's lock; the scenario
 * runner always hooks the trace, so every record takes it.  If that lock gave an
 * edge, a write before a record on one thread and a read after a record on
 * another would be ordered in every harness run and in no user's process.  The
 * trace's lock is taken here through the public snapshot call, which takes it
 * exactly as a record does. */
static void trace_lock_taken(void) { (void)tph_trace_snapshot(NULL, 0, NULL); }
static void traced_writer(void *arg) {
    (void)arg;
    g.x = 1;
    trace_lock_taken();
}
/* The writer has no blocking call: by the end of the sleep it is done. */
static void traced_reader(void *arg) {
    (void)arg;
    rt_sleep_until(rt_now() + 10 * SIM_MS);
    trace_lock_taken();
    if (g.x == 1) g.flag = 3;
}
static void body_trace_unordered(void) {
    rt_thread *a = rt_spawn("writer", traced_writer, NULL, false);
    rt_thread *b = rt_spawn("reader", traced_reader, NULL, false);
    rt_join(a);
    rt_join(b);
}
static void test_trace_records_order_nothing(void **st) {
    (void)st;
    expect(body_trace_unordered, true, "a write, then the trace's lock; the trace's lock later, then a read");
}

/* ---- the report ------------------------------------------------------------------ */
#if defined(TPHEAL_TSAN)
/* The report names a site as `function path:line`, the path as the compiler
 * saw it: harness/tests/test_race.c from the project's root, or with a
 * prefix (../src/ in the sabotage sweep's copies, compiled under ccache's
 * base_dir) -- either way it ends in the file's project path. */
static bool names_site(const char *text, const char *fn) {
    static const char tail[] = "harness/tests/test_race.c";
    size_t fl = strlen(fn), tl = strlen(tail);
    const char *p;
    for (p = strstr(text, fn); p; p = strstr(p + 1, fn)) {
        const char *path = p + fl, *end;
        if (*path++ != ' ') continue;
        end = strchr(path, ':');
        if (end && (size_t)(end - path) >= tl && !memchr(path, '\n', (size_t)(end - path)) &&
            strncmp(end - tl, tail, tl) == 0)
            return true;
    }
    return false;
}
#endif

static void test_report_names_both_and_replays(void **st) {
    (void)st;
#if !defined(TPHEAL_TSAN)
    skip();
#else
    char *first = race_of(body_submit_unordered, 7, SCHED_STRATEGY_PCT);
    assert_non_null(first);
    /* Both accesses, with the scenario-visible names of both threads, and
     * sites as function file:line -- no address. */
    assert_non_null(strstr(first, "ThreadSanitizer: data-race"));
    assert_non_null(strstr(first, "thread 1 \"main\""));
    assert_non_null(strstr(first, "\"default pool worker\""));
    assert_non_null(strstr(first, "previous "));
    assert_true(names_site(first, "body_submit_unordered"));
    assert_true(names_site(first, "read_x"));
    assert_null(strstr(first, "0x"));
    /* Other runs in between do not change it. */
    for (uint64_t s = 0; s < 5; s++) free(race_of(body_no_wait, s, SCHED_STRATEGY_RANDOM));
    char *again = race_of(body_submit_unordered, 7, SCHED_STRATEGY_PCT);
    assert_non_null(again);
    assert_string_equal(first, again);
    free(first);
    free(again);
#endif
}

/* ---- the scheduler's own work is the harness's ----------------------------------- */
/* Every rt_ call runs the scheduler inside the calling thread's ignore
 * region, to its end: the pick, the schedule's record (its buffer grows by
 * realloc at some picks) and, for the call that ends the process, the
 * reason's formatting.  So does a thread's exit, which is no rt_ call: after
 * its function returns, the pick of the thread to run next is still made on
 * the exiting thread.  None of that may be checked as the thread's own:
 * the threads are unordered with each other and with the caller of
 * sched_run, and every access would be a race the code under test never
 * made.  Run without the sim: nothing else to order or blame. */
static rt_waitq wakers_q;
static void waker_loop(void *arg) {
    (void)arg;
    /* thousands of picks: the record outgrows its first buffers */
    for (int i = 0; i < 3000; i++) rt_wake_all(&wakers_q);
}
static void wakers_main(void *arg) {
    (void)arg;
    rt_thread *a = rt_spawn("a", waker_loop, NULL, false);
    rt_thread *b = rt_spawn("b", waker_loop, NULL, false);
    rt_join(a);
    rt_join(b);
}
/* Forty siblings, none joined by another, most exiting with others still
 * runnable: their exits' picks write the record -- ids from 32 on take two
 * digits, copied in by memcpy -- and grow it by realloc. */
static void short_life(void *arg) {
    for (uintptr_t i = 0; i < (uintptr_t)arg; i++) rt_yield();
}
static void exiters_main(void *arg) {
    rt_thread *t[40];
    (void)arg;
    for (uintptr_t i = 0; i < 40; i++) t[i] = rt_spawn("short", short_life, (void *)(i % 7), false);
    for (int i = 0; i < 40; i++) rt_join(t[i]);
}
/* Two siblings spawning hundreds of threads each: every spawn is a pick,
 * made on the spawning thread, that writes the record. */
static void nothing_at_all(void *arg) { (void)arg; }
static void spawner(void *arg) {
    (void)arg;
    for (int i = 0; i < 300; i++) rt_join(rt_spawn("child", nothing_at_all, NULL, false));
}
static void spawners_main(void *arg) {
    (void)arg;
    rt_thread *a = rt_spawn("a", spawner, NULL, false);
    rt_thread *b = rt_spawn("b", spawner, NULL, false);
    rt_join(a);
    rt_join(b);
}
/* Spawned while holding a harness-only lock, as the model spawns a pool
 * worker: no edge from the caller of sched_run, who allocated the run. */
static rt_lock model_lock;
static void (*volatile end_process)(const char *) = rt_end_process;
static void ender(void *arg) {
    (void)arg;
    end_process("ended by a thread the run's caller is not ordered before");
}
static void ender_main(void *arg) {
    (void)arg;
    rt_lock_harness_only(&model_lock);
    rt_lock_acquire(&model_lock);
    rt_thread *t = rt_spawn("ender", ender, NULL, false);
    rt_lock_release(&model_lock);
    rt_join(t);
}
static void run_quiet(rt_thread_fn fn, sched_status want) {
    for (uint64_t seed = 0; seed < 4; seed++) {
        sched_options o;
        sched_result r;
        sched_options_default(&o);
        o.seed = seed;
        assert_int_equal(sched_run(&o, fn, NULL, &r), 0);
        assert_int_equal(r.status, want);
        if (r.race) fail_msg("seed %llu: the scheduler's own work reported:\n%s", (unsigned long long)seed, r.race);
        assert_int_equal(r.races, 0);
        sched_result_free(&r);
    }
}
static void test_scheduler_work_is_not_the_threads(void **st) {
    (void)st;
#if !defined(TPHEAL_TSAN)
    (void)run_quiet, (void)wakers_main, (void)exiters_main, (void)ender_main, (void)spawners_main;
    skip();
#else
    run_quiet(wakers_main, SCHED_OK);
    run_quiet(exiters_main, SCHED_OK);
    run_quiet(spawners_main, SCHED_OK);
    run_quiet(ender_main, SCHED_PROCESS_ENDED);
#endif
}

int main(void) {
    sched_race_reports_claimed(); /* every race here is a run's (sched_result.race) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_submit_and_wait),
        cmocka_unit_test(test_set_event),
        cmocka_unit_test(test_io_start),
        cmocka_unit_test(test_timer_set),
        cmocka_unit_test(test_group_release),
        cmocka_unit_test(test_mutex_and_atomics),
        cmocka_unit_test(test_trace_records_order_nothing),
        cmocka_unit_test(test_report_names_both_and_replays),
        cmocka_unit_test(test_scheduler_work_is_not_the_threads),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
