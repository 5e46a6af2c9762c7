/* Conformance cases: I/O completions, cleanup groups, events. */
#include <string.h>

#include "cases.h"

/* ---- I/O ------------------------------------------------------------------- */

typedef struct io_probe {
    volatile uint32_t runs;
    volatile uint32_t ok_results;
    volatile uint64_t bytes;
    void *last_overlapped;
} io_probe;

static void TPH_OS_CALLBACK io_cb(tph_os_instance *inst, void *ctx, void *overlapped,
                                  uint32_t io_result, uintptr_t bytes, tph_os_io *io) {
    io_probe *p = (io_probe *)ctx;
    (void)inst;
    (void)io;
    p->last_overlapped = overlapped;
    if (io_result == 0) (void)tph_os_fetch_add32(&p->ok_results, 1);
    (void)tph_os_fetch_add64(&p->bytes, (uint64_t)bytes);
    (void)tph_os_fetch_add32(&p->runs, 1);
}

static void io_completion_delivered(conf_ctx *c) {
    io_probe p;
    memset(&p, 0, sizeof p);
    conf_io *f = conf_io_open();
    CONF_CHECK(c, f != NULL);
    if (!f) return;
    tph_os_io *io = tph_os_io_create(conf_io_handle(f), io_cb, &p, NULL);
    CONF_CHECK(c, io != NULL);
    if (io) {
        tph_os_io_start(io);
        void *ov = conf_io_begin(f);
        CONF_CHECK(c, ov != NULL);
        CONF_CHECK(c, conf_io_finish(f, 7));
        CONF_EQ(c, conf_await_count(&p.runs, 1), 1);
        tph_os_io_wait(io, false);
        CONF_EQ(c, p.ok_results, 1);
        CONF_EQ(c, p.bytes, 7);
        CONF_CHECK(c, p.last_overlapped == ov);
        conf_observe(c, "runs", p.runs);
        conf_observe(c, "bytes", p.bytes);
        tph_os_io_close(io);
    }
    conf_io_close(f);
}

static void io_two_completions(conf_ctx *c) {
    io_probe p;
    memset(&p, 0, sizeof p);
    conf_io *f = conf_io_open();
    if (!f) { CONF_CHECK(c, f != NULL); return; }
    tph_os_io *io = tph_os_io_create(conf_io_handle(f), io_cb, &p, NULL);
    if (io) {
        for (int i = 0; i < 2; i++) {
            tph_os_io_start(io);
            CONF_CHECK(c, conf_io_begin(f) != NULL);
            CONF_CHECK(c, conf_io_finish(f, 3));
            CONF_EQ(c, conf_await_count(&p.runs, (uint32_t)i + 1), (uint32_t)i + 1);
        }
        tph_os_io_wait(io, false);
        CONF_EQ(c, p.runs, 2);
        CONF_EQ(c, p.bytes, 6);
        conf_observe(c, "runs", p.runs);
        conf_observe(c, "bytes", p.bytes);
        tph_os_io_close(io);
    }
    conf_io_close(f);
}

/* CancelThreadpoolIo after a start whose operation was never issued: no
 * callback, and waiting for callbacks returns. */
static void io_cancel_after_start(conf_ctx *c) {
    io_probe p;
    memset(&p, 0, sizeof p);
    conf_io *f = conf_io_open();
    if (!f) { CONF_CHECK(c, f != NULL); return; }
    tph_os_io *io = tph_os_io_create(conf_io_handle(f), io_cb, &p, NULL);
    if (io) {
        tph_os_io_start(io);
        tph_os_io_cancel(io);
        tph_os_io_wait(io, false);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, p.runs, 0);
        conf_observe(c, "runs", p.runs);
        tph_os_io_close(io);
    }
    conf_io_close(f);
}

/* WaitForThreadpoolIoCallbacks(FALSE) with a start open -- StartThreadpoolIo
 * made, no operation issued, no cancel -- does not return until the start
 * is ended; CancelThreadpoolIo ends it and releases the waiter.  The wait
 * runs in a work callback so the case can watch it from outside.  Wine's
 * own test of the same call (ntdll test_kernel32_tp_io: "should not
 * return") asserts this on Windows too. */
typedef struct io_waiter {
    tph_os_io *io;
    volatile uint32_t returned;
} io_waiter;

static void TPH_OS_CALLBACK io_wait_in_work(tph_os_instance *inst, void *ctx, tph_os_work *w) {
    io_waiter *x = (io_waiter *)ctx;
    (void)inst;
    (void)w;
    tph_os_io_wait(x->io, false);
    (void)tph_os_fetch_add32(&x->returned, 1);
}

