/* Object rules each held by an outcome that changes when the rule is broken:
 * a one-shot timer waits its relative delay (sign and unit of the native due
 * time), a disarm drops a re-arm deferred by a running callback, a wait
 * disarm stops a later signal reaching the callback, a wait close disarms
 * before anything else, and a group release keeps a deferred timer re-arm
 * from firing, a member closed on its own leaves the group's list, a timer
 * close disarms first, and the cancellations and waits of wait, work and
 * periodic objects discharge the drain an arm owed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"

typedef struct calls {
    uint64_t n;
    tph_timer *rearm_once; /* a timer callback re-arms this on its first call */
    uint64_t hold;         /* and then stays inside this long */
} calls;

static void timer_fn(tph_timer *t, void *ctx) {
    calls *c = (calls *)ctx;
    (void)t;
    c->n++;
    if (c->n == 1 && c->rearm_once != NULL) {
        /* Deferred: the timer's own callback is running. */
        (void)tph_timer_set_after(c->rearm_once, 1, 0);
        tph_test_sleep(c->hold);
    }
}

static void wait_fn(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w;
    (void)r;
    ((calls *)ctx)->n++;
}

/* ---- a one-shot timer fires after its delay, not before ---------------------- */

/* Every rule here runs controlled only, on five seeds: the checks read
 * virtual time, which native threads would make a race against the
 * machine's load. */
static void run_controlled_seeds(tph_test_body_fn body) {
    uint64_t seed;
    for (seed = 1; seed <= 5; seed++) tph_test_run_controlled(body, NULL, NULL, seed);
}

static void body_timer_delay(void *ctx) {
    calls c;
    tph_timer *t;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_timer_create(&t, timer_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(t, 100, 0), TPH_OK);
    /* A due time read as absolute (wrong sign) is long past and fires at
     * once; one in the wrong unit fires at 10 ms. */
    tph_test_sleep(50 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 0);
    TPH_CHECK(tph_timer_is_set(t));
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 1);
    TPH_CHECK_EQ(tph_timer_close(t), TPH_OK);
}

static void test_timer_waits_its_delay(void **state) {
    (void)state;
    run_controlled_seeds(body_timer_delay);
}

/* ---- a disarm drops the re-arm a running callback deferred --------------------- */

static void body_disarm_drops_deferred(void *ctx) {
    calls c;
    tph_timer *t;
    (void)ctx;
    memset(&c, 0, sizeof c);
    c.hold = 50 * TPH_TEST_MS;
    TPH_CHECK_EQ(tph_timer_create(&t, timer_fn, &c, NULL), TPH_OK);
    c.rearm_once = t;
    TPH_CHECK_EQ(tph_timer_set_after(t, 1, 0), TPH_OK);
    tph_test_sleep(20 * TPH_TEST_MS); /* the callback is inside, re-arm deferred */
    TPH_CHECK_EQ(c.n, 1);
    TPH_CHECK(tph_timer_is_set(t));
    TPH_CHECK_EQ(tph_timer_disarm(t), TPH_OK);
    TPH_CHECK(!tph_timer_is_set(t));
    tph_test_sleep(500 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 1);
    TPH_CHECK_EQ(tph_timer_close(t), TPH_OK);
}

static void test_disarm_drops_deferred_rearm(void **state) {
    (void)state;
    run_controlled_seeds(body_disarm_drops_deferred);
}

/* ---- a wait disarm: a later signal does not reach the callback ---------------- */

static void body_wait_disarm(void *ctx) {
    calls c;
    tph_handle *ev;
    tph_wait *w;
    tph_pool *pool;
    tph_env env;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_pool_create(&pool), TPH_OK);
    tph_env_init(&env);
    TPH_CHECK_EQ(tph_env_set_pool(&env, pool), TPH_OK);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&w, ev, wait_fn, &c, &env), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    TPH_CHECK_EQ(tph_wait_disarm(w), TPH_OK);
    TPH_CHECK_EQ(tph_event_set(ev), TPH_OK);
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 0);
    /* Armed again, the same signal is seen: the disarm was all that stopped it. */
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 1);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(pool), TPH_OK);
}

static void test_wait_disarm_stops_signal(void **state) {
    (void)state;
    run_controlled_seeds(body_wait_disarm);
}

/* ---- a wait close disarms before it drains ------------------------------------- */

typedef struct closer {
    tph_wait *w;
} closer;

static void close_it(void *arg) {
    closer *cl = (closer *)arg;
    (void)tph_wait_close(cl->w);
}

static void body_wait_close_disarms(void *ctx) {
    calls c;
    closer cl;
    tph_handle *ev;
    tph_pool *pool;
    tph_env env;
    rt_thread *t;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_pool_create(&pool), TPH_OK);
    tph_env_init(&env);
    TPH_CHECK_EQ(tph_env_set_pool(&env, pool), TPH_OK);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&cl.w, ev, wait_fn, &c, &env), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(cl.w, TPH_WAIT_FOREVER), TPH_OK);
    /* Park the close after its drain, just before the native close... */
    tph_test_hold("CloseThreadpoolWait", TPH_TEST_ANY);
    t = tph_test_spawn("closer", close_it, &cl);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    /* ...and signal: an armed wait would queue a callback the drain is
     * already past, into an object about to be freed. */
    TPH_CHECK_EQ(tph_event_set(ev), TPH_OK);
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 0);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK_EQ(c.n, 0);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(pool), TPH_OK);
}

static void test_wait_close_disarms_first(void **state) {
    (void)state;
    /* Controlled only: the hold parks the closer in virtual time. */
    tph_test_run_controlled(body_wait_close_disarms, NULL, NULL, 1);
    tph_test_run_controlled(body_wait_close_disarms, NULL, NULL, 2);
}

