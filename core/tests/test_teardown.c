/* The teardown rules every object follows (core/src/object.c):
 *   - close drains: a callback still running when close is called has
 *     finished before close returns;
 *   - the close obligation is recorded before the arming call;
 *   - a close that had to do a drain the owner never did records
 *     "drop-obligation-owed" after its native close; one that was drained
 *     records nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

typedef enum kind { K_WORK, K_WAIT, K_TIMER, K_PERIODIC, K_IO, K_COUNT } kind;
static const char *const close_call[K_COUNT] = {"CloseThreadpoolWork", "CloseThreadpoolWait",
                                                "CloseThreadpoolTimer", "CloseThreadpoolTimer",
                                                "CloseThreadpoolIo"};
static const char *const drain_call[K_COUNT] = {
    "WaitForThreadpoolWorkCallbacks", "WaitForThreadpoolWaitCallbacks",
    "WaitForThreadpoolTimerCallbacks", "WaitForThreadpoolTimerCallbacks",
    "WaitForThreadpoolIoCallbacks"};
static const char *const arm_call[K_COUNT] = {"SubmitThreadpoolWork", "SetThreadpoolWait",
                                              "SetThreadpoolTimer", "SetThreadpoolTimer",
                                              "StartThreadpoolIo"};

typedef struct obj {
    kind k;
    ot_gate gate;
    bool gated;
    volatile uint32_t finished;
    tph_work *work;
    tph_wait *wait;
    tph_handle *ev;
    tph_timer *timer;
    tph_periodic *periodic;
    tph_io *io;
    void *file;
} obj;

static void body_common(obj *o) {
    if (o->gated) ot_gate_pass(&o->gate);
    tph_os_store32(&o->finished, 1);
}
static void work_fn(tph_work *w, void *c) { (void)w; body_common((obj *)c); }
static void wait_fn(tph_wait *w, void *c, tph_wait_result r) { (void)w; (void)r; body_common((obj *)c); }
static void timer_fn(tph_timer *t, void *c) { (void)t; body_common((obj *)c); }
static void periodic_fn(tph_periodic *p, void *c) { (void)p; body_common((obj *)c); }
static void io_fn(tph_io *io, void *c, void *ov, uint32_t r, uintptr_t n) {
    (void)io; (void)ov; (void)r; (void)n;
    body_common((obj *)c);
}

static void create(obj *o, kind k, bool gated) {
    memset(o, 0, sizeof *o);
    o->k = k;
    o->gated = gated;
    switch (k) {
    case K_WORK: TPH_CHECK_EQ(tph_work_create(&o->work, work_fn, o, NULL), TPH_OK); break;
    case K_WAIT:
        TPH_CHECK_EQ(tph_event_create(&o->ev, true, false), TPH_OK);
        TPH_CHECK_EQ(tph_wait_create(&o->wait, o->ev, wait_fn, o, NULL), TPH_OK);
        break;
    case K_TIMER: TPH_CHECK_EQ(tph_timer_create(&o->timer, timer_fn, o, NULL), TPH_OK); break;
    case K_PERIODIC:
        TPH_CHECK_EQ(tph_periodic_create(&o->periodic, 100000, periodic_fn, o, NULL), TPH_OK);
        break;
    case K_IO:
        o->file = sim_file_create();
        TPH_CHECK_EQ(tph_io_create(&o->io, o->file, io_fn, o, NULL), TPH_OK);
        break;
    default: break;
    }
}

/* Arms the object so that exactly one callback follows promptly. */
static void arm_and_fire(obj *o) {
    int ov;
    switch (o->k) {
    case K_WORK: TPH_CHECK_EQ(tph_work_submit(o->work), TPH_OK); break;
    case K_WAIT:
        TPH_CHECK_EQ(tph_wait_arm(o->wait, TPH_WAIT_FOREVER), TPH_OK);
        TPH_CHECK_EQ(tph_event_set(o->ev), TPH_OK);
        break;
    case K_TIMER: TPH_CHECK_EQ(tph_timer_set_after(o->timer, 0, 0), TPH_OK); break;
    case K_PERIODIC: TPH_CHECK_EQ(tph_periodic_start_after(o->periodic, 0), TPH_OK); break;
    case K_IO:
        TPH_CHECK_EQ(tph_io_start(o->io), TPH_OK);
        TPH_CHECK(sim_io_complete(o->file, &ov, 0, 1));
        break;
    default: break;
    }
}

/* The owner's drain: discharges the obligation. */
static void drain(obj *o) {
    switch (o->k) {
    case K_WORK: TPH_CHECK_EQ(tph_work_wait(o->work), TPH_OK); break;
    case K_WAIT: TPH_CHECK_EQ(tph_wait_stop_and_drain(o->wait), TPH_OK); break;
    case K_TIMER: TPH_CHECK_EQ(tph_timer_stop_and_drain(o->timer), TPH_OK); break;
    case K_PERIODIC: TPH_CHECK_EQ(tph_periodic_stop_and_drain(o->periodic), TPH_OK); break;
    case K_IO: TPH_CHECK_EQ(tph_io_run_down(o->io), TPH_OK); break;
    default: break;
    }
}

