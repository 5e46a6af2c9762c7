/* Conformance cases: wait objects. */
#include <string.h>

#include "cases.h"

typedef struct wait_probe {
    volatile uint32_t runs;
    volatile uint32_t signaled;
    volatile uint32_t timed_out;
    uint32_t rearm_until; /* re-arm from the callback while runs < this */
    tph_os_event *event;
} wait_probe;

static void TPH_OS_CALLBACK wait_cb(tph_os_instance *inst, void *ctx, tph_os_wait *w,
                                    uint32_t result) {
    wait_probe *p = (wait_probe *)ctx;
    (void)inst;
    if (result == TPH_OS_WAIT_SIGNALED) (void)tph_os_fetch_add32(&p->signaled, 1);
    if (result == TPH_OS_WAIT_TIMEOUT) (void)tph_os_fetch_add32(&p->timed_out, 1);
    uint32_t n = tph_os_fetch_add32(&p->runs, 1) + 1;
    if (n < p->rearm_until) tph_os_wait_set(w, p->event, TPH_OS_INFINITE);
}

static tph_os_wait *probe_wait(wait_probe *p, const tph_os_env *env, bool manual, bool set) {
    memset(p, 0, sizeof *p);
    p->event = tph_os_event_create(manual, set);
    return p->event ? tph_os_wait_create(wait_cb, p, env) : NULL;
}

static void finish(conf_ctx *c, wait_probe *p, tph_os_wait *w) {
    conf_observe(c, "runs", p->runs);
    conf_observe(c, "signaled", p->signaled);
    conf_observe(c, "timed_out", p->timed_out);
    if (w) {
        tph_os_wait_set(w, NULL, 0);
        tph_os_wait_wait(w, false);
        tph_os_wait_close(w);
    }
    if (p->event) tph_os_event_close(p->event);
}

/* A wait is one-shot: a manual-reset event left signalled fires it once. */
static void wait_signaled_once(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, true, true);
    CONF_CHECK(c, w != NULL);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        CONF_EQ(c, conf_await_count(&p.runs, 1), 1);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 1);
        CONF_EQ(c, tph_os_load32(&p.signaled), 1);
    }
    finish(c, &p, w);
}

static void wait_timeout_result(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, true, false);
    if (w) {
        tph_os_wait_set(w, p.event, 20);
        CONF_EQ(c, conf_await_count(&p.runs, 1), 1);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.timed_out), 1);
        CONF_EQ(c, tph_os_load32(&p.signaled), 0);
    }
    finish(c, &p, w);
}

static void wait_fires_on_later_signal(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, false, false);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 0);
        tph_os_event_set(p.event);
        CONF_EQ(c, conf_await_count(&p.runs, 1), 1);
        CONF_EQ(c, tph_os_load32(&p.signaled), 1);
    }
    finish(c, &p, w);
}

/* The wait's satisfaction consumes an auto-reset event's signal. */
static void wait_consumes_auto_reset(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, false, true);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        CONF_EQ(c, conf_await_count(&p.runs, 1), 1);
        uint32_t r = tph_os_event_wait(p.event, 0);
        CONF_EQ(c, r, TPH_OS_WAIT_TIMEOUT);
        conf_observe(c, "event_left_set", r == TPH_OS_WAIT_SIGNALED);
    }
    finish(c, &p, w);
}

/* Disarm (SetThreadpoolWait(w, NULL, NULL)) before the signal: nothing fires. */
static void wait_disarm_before_signal(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, true, false);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        tph_os_wait_set(w, NULL, 0);
        tph_os_event_set(p.event);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 0);
    }
    finish(c, &p, w);
}

/* A queued wait callback (signal seen, no thread free) survives a disarm. */
static void wait_disarm_keeps_queued(conf_ctx *c) {
    conf_blocker b;
    wait_probe p;
    CONF_CHECK(c, conf_blocker_start(&b));
    tph_os_wait *w = probe_wait(&p, &b.env, true, true);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        conf_sleep_ms(CONF_SETTLE_MS); /* the wait thread queues the callback */
        tph_os_wait_set(w, NULL, 0);
        conf_blocker_release(&b);
        tph_os_wait_wait(w, false);
        CONF_EQ(c, tph_os_load32(&p.runs), 1);
    }
    finish(c, &p, w);
    conf_blocker_close(&b);
}

/* WaitForThreadpoolWaitCallbacks(w, TRUE) drops the queued callback -- the
 * removal that, on a cold default pool, is the stall's trigger. */
static void wait_cancel_drops_queued(conf_ctx *c) {
    conf_blocker b;
    wait_probe p;
    CONF_CHECK(c, conf_blocker_start(&b));
    tph_os_wait *w = probe_wait(&p, &b.env, true, true);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        conf_sleep_ms(CONF_SETTLE_MS);
        tph_os_wait_wait(w, true);
        conf_blocker_release(&b);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 0);
    }
    finish(c, &p, w);
    conf_blocker_close(&b);
}

/* ... but an armed, unsignalled wait stays registered: a later signal fires. */
static void wait_cancel_leaves_armed(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, true, false);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        tph_os_wait_wait(w, true);
        tph_os_event_set(p.event);
        CONF_EQ(c, conf_await_count(&p.runs, 1), 1);
    }
    finish(c, &p, w);
}

/* The documented stop: disarm, wait for callbacks, close; then silence. */
static void wait_documented_stop(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, true, false);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        tph_os_wait_set(w, NULL, 0);
        tph_os_wait_wait(w, true);
        tph_os_wait_close(w);
        w = NULL;
        tph_os_event_set(p.event);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 0);
    }
    finish(c, &p, w);
}

/* Re-arming from the callback gives one callback per arming. */
static void wait_rearm_from_callback(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, true, true);
    if (w) {
        p.rearm_until = 3;
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        CONF_EQ(c, conf_await_count(&p.runs, 3), 3);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 3);
    }
    finish(c, &p, w);
}

/* Setting a wait again replaces the previous arming (one callback, not two). */
static void wait_set_twice_one_callback(conf_ctx *c) {
    wait_probe p;
    tph_os_wait *w = probe_wait(&p, NULL, true, false);
    if (w) {
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        tph_os_wait_set(w, p.event, TPH_OS_INFINITE);
        tph_os_event_set(p.event);
        CONF_EQ(c, conf_await_count(&p.runs, 1), 1);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 1);
    }
    finish(c, &p, w);
}

const conf_case conf_cases_wait[] = {
    {"wait.signaled_once", wait_signaled_once, NULL},
    {"wait.timeout_result", wait_timeout_result, NULL},
    {"wait.fires_on_later_signal", wait_fires_on_later_signal, NULL},
    {"wait.consumes_auto_reset", wait_consumes_auto_reset, NULL},
    {"wait.disarm_before_signal", wait_disarm_before_signal, NULL},
    {"wait.disarm_keeps_queued", wait_disarm_keeps_queued, NULL},
    {"wait.cancel_drops_queued", wait_cancel_drops_queued, NULL},
    {"wait.cancel_leaves_armed", wait_cancel_leaves_armed, NULL},
    {"wait.documented_stop", wait_documented_stop, NULL},
    {"wait.rearm_from_callback", wait_rearm_from_callback, NULL},
    {"wait.set_twice_one_callback", wait_set_twice_one_callback, NULL},
};
const size_t conf_cases_wait_count = sizeof conf_cases_wait / sizeof conf_cases_wait[0];