/* ---- a group release drops a deferred timer re-arm ------------------------------- */

static void body_group_release_drops_deferred(void *ctx) {
    calls c;
    tph_timer *t;
    tph_group *g;
    tph_pool *pool;
    tph_env env;
    (void)ctx;
    memset(&c, 0, sizeof c);
    c.hold = 30 * TPH_TEST_MS;
    TPH_CHECK_EQ(tph_pool_create(&pool), TPH_OK);
    TPH_CHECK_EQ(tph_group_create(&g, NULL), TPH_OK);
    tph_env_init(&env);
    TPH_CHECK_EQ(tph_env_set_pool(&env, pool), TPH_OK);
    TPH_CHECK_EQ(tph_env_set_group(&env, g), TPH_OK);
    TPH_CHECK_EQ(tph_timer_create(&t, timer_fn, &c, &env), TPH_OK);
    c.rearm_once = t;
    TPH_CHECK_EQ(tph_timer_set_after(t, 1, 0), TPH_OK);
    tph_test_sleep(10 * TPH_TEST_MS); /* inside the callback, re-arm deferred */
    TPH_CHECK_EQ(c.n, 1);
    TPH_CHECK_EQ(tph_group_close_members_draining(g), TPH_OK);
    tph_test_sleep(200 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 1);
    TPH_CHECK_EQ(tph_group_close(g), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(pool), TPH_OK);
}

static void test_group_release_drops_deferred_rearm(void **state) {
    (void)state;
    run_controlled_seeds(body_group_release_drops_deferred);
}

/* ---- a member closed on its own leaves the group's list ------------------------- */

static void body_member_close_leaves_group(void *ctx) {
    calls c;
    tph_timer *first, *last;
    tph_group *g;
    tph_pool *pool;
    tph_env env;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_pool_create(&pool), TPH_OK);
    TPH_CHECK_EQ(tph_group_create(&g, NULL), TPH_OK);
    tph_env_init(&env);
    TPH_CHECK_EQ(tph_env_set_pool(&env, pool), TPH_OK);
    TPH_CHECK_EQ(tph_env_set_group(&env, g), TPH_OK);
    TPH_CHECK_EQ(tph_timer_create(&first, timer_fn, &c, &env), TPH_OK);
    TPH_CHECK_EQ(tph_timer_create(&last, timer_fn, &c, &env), TPH_OK);
    /* The newest member heads the list: closing it must move the head on,
     * or the group keeps a pointer to a freed member. */
    TPH_CHECK_EQ(tph_timer_close(last), TPH_OK);
    TPH_CHECK_EQ(tph_group_close(g), TPH_EBUSY); /* `first` is still a member */
    TPH_CHECK_EQ(tph_timer_close(first), TPH_OK);
    TPH_CHECK_EQ(tph_group_close(g), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(pool), TPH_OK);
}

static void test_member_close_leaves_group(void **state) {
    (void)state;
    tph_test_run_controlled(body_member_close_leaves_group, NULL, NULL, 1);
}

/* ---- a timer close disarms before it drains -------------------------------------- */

typedef struct timer_closer {
    tph_timer *t;
} timer_closer;

static void close_timer(void *arg) { (void)tph_timer_close(((timer_closer *)arg)->t); }

static void body_timer_close_disarms(void *ctx) {
    calls c;
    timer_closer cl;
    rt_thread *th;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_timer_create(&cl.t, timer_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(cl.t, 10, 0), TPH_OK);
    /* Parked after the drain, before the native close: a timer still armed
     * would tick into an object about to be freed. */
    tph_test_hold("CloseThreadpoolTimer", TPH_TEST_ANY);
    th = tph_test_spawn("closer", close_timer, &cl);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 0);
    tph_test_release_hold();
    rt_join(th);
    TPH_CHECK_EQ(c.n, 0);
}

static void test_timer_close_disarms_first(void **state) {
    (void)state;
    tph_test_run_controlled(body_timer_close_disarms, NULL, NULL, 1);
    tph_test_run_controlled(body_timer_close_disarms, NULL, NULL, 2);
}

/* ---- a wait cancellation discharges the drain; stop_and_drain leaves it armable ---- */

