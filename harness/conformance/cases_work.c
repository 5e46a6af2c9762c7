/* Conformance cases: work objects, priorities, thread limits, pools. */
#include <string.h>

#include "cases.h"

typedef struct work_probe {
    volatile uint32_t runs;
    conf_conc conc;
    uint32_t sleep_ms;
    uint32_t caller_tid;
    volatile uint32_t on_caller_thread;
    tph_os_event *started;
    tph_os_event *gate;
    volatile uint32_t done;
} work_probe;

static void TPH_OS_CALLBACK probe_cb(tph_os_instance *inst, void *ctx, tph_os_work *w) {
    work_probe *p = (work_probe *)ctx;
    (void)inst;
    (void)w;
    conf_conc_enter(&p->conc);
    if (tph_os_thread_id() == p->caller_tid) tph_os_store32(&p->on_caller_thread, 1);
    if (p->started) tph_os_event_set(p->started);
    if (p->gate) (void)tph_os_event_wait(p->gate, CONF_PATIENCE_MS);
    if (p->sleep_ms) conf_sleep_ms(p->sleep_ms);
    tph_os_store32(&p->done, 1);
    conf_conc_leave(&p->conc);
    (void)tph_os_fetch_add32(&p->runs, 1);
}

/* Shared by several probes: records which probe ran in which order. */
typedef struct order_log {
    volatile uint32_t n;
    uint32_t tags[16];
} order_log;
typedef struct tagged {
    order_log *log;
    uint32_t tag;
} tagged;
static void TPH_OS_CALLBACK tagged_cb(tph_os_instance *inst, void *ctx, tph_os_work *w) {
    tagged *t = (tagged *)ctx;
    (void)inst;
    (void)w;
    uint32_t i = tph_os_fetch_add32(&t->log->n, 1);
    if (i < 16) t->log->tags[i] = t->tag;
}

static void work_submit_once(conf_ctx *c) {
    work_probe p;
    memset(&p, 0, sizeof p);
    p.caller_tid = tph_os_thread_id();
    tph_os_work *w = tph_os_work_create(probe_cb, &p, NULL);
    CONF_CHECK(c, w != NULL);
    if (!w) return;
    tph_os_work_submit(w);
    tph_os_work_wait(w, false);
    CONF_EQ(c, tph_os_load32(&p.runs), 1);
    CONF_EQ(c, tph_os_load32(&p.on_caller_thread), 0);
    conf_observe(c, "runs", p.runs);
    tph_os_work_close(w);
}

static void work_submit_many(conf_ctx *c) {
    work_probe p;
    memset(&p, 0, sizeof p);
    tph_os_work *w = tph_os_work_create(probe_cb, &p, NULL);
    if (!w) { CONF_CHECK(c, w != NULL); return; }
    for (int i = 0; i < 7; i++) tph_os_work_submit(w);
    tph_os_work_wait(w, false);
    CONF_EQ(c, tph_os_load32(&p.runs), 7);
    conf_observe(c, "runs", p.runs);
    tph_os_work_close(w);
}

/* WaitForThreadpoolWorkCallbacks(w, TRUE) drops submissions not yet started. */
static void work_cancel_drops_queued(conf_ctx *c) {
    conf_blocker b;
    work_probe p;
    memset(&p, 0, sizeof p);
    CONF_CHECK(c, conf_blocker_start(&b));
    tph_os_work *w = tph_os_work_create(probe_cb, &p, &b.env);
    if (w) {
        for (int i = 0; i < 3; i++) tph_os_work_submit(w);
        tph_os_work_wait(w, true);
        conf_blocker_release(&b);
        conf_sleep_ms(CONF_SETTLE_MS);
        CONF_EQ(c, tph_os_load32(&p.runs), 0);
        conf_observe(c, "runs", p.runs);
        tph_os_work_close(w);
    }
    conf_blocker_close(&b);
}

