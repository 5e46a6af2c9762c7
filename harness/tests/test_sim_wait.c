/* The sim's wait objects and events: one-shot, timeout, disarm leaves a
 * queued callback, cancel drops it, cancel does not unregister an armed
 * wait, auto-reset consumption, manual/auto events for threads. */
#include "test_sim_util.h"

static simt_counter g_count;
static volatile uint32_t g_last_result;

static void TPH_OS_CALLBACK wait_cb(tph_os_instance *i, void *ctx, tph_os_wait *w, uint32_t result) {
    (void)i;
    (void)w;
    tph_os_store32(&g_last_result, result);
    tph_os_fetch_add32(&((simt_counter *)ctx)->n, 1);
}

/* A signal queues exactly one callback and unarms: a second signal stays
 * on the (auto-reset) event because no wait consumes it. */
static void body_one_shot(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_wait_set(w, ev, TPH_OS_INFINITE);
    CHECK(simt_obj(w).armed);
    tph_os_event_set(ev);
    CHECK(!sim_event_is_set(ev)); /* consumed by the wait */
    CHECK(simt_counter_reaches(&g_count, 1));
    CHECK(tph_os_load32(&g_last_result) == TPH_OS_WAIT_SIGNALED);
    CHECK(!simt_obj(w).armed);
    tph_os_event_set(ev);
    CHECK(sim_event_is_set(ev)); /* nobody registered any more */
    tph_os_wait_wait(w, false);
    CHECK(simt_obj(w).callbacks_run == 1);
    tph_os_wait_close(w);
    CHECK(sim_misuse_count() == 0);
}
static void test_wait_one_shot(void **st) {
    (void)st;
    simt_run(body_one_shot);
}

/* An already-set event fires at arming; a manual-reset one stays set. */
static void body_already_set(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_event *ev = tph_os_event_create(true, true);
    tph_os_wait *w1 = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_wait *w2 = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_wait_set(w1, ev, TPH_OS_INFINITE);
    tph_os_wait_set(w2, ev, TPH_OS_INFINITE);
    CHECK(simt_counter_reaches(&g_count, 2));
    CHECK(sim_event_is_set(ev));
}
static void test_wait_already_set_manual(void **st) {
    (void)st;
    simt_run(body_already_set);
}

/* Auto-reset: one set releases exactly one of two registered waits. */
static void body_auto_reset_one(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w1 = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_wait *w2 = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_wait_set(w1, ev, TPH_OS_INFINITE);
    tph_os_wait_set(w2, ev, TPH_OS_INFINITE);
    tph_os_event_set(ev);
    CHECK(simt_counter_reaches(&g_count, 1));
    CHECK(!simt_obj(w1).armed && simt_obj(w2).armed); /* first registered wins */
    tph_os_event_set(ev);
    CHECK(simt_counter_reaches(&g_count, 2));
}
static void test_wait_auto_reset_consumed_once(void **st) {
    (void)st;
    simt_run(body_auto_reset_one);
}

static void body_timeout(void) {
    memset(&g_count, 0, sizeof g_count);
    g_last_result = 77;
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_wait_set(w, ev, 5);
    CHECK(simt_counter_reaches(&g_count, 1));
    CHECK(tph_os_load32(&g_last_result) == TPH_OS_WAIT_TIMEOUT);
    CHECK(!simt_obj(w).armed);
    tph_os_event_set(ev); /* unarmed: no second callback, the event stays set */
    CHECK(sim_event_is_set(ev));
    tph_os_wait_wait(w, false);
    CHECK(simt_obj(w).callbacks_run == 1);
}
static void test_wait_timeout(void **st) {
    (void)st;
    simt_run(body_timeout);
}

