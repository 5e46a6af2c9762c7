/* Wait objects: one callback per arm, timeout results, what a disarm leaves,
 * stop_and_drain, and the two cancellations (tracked and not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

typedef struct wctx {
    ot_counter c;
    volatile uint32_t signaled, timed_out;
} wctx;

static void wait_fn(tph_wait *w, void *ctx, tph_wait_result r) {
    wctx *x = (wctx *)ctx;
    (void)w;
    tph_os_fetch_add32(r == TPH_WAIT_TIMED_OUT ? &x->timed_out : &x->signaled, 1);
    ot_count(&x->c);
}

static void wait_null_arguments(void **state) {
    tph_wait *w = (tph_wait *)0x1;
    (void)state;
    assert_int_equal(tph_wait_create(NULL, (tph_handle *)0x1, wait_fn, NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_wait_create(&w, NULL, wait_fn, NULL, NULL), TPH_EINVAL);
    assert_null(w);
    assert_int_equal(tph_wait_create(&w, (tph_handle *)0x1, NULL, NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_wait_arm(NULL, 1), TPH_EINVAL);
    assert_int_equal(tph_wait_disarm(NULL), TPH_EINVAL);
    assert_int_equal(tph_wait_wait(NULL), TPH_EINVAL);
    assert_int_equal(tph_wait_stop_and_drain(NULL), TPH_EINVAL);
#if TPHEAL_SELF_HEAL
    assert_int_equal(tph_wait_try_cancel_pending(NULL), TPH_EINVAL);
#endif
    assert_int_equal(tph_wait_try_cancel_pending_no_heal_tracking(NULL), TPH_EINVAL);
    assert_int_equal(tph_wait_close(NULL), TPH_EINVAL);
    assert_int_equal(tph_event_create(NULL, false, false), TPH_EINVAL);
    assert_int_equal(tph_event_set(NULL), TPH_EINVAL);
    assert_int_equal(tph_event_reset(NULL), TPH_EINVAL);
    assert_int_equal(tph_handle_adopt(NULL, (void *)0x1, NULL), TPH_EINVAL);
    assert_int_equal(tph_handle_close(NULL), TPH_EINVAL);
}

static void one_per_arm_body(void *ctx) {
    wctx x;
    tph_handle *ev;
    tph_wait *w;
    (void)ctx;
    memset(&x, 0, sizeof x);
    TPH_CHECK_EQ(tph_event_create(&ev, true, true), TPH_OK); /* manual reset, stays set */
    TPH_CHECK_EQ(tph_wait_create(&w, ev, wait_fn, &x, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    TPH_CHECK(ot_wait_count(&x.c, 1, TPH_TEST_PATIENCE));
    /* The event stays signalled, yet a one-shot wait fires once per arm. */
    tph_test_sleep(200 * TPH_TEST_MS);
    TPH_CHECK_EQ(ot_get(&x.c), 1);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    TPH_CHECK(ot_wait_count(&x.c, 2, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_wait_stop_and_drain(w), TPH_OK);
    TPH_CHECK_EQ(ot_get(&x.c), 2);
    TPH_CHECK_EQ(x.signaled, 2);
    TPH_CHECK_EQ(x.timed_out, 0);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void one_callback_per_arm(void **state) {
    (void)state;
    tph_test_run_both(one_per_arm_body, NULL, NULL, 4);
}

static void timeout_body(void *ctx) {
    wctx x;
    tph_handle *ev;
    tph_wait *w;
    uint64_t start;
    (void)ctx;
    memset(&x, 0, sizeof x);
    TPH_CHECK_EQ(tph_event_create(&ev, false, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&w, ev, wait_fn, &x, NULL), TPH_OK);
    start = rt_now();
    TPH_CHECK_EQ(tph_wait_arm(w, 100), TPH_OK);
    TPH_CHECK(ot_wait_count(&x.c, 1, TPH_TEST_PATIENCE));
    TPH_CHECK(rt_now() - start >= 100 * TPH_TEST_MS);
    TPH_CHECK_EQ(x.timed_out, 1);
    TPH_CHECK_EQ(x.signaled, 0);
    TPH_CHECK_EQ(tph_wait_wait(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void a_timeout_reports_timed_out(void **state) {
    (void)state;
    tph_test_run_controlled(timeout_body, NULL, NULL, 1);
    tph_test_run_controlled(timeout_body, NULL, NULL, 2);
}

/* A wait whose callback is queued behind the blocked pool's only thread. */
typedef struct queued_wait {
    ot_blocked_pool b;
    wctx x;
    tph_handle *ev;
    tph_wait *w;
    uint64_t handle;
} queued_wait;

static void queued_begin(queued_wait *q) {
    memset(&q->x, 0, sizeof q->x);
    ot_blocked_pool_begin(&q->b);
    TPH_CHECK_EQ(tph_event_create(&q->ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&q->w, q->ev, wait_fn, &q->x, &q->b.env), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_wait_arm(q->w, TPH_WAIT_FOREVER), TPH_OK);
    ot_trace_take();
    q->handle = ot_last_a("SetThreadpoolWait");
    TPH_CHECK_EQ(tph_event_set(q->ev), TPH_OK);
    TPH_CHECK(ot_wait_queued(q->handle, 1, TPH_TEST_PATIENCE));
}

static void queued_end(queued_wait *q) {
    ot_blocked_pool_end(&q->b);
    TPH_CHECK_EQ(tph_wait_wait(q->w), TPH_OK);
}

static void queued_close(queued_wait *q) {
    TPH_CHECK_EQ(tph_wait_close(q->w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(q->ev), TPH_OK);
}

static void disarm_body(void *ctx) {
    queued_wait q;
    (void)ctx;
    queued_begin(&q);
    TPH_CHECK_EQ(tph_wait_disarm(q.w), TPH_OK);
    queued_end(&q);
    /* The disarm stopped the watching, not the callback already queued. */
    TPH_CHECK_EQ(ot_get(&q.x.c), 1);
    queued_close(&q);
}

static void disarm_leaves_a_queued_callback(void **state) {
    (void)state;
    tph_test_run_controlled(disarm_body, NULL, NULL, 1);
    tph_test_run_controlled(disarm_body, NULL, NULL, 2);
}

static void stop_drain_body(void *ctx) {
    queued_wait q;
    (void)ctx;
    queued_begin(&q);
    ot_gate_open(&q.b.gate);
    /* Disarm, then wait for the queued callback: when this returns it ran. */
    TPH_CHECK_EQ(tph_wait_stop_and_drain(q.w), TPH_OK);
    TPH_CHECK_EQ(ot_get(&q.x.c), 1);
    ot_blocked_pool_end(&q.b);
    /* Disarmed: a new signal (reset + set) fires nothing. */
    TPH_CHECK_EQ(tph_event_reset(q.ev), TPH_OK);
    TPH_CHECK_EQ(tph_event_set(q.ev), TPH_OK);
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK_EQ(ot_get(&q.x.c), 1);
    queued_close(&q);
}

static void stop_and_drain_runs_the_queued_callback_and_disarms(void **state) {
    (void)state;
    tph_test_run_controlled(stop_drain_body, NULL, NULL, 1);
    tph_test_run_controlled(stop_drain_body, NULL, NULL, 3);
}

#if TPHEAL_SELF_HEAL
static void try_cancel_body(void *ctx) {
    queued_wait q;
    tph_heal_entry_info info;
    (void)ctx;
    queued_begin(&q);
    TPH_CHECK(tph_heal_entry_get(tph_pool_key(q.b.pool), &info));
    TPH_CHECK_EQ(info.last_cancelled, 0);
    tph_test_sleep(TPH_TEST_TICK * 2); /* a stamp that differs from 0 */
    TPH_CHECK_EQ(tph_wait_try_cancel_pending(q.w), TPH_OK);
    TPH_CHECK(tph_heal_entry_get(tph_pool_key(q.b.pool), &info));
    TPH_CHECK(info.last_cancelled != 0);
    queued_end(&q);
    TPH_CHECK_EQ(ot_get(&q.x.c), 0); /* the queued callback was dropped */
    queued_close(&q);
}

static void try_cancel_pending_drops_and_stamps_the_pool(void **state) {
    (void)state;
    tph_test_run_controlled(try_cancel_body, NULL, NULL, 1);
    tph_test_run_controlled(try_cancel_body, NULL, NULL, 2);
}
#endif

static void no_heal_body(void *ctx) {
    queued_wait q;
    tph_heal_entry_info info;
    (void)ctx;
    queued_begin(&q);
    tph_test_sleep(TPH_TEST_TICK * 2);
    TPH_CHECK_EQ(tph_wait_try_cancel_pending_no_heal_tracking(q.w), TPH_OK);
    if (tph_heal_entry_get(tph_pool_key(q.b.pool), &info)) TPH_CHECK_EQ(info.last_cancelled, 0);
    TPH_CHECK(!tph_heal_healer_running());
    queued_end(&q);
    TPH_CHECK_EQ(ot_get(&q.x.c), 0);
    queued_close(&q);
}

static void no_heal_tracking_drops_and_leaves_the_pool_unmarked(void **state) {
    (void)state;
    tph_test_run_controlled(no_heal_body, NULL, NULL, 1);
}

static tph_err wait_attempt(void *ctx) {
    tph_handle *ev = (tph_handle *)ctx;
    tph_wait *w = (tph_wait *)0x1;
    tph_err rc = tph_wait_create(&w, ev, wait_fn, NULL, NULL);
    if (rc != TPH_OK) {
        TPH_CHECK(w == NULL);
        return rc;
    }
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    return rc;
}

static tph_err event_attempt(void *ctx) {
    tph_handle *ev = (tph_handle *)0x1;
    tph_err rc = tph_event_create(&ev, false, false);
    (void)ctx;
    if (rc != TPH_OK) {
        TPH_CHECK(ev == NULL);
        return rc;
    }
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    return rc;
}

static void wait_fault_body(void *ctx) {
    tph_handle *ev;
    (void)ctx;
    TPH_CHECK_EQ(tph_event_create(&ev, false, false), TPH_OK);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_ALLOC, wait_attempt, ev) >= 1);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_WAIT_CREATE, wait_attempt, ev) >= 1);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_ALLOC, event_attempt, NULL) >= 1);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_EVENT_CREATE, event_attempt, NULL) >= 1);
}