static void io_wait_blocks_on_open_start(conf_ctx *c) {
    io_probe p;
    io_waiter x;
    memset(&p, 0, sizeof p);
    memset(&x, 0, sizeof x);
    conf_io *f = conf_io_open();
    if (!f) { CONF_CHECK(c, f != NULL); return; }
    x.io = tph_os_io_create(conf_io_handle(f), io_cb, &p, NULL);
    tph_os_work *w = tph_os_work_create(io_wait_in_work, &x, NULL);
    CONF_CHECK(c, x.io != NULL && w != NULL);
    if (x.io && w) {
        tph_os_io_start(x.io);
        tph_os_work_submit(w);
        conf_sleep_ms(CONF_SETTLE_MS);
        uint32_t while_open = x.returned;
        CONF_EQ(c, while_open, 0);
        tph_os_io_cancel(x.io);
        CONF_EQ(c, conf_await_count(&x.returned, 1), 1);
        tph_os_work_wait(w, false);
        CONF_EQ(c, p.runs, 0);
        conf_observe(c, "returned_while_open", while_open);
        conf_observe(c, "returned_after_cancel", x.returned);
    }
    if (w) tph_os_work_close(w);
    if (x.io) tph_os_io_close(x.io);
    conf_io_close(f);
}

/* ---- cleanup groups --------------------------------------------------------- */

typedef struct group_probe {
    volatile uint32_t runs;
    volatile uint32_t cancel_calls;
    volatile uint32_t cancel_ctx_ok;
    void *cleanup_ctx;
} group_probe;

static void TPH_OS_CALLBACK group_work_cb(tph_os_instance *inst, void *ctx, tph_os_work *w) {
    group_probe *p = (group_probe *)ctx;
    (void)inst;
    (void)w;
    (void)tph_os_fetch_add32(&p->runs, 1);
}
static void TPH_OS_CALLBACK group_timer_cb(tph_os_instance *inst, void *ctx, tph_os_timer *t) {
    group_probe *p = (group_probe *)ctx;
    (void)inst;
    (void)t;
    (void)tph_os_fetch_add32(&p->runs, 1);
}
static void TPH_OS_CALLBACK group_wait_cb(tph_os_instance *inst, void *ctx, tph_os_wait *w,
                                          uint32_t r) {
    group_probe *p = (group_probe *)ctx;
    (void)inst;
    (void)w;
    (void)r;
    (void)tph_os_fetch_add32(&p->runs, 1);
}
static void TPH_OS_CALLBACK group_cancel_cb(void *object_ctx, void *cleanup_ctx) {
    group_probe *p = (group_probe *)object_ctx;
    (void)tph_os_fetch_add32(&p->cancel_calls, 1);
    if (cleanup_ctx == p->cleanup_ctx) (void)tph_os_fetch_add32(&p->cancel_ctx_ok, 1);
}

/* A cancelling release drops queued callbacks of members and calls the cancel
 * callback once per member, with the member's context and the release's. */
static void group_cancel_release(conf_ctx *c) {
    conf_blocker b;
    group_probe p;
    int cleanup_tag = 0;
    memset(&p, 0, sizeof p);
    p.cleanup_ctx = &cleanup_tag;
    CONF_CHECK(c, conf_blocker_start(&b));
    tph_os_group *g = tph_os_group_create();
    if (g) {
        tph_os_env env = b.env;
        env.group = g;
        env.group_cancel = group_cancel_cb;
        tph_os_work *w = tph_os_work_create(group_work_cb, &p, &env);
        tph_os_timer *t = tph_os_timer_create(group_timer_cb, &p, &env);
        CONF_CHECK(c, w != NULL && t != NULL);
        if (w) {
            tph_os_work_submit(w);
            tph_os_work_submit(w);
        }
        tph_os_group_close_members(g, true, &cleanup_tag);
        conf_blocker_release(&b);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 0);
        CONF_EQ(c, tph_os_load32(&p.cancel_calls), 2);
        CONF_EQ(c, tph_os_load32(&p.cancel_ctx_ok), 2);
        conf_observe(c, "runs", p.runs);
        conf_observe(c, "cancel_calls", p.cancel_calls);
        tph_os_group_close(g);
    }
    conf_blocker_close(&b);
}