/* ... and FALSE waits for every one of them to run. */
static void work_drain_runs_queued(conf_ctx *c) {
    conf_blocker b;
    work_probe p;
    memset(&p, 0, sizeof p);
    CONF_CHECK(c, conf_blocker_start(&b));
    tph_os_work *w = tph_os_work_create(probe_cb, &p, &b.env);
    if (w) {
        for (int i = 0; i < 3; i++) tph_os_work_submit(w);
        CONF_EQ(c, tph_os_load32(&p.runs), 0);
        conf_blocker_release(&b);
        tph_os_work_wait(w, false);
        CONF_EQ(c, tph_os_load32(&p.runs), 3);
        conf_observe(c, "runs", p.runs);
        tph_os_work_close(w);
    }
    conf_blocker_close(&b);
}

/* A cancelling wait still waits for the callback that is already running. */
static void work_cancel_waits_running(conf_ctx *c) {
    work_probe p;
    memset(&p, 0, sizeof p);
    p.started = tph_os_event_create(true, false);
    p.sleep_ms = 60;
    tph_os_work *w = tph_os_work_create(probe_cb, &p, NULL);
    if (w && p.started) {
        tph_os_work_submit(w);
        CONF_EQ(c, tph_os_event_wait(p.started, CONF_PATIENCE_MS), TPH_OS_WAIT_SIGNALED);
        tph_os_work_wait(w, true);
        CONF_EQ(c, tph_os_load32(&p.done), 1);
        conf_observe(c, "done", p.done);
        tph_os_work_close(w);
    }
    tph_os_event_close(p.started);
}

/* Close with a callback running returns at once; the object is freed after. */
static void work_close_defers_free(conf_ctx *c) {
    work_probe p;
    memset(&p, 0, sizeof p);
    p.started = tph_os_event_create(true, false);
    p.gate = tph_os_event_create(true, false);
    tph_os_work *w = tph_os_work_create(probe_cb, &p, NULL);
    if (w && p.started && p.gate) {
        tph_os_work_submit(w);
        CONF_EQ(c, tph_os_event_wait(p.started, CONF_PATIENCE_MS), TPH_OS_WAIT_SIGNALED);
        tph_os_work_close(w); /* must not wait: the gate is still shut */
        CONF_EQ(c, tph_os_load32(&p.done), 0);
        conf_observe(c, "done_at_close", p.done);
        tph_os_event_set(p.gate);
        CONF_EQ(c, conf_await_count(&p.runs, 1), 1);
        conf_observe(c, "runs", p.runs);
    }
    tph_os_event_close(p.started);
    tph_os_event_close(p.gate);
}

/* Queued callbacks leave a one-thread pool high priority first, low last. */
static void work_priority_order(conf_ctx *c) {
    conf_blocker b;
    order_log log;
    memset(&log, 0, sizeof log);
    CONF_CHECK(c, conf_blocker_start(&b));
    /* Submitted low, normal, high; tagged by the rank they must run in. */
    static const int prio[3] = {TPH_OS_PRIORITY_LOW, TPH_OS_PRIORITY_NORMAL,
                                TPH_OS_PRIORITY_HIGH};
    tagged t[3];
    tph_os_work *w[3];
    for (int i = 0; i < 3; i++) {
        t[i].log = &log;
        t[i].tag = 3u - (uint32_t)i;
        tph_os_env env = b.env;
        env.priority = prio[i];
        w[i] = tph_os_work_create(tagged_cb, &t[i], &env);
        if (w[i]) tph_os_work_submit(w[i]);
    }
    conf_blocker_release(&b);
    for (int i = 0; i < 3; i++)
        if (w[i]) tph_os_work_wait(w[i], false);
    CONF_EQ(c, tph_os_load32(&log.n), 3);
    CONF_EQ(c, log.tags[0], 1);
    CONF_EQ(c, log.tags[1], 2);
    CONF_EQ(c, log.tags[2], 3);
    conf_observe(c, "first", log.tags[0]);
    conf_observe(c, "second", log.tags[1]);
    conf_observe(c, "third", log.tags[2]);
    for (int i = 0; i < 3; i++)
        if (w[i]) tph_os_work_close(w[i]);
    conf_blocker_close(&b);
}

