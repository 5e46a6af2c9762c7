/* Support shared by the object tests (test_env, test_work, test_wait, ...):
 * gates that hold a callback inside a pool thread, counters, trace lookups and
 * the SQLite-style fault loop.  On top of tph_test.h; include after it.
 *
 * Everything blocks through rt_ calls, so it works the same under the
 * controlled scheduler (virtual time) and on native threads. */
#ifndef TPHEAL_OBJECTS_TEST_H
#define TPHEAL_OBJECTS_TEST_H

#include "os.h"
#include "tph_test.h"

/* ---- counters (seam atomics: callbacks run on pool threads) ---------------- */
typedef struct ot_counter {
    volatile uint32_t n;
    volatile uint32_t inside;     /* callbacks running now */
    volatile uint32_t max_inside; /* most seen running at once */
} ot_counter;

static inline void ot_count(ot_counter *c) { tph_os_fetch_add32(&c->n, 1); }
static inline uint32_t ot_get(ot_counter *c) { return tph_os_load32(&c->n); }
static inline void ot_enter(ot_counter *c) {
    uint32_t now = tph_os_fetch_add32(&c->inside, 1) + 1;
    uint32_t seen = tph_os_load32(&c->max_inside);
    while (now > seen && !tph_os_cas32(&c->max_inside, &seen, now)) {
    }
}
static inline void ot_leave(ot_counter *c) { tph_os_fetch_sub32(&c->inside, 1); }

/* Waits (virtual time under the scheduler) until the counter reaches n. */
static inline bool ot_wait_count(ot_counter *c, uint32_t n, uint64_t timeout) {
    uint64_t deadline = rt_now() + timeout;
    while (ot_get(c) < n) {
        if (rt_now() >= deadline) return false;
        tph_test_sleep(TPH_TEST_MS);
    }
    return true;
}

/* ---- gates: a callback parks in ot_gate_pass until the test opens it ------- */
typedef struct ot_gate {
    rt_lock lock;
    rt_waitq q;
    bool open;
    uint32_t entered; /* threads that reached the gate */
    uint32_t passed;  /* threads that went through it */
} ot_gate;

static inline void ot_gate_reset(ot_gate *g) { memset(g, 0, sizeof *g); }

static inline void ot_gate_pass(ot_gate *g) {
    rt_lock_acquire(&g->lock);
    g->entered++;
    rt_wake_all(&g->q);
    while (!g->open) rt_wait(&g->q, &g->lock, RT_FOREVER, "ot_gate");
    g->passed++;
    rt_wake_all(&g->q);
    rt_lock_release(&g->lock);
}

static inline void ot_gate_open(ot_gate *g) {
    rt_lock_acquire(&g->lock);
    g->open = true;
    rt_wake_all(&g->q);
    rt_lock_release(&g->lock);
}

static inline bool ot_gate_wait_entered(ot_gate *g, uint32_t n, uint64_t timeout) {
    uint64_t deadline = rt_now() + timeout;
    bool ok;
    rt_lock_acquire(&g->lock);
    while (g->entered < n && rt_now() < deadline) rt_wait(&g->q, &g->lock, deadline, "ot_gate entered");
    ok = g->entered >= n;
    rt_lock_release(&g->lock);
    return ok;
}

static inline uint32_t ot_gate_passed(ot_gate *g) {
    uint32_t n;
    rt_lock_acquire(&g->lock);
    n = g->passed;
    rt_lock_release(&g->lock);
    return n;
}

/* A one-thread private pool whose only thread is parked in a gated work
 * callback: whatever is dispatched to it next stays queued until the gate
 * opens.  The work object is returned for the teardown. */
typedef struct ot_blocked_pool {
    tph_pool *pool;
    tph_env env;
    tph_work *blocker;
    ot_gate gate;
} ot_blocked_pool;

static inline void ot__blocker_fn(tph_work *w, void *ctx) {
    (void)w;
    ot_gate_pass((ot_gate *)ctx);
}

static inline void ot_blocked_pool_begin(ot_blocked_pool *b) {
    ot_gate_reset(&b->gate);
    TPH_CHECK_EQ(tph_pool_create(&b->pool), TPH_OK);
    TPH_CHECK_EQ(tph_pool_set_thread_limits(b->pool, 1, 1), TPH_OK);
    tph_env_init(&b->env);
    tph_env_set_pool(&b->env, b->pool);
    TPH_CHECK_EQ(tph_work_create(&b->blocker, ot__blocker_fn, &b->gate, &b->env), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(b->blocker), TPH_OK);
    TPH_CHECK(ot_gate_wait_entered(&b->gate, 1, TPH_TEST_PATIENCE));
}