/* A draining release runs queued callbacks and calls no cancel callback. */
static void group_drain_release(conf_ctx *c) {
    group_probe p;
    memset(&p, 0, sizeof p);
    tph_os_group *g = tph_os_group_create();
    if (!g) { CONF_CHECK(c, g != NULL); return; }
    tph_os_env env;
    memset(&env, 0, sizeof env);
    env.group = g;
    env.group_cancel = group_cancel_cb;
    env.priority = TPH_OS_PRIORITY_NORMAL;
    tph_os_work *w = tph_os_work_create(group_work_cb, &p, &env);
    if (w) {
        for (int i = 0; i < 3; i++) tph_os_work_submit(w);
    }
    tph_os_group_close_members(g, false, NULL);
    CONF_EQ(c, tph_os_load32(&p.runs), 3);
    CONF_EQ(c, tph_os_load32(&p.cancel_calls), 0);
    conf_observe(c, "runs", p.runs);
    conf_observe(c, "cancel_calls", p.cancel_calls);
    tph_os_group_close(g);
}

/* Releasing the members closes them: an armed wait member no longer fires. */
static void group_release_closes_wait(conf_ctx *c) {
    group_probe p;
    memset(&p, 0, sizeof p);
    tph_os_group *g = tph_os_group_create();
    tph_os_event *e = tph_os_event_create(true, false);
    if (!g || !e) { CONF_CHECK(c, g != NULL && e != NULL); return; }
    tph_os_env env;
    memset(&env, 0, sizeof env);
    env.group = g;
    env.priority = TPH_OS_PRIORITY_NORMAL;
    tph_os_wait *w = tph_os_wait_create(group_wait_cb, &p, &env);
    if (w) tph_os_wait_set(w, e, TPH_OS_INFINITE);
    tph_os_group_close_members(g, true, NULL);
    tph_os_event_set(e);
    conf_sleep_ms(CONF_SETTLE_MS);
    CONF_EQ(c, tph_os_load32(&p.runs), 0);
    conf_observe(c, "runs", p.runs);
    tph_os_group_close(g);
    tph_os_event_close(e);
}

/* ... and a periodic timer member stops ticking. */
static void group_release_stops_periodic(conf_ctx *c) {
    group_probe p;
    memset(&p, 0, sizeof p);
    tph_os_group *g = tph_os_group_create();
    if (!g) { CONF_CHECK(c, g != NULL); return; }
    tph_os_env env;
    memset(&env, 0, sizeof env);
    env.group = g;
    env.priority = TPH_OS_PRIORITY_NORMAL;
    tph_os_timer *t = tph_os_timer_create(group_timer_cb, &p, &env);
    if (t) {
        int64_t due = -10 * 10000;
        tph_os_timer_set(t, &due, 15, 0);
        CONF_CHECK(c, conf_await_count(&p.runs, 2) >= 2);
    }
    tph_os_group_close_members(g, false, NULL);
    uint32_t at_release = tph_os_load32(&p.runs);
    conf_sleep_ms(CONF_SETTLE_MS);
    CONF_EQ(c, tph_os_load32(&p.runs), at_release);
    conf_observe(c, "after_release", tph_os_load32(&p.runs) - at_release);
    tph_os_group_close(g);
}

/* An empty group releases and closes cleanly. */
static void group_empty_release(conf_ctx *c) {
    tph_os_group *g = tph_os_group_create();
    CONF_CHECK(c, g != NULL);
    if (!g) return;
    tph_os_group_close_members(g, true, NULL);
    tph_os_group_close(g);
    conf_observe(c, "ok", 1);
}

/* ---- events ---------------------------------------------------------------- */

static void event_manual_stays_set(conf_ctx *c) {
    tph_os_event *e = tph_os_event_create(true, false);
    if (!e) { CONF_CHECK(c, e != NULL); return; }
    uint32_t r0 = tph_os_event_wait(e, 0);
    tph_os_event_set(e);
    uint32_t r1 = tph_os_event_wait(e, 0);
    uint32_t r2 = tph_os_event_wait(e, 0);
    tph_os_event_reset(e);
    uint32_t r3 = tph_os_event_wait(e, 0);
    CONF_EQ(c, r0, TPH_OS_WAIT_TIMEOUT);
    CONF_EQ(c, r1, TPH_OS_WAIT_SIGNALED);
    CONF_EQ(c, r2, TPH_OS_WAIT_SIGNALED);
    CONF_EQ(c, r3, TPH_OS_WAIT_TIMEOUT);
    conf_observe(c, "pattern", (r0 != 0) * 1000u + (r1 != 0) * 100u + (r2 != 0) * 10u + (r3 != 0));
    tph_os_event_close(e);
}