/* Every other call of a kind that drains it, which must discharge the same
 * obligation (variant 0 is drain() above).  Returns false past the last. */
static bool drain_variant(obj *o, int v) {
    switch (o->k) {
    case K_WORK:
        if (v == 1) {
            TPH_CHECK_EQ(tph_work_stop_and_drain(o->work), TPH_OK);
            return true;
        }
        if (v == 2) {
            TPH_CHECK_EQ(tph_work_cancel_pending(o->work), TPH_OK);
            return true;
        }
        return false;
    case K_WAIT:
        if (v == 1) {
            TPH_CHECK_EQ(tph_wait_wait(o->wait), TPH_OK);
            return true;
        }
        return false;
    case K_TIMER:
        if (v == 1) {
            TPH_CHECK_EQ(tph_timer_wait(o->timer), TPH_OK);
            return true;
        }
        if (v == 2) {
            TPH_CHECK_EQ(tph_timer_cancel_pending(o->timer), TPH_OK);
            return true;
        }
        return false;
    case K_PERIODIC:
        if (v == 1) {
            TPH_CHECK_EQ(tph_periodic_stop(o->periodic), TPH_OK);
            TPH_CHECK_EQ(tph_periodic_wait(o->periodic), TPH_OK);
            return true;
        }
        return false;
    default: return false;
    }
}

static void close_obj(obj *o) {
    switch (o->k) {
    case K_WORK: TPH_CHECK_EQ(tph_work_close(o->work), TPH_OK); break;
    case K_WAIT: TPH_CHECK_EQ(tph_wait_close(o->wait), TPH_OK); break;
    case K_TIMER: TPH_CHECK_EQ(tph_timer_close(o->timer), TPH_OK); break;
    case K_PERIODIC: TPH_CHECK_EQ(tph_periodic_close(o->periodic), TPH_OK); break;
    case K_IO: TPH_CHECK_EQ(tph_io_close(o->io), TPH_OK); break;
    default: break;
    }
}

static void destroy_rest(obj *o) {
    if (o->ev) TPH_CHECK_EQ(tph_handle_close(o->ev), TPH_OK);
}

/* ---- close drains ------------------------------------------------------------ */
typedef struct closer {
    obj *o;
    volatile uint32_t called;
    volatile uint32_t saw_finished;
} closer;

static void closer_thread(void *arg) {
    closer *c = (closer *)arg;
    tph_os_store32(&c->called, 1);
    close_obj(c->o);
    tph_os_store32(&c->saw_finished, tph_os_load32(&c->o->finished));
}

static void close_drains_body(void *ctx) {
    kind k;
    (void)ctx;
    for (k = K_WORK; k < K_COUNT; k++) {
        obj o;
        closer c;
        rt_thread *t;
        create(&o, k, true);
        arm_and_fire(&o);
        TPH_CHECK(ot_gate_wait_entered(&o.gate, 1, TPH_TEST_PATIENCE)); /* running now */
        memset(&c, 0, sizeof c);
        c.o = &o;
        t = tph_test_spawn("closer", closer_thread, &c);
        while (!tph_os_load32(&c.called)) tph_test_sleep(TPH_TEST_MS);
        tph_test_sleep(100 * TPH_TEST_MS); /* give a non-draining close time to return */
        ot_gate_open(&o.gate);
        rt_join(t);
        TPH_CHECK_EQ(c.saw_finished, 1);
        destroy_rest(&o);
    }
}

static void close_waits_for_a_running_callback(void **state) {
    (void)state;
    tph_test_run_controlled(close_drains_body, NULL, NULL, 1);
    tph_test_run_controlled(close_drains_body, NULL, NULL, 2);
    tph_test_run_controlled(close_drains_body, NULL, NULL, 3);
}

/* ---- obligation recorded before arming ---------------------------------------- */
static void recorded_first_body(void *ctx) {
    kind k;
    (void)ctx;
    for (k = K_WORK; k < K_COUNT; k++) {
        obj o;
        long owed, arm;
        create(&o, k, false);
        ot_trace_start();
        arm_and_fire(&o);
        ot_trace_take();
        arm = ot_find(arm_call[k], TPH_TEST_ANY, 0);
        TPH_CHECK(arm >= 0);
        owed = ot_find("drain-owed", ot_recs[arm].a, 0);
        TPH_CHECK(owed >= 0);
        TPH_CHECK(owed < arm);
        TPH_CHECK_EQ(ot_recs[owed].a, ot_recs[arm].a);
        drain(&o);
        close_obj(&o);
        destroy_rest(&o);
    }
}

static void obligation_is_recorded_before_the_arming_call(void **state) {
    (void)state;
    tph_test_run_controlled(recorded_first_body, NULL, NULL, 1);
}