/* Same priority: first submitted, first run. */
static void work_fifo_same_priority(conf_ctx *c) {
    conf_blocker b;
    order_log log;
    memset(&log, 0, sizeof log);
    CONF_CHECK(c, conf_blocker_start(&b));
    tagged t[4];
    tph_os_work *w[4];
    for (int i = 0; i < 4; i++) {
        t[i].log = &log;
        t[i].tag = (uint32_t)i + 1;
        w[i] = tph_os_work_create(tagged_cb, &t[i], &b.env);
        if (w[i]) tph_os_work_submit(w[i]);
    }
    conf_blocker_release(&b);
    for (int i = 0; i < 4; i++)
        if (w[i]) tph_os_work_wait(w[i], false);
    CONF_EQ(c, tph_os_load32(&log.n), 4);
    for (uint32_t i = 0; i < 4; i++) CONF_EQ(c, log.tags[i], i + 1);
    conf_observe(c, "order", log.tags[0] * 1000 + log.tags[1] * 100 + log.tags[2] * 10 + log.tags[3]);
    for (int i = 0; i < 4; i++)
        if (w[i]) tph_os_work_close(w[i]);
    conf_blocker_close(&b);
}

/* SetThreadpoolThreadMaximum(1): callbacks never overlap. */
static void pool_max_one_serialises(conf_ctx *c) {
    work_probe p;
    memset(&p, 0, sizeof p);
    p.sleep_ms = 10;
    tph_os_pool *pool = tph_os_pool_create();
    if (!pool) { CONF_CHECK(c, pool != NULL); return; }
    tph_os_pool_set_max(pool, 1);
    tph_os_env env;
    memset(&env, 0, sizeof env);
    env.pool = pool;
    env.priority = TPH_OS_PRIORITY_NORMAL;
    tph_os_work *w = tph_os_work_create(probe_cb, &p, &env);
    if (w) {
        for (int i = 0; i < 4; i++) tph_os_work_submit(w);
        tph_os_work_wait(w, false);
        tph_os_work_close(w);
    }
    CONF_EQ(c, tph_os_load32(&p.runs), 4);
    CONF_EQ(c, tph_os_load64(&p.conc.max), 1);
    conf_observe(c, "runs", p.runs);
    conf_observe(c, "max_concurrent", p.conc.max);
    tph_os_pool_close(pool);
}

/* Two callbacks that each wait for the other: only a pool with two threads
 * lets both see the other's signal. */
typedef struct rendezvous {
    tph_os_event *mine[2];
    volatile uint32_t idx;
    volatile uint32_t met;
} rendezvous;
static void TPH_OS_CALLBACK rendezvous_cb(tph_os_instance *inst, void *ctx, tph_os_work *w) {
    rendezvous *r = (rendezvous *)ctx;
    (void)inst;
    (void)w;
    uint32_t me = tph_os_fetch_add32(&r->idx, 1) & 1u;
    tph_os_event_set(r->mine[me]);
    if (tph_os_event_wait(r->mine[1u - me], 2000) == TPH_OS_WAIT_SIGNALED)
        (void)tph_os_fetch_add32(&r->met, 1);
}
static void pool_rendezvous(conf_ctx *c, uint32_t max, uint32_t want_met) {
    rendezvous r;
    memset(&r, 0, sizeof r);
    r.mine[0] = tph_os_event_create(true, false);
    r.mine[1] = tph_os_event_create(true, false);
    tph_os_pool *pool = tph_os_pool_create();
    if (!pool) { CONF_CHECK(c, pool != NULL); return; }
    tph_os_pool_set_max(pool, max);
    tph_os_env env;
    memset(&env, 0, sizeof env);
    env.pool = pool;
    env.priority = TPH_OS_PRIORITY_NORMAL;
    tph_os_work *w = tph_os_work_create(rendezvous_cb, &r, &env);
    if (w) {
        tph_os_work_submit(w);
        tph_os_work_submit(w);
        tph_os_work_wait(w, false);
        tph_os_work_close(w);
    }
    CONF_EQ(c, tph_os_load32(&r.met), want_met);
    conf_observe(c, "met", r.met);
    tph_os_pool_close(pool);
    tph_os_event_close(r.mine[0]);
    tph_os_event_close(r.mine[1]);
}
static void pool_max_two_overlaps(conf_ctx *c) { pool_rendezvous(c, 2, 2); }
/* With one thread the second callback starts only after the first gave up:
 * it then finds the first one's event set (1 meeting), the first found none. */
