/* What a user of the installed library does, each step checked by what it
 * must have caused (the heal trace, callback counts), not by its return alone:
 * cancel a pending wait and see the healer repair the default pool, a one-shot
 * timer with a window, a periodic timer with a window, a cancelling release of
 * a cleanup group on a private pool and that pool's repair, then teardown.
 * ci/test_install.py builds it against the installed package (pkg-config and
 * find_package, static and shared; and the mingw build under Wine) and runs it.
 *
 * Real-time bound: every wait below polls for up to WAIT_LIMIT_MS of 10 ms
 * sleeps (at least 60 s of wall time, longer on a loaded machine).  What it
 * waits for takes at most the healer's period plus its window (250 + 250 ms)
 * or a timer's due time plus window (under 100 ms) on an idle machine. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#endif
#include <tpheal/tpheal.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#include <windows.h>
static void sleep_ms(unsigned ms) { Sleep(ms); }
#else
#include <time.h>
static void sleep_ms(unsigned ms) {
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}
#endif

#define WAIT_LIMIT_MS 60000u
#define RING 8192u

static int failures;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "consumer: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                          \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static tph_trace_record ring[RING];

/* Index of the first heal record `event` for pool `key` at or after `from`,
 * or -1. */
static long find_record(const char *event, uintptr_t key, long from) {
    size_t n = tph_trace_snapshot(ring, RING, NULL);
    for (size_t i = (size_t)(from < 0 ? 0 : from); i < n; i++)
        if (strcmp(ring[i].target, "heal") == 0 && strcmp(ring[i].event, event) == 0 &&
            ring[i].a == key)
            return (long)i;
    return -1;
}

/* Polls for the record; its index, or -1 after WAIT_LIMIT_MS. */
static long await_record(const char *event, uintptr_t key, long from) {
    for (unsigned waited = 0; waited < WAIT_LIMIT_MS; waited += 10u) {
        long i = find_record(event, key, from);
        if (i >= 0) return i;
        sleep_ms(10u);
    }
    return find_record(event, key, from);
}

static bool await_count(atomic_uint *c, unsigned at_least) {
    for (unsigned waited = 0; waited < WAIT_LIMIT_MS; waited += 10u) {
        if (atomic_load(c) >= at_least) return true;
        sleep_ms(10u);
    }
    return atomic_load(c) >= at_least;
}

static atomic_uint wait_calls, timer_calls, periodic_calls, group_cancels, member_calls;

static void on_signal(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w; (void)ctx; (void)r;
    atomic_fetch_add(&wait_calls, 1u);
}
static void on_timer(tph_timer *t, void *ctx) {
    (void)t; (void)ctx;
    atomic_fetch_add(&timer_calls, 1u);
}
static void on_tick(tph_periodic *p, void *ctx) {
    (void)p; (void)ctx;
    atomic_fetch_add(&periodic_calls, 1u);
}
static void on_member(tph_work *w, void *ctx) {
    (void)w; (void)ctx;
    atomic_fetch_add(&member_calls, 1u);
}
static void on_group_cancel(void *object_ctx, void *cleanup_ctx) {
    (void)object_ctx; (void)cleanup_ctx;
    atomic_fetch_add(&group_cancels, 1u);
}

/* A pending wait cancelled on the default pool: the cancellation stamps the
 * pool (heal/cancelled, key 0) and the healer's repair starts after it. */
static void cancel_a_pending_wait(void) {
    tph_handle *ev;
    tph_wait *w;
    CHECK(tph_event_create(&ev, false, false) == TPH_OK);
    CHECK(tph_wait_create(&w, ev, on_signal, NULL, NULL) == TPH_OK);
    CHECK(tph_wait_arm(w, TPH_WAIT_FOREVER) == TPH_OK);
    CHECK(tph_wait_try_cancel_pending(w) == TPH_OK);
    long cancelled = find_record("cancelled", 0, 0);
    CHECK(cancelled >= 0);
    CHECK(await_record("repair-started", 0, cancelled) > cancelled);
    CHECK(tph_heal_healer_running());
    CHECK(tph_wait_close(w) == TPH_OK);
    CHECK(tph_handle_close(ev) == TPH_OK);
    /* Never signalled, and the arm was cancelled: no callback. */
    CHECK(atomic_load(&wait_calls) == 0);
    puts("consumer: wait cancelled, default pool repaired");
}