static void wait_and_event_create_failures_unwind(void **state) {
    (void)state;
    tph_test_run_controlled(wait_fault_body, NULL, NULL, 1);
}

static volatile uint32_t adopted_closes;
static void close_adopted(void *raw) {
    tph_os_fetch_add32(&adopted_closes, 1);
    tph_os_event_close((tph_os_event *)raw);
}

static void adopted_body(void *ctx) {
    wctx x;
    tph_os_event *raw;
    tph_handle *h;
    tph_wait *w;
    (void)ctx;
    memset(&x, 0, sizeof x);
    adopted_closes = 0;
    raw = tph_os_event_create(true, false);
    TPH_CHECK(raw != NULL);
    TPH_CHECK_EQ(tph_handle_adopt(&h, raw, NULL), TPH_EINVAL); /* no close function */
    TPH_CHECK_EQ(tph_handle_adopt(&h, NULL, close_adopted), TPH_EINVAL);
    TPH_CHECK_EQ(tph_handle_adopt(&h, raw, close_adopted), TPH_OK);
    /* Set/reset are for tpheal's own events; an adopted handle may be any
     * waitable object. */
    TPH_CHECK_EQ(tph_event_set(h), TPH_EINVAL);
    TPH_CHECK_EQ(tph_wait_create(&w, h, wait_fn, &x, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    tph_os_event_set(raw); /* the owner signals it its own way */
    TPH_CHECK(ot_wait_count(&x.c, 1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(x.signaled, 1);
    TPH_CHECK_EQ(tph_wait_stop_and_drain(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    TPH_CHECK_EQ(adopted_closes, 0);
    TPH_CHECK_EQ(tph_handle_close(h), TPH_OK);
    TPH_CHECK_EQ(adopted_closes, 1); /* closed once, by its own function */
}

static void adopted_handle_is_waited_on_and_closed_by_its_function(void **state) {
    (void)state;
    tph_test_run_controlled(adopted_body, NULL, NULL, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wait_null_arguments),
        cmocka_unit_test(one_callback_per_arm),
        cmocka_unit_test(a_timeout_reports_timed_out),
        cmocka_unit_test(disarm_leaves_a_queued_callback),
        cmocka_unit_test(stop_and_drain_runs_the_queued_callback_and_disarms),
#if TPHEAL_SELF_HEAL
        cmocka_unit_test(try_cancel_pending_drops_and_stamps_the_pool),
#endif
        cmocka_unit_test(no_heal_tracking_drops_and_leaves_the_pool_unmarked),
        cmocka_unit_test(adopted_handle_is_waited_on_and_closed_by_its_function),
        cmocka_unit_test(wait_and_event_create_failures_unwind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
