/* Shared by the sim's tests (test_sim*.c): run a body as the main thread of
 * a simulated process on the native runtime, check outcomes from any rt
 * thread (cmocka's asserts longjmp and must stay on the test's own thread),
 * and wait for model states with generous timeouts -- never assert on time.
 */
#ifndef TPHEAL_TEST_SIM_UTIL_H
#define TPHEAL_TEST_SIM_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "os.h"
#include "rt.h"
#include "rt_native.h"
#include "sim.h"

/* First failed CHECK of the current test ("file:line: expr"). */
static char simt_failure[512];

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond) && simt_failure[0] == '\0')                                                   \
            snprintf(simt_failure, sizeof simt_failure, "%s:%d: CHECK(%s)", __FILE__, __LINE__, #cond); \
    } while (0)

typedef struct simt_body {
    void (*fn)(void);
    const sim_config *cfg;
    bool end_inside; /* sim_process_end on the run's main thread */
} simt_body;

static inline void simt_main(void *arg) {
    simt_body *b = (simt_body *)arg;
    sim_process_begin(b->cfg);
    b->fn();
    if (b->end_inside) sim_process_end();
}

/* Runs fn in a fresh simulated process on the native runtime. */
static inline void simt_run_cfg(void (*fn)(void), const sim_config *cfg) {
    simt_failure[0] = '\0';
    simt_body b = {fn, cfg, true};
    rt_native_options o;
    rt_native_options_default(&o);
    o.seed = 1;
    int rc = rt_native_run(simt_main, &b, &o);
    if (simt_failure[0]) fail_msg("%s", simt_failure);
    assert_int_equal(rc, 0);
    assert_false(sim_process_active());
}

static inline void simt_run(void (*fn)(void)) { simt_run_cfg(fn, NULL); }

/* Polls pred every millisecond for up to 20 s (real threads: generous). */
static inline bool simt_until(bool (*pred)(void *), void *arg) {
    uint64_t end = rt_now() + 20 * SIM_SECOND;
    while (!pred(arg)) {
        if (rt_now() >= end) return false;
        rt_sleep_until(rt_now() + SIM_MS);
    }
    return true;
}

/* A short real pause for "nothing may happen" checks: a broken model shows
 * itself within it almost surely; a correct one passes whatever the timing. */
static inline void simt_settle(void) { rt_sleep_until(rt_now() + 30 * SIM_MS); }

static inline sim_object_stats simt_obj(const void *h) {
    sim_object_stats s;
    memset(&s, 0, sizeof s);
    bool ok = sim_object_stats_get(h, &s);
    CHECK(ok);
    return s;
}

static inline sim_pool_stats simt_pool(tph_os_pool *p) {
    sim_pool_stats s;
    memset(&s, 0, sizeof s);
    bool ok = sim_pool_stats_get(p, &s);
    CHECK(ok);
    return s;
}

/* Predicates for simt_until. */
static inline bool simt_obj_queued_is_1(void *h) { return simt_obj(h).queued == 1; }
static inline bool simt_obj_running(void *h) { return simt_obj(h).running > 0; }
static inline bool simt_obj_freed(void *h) { return simt_obj(h).freed; }
static inline bool simt_obj_idle(void *h) {
    sim_object_stats s = simt_obj(h);
    return s.queued == 0 && s.running == 0;
}

/* A counter callbacks bump (atomics through the seam: correct on threads). */
typedef struct simt_counter {
    volatile uint32_t n;
    tph_os_event *gate; /* when set, callbacks wait for it before returning */
} simt_counter;

static inline bool simt_counter_reaches(simt_counter *c, uint32_t n) {
    uint64_t end = rt_now() + 20 * SIM_SECOND;
    while (tph_os_load32(&c->n) < n) {
        if (rt_now() >= end) return false;
        rt_sleep_until(rt_now() + SIM_MS);
    }
    return true;
}

/* An order log: each callback appends a tag. */
typedef struct simt_log {
    volatile uint32_t n;
    int tags[64];
} simt_log;

static inline void simt_log_add(simt_log *l, int tag) {
    uint32_t i = tph_os_fetch_add32(&l->n, 1);
    if (i < 64) l->tags[i] = tag;
}

/* A pool whose workers are all busy: callbacks queued on it stay queued
 * until simt_unblock.  `max` callbacks wait on the manual-reset `gate`. */
typedef struct simt_blocker {
    tph_os_pool *pool;
    tph_os_work *work;
    tph_os_event *gate;
    simt_counter started;
} simt_blocker;

static inline void TPH_OS_CALLBACK simt_block_cb(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i;
    (void)w;
    simt_blocker *b = (simt_blocker *)ctx;
    tph_os_fetch_add32(&b->started.n, 1);
    tph_os_event_wait(b->gate, TPH_OS_INFINITE);
}

/* Occupies n workers of `pool` (NULL = default pool). */
static inline void simt_block(simt_blocker *b, tph_os_pool *pool, uint32_t n) {
    memset(b, 0, sizeof *b);
    b->pool = pool;
    b->gate = tph_os_event_create(true, false);
    tph_os_env env = {pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    b->work = tph_os_work_create(simt_block_cb, b, &env);
    for (uint32_t i = 0; i < n; i++) tph_os_work_submit(b->work);
    CHECK(simt_counter_reaches(&b->started, n));
}

/* A new private pool with maximum `max`, every worker occupied. */
static inline void simt_block_private(simt_blocker *b, uint32_t max) {
    tph_os_pool *p = tph_os_pool_create();
    tph_os_pool_set_max(p, max);
    simt_block(b, p, max);
}

static inline void simt_unblock(simt_blocker *b) {
    tph_os_event_set(b->gate);
    tph_os_work_wait(b->work, false);
}

#endif