static void pool_max_one_no_rendezvous(conf_ctx *c) { pool_rendezvous(c, 1, 1); }

static void pool_set_min_succeeds(conf_ctx *c) {
    tph_os_pool *pool = tph_os_pool_create();
    if (!pool) { CONF_CHECK(c, pool != NULL); return; }
    tph_os_pool_set_max(pool, 4);
    bool ok = tph_os_pool_set_min(pool, 2);
    CONF_CHECK(c, ok);
    conf_observe(c, "ok", ok);
    tph_os_pool_close(pool);
}

/* CloseThreadpool with an object still bound and a callback queued: the pool
 * lives on until the object is freed, so the queued callback still runs.
 * (Submitting AFTER the close is misuse: Wine 8.0 asserts in ntdll.) */
static void pool_close_defers_free(conf_ctx *c) {
    work_probe p;
    memset(&p, 0, sizeof p);
    tph_os_pool *pool = tph_os_pool_create();
    if (!pool) { CONF_CHECK(c, pool != NULL); return; }
    tph_os_env env;
    memset(&env, 0, sizeof env);
    env.pool = pool;
    env.priority = TPH_OS_PRIORITY_NORMAL;
    tph_os_work *w = tph_os_work_create(probe_cb, &p, &env);
    if (w) tph_os_work_submit(w);
    tph_os_pool_close(pool);
    if (w) {
        tph_os_work_wait(w, false);
        tph_os_work_close(w);
    }
    CONF_EQ(c, tph_os_load32(&p.runs), 1);
    conf_observe(c, "runs", p.runs);
}

/* The runs-long hint changes nothing observable but must be accepted. */
static void work_runs_long_runs(conf_ctx *c) {
    work_probe p;
    memset(&p, 0, sizeof p);
    tph_os_env env;
    memset(&env, 0, sizeof env);
    env.priority = TPH_OS_PRIORITY_HIGH;
    env.runs_long = true;
    tph_os_work *w = tph_os_work_create(probe_cb, &p, &env);
    if (!w) { CONF_CHECK(c, w != NULL); return; }
    tph_os_work_submit(w);
    tph_os_work_wait(w, false);
    CONF_EQ(c, tph_os_load32(&p.runs), 1);
    conf_observe(c, "runs", p.runs);
    tph_os_work_close(w);
}

const conf_case conf_cases_work[] = {
    {"work.submit_once", work_submit_once, NULL},
    {"work.submit_many", work_submit_many, NULL},
    {"work.cancel_drops_queued", work_cancel_drops_queued, NULL},
    {"work.drain_runs_queued", work_drain_runs_queued, NULL},
    {"work.cancel_waits_running", work_cancel_waits_running, NULL},
    {"work.close_defers_free", work_close_defers_free, NULL},
    {"work.priority_order", work_priority_order, NULL},
    {"work.fifo_same_priority", work_fifo_same_priority, NULL},
    {"work.runs_long", work_runs_long_runs, NULL},
    {"pool.max_one_serialises", pool_max_one_serialises, NULL},
    {"pool.max_two_overlaps", pool_max_two_overlaps, NULL},
    {"pool.max_one_no_rendezvous", pool_max_one_no_rendezvous, NULL},
    {"pool.set_min_succeeds", pool_set_min_succeeds, NULL},
    {"pool.close_defers_free", pool_close_defers_free, NULL},
};
const size_t conf_cases_work_count = sizeof conf_cases_work / sizeof conf_cases_work[0];