/* ---- drop-obligation-owed ------------------------------------------------------- */
static void owed_body(void *ctx) {
    kind k;
    (void)ctx;
    for (k = K_WORK; k < K_COUNT; k++) {
        obj o;
        uint64_t id;
        long closed, dropped;
        /* Never drained by the owner: close performs the drain and reports. */
        create(&o, k, false);
        ot_trace_start();
        arm_and_fire(&o);
        ot_trace_take();
        id = ot_last_a(arm_call[k]);
        while (!tph_os_load32(&o.finished)) tph_test_sleep(TPH_TEST_MS);
        close_obj(&o);
        ot_trace_take();
        closed = ot_find(close_call[k], id, 0);
        dropped = ot_find("drop-obligation-owed", id, 0);
        TPH_CHECK(closed >= 0);
        TPH_CHECK(dropped > closed); /* after the drain and close */
        {
            long drained = ot_find(drain_call[k], id, 0);
            TPH_CHECK(drained >= 0);
            TPH_CHECK(drained < closed); /* close drained before it closed */
        }
        destroy_rest(&o);

        /* Drained by the owner, by any of its draining calls: nothing to
         * report. */
        {
            int v;
            for (v = 0;; v++) {
                create(&o, k, false);
                ot_trace_start();
                arm_and_fire(&o);
                while (!tph_os_load32(&o.finished)) tph_test_sleep(TPH_TEST_MS);
                if (v == 0) drain(&o);
                else if (!drain_variant(&o, v)) {
                    close_obj(&o);
                    destroy_rest(&o);
                    break;
                }
                close_obj(&o);
                ot_trace_take();
                TPH_CHECK_EQ(ot_count_events("drop-obligation-owed", TPH_TEST_ANY), 0);
                destroy_rest(&o);
            }
        }

        /* Never armed: nothing owed either. */
        create(&o, k, false);
        ot_trace_start();
        close_obj(&o);
        ot_trace_take();
        TPH_CHECK_EQ(ot_count_events("drop-obligation-owed", TPH_TEST_ANY), 0);
        destroy_rest(&o);
    }
}

static void close_reports_a_drain_it_was_owed_and_only_then(void **state) {
    (void)state;
    tph_test_run_controlled(owed_body, NULL, NULL, 1);
    tph_test_run_native(owed_body, NULL, NULL);
}

/* ---- a stop in progress refuses re-arms --------------------------------------- */
typedef struct rearm_ctx {
    ot_gate gate;
    ot_counter calls;
    volatile uint32_t rearm_result;
    tph_timer *t;
} rearm_ctx;

static void rearming_fn(tph_timer *t, void *ctx) {
    rearm_ctx *r = (rearm_ctx *)ctx;
    ot_count(&r->calls);
    if (ot_get(&r->calls) > 1) return;
    ot_gate_pass(&r->gate);
    /* The owner's stop_and_drain is parked between its disarm and its drain:
     * an arm landing now would leave the timer armed after the drain. */
    tph_os_store32(&r->rearm_result, (uint32_t)tph_timer_set_after(t, 0, 0));
}

static void stopper_thread(void *arg) {
    rearm_ctx *r = (rearm_ctx *)arg;
    TPH_CHECK_EQ(tph_timer_stop_and_drain(r->t), TPH_OK);
}

static void stop_refuses_body(void *ctx) {
    rearm_ctx r;
    rt_thread *t;
    (void)ctx;
    memset(&r, 0, sizeof r);
    r.rearm_result = 99;
    TPH_CHECK_EQ(tph_timer_create(&r.t, rearming_fn, &r, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(r.t, 0, 0), TPH_OK);
    TPH_CHECK(ot_gate_wait_entered(&r.gate, 1, TPH_TEST_PATIENCE));
    tph_test_hold("WaitForThreadpoolTimerCallbacks", TPH_TEST_ANY);
    t = tph_test_spawn("stopper", stopper_thread, &r);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE)); /* disarmed, drain not begun */
    ot_gate_open(&r.gate);
    while (tph_os_load32(&r.rearm_result) == 99) tph_test_sleep(TPH_TEST_MS);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK_EQ(r.rearm_result, TPH_EBUSY);
    TPH_CHECK(!tph_timer_is_set(r.t));
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK_EQ(ot_get(&r.calls), 1);
    /* The stop is over: arming works again. */
    TPH_CHECK_EQ(tph_timer_set_after(r.t, 0, 0), TPH_OK);
    TPH_CHECK(ot_wait_count(&r.calls, 2, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_timer_stop_and_drain(r.t), TPH_OK);
    TPH_CHECK_EQ(tph_timer_close(r.t), TPH_OK);
}

static void a_stop_in_progress_refuses_rearms(void **state) {
    (void)state;
    tph_test_run_controlled(stop_refuses_body, NULL, NULL, 1);
    tph_test_run_controlled(stop_refuses_body, NULL, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(close_waits_for_a_running_callback),
        cmocka_unit_test(obligation_is_recorded_before_the_arming_call),
        cmocka_unit_test(close_reports_a_drain_it_was_owed_and_only_then),
        cmocka_unit_test(a_stop_in_progress_refuses_rearms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
