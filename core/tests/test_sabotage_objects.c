/* Rules the sabotage sweep found without a catcher (docs/sabotage.md,
 * "Findings"): each case here fails when its rule is broken, and was checked
 * against the manifest entry named beside it.
 *
 * - stop_and_drain must not cancel (wait-stop-and-drain-cancels): test_wait's
 *   case opens the pool before stopping, so on its seeds the callback has
 *   already started and a cancelling drain has nothing left to drop.  Here the
 *   callback is still queued when the stop begins, and the pool only opens
 *   while the stop is waiting.
 * - a periodic timer's waits and teardown never cancel
 *   (periodic-teardown-cancels): after a stop nothing is queued, so only
 *   tph_periodic_wait on a running timer can tell, and only if a tick is
 *   queued behind a busy thread when it is called; the trace records the
 *   drain's argument too, which is how the original saw this defect.
 * - an adopted handle is the caller's object (adopted-handle-becomes-fresh-
 *   event): nothing else signals the adopted handle itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

static void wait_fn(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w;
    (void)r;
    ot_count((ot_counter *)ctx);
}

static void tick_fn(tph_periodic *p, void *ctx) {
    (void)p;
    ot_count((ot_counter *)ctx);
}

/* Opens the blocked pool's gate after 50 ms: by then the caller is inside the
 * drain that must wait for what the gate holds back. */
static void open_later(void *arg) {
    tph_test_sleep(50 * TPH_TEST_MS);
    ot_gate_open((ot_gate *)arg);
}

/* ---- wait: stop_and_drain runs a callback that is still queued ------------- */

static void stop_and_drain_body(void *ctx) {
    ot_blocked_pool b;
    tph_handle *ev;
    tph_wait *w;
    ot_counter c;
    rt_thread *opener;
    (void)ctx;
    memset(&c, 0, sizeof c);
    ot_blocked_pool_begin(&b);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&w, ev, wait_fn, &c, &b.env), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    ot_trace_take();
    TPH_CHECK_EQ(tph_event_set(ev), TPH_OK);
    TPH_CHECK(ot_wait_queued(ot_last_a("SetThreadpoolWait"), 1, TPH_TEST_PATIENCE));
    opener = tph_test_spawn("opener", open_later, &b.gate);
    TPH_CHECK_EQ(tph_wait_stop_and_drain(w), TPH_OK);
    /* A stop drains: the callback that was queued when it began has run. */
    TPH_CHECK_EQ(ot_get(&c), 1);
    rt_join(opener);
    ot_blocked_pool_end(&b);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void stop_and_drain_runs_a_still_queued_callback(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 1; seed <= 4; seed++) tph_test_run_controlled(stop_and_drain_body, NULL, NULL, seed);
}

/* ---- periodic: waiting on a running timer keeps its queued tick ------------ */

static void periodic_wait_body(void *ctx) {
    ot_blocked_pool b;
    tph_periodic *p;
    ot_counter c;
    rt_thread *opener;
    size_t i, drains = 0;
    (void)ctx;
    memset(&c, 0, sizeof c);
    ot_blocked_pool_begin(&b);
    TPH_CHECK_EQ(tph_periodic_create(&p, 10, tick_fn, &c, &b.env), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_periodic_start(p), TPH_OK);
    /* The pool's one thread is parked: the first tick queues behind it. */
    tph_test_sleep(15 * TPH_TEST_MS);
    TPH_CHECK_EQ(ot_get(&c), 0);
    opener = tph_test_spawn("opener", open_later, &b.gate);
    TPH_CHECK_EQ(tph_periodic_wait(p), TPH_OK);
    /* The wait drains what was queued when it began; it cancels nothing. */
    TPH_CHECK(ot_get(&c) >= 1);
    rt_join(opener);
    TPH_CHECK_EQ(tph_periodic_stop_and_drain(p), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
    ot_trace_take();
    /* And every drain says so in the trace (the argument is the cancel flag). */
    for (i = 0; i < ot_nrecs; i++) {
        if (strcmp(ot_recs[i].event, "WaitForThreadpoolTimerCallbacks") != 0) continue;
        TPH_CHECK_EQ(ot_recs[i].b, 0);
        drains++;
    }
    TPH_CHECK(drains >= 3); /* wait, stop_and_drain, close */
    ot_blocked_pool_end(&b);
}

static void periodic_wait_and_teardown_never_cancel(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 1; seed <= 4; seed++) tph_test_run_controlled(periodic_wait_body, NULL, NULL, seed);
}

/* ---- an adopted handle is the caller's own object --------------------------- */

static void close_raw_event(void *raw) { tph_os_event_close((tph_os_event *)raw); }

static void adopt_body(void *ctx) {
    tph_os_event *raw;
    tph_handle *h;
    tph_wait *w;
    ot_counter c;
    (void)ctx;
    memset(&c, 0, sizeof c);
    raw = tph_os_event_create(true, false);
    TPH_CHECK(raw != NULL);
    TPH_CHECK_EQ(tph_handle_adopt(&h, raw, close_raw_event), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&w, h, wait_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    /* The caller signals its own object, not anything tpheal made. */
    tph_os_event_set(raw);
    TPH_CHECK(ot_wait_count(&c, 1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_wait_wait(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(h), TPH_OK);
}

static void adopted_handle_is_the_callers_object(void **state) {
    (void)state;
    tph_test_run_controlled(adopt_body, NULL, NULL, 1);
    tph_test_run_controlled(adopt_body, NULL, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stop_and_drain_runs_a_still_queued_callback),
        cmocka_unit_test(periodic_wait_and_teardown_never_cancel),
        cmocka_unit_test(adopted_handle_is_the_callers_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