static void body_wait_cancel_and_stop(void *ctx) {
    calls c;
    tph_handle *ev;
    tph_wait *w;
    tph_pool *pool;
    tph_env env;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_pool_create(&pool), TPH_OK);
    tph_env_init(&env);
    TPH_CHECK_EQ(tph_env_set_pool(&env, pool), TPH_OK);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&w, ev, wait_fn, &c, &env), TPH_OK);
    /* stop_and_drain ends its stop: the wait can be armed again after it. */
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    TPH_CHECK_EQ(tph_wait_stop_and_drain(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    /* A cancellation waits the callbacks out: it discharges the drain the
     * arm owed, so the close has nothing to report. */
    TPH_CHECK_EQ(tph_wait_try_cancel_pending_no_heal_tracking(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    TPH_CHECK_EQ(tph_wait_try_cancel_pending_no_heal_tracking(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_test_event_count("drop-obligation-owed", TPH_TEST_ANY), 0);
    TPH_CHECK_EQ(c.n, 0);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(pool), TPH_OK);
}

static void test_wait_cancel_discharges_and_stop_ends(void **state) {
    (void)state;
    tph_test_run_controlled(body_wait_cancel_and_stop, NULL, NULL, 1);
}

/* ---- a wait's stop refuses arms until its drain has returned ------------------------ */

/* The stop ends after the drain, not before it: an arm let in while the
 * drain (or the cancelling drain) runs could be dropped by it or race the
 * free that follows.  The stopper is parked at its drain's native call. */
typedef struct stopper_arg {
    tph_wait *w;
    bool cancel;
} stopper_arg;

static void stopper(void *arg) {
    stopper_arg *a = (stopper_arg *)arg;
    if (a->cancel) (void)tph_wait_try_cancel_pending_no_heal_tracking(a->w);
    else (void)tph_wait_stop_and_drain(a->w);
}

static void body_wait_stop_refuses_arms(void *ctx) {
    calls c;
    tph_handle *ev;
    stopper_arg a;
    rt_thread *t;
    int cancel;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&a.w, ev, wait_fn, &c, NULL), TPH_OK);
    for (cancel = 0; cancel < 2; cancel++) {
        a.cancel = cancel != 0;
        TPH_CHECK_EQ(tph_wait_arm(a.w, TPH_WAIT_FOREVER), TPH_OK);
        tph_test_hold("WaitForThreadpoolWaitCallbacks", TPH_TEST_ANY);
        t = tph_test_spawn("stopper", stopper, &a);
        /* held counts every thread that ever reached a hold of this run */
        TPH_CHECK(tph_test_wait_held((uint64_t)cancel + 1, TPH_TEST_PATIENCE));
        TPH_CHECK_EQ(tph_wait_arm(a.w, TPH_WAIT_FOREVER), TPH_EBUSY);
        tph_test_release_hold();
        rt_join(t);
        /* Stop over: arms are accepted again. */
        TPH_CHECK_EQ(tph_wait_arm(a.w, TPH_WAIT_FOREVER), TPH_OK);
        TPH_CHECK_EQ(tph_wait_stop_and_drain(a.w), TPH_OK);
    }
    /* ...and from its first step: parked at its disarm, the stop already
     * refuses (an arm let in before the stop began would outlive it). */
    for (cancel = 0; cancel < 2; cancel++) {
        a.cancel = cancel != 0;
        TPH_CHECK_EQ(tph_wait_arm(a.w, TPH_WAIT_FOREVER), TPH_OK);
        tph_test_hold_first("SetThreadpoolWait", TPH_TEST_ANY);
        t = tph_test_spawn("stopper", stopper, &a);
        TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
        TPH_CHECK_EQ(tph_wait_arm(a.w, TPH_WAIT_FOREVER), TPH_EBUSY);
        tph_test_release_hold();
        rt_join(t);
    }
    TPH_CHECK_EQ(tph_wait_close(a.w), TPH_OK);
    TPH_CHECK_EQ(c.n, 0);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void test_wait_stop_refuses_arms_until_drained(void **state) {
    (void)state;
    run_controlled_seeds(body_wait_stop_refuses_arms);
}

static void work_fn(tph_work *w, void *ctx);
static void periodic_fn(tph_periodic *p, void *ctx);

/* ---- an arm that lands during the owner's drain is still owed ---------------------- */

/* Each draining call clears the drain obligation BEFORE its native wait:
 * an arm landing while it waits owes a drain of its own, which the close
 * must then report.  Cleared after the wait, that newer obligation would be
 * erased and the close would silently drain it. */
enum { D_WORK_WAIT, D_WORK_CANCEL, D_TIMER_WAIT, D_TIMER_CANCEL, D_WAIT_WAIT, D_PERIODIC_WAIT, D_COUNT };
static const char *const drain_event[D_COUNT] = {
    "WaitForThreadpoolWorkCallbacks", "WaitForThreadpoolWorkCallbacks",
    "WaitForThreadpoolTimerCallbacks", "WaitForThreadpoolTimerCallbacks",
    "WaitForThreadpoolWaitCallbacks", "WaitForThreadpoolTimerCallbacks"};

typedef struct drain_case {
    int which;
    tph_work *work;
    tph_timer *timer;
    tph_wait *wait;
    tph_periodic *periodic;
} drain_case;

static void owner_drains(void *arg) {
    drain_case *d = (drain_case *)arg;
    switch (d->which) {
    case D_WORK_WAIT: (void)tph_work_wait(d->work); break;
    case D_WORK_CANCEL: (void)tph_work_cancel_pending(d->work); break;
    case D_TIMER_WAIT: (void)tph_timer_wait(d->timer); break;
    case D_TIMER_CANCEL: (void)tph_timer_cancel_pending(d->timer); break;
    case D_WAIT_WAIT: (void)tph_wait_wait(d->wait); break;
    default: (void)tph_periodic_wait(d->periodic); break;
    }
}

static void body_arm_during_drain_owed(void *ctx) {
    calls c;
    tph_handle *ev = NULL;
    drain_case d;
    rt_thread *t;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    for (d.which = 0; d.which < D_COUNT; d.which++) {
        uint64_t dropped = tph_test_event_count("drop-obligation-owed", TPH_TEST_ANY);
        d.work = NULL;
        d.timer = NULL;
        d.wait = NULL;
        d.periodic = NULL;
        if (d.which <= D_WORK_CANCEL) TPH_CHECK_EQ(tph_work_create(&d.work, work_fn, &c, NULL), TPH_OK);
        else if (d.which <= D_TIMER_CANCEL) TPH_CHECK_EQ(tph_timer_create(&d.timer, timer_fn, &c, NULL), TPH_OK);
        else if (d.which == D_WAIT_WAIT) TPH_CHECK_EQ(tph_wait_create(&d.wait, ev, wait_fn, &c, NULL), TPH_OK);
        else TPH_CHECK_EQ(tph_periodic_create(&d.periodic, 60000, periodic_fn, &c, NULL), TPH_OK);
        tph_test_hold(drain_event[d.which], TPH_TEST_ANY);
        t = tph_test_spawn("owner", owner_drains, &d);
        TPH_CHECK(tph_test_wait_held((uint64_t)d.which + 1, TPH_TEST_PATIENCE));
        /* The arm lands while the owner's drain is parked at its native wait. */
        if (d.work) TPH_CHECK_EQ(tph_work_submit(d.work), TPH_OK);
        if (d.timer) TPH_CHECK_EQ(tph_timer_set_after(d.timer, 60000, 0), TPH_OK);
        if (d.wait) TPH_CHECK_EQ(tph_wait_arm(d.wait, TPH_WAIT_FOREVER), TPH_OK);
        if (d.periodic) TPH_CHECK_EQ(tph_periodic_start(d.periodic), TPH_OK);
        tph_test_release_hold();
        rt_join(t);
        /* Never drained since that arm: the close owes the report. */
        if (d.work) TPH_CHECK_EQ(tph_work_close(d.work), TPH_OK);
        if (d.timer) TPH_CHECK_EQ(tph_timer_close(d.timer), TPH_OK);
        if (d.wait) TPH_CHECK_EQ(tph_wait_close(d.wait), TPH_OK);
        if (d.periodic) TPH_CHECK_EQ(tph_periodic_close(d.periodic), TPH_OK);
        TPH_CHECK_EQ(tph_test_event_count("drop-obligation-owed", TPH_TEST_ANY), dropped + 1);
    }
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void test_arm_during_owner_drain_stays_owed(void **state) {
    (void)state;
    run_controlled_seeds(body_arm_during_drain_owed);
}

/* ---- a close refuses arms from its first step ------------------------------------- */

/* Every close marks the object closing before it disarms or drains: an arm
 * let in during the close's drain would be left armed on an object about to
 * be freed.  The closer is parked at the close's native drain. */
static void closer_thread(void *arg) {
    drain_case *d = (drain_case *)arg;
    if (d->work) (void)tph_work_close(d->work);
    if (d->timer) (void)tph_timer_close(d->timer);
    if (d->wait) (void)tph_wait_close(d->wait);
    if (d->periodic) (void)tph_periodic_close(d->periodic);
}

static void body_close_refuses_arms(void *ctx) {
    static const int kinds[4] = {D_WORK_WAIT, D_TIMER_WAIT, D_WAIT_WAIT, D_PERIODIC_WAIT};
    calls c;
    tph_handle *ev = NULL;
    drain_case d;
    rt_thread *t;
    int k;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    for (k = 0; k < 4; k++) {
        memset(&d, 0, sizeof d);
        d.which = kinds[k];
        if (d.which == D_WORK_WAIT) TPH_CHECK_EQ(tph_work_create(&d.work, work_fn, &c, NULL), TPH_OK);
        else if (d.which == D_TIMER_WAIT) TPH_CHECK_EQ(tph_timer_create(&d.timer, timer_fn, &c, NULL), TPH_OK);
        else if (d.which == D_WAIT_WAIT) TPH_CHECK_EQ(tph_wait_create(&d.wait, ev, wait_fn, &c, NULL), TPH_OK);
        else TPH_CHECK_EQ(tph_periodic_create(&d.periodic, 60000, periodic_fn, &c, NULL), TPH_OK);
        tph_test_hold(drain_event[d.which], TPH_TEST_ANY);
        t = tph_test_spawn("closer", closer_thread, &d);
        TPH_CHECK(tph_test_wait_held((uint64_t)k + 1, TPH_TEST_PATIENCE));
        if (d.work) TPH_CHECK_EQ(tph_work_submit(d.work), TPH_EBUSY);
        if (d.timer) TPH_CHECK_EQ(tph_timer_set_after(d.timer, 1, 0), TPH_EBUSY);
        if (d.wait) TPH_CHECK_EQ(tph_wait_arm(d.wait, TPH_WAIT_FOREVER), TPH_EBUSY);
        if (d.periodic) TPH_CHECK_EQ(tph_periodic_start(d.periodic), TPH_EBUSY);
        tph_test_release_hold();
        rt_join(t);
    }
    tph_test_sleep(TPH_TEST_SECOND);
    TPH_CHECK_EQ(c.n, 0);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void test_close_refuses_arms_from_its_first_step(void **state) {
    (void)state;
    run_controlled_seeds(body_close_refuses_arms);
}

/* ...and before its disarm: parked at the close's disarm (its first native
 * call), the object already refuses an arm.  (A one-shot timer disarms
 * under its own lock, which refuses the arm by itself; the wait and the
 * periodic timer disarm without it.) */
static void body_close_marks_before_disarm(void *ctx) {
    static const int kinds[2] = {D_WAIT_WAIT, D_PERIODIC_WAIT};
    static const char *const disarm_event[2] = {"SetThreadpoolWait", "SetThreadpoolTimer"};
    calls c;
    tph_handle *ev = NULL;
    drain_case d;
    rt_thread *t;
    int k;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    for (k = 0; k < 2; k++) {
        memset(&d, 0, sizeof d);
        d.which = kinds[k];
        if (d.which == D_WAIT_WAIT) TPH_CHECK_EQ(tph_wait_create(&d.wait, ev, wait_fn, &c, NULL), TPH_OK);
        else TPH_CHECK_EQ(tph_periodic_create(&d.periodic, 60000, periodic_fn, &c, NULL), TPH_OK);
        tph_test_hold_first(disarm_event[k], TPH_TEST_ANY);
        t = tph_test_spawn("closer", closer_thread, &d);
        TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
        if (d.timer) TPH_CHECK_EQ(tph_timer_set_after(d.timer, 1, 0), TPH_EBUSY);
        if (d.wait) TPH_CHECK_EQ(tph_wait_arm(d.wait, TPH_WAIT_FOREVER), TPH_EBUSY);
        if (d.periodic) TPH_CHECK_EQ(tph_periodic_start(d.periodic), TPH_EBUSY);
        tph_test_release_hold();
        rt_join(t);
    }
    tph_test_sleep(TPH_TEST_SECOND);
    TPH_CHECK_EQ(c.n, 0);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

/* A periodic timer's stop_and_drain, parked at its stop's disarm, already
 * refuses a start. */
static void periodic_stopper(void *arg) { (void)tph_periodic_stop_and_drain((tph_periodic *)arg); }

static void body_periodic_stop_marks_before_disarm(void *ctx) {
    calls c;
    tph_periodic *p;
    rt_thread *t;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_periodic_create(&p, 60000, periodic_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_start(p), TPH_OK);
    tph_test_hold_first("SetThreadpoolTimer", TPH_TEST_ANY);
    t = tph_test_spawn("stopper", periodic_stopper, p);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_periodic_start(p), TPH_EBUSY);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK(!tph_periodic_is_running(p));
    /* ...and until its drain has returned. */
    TPH_CHECK_EQ(tph_periodic_start(p), TPH_OK);
    tph_test_hold("WaitForThreadpoolTimerCallbacks", TPH_TEST_ANY);
    t = tph_test_spawn("stopper", periodic_stopper, p);
    TPH_CHECK(tph_test_wait_held(2, TPH_TEST_PATIENCE)); /* the first hold counted one */
    TPH_CHECK_EQ(tph_periodic_start(p), TPH_EBUSY);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK(!tph_periodic_is_running(p));
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
}

static void test_periodic_stop_marks_before_its_disarm(void **state) {
    (void)state;
    run_controlled_seeds(body_periodic_stop_marks_before_disarm);
}

static void test_close_marks_before_its_disarm(void **state) {
    (void)state;
    run_controlled_seeds(body_close_marks_before_disarm);
}

/* ---- a wait's close disarms before it drains -------------------------------------- */

/* A private pool of one thread kept busy until opened: a callback queued on
 * it cannot run early, so a test decides when queued work runs. */
typedef struct busy_pool {
    tph_pool *pool;
    tph_env env;
    tph_work *busy;
    volatile uint32_t open;
} busy_pool;

static void busy_pool_fn(tph_work *w, void *ctx) {
    busy_pool *b = (busy_pool *)ctx;
    (void)w;
    while (!tph_os_load32(&b->open)) tph_test_sleep(TPH_TEST_MS);
}

static void busy_pool_begin(busy_pool *b) {
    memset(b, 0, sizeof *b);
    TPH_CHECK_EQ(tph_pool_create(&b->pool), TPH_OK);
    TPH_CHECK_EQ(tph_pool_set_thread_limits(b->pool, 1, 1), TPH_OK);
    tph_env_init(&b->env);
    TPH_CHECK_EQ(tph_env_set_pool(&b->env, b->pool), TPH_OK);
    TPH_CHECK_EQ(tph_work_create(&b->busy, busy_pool_fn, b, &b->env), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(b->busy), TPH_OK);
}

static void busy_pool_open(busy_pool *b) { tph_os_store32(&b->open, 1); }

static void busy_pool_end(busy_pool *b) {
    busy_pool_open(b);
    TPH_CHECK_EQ(tph_work_wait(b->busy), TPH_OK);
    TPH_CHECK_EQ(tph_work_close(b->busy), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(b->pool), TPH_OK);
}

/* Disarm, then drain: a signal landing during the close either finds the
 * wait disarmed or queues a callback the drain then waits for.  Drained
 * first and disarmed after, a signal in between queues a callback that runs
 * after the close returned -- into a freed object on the real pool.  The
 * wait runs on a pool of one thread kept busy, so a queued callback cannot
 * run early; the closer is parked at its disarm while the event is set. */
typedef struct close_race {
    tph_wait *w;
    volatile uint32_t close_returned;
    volatile uint32_t ran, after_close;
} close_race;

static void race_wait_fn(tph_wait *w, void *ctx, tph_wait_result r) {
    close_race *x = (close_race *)ctx;
    (void)w;
    (void)r;
    tph_os_fetch_add32(&x->ran, 1);
    if (tph_os_load32(&x->close_returned)) tph_os_fetch_add32(&x->after_close, 1);
}

static void race_closer(void *arg) {
    close_race *x = (close_race *)arg;
    TPH_CHECK_EQ(tph_wait_close(x->w), TPH_OK);
    tph_os_store32(&x->close_returned, 1);
}

static void body_wait_close_disarm_then_drain(void *ctx) {
    close_race x;
    busy_pool b;
    tph_handle *ev = NULL;
    rt_thread *t;
    (void)ctx;
    memset(&x, 0, sizeof x);
    busy_pool_begin(&b);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&x.w, ev, race_wait_fn, &x, &b.env), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(x.w, TPH_WAIT_FOREVER), TPH_OK);
    tph_test_hold_first("SetThreadpoolWait", TPH_TEST_ANY);
    t = tph_test_spawn("closer", race_closer, &x);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_event_set(ev), TPH_OK);
    tph_test_sleep(TPH_TEST_MS);
    tph_test_release_hold();
    /* Time for a close that no longer waits to return. */
    tph_test_sleep(100 * TPH_TEST_MS);
    busy_pool_open(&b);
    rt_join(t);
    tph_test_sleep(TPH_TEST_SECOND);
    TPH_CHECK_EQ(x.after_close, 0);
    /* And the callback queued while the close was parked ran, inside the
     * close: drained, not dropped by CloseThreadpoolWait -- dropping a
     * queued wait packet is the removal that severs a cold pool. */
    TPH_CHECK_EQ(x.ran, 1);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    busy_pool_end(&b);
}

/* The same for a one-shot timer: a tick queued while the close is parked at
 * its disarm is drained by the close, before the timer's memory goes (drained
 * first, the tick would reach the trampoline after the free: the sim reports
 * a callback into freed memory). */
static void closes_timer(void *arg) { TPH_CHECK_EQ(tph_timer_close((tph_timer *)arg), TPH_OK); }

static void body_timer_close_disarm_then_drain(void *ctx) {
    calls c;
    busy_pool b;
    tph_timer *tm;
    rt_thread *t;
    (void)ctx;
    memset(&c, 0, sizeof c);
    busy_pool_begin(&b);
    TPH_CHECK_EQ(tph_timer_create(&tm, timer_fn, &c, &b.env), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(tm, 5, 0), TPH_OK);
    tph_test_hold_first("SetThreadpoolTimer", TPH_TEST_ANY);
    t = tph_test_spawn("closer", closes_timer, tm);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    tph_test_sleep(20 * TPH_TEST_MS); /* the tick fires and queues behind the busy work */
    tph_test_release_hold();
    tph_test_sleep(100 * TPH_TEST_MS);
    busy_pool_open(&b);
    rt_join(t);
    tph_test_sleep(TPH_TEST_SECOND);
    TPH_CHECK_EQ(c.n, 0); /* the disarm's promise: the queued tick never reaches the user */
    busy_pool_end(&b);
}

static void test_timer_close_disarms_before_draining(void **state) {
    (void)state;
    run_controlled_seeds(body_timer_close_disarm_then_drain);
}

static void test_wait_close_disarms_before_draining(void **state) {
    (void)state;
    run_controlled_seeds(body_wait_close_disarm_then_drain);
}

/* ---- a re-arm deferred by a running callback keeps its due time and window ---------- */

typedef struct rearm_self {
    tph_timer *t;
    uint64_t n, first_at, second_at;
} rearm_self;

/* Written by whichever thread arms the timer (a re-arming callback), read by
 * the body while the timer lives: an atomic (the race build checks tests too). */
static void *last_timer_handle;

static void note_timer(const tph_trace_record *rec, void *ctx) {
    (void)ctx;
    if (strcmp(rec->event, "SetThreadpoolTimer") == 0 && rec->b != 0)
        tph_os_store_ptr(&last_timer_handle, (void *)(uintptr_t)rec->a);
}

static void rearming_self_fn(tph_timer *t, void *ctx) {
    rearm_self *r = (rearm_self *)ctx;
    (void)t;
    r->n++;
    if (r->n == 1) {
        r->first_at = rt_now();
        /* Deferred: this callback is running; applied when it returns. */
        TPH_CHECK_EQ(tph_timer_set_after(r->t, 500, 40), TPH_OK);
        tph_test_sleep(10 * TPH_TEST_MS);
    } else if (r->n == 2) {
        r->second_at = rt_now();
    }
}

static void body_deferred_rearm_keeps_due_and_window(void *ctx) {
    rearm_self r;
    sim_object_stats st;
    (void)ctx;
    memset(&r, 0, sizeof r);
    tph_test_chain_hook(note_timer, NULL);
    TPH_CHECK_EQ(tph_timer_create(&r.t, rearming_self_fn, &r, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(r.t, 100, 0), TPH_OK);
    tph_test_sleep(200 * TPH_TEST_MS);
    TPH_CHECK_EQ(r.n, 1);
    /* The deferred arming reached the native timer with its own window. */
    memset(&st, 0, sizeof st);
    TPH_CHECK(sim_object_stats_get(tph_os_load_ptr(&last_timer_handle), &st));
    TPH_CHECK(st.armed);
    TPH_CHECK_EQ(st.window_ms, 40);
    TPH_CHECK_EQ(st.period_ms, 0); /* one-shot: never armed with a period */
    tph_test_sleep(TPH_TEST_SECOND);
    TPH_CHECK_EQ(r.n, 2);
    /* 500 ms after the arming call (made 0-10 ms into the first callback),
     * within the 40 ms window. */
    TPH_CHECK(r.second_at >= r.first_at + 500 * TPH_TEST_MS);
    TPH_CHECK(r.second_at <= r.first_at + 560 * TPH_TEST_MS);
    TPH_CHECK_EQ(tph_timer_close(r.t), TPH_OK);
    tph_test_chain_hook(NULL, NULL);
}

static void test_deferred_rearm_keeps_due_and_window(void **state) {
    (void)state;
    run_controlled_seeds(body_deferred_rearm_keeps_due_and_window);
}

/* ---- a stop leaves nothing armed; a wait waits for the running callback ------------- */

typedef struct gate_calls {
    uint64_t n;
    volatile uint32_t open, entered;
} gate_calls;

static void gated_wait_fn(tph_wait *w, void *ctx, tph_wait_result r) {
    gate_calls *g = (gate_calls *)ctx;
    (void)w;
    (void)r;
    tph_os_store32(&g->entered, 1);
    while (!tph_os_load32(&g->open)) tph_test_sleep(TPH_TEST_MS);
    g->n++;
}

typedef struct waiter_arg {
    tph_wait *w;
    volatile uint32_t returned;
} waiter_arg;

static void waiter(void *arg) {
    waiter_arg *a = (waiter_arg *)arg;
    TPH_CHECK_EQ(tph_wait_wait(a->w), TPH_OK);
    tph_os_store32(&a->returned, 1);
}

static uint64_t timed_out_calls;

static void reset_wait_fn(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w;
    ((calls *)ctx)->n++;
    if (r == TPH_WAIT_TIMED_OUT) timed_out_calls++;
}

typedef struct timer_gate {
    tph_timer *t;
    volatile uint32_t open, entered, returned;
} timer_gate;

static void gated_timer_fn(tph_timer *t, void *ctx) {
    timer_gate *g = (timer_gate *)ctx;
    (void)t;
    tph_os_store32(&g->entered, 1);
    while (!tph_os_load32(&g->open)) tph_test_sleep(TPH_TEST_MS);
}

static void timer_waiter(void *arg) {
    timer_gate *g = (timer_gate *)arg;
    TPH_CHECK_EQ(tph_timer_wait(g->t), TPH_OK);
    tph_os_store32(&g->returned, 1);
}

static void body_stop_and_wait(void *ctx) {
    calls c;
    gate_calls g;
    tph_timer *t;
    tph_handle *ev;
    waiter_arg a;
    rt_thread *th;
    (void)ctx;
    memset(&c, 0, sizeof c);
    memset(&g, 0, sizeof g);
    /* A timer's stop_and_drain disarms: nothing fires after it. */
    TPH_CHECK_EQ(tph_timer_create(&t, timer_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(t, 100, 0), TPH_OK);
    TPH_CHECK_EQ(tph_timer_stop_and_drain(t), TPH_OK);
    tph_test_sleep(300 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 0);
    TPH_CHECK(!tph_timer_is_set(t));
    /* A plain disarm clears the native timer too (is_set asks the pool). */
    TPH_CHECK_EQ(tph_timer_set_after(t, 100, 0), TPH_OK);
    TPH_CHECK(tph_timer_is_set(t));
    TPH_CHECK_EQ(tph_timer_disarm(t), TPH_OK);
    TPH_CHECK(!tph_timer_is_set(t));
    TPH_CHECK_EQ(tph_timer_close(t), TPH_OK);
    /* A wait's wait returns only after the callback running now. */
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&a.w, ev, gated_wait_fn, &g, NULL), TPH_OK);
    a.returned = 0;
    TPH_CHECK_EQ(tph_wait_arm(a.w, TPH_WAIT_FOREVER), TPH_OK);
    TPH_CHECK_EQ(tph_event_set(ev), TPH_OK);
    while (!tph_os_load32(&g.entered)) tph_test_sleep(TPH_TEST_MS);
    th = tph_test_spawn("waiter", waiter, &a);
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK(!tph_os_load32(&a.returned));
    tph_os_store32(&g.open, 1);
    rt_join(th);
    TPH_CHECK(tph_os_load32(&a.returned));
    TPH_CHECK_EQ(g.n, 1);
    TPH_CHECK_EQ(tph_wait_close(a.w), TPH_OK);
    /* A reset event no longer satisfies a wait: armed with a timeout, the
     * wait times out instead. */
    TPH_CHECK_EQ(tph_event_reset(ev), TPH_OK);
    {
        calls rc;
        tph_wait *w2;
        memset(&rc, 0, sizeof rc);
        timed_out_calls = 0;
        TPH_CHECK_EQ(tph_wait_create(&w2, ev, reset_wait_fn, &rc, NULL), TPH_OK);
        TPH_CHECK_EQ(tph_wait_arm(w2, 50), TPH_OK);
        tph_test_sleep(200 * TPH_TEST_MS);
        /* Read after the close's drain: a sleep orders nothing. */
        TPH_CHECK_EQ(tph_wait_close(w2), TPH_OK);
        TPH_CHECK_EQ(rc.n, 1);
        TPH_CHECK_EQ(timed_out_calls, 1);
    }
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    /* A timer's wait returns only after its callback running now. */
    {
        timer_gate tg;
        rt_thread *th2;
        memset(&tg, 0, sizeof tg);
        TPH_CHECK_EQ(tph_timer_create(&tg.t, gated_timer_fn, &tg, NULL), TPH_OK);
        TPH_CHECK_EQ(tph_timer_set_after(tg.t, 1, 0), TPH_OK);
        while (!tph_os_load32(&tg.entered)) tph_test_sleep(TPH_TEST_MS);
        th2 = tph_test_spawn("timer-waiter", timer_waiter, &tg);
        tph_test_sleep(100 * TPH_TEST_MS);
        TPH_CHECK(!tph_os_load32(&tg.returned));
        tph_os_store32(&tg.open, 1);
        rt_join(th2);
        TPH_CHECK(tph_os_load32(&tg.returned));
        TPH_CHECK_EQ(tph_timer_close(tg.t), TPH_OK);
    }
}

static void test_timer_stop_disarms_and_wait_waits(void **state) {
    (void)state;
    run_controlled_seeds(body_stop_and_wait);
}

/* ---- due times at the edge of the 64-bit FILETIME; a cancel drops a queued tick ------ */

static void body_due_time_bounds(void *ctx) {
    calls c;
    tph_timer *t;
    tph_periodic *p;
    const uint64_t max_ms = (uint64_t)INT64_MAX / 10000u; /* in 100 ns units, still positive */
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_timer_create(&t, timer_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(t, max_ms + 1, 0), TPH_EINVAL);
    TPH_CHECK_EQ(tph_timer_set_after(t, max_ms, 0), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_at(t, (uint64_t)INT64_MAX + 1u, 0), TPH_EINVAL);
    TPH_CHECK_EQ(tph_timer_set_at(t, (uint64_t)INT64_MAX, 0), TPH_OK);
    TPH_CHECK_EQ(tph_timer_close(t), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_create(&p, 1000, periodic_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_start_after(p, max_ms + 1), TPH_EINVAL);
    TPH_CHECK_EQ(tph_periodic_start_after(p, max_ms), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
    /* tph_periodic_start and _start_after ask for no window. */
    {
        sim_object_stats st;
        tph_test_chain_hook(note_timer, NULL);
        TPH_CHECK_EQ(tph_periodic_create(&p, 1000, periodic_fn, &c, NULL), TPH_OK);
        TPH_CHECK_EQ(tph_periodic_start(p), TPH_OK);
        memset(&st, 0, sizeof st);
        TPH_CHECK(sim_object_stats_get(tph_os_load_ptr(&last_timer_handle), &st));
        TPH_CHECK_EQ(st.window_ms, 0);
        TPH_CHECK_EQ(st.period_ms, 1000);
        TPH_CHECK_EQ(tph_periodic_start_after(p, 5), TPH_OK);
        memset(&st, 0, sizeof st);
        TPH_CHECK(sim_object_stats_get(tph_os_load_ptr(&last_timer_handle), &st));
        TPH_CHECK_EQ(st.window_ms, 0);
        TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
        tph_test_chain_hook(NULL, NULL);
    }
    TPH_CHECK_EQ(c.n, 0);
}

static void test_due_times_at_the_edge(void **state) {
    (void)state;
    tph_test_run_controlled(body_due_time_bounds, NULL, NULL, 1);
}

static void body_timer_cancel_drops_queued(void *ctx) {
    calls c;
    tph_timer *t;
    busy_pool b;
    (void)ctx;
    memset(&c, 0, sizeof c);
    busy_pool_begin(&b);
    TPH_CHECK_EQ(tph_timer_create(&t, timer_fn, &c, &b.env), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(t, 10, 0), TPH_OK);
    tph_test_sleep(50 * TPH_TEST_MS); /* the tick is queued behind the busy work */
    TPH_CHECK_EQ(tph_timer_cancel_pending(t), TPH_OK);
    busy_pool_open(&b);
    tph_test_sleep(100 * TPH_TEST_MS);
    TPH_CHECK_EQ(c.n, 0);
    TPH_CHECK_EQ(tph_timer_close(t), TPH_OK);
    busy_pool_end(&b);
}

static void test_timer_cancel_drops_a_queued_tick(void **state) {
    (void)state;
    run_controlled_seeds(body_timer_cancel_drops_queued);
}

/* ---- a work cancel_pending discharges the drain ------------------------------------ */

static void work_fn(tph_work *w, void *ctx) {
    (void)w;
    ((calls *)ctx)->n++;
}

static void body_work_cancel_discharges(void *ctx) {
    calls c;
    tph_work *w;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_work_create(&w, work_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    /* Waits the callbacks out (running ones) and drops queued ones: the
     * owner has done the drain the submit owed. */
    TPH_CHECK_EQ(tph_work_cancel_pending(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_test_event_count("drop-obligation-owed", TPH_TEST_ANY), 0);
    TPH_CHECK(c.n <= 1);
}

static void test_work_cancel_discharges_drain(void **state) {
    (void)state;
    tph_test_run_controlled(body_work_cancel_discharges, NULL, NULL, 1);
    tph_test_run_controlled(body_work_cancel_discharges, NULL, NULL, 2);
}

/* ---- a periodic wait discharges the drain ------------------------------------------ */

static void periodic_fn(tph_periodic *p, void *ctx) {
    (void)p;
    ((calls *)ctx)->n++;
}

static void body_periodic_wait_discharges(void *ctx) {
    calls c;
    tph_periodic *p;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_periodic_create(&p, 10, periodic_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_start(p), TPH_OK);
    tph_test_sleep(35 * TPH_TEST_MS);
    TPH_CHECK_EQ(tph_periodic_stop(p), TPH_OK);
    /* The owner's own drain: nothing is left for the close to report. */
    TPH_CHECK_EQ(tph_periodic_wait(p), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
    TPH_CHECK_EQ(tph_test_event_count("drop-obligation-owed", TPH_TEST_ANY), 0);
    TPH_CHECK(c.n >= 1);
}

static void test_periodic_wait_discharges_drain(void **state) {
    (void)state;
    tph_test_run_controlled(body_periodic_wait_discharges, NULL, NULL, 1);
    tph_test_run_controlled(body_periodic_wait_discharges, NULL, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_waits_its_delay),
        cmocka_unit_test(test_disarm_drops_deferred_rearm),
        cmocka_unit_test(test_wait_disarm_stops_signal),
        cmocka_unit_test(test_wait_close_disarms_first),
        cmocka_unit_test(test_group_release_drops_deferred_rearm),
        cmocka_unit_test(test_member_close_leaves_group),
        cmocka_unit_test(test_timer_close_disarms_first),
        cmocka_unit_test(test_wait_cancel_discharges_and_stop_ends),
        cmocka_unit_test(test_wait_stop_refuses_arms_until_drained),
        cmocka_unit_test(test_arm_during_owner_drain_stays_owed),
        cmocka_unit_test(test_deferred_rearm_keeps_due_and_window),
        cmocka_unit_test(test_due_times_at_the_edge),
        cmocka_unit_test(test_timer_cancel_drops_a_queued_tick),
        cmocka_unit_test(test_timer_stop_disarms_and_wait_waits),
        cmocka_unit_test(test_close_refuses_arms_from_its_first_step),
        cmocka_unit_test(test_close_marks_before_its_disarm),
        cmocka_unit_test(test_periodic_stop_marks_before_its_disarm),
        cmocka_unit_test(test_wait_close_disarms_before_draining),
        cmocka_unit_test(test_timer_close_disarms_before_draining),
        cmocka_unit_test(test_work_cancel_discharges_drain),
        cmocka_unit_test(test_periodic_wait_discharges_drain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