static void one_shot_timer_with_window(void) {
    tph_timer *t;
    CHECK(tph_timer_create(&t, on_timer, NULL, NULL) == TPH_OK);
    CHECK(tph_timer_set_after(t, 10, 5) == TPH_OK);
    CHECK(await_count(&timer_calls, 1u));
    CHECK(tph_timer_wait(t) == TPH_OK);
    CHECK(tph_timer_close(t) == TPH_OK);
    CHECK(atomic_load(&timer_calls) == 1u); /* one arming, one callback */
    puts("consumer: one-shot timer fired once");
}

static void periodic_timer_with_window(void) {
    tph_periodic *p;
    CHECK(tph_periodic_create(&p, 20, on_tick, NULL, NULL) == TPH_OK);
    CHECK(tph_periodic_start_with_window(p, 10, 5) == TPH_OK);
    CHECK(tph_periodic_is_running(p));
    CHECK(await_count(&periodic_calls, 3u));
    CHECK(tph_periodic_stop_and_drain(p) == TPH_OK);
    unsigned after_stop = atomic_load(&periodic_calls);
    CHECK(tph_periodic_close(p) == TPH_OK);
    CHECK(atomic_load(&periodic_calls) == after_stop); /* nothing after the drain */
    puts("consumer: periodic timer ticked and stopped");
}

/* A cancelling release of a group on a private pool: the cancel function
 * runs for no more members than there are, the pool is stamped, and the
 * healer repairs it before the pool is closed. */
static void cancelling_group_release(void) {
    tph_pool *pool;
    tph_group *g;
    tph_env env;
    tph_handle *ev;
    tph_wait *w;
    tph_work *work;
    static int cleanup_token;
    CHECK(tph_pool_create(&pool) == TPH_OK);
    CHECK(tph_pool_set_thread_limits(pool, 1, 1) == TPH_OK);
    CHECK(tph_group_create(&g, on_group_cancel) == TPH_OK);
    tph_env_init(&env);
    CHECK(tph_env_set_pool(&env, pool) == TPH_OK);
    CHECK(tph_env_set_group(&env, g) == TPH_OK);
    CHECK(tph_event_create(&ev, false, false) == TPH_OK);
    CHECK(tph_wait_create(&w, ev, on_signal, NULL, &env) == TPH_OK);
    CHECK(tph_wait_arm(w, TPH_WAIT_FOREVER) == TPH_OK);
    CHECK(tph_work_create(&work, on_member, NULL, &env) == TPH_OK);
    CHECK(tph_work_submit(work) == TPH_OK);
    uintptr_t key = tph_pool_key(pool);
    CHECK(key != 0);
    CHECK(tph_group_close_members_cancelling(g, &cleanup_token) == TPH_OK);
    CHECK(atomic_load(&group_cancels) + atomic_load(&member_calls) <= 2u);
    long cancelled = find_record("cancelled", key, 0);
    CHECK(cancelled >= 0);
    CHECK(await_record("repair-started", key, cancelled) > cancelled);
    CHECK(tph_group_close(g) == TPH_OK);
    CHECK(tph_handle_close(ev) == TPH_OK);
    CHECK(tph_pool_close(pool) == TPH_OK);
    CHECK(atomic_load(&wait_calls) == 0);
    puts("consumer: group released with cancel, its pool repaired");
}

int main(void) {
    CHECK(tph_trace_set_capacity(RING) == TPH_OK);
    tph_trace_clear();
    CHECK(tph_trace_arm("heal") == TPH_OK);
    cancel_a_pending_wait();
    one_shot_timer_with_window();
    periodic_timer_with_window();
    cancelling_group_release();
    if (failures) {
        fprintf(stderr, "consumer: %d checks failed; the heal trace:\n", failures);
        tph_trace_dump(stderr);
        return 1;
    }
    puts("consumer ok");
    return 0;
}