static void event_auto_reset_consumed(conf_ctx *c) {
    tph_os_event *e = tph_os_event_create(false, true);
    if (!e) { CONF_CHECK(c, e != NULL); return; }
    uint32_t r1 = tph_os_event_wait(e, 0);
    uint32_t r2 = tph_os_event_wait(e, 0);
    tph_os_event_set(e);
    uint32_t r3 = tph_os_event_wait(e, 0);
    CONF_EQ(c, r1, TPH_OS_WAIT_SIGNALED);
    CONF_EQ(c, r2, TPH_OS_WAIT_TIMEOUT);
    CONF_EQ(c, r3, TPH_OS_WAIT_SIGNALED);
    conf_observe(c, "pattern", (r1 != 0) * 100u + (r2 != 0) * 10u + (r3 != 0));
    tph_os_event_close(e);
}

static void event_wait_times_out(conf_ctx *c) {
    tph_os_event *e = tph_os_event_create(false, false);
    if (!e) { CONF_CHECK(c, e != NULL); return; }
    uint32_t r = tph_os_event_wait(e, 20);
    CONF_EQ(c, r, TPH_OS_WAIT_TIMEOUT);
    conf_observe(c, "timeout", r == TPH_OS_WAIT_TIMEOUT);
    tph_os_event_close(e);
}

/* A set from a pool callback wakes a thread blocked in the wait. */
static void TPH_OS_CALLBACK set_cb(tph_os_instance *inst, void *ctx, tph_os_work *w) {
    (void)inst;
    (void)w;
    conf_sleep_ms(20);
    tph_os_event_set((tph_os_event *)ctx);
}
static void event_set_from_callback_wakes(conf_ctx *c) {
    tph_os_event *e = tph_os_event_create(false, false);
    tph_os_work *w = e ? tph_os_work_create(set_cb, e, NULL) : NULL;
    if (!w) { CONF_CHECK(c, w != NULL); tph_os_event_close(e); return; }
    tph_os_work_submit(w);
    uint32_t r = tph_os_event_wait(e, CONF_PATIENCE_MS);
    CONF_EQ(c, r, TPH_OS_WAIT_SIGNALED);
    conf_observe(c, "woken", r == TPH_OS_WAIT_SIGNALED);
    tph_os_work_wait(w, false);
    tph_os_work_close(w);
    tph_os_event_close(e);
}

/* ---- clocks ----------------------------------------------------------------- */

/* The interrupt-time clock never goes back and moves across a sleep of many
 * ticks (how far is not asserted: ticks are 15.6 ms, Wine jitters ~10 ms). */
static void clock_interrupt_time_monotonic(conf_ctx *c) {
    uint64_t prev = tph_os_interrupt_time(), first = prev;
    uint32_t backwards = 0;
    for (int i = 0; i < 200; i++) {
        uint64_t now = tph_os_interrupt_time();
        if (now < prev) backwards++;
        prev = now;
    }
    conf_sleep_ms(CONF_SETTLE_MS);
    uint64_t later = tph_os_interrupt_time();
    CONF_EQ(c, backwards, 0);
    CONF_CHECK(c, later > first);
    conf_observe(c, "backwards", backwards);
    conf_observe(c, "advanced", later > first);
}

/* System time is a FILETIME: after 2020-01-01 and advancing. */
static void clock_system_time_filetime(conf_ctx *c) {
    const uint64_t y2020 = 132223104000000000ull; /* 2020-01-01T00:00:00Z in FILETIME */
    uint64_t a = tph_os_system_time();
    conf_sleep_ms(CONF_SETTLE_MS);
    uint64_t b = tph_os_system_time();
    CONF_CHECK(c, a > y2020);
    CONF_CHECK(c, b > a);
    conf_observe(c, "plausible", a > y2020);
    conf_observe(c, "advanced", b > a);
}

const conf_case conf_cases_misc[] = {
    {"clock.interrupt_time_monotonic", clock_interrupt_time_monotonic, NULL},
    {"clock.system_time_filetime", clock_system_time_filetime, NULL},
    {"io.completion_delivered", io_completion_delivered, NULL},
    {"io.two_completions", io_two_completions, NULL},
    {"io.cancel_after_start", io_cancel_after_start, NULL},
    {"io.wait_blocks_on_open_start", io_wait_blocks_on_open_start, NULL},
    {"group.cancel_release", group_cancel_release, NULL},
    {"group.drain_release", group_drain_release, NULL},
    {"group.release_closes_wait", group_release_closes_wait, NULL},
    {"group.release_stops_periodic", group_release_stops_periodic, NULL},
    {"group.empty_release", group_empty_release, NULL},
    {"event.manual_stays_set", event_manual_stays_set, NULL},
    {"event.auto_reset_consumed", event_auto_reset_consumed, NULL},
    {"event.wait_times_out", event_wait_times_out, NULL},
    {"event.set_from_callback_wakes", event_set_from_callback_wakes, NULL},
};
const size_t conf_cases_misc_count = sizeof conf_cases_misc / sizeof conf_cases_misc[0];