/* Disarm (event NULL) leaves an already-queued callback: it still runs. */
static void body_disarm_leaves(void) {
    simt_blocker b;
    simt_block_private(&b, 1);
    memset(&g_count, 0, sizeof g_count);
    tph_os_env env = {b.pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w = tph_os_wait_create(wait_cb, &g_count, &env);
    tph_os_wait_set(w, ev, TPH_OS_INFINITE);
    tph_os_event_set(ev);
    CHECK(simt_obj(w).queued == 1);
    tph_os_wait_set(w, NULL, 0);
    sim_object_stats s = simt_obj(w);
    CHECK(s.queued == 1 && s.cancelled == 0 && !s.armed);
    simt_unblock(&b);
    tph_os_wait_wait(w, false);
    CHECK(tph_os_load32(&g_count.n) == 1);
}
static void test_wait_disarm_leaves_queued(void **st) {
    (void)st;
    simt_run(body_disarm_leaves);
}

/* WaitForThreadpoolWaitCallbacks(TRUE) drops the queued callback. */
static void body_cancel_drops(void) {
    simt_blocker b;
    simt_block_private(&b, 1);
    memset(&g_count, 0, sizeof g_count);
    tph_os_env env = {b.pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w = tph_os_wait_create(wait_cb, &g_count, &env);
    tph_os_wait_set(w, ev, TPH_OS_INFINITE);
    tph_os_event_set(ev);
    CHECK(simt_obj(w).queued == 1);
    tph_os_wait_wait(w, true);
    sim_object_stats s = simt_obj(w);
    CHECK(s.queued == 0 && s.cancelled == 1);
    simt_unblock(&b); /* the pool is idle: anything queued would have run */
    tph_os_wait_wait(w, false);
    CHECK(tph_os_load32(&g_count.n) == 0 && simt_obj(w).callbacks_run == 0);
}
static void test_wait_cancel_drops_queued(void **st) {
    (void)st;
    simt_run(body_cancel_drops);
}

/* On an armed, unsignalled wait a cancelling wait does not unregister it. */
static void body_cancel_keeps_armed(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_wait_set(w, ev, TPH_OS_INFINITE);
    tph_os_wait_wait(w, true);
    CHECK(simt_obj(w).armed);
    tph_os_event_set(ev);
    CHECK(simt_counter_reaches(&g_count, 1));
    CHECK(tph_os_load32(&g_last_result) == TPH_OS_WAIT_SIGNALED);
}
static void test_wait_cancel_does_not_unregister(void **st) {
    (void)st;
    simt_run(body_cancel_keeps_armed);
}

/* Close unregisters an armed wait: a later signal stays on the event. */
static void body_close_unregisters(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_wait_set(w, ev, TPH_OS_INFINITE);
    tph_os_wait_close(w);
    sim_object_stats s = simt_obj(w);
    CHECK(s.closed && s.freed && !s.armed);
    tph_os_event_set(ev);
    CHECK(sim_event_is_set(ev));
}
static void test_wait_close_unregisters(void **st) {
    (void)st;
    simt_run(body_close_unregisters);
}

/* Events for threads: manual stays set, auto is consumed, timeouts. */
static void setter(void *ev) { tph_os_event_set((tph_os_event *)ev); }
static void body_events(void) {
    tph_os_event *m = tph_os_event_create(true, false);
    tph_os_event *a = tph_os_event_create(false, true);
    CHECK(tph_os_event_wait(m, 0) == TPH_OS_WAIT_TIMEOUT);
    CHECK(tph_os_event_wait(m, 5) == TPH_OS_WAIT_TIMEOUT);
    tph_os_event_set(m);
    CHECK(tph_os_event_wait(m, 0) == TPH_OS_WAIT_SIGNALED);
    CHECK(tph_os_event_wait(m, 0) == TPH_OS_WAIT_SIGNALED);
    tph_os_event_reset(m);
    CHECK(!sim_event_is_set(m));
    CHECK(tph_os_event_wait(a, 0) == TPH_OS_WAIT_SIGNALED);
    CHECK(tph_os_event_wait(a, 0) == TPH_OS_WAIT_TIMEOUT);
    rt_thread *t = rt_spawn("setter", setter, a, false);
    CHECK(tph_os_event_wait(a, TPH_OS_INFINITE) == TPH_OS_WAIT_SIGNALED);
    rt_join(t);
    CHECK(!sim_event_is_set(a));
    tph_os_event_close(a);
    CHECK(sim_misuse_count() == 0);
    tph_os_event_set(a);
    CHECK(sim_misuse_count() == 1);
}
static void test_events(void **st) {
    (void)st;
    simt_run(body_events);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_one_shot),
        cmocka_unit_test(test_wait_already_set_manual),
        cmocka_unit_test(test_wait_auto_reset_consumed_once),
        cmocka_unit_test(test_wait_timeout),
        cmocka_unit_test(test_wait_disarm_leaves_queued),
        cmocka_unit_test(test_wait_cancel_drops_queued),
        cmocka_unit_test(test_wait_cancel_does_not_unregister),
        cmocka_unit_test(test_wait_close_unregisters),
        cmocka_unit_test(test_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