static inline void ot_blocked_pool_end(ot_blocked_pool *b) {
    ot_gate_open(&b->gate);
    TPH_CHECK_EQ(tph_work_close(b->blocker), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(b->pool), TPH_OK);
}

/* ---- trace lookups --------------------------------------------------------- */
#define OT_TRACE_MAX 4096
static tph_trace_record ot_recs[OT_TRACE_MAX];
static size_t ot_nrecs;

/* Arms every target and empties the ring: call before the steps to observe. */
static inline void ot_trace_start(void) {
    TPH_CHECK_EQ(tph_trace_arm("*"), TPH_OK);
    tph_trace_clear();
}

static inline void ot_trace_take(void) { ot_nrecs = tph_trace_snapshot(ot_recs, OT_TRACE_MAX, NULL); }

/* Index of the first record at or after `from` with this event (and a, unless
 * TPH_TEST_ANY); -1 when none. */
static inline long ot_find(const char *event, uint64_t a, size_t from) {
    size_t i;
    for (i = from; i < ot_nrecs; i++)
        if (strcmp(ot_recs[i].event, event) == 0 && (a == TPH_TEST_ANY || ot_recs[i].a == a))
            return (long)i;
    return -1;
}

static inline size_t ot_count_events(const char *event, uint64_t a) {
    size_t i, n = 0;
    for (i = 0; i < ot_nrecs; i++)
        if (strcmp(ot_recs[i].event, event) == 0 && (a == TPH_TEST_ANY || ot_recs[i].a == a)) n++;
    return n;
}

/* `a` of the last record with this event: how a test learns a native handle
 * (objects are opaque; every api record carries the handle it names). */
static inline uint64_t ot_last_a(const char *event) {
    size_t i;
    for (i = ot_nrecs; i > 0; i--)
        if (strcmp(ot_recs[i - 1].event, event) == 0) return ot_recs[i - 1].a;
    return 0;
}

/* Polls the sim until the object has `n` callbacks queued. */
static inline bool ot_wait_queued(uint64_t handle, uint32_t n, uint64_t timeout) {
    uint64_t deadline = rt_now() + timeout;
    sim_object_stats st;
    for (;;) {
        if (sim_object_stats_get((const void *)(uintptr_t)handle, &st) && st.queued >= n) return true;
        if (rt_now() >= deadline) return false;
        tph_test_sleep(TPH_TEST_MS);
    }
}

/* ---- fault loop -------------------------------------------------------------- */
/* Native objects bound to any pool of this process that are not yet freed:
 * what a failed create must leave unchanged. */
static inline uint64_t ot_bound_objects(void) {
    uint32_t i, n = sim_pool_count();
    uint64_t total = 0;
    for (i = 0; i < n; i++) {
        sim_pool_stats st;
        if (sim_pool_stats_get(sim_pool_at(i), &st)) total += st.bound_objects;
    }
    return total;
}

/* One attempt of a create under an armed fault: returns the error; on success
 * the created object is torn down by the attempt itself. */
typedef tph_err (*ot_attempt_fn)(void *ctx);

/* Fails the 1st, 2nd, ... matching call of `kind` until an attempt runs with
 * the fault never firing.  Every attempt the fault hit must return
 * TPH_ENOMEM and leave no core memory, no native object and no registry
 * entry behind --
 * unless the failed call was a best-effort one (the registry's repair work),
 * in which case the create succeeds.  Returns how many attempts failed. */
static inline uint32_t ot_fault_loop(sim_fault_kind kind, ot_attempt_fn attempt, void *ctx) {
    uint64_t nth;
    uint32_t failed = 0;
    for (nth = 1; nth < 64; nth++) {
        sim_fault f;
        uint64_t bound_before = ot_bound_objects();
        uint64_t blocks_before = sim_core_blocks_live();
        size_t entries_before = tph_heal_entry_count();
        tph_err rc;
        memset(&f, 0, sizeof f);
        f.kind = kind;
        f.nth = nth;
        sim_fault_arm(&f);
        rc = attempt(ctx);
        /* Failed or torn down, the attempt leaves every core block freed. */
        TPH_CHECK_EQ(sim_core_blocks_live(), blocks_before);
        if (sim_fault_fired(kind) == 0) {
            sim_fault_disarm_all();
            TPH_CHECK_EQ(rc, TPH_OK);
            return failed;
        }
        sim_fault_disarm_all();
        if (rc != TPH_OK) {
            TPH_CHECK_EQ(rc, TPH_ENOMEM);
            TPH_CHECK_EQ(ot_bound_objects(), bound_before);
            TPH_CHECK_EQ(tph_heal_entry_count(), entries_before);
            failed++;
        }
    }
    TPH_CHECK(!"fault loop did not converge");
    return failed;
}

#endif
