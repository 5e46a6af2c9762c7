/* The sim's work objects and pools: submits, drain, cancel, priorities,
 * deferred free, thread maximum, idle retirement. */
#include "test_sim_util.h"

static simt_counter g_count;
static simt_log g_log;

static void TPH_OS_CALLBACK count_cb(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i;
    (void)w;
    simt_counter *c = (simt_counter *)ctx;
    tph_os_fetch_add32(&c->n, 1);
    if (c->gate) tph_os_event_wait(c->gate, TPH_OS_INFINITE);
}

/* Several submits queue several callbacks; a draining wait waits for all. */
static void body_submits_drain(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_work *w = tph_os_work_create(count_cb, &g_count, NULL);
    CHECK(w != NULL);
    for (int i = 0; i < 5; i++) tph_os_work_submit(w);
    tph_os_work_wait(w, false);
    CHECK(tph_os_load32(&g_count.n) == 5);
    sim_object_stats s = simt_obj(w);
    CHECK(s.callbacks_run == 5 && s.queued == 0 && s.running == 0 && s.cancelled == 0);
    tph_os_work_close(w);
    CHECK(simt_obj(w).freed);
    CHECK(sim_misuse_count() == 0);
}
static void test_work_submits_drain(void **st) {
    (void)st;
    simt_run(body_submits_drain);
}

static void cancel_thread(void *w) { tph_os_work_wait((tph_os_work *)w, true); }

/* A cancelling wait drops queued submissions and waits for the running one. */
static void body_cancel(void) {
    simt_blocker b;
    simt_block_private(&b, 1);
    memset(&g_count, 0, sizeof g_count);
    tph_os_env env = {b.pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_work *w = tph_os_work_create(count_cb, &g_count, &env);
    for (int i = 0; i < 3; i++) tph_os_work_submit(w);
    CHECK(simt_obj(w).queued == 3);
    rt_thread *t = rt_spawn("canceller", cancel_thread, w, false);
    rt_join(t);
    sim_object_stats s = simt_obj(w);
    CHECK(s.queued == 0 && s.cancelled == 3);
    simt_unblock(&b);
    tph_os_work_wait(w, false);
    CHECK(tph_os_load32(&g_count.n) == 0);
    CHECK(simt_obj(w).callbacks_run == 0);
}
static void test_work_cancel_drops_queued(void **st) {
    (void)st;
    simt_run(body_cancel);
}

/* A cancelling wait does not interrupt a running callback: it waits for it. */
static void body_cancel_waits_running(void) {
    memset(&g_count, 0, sizeof g_count);
    g_count.gate = tph_os_event_create(true, false);
    tph_os_work *w = tph_os_work_create(count_cb, &g_count, NULL);
    tph_os_work_submit(w);
    CHECK(simt_counter_reaches(&g_count, 1));
    rt_thread *t = rt_spawn("canceller", cancel_thread, w, false);
    simt_settle();
    CHECK(simt_obj(w).running == 1);
    tph_os_event_set(g_count.gate);
    rt_join(t);
    sim_object_stats s = simt_obj(w);
    CHECK(s.running == 0 && s.callbacks_run == 1);
}
static void test_work_cancel_waits_running(void **st) {
    (void)st;
    simt_run(body_cancel_waits_running);
}

static void TPH_OS_CALLBACK log_cb(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i;
    (void)w;
    simt_log_add(&g_log, (int)(intptr_t)ctx);
}

/* High before normal before low, FIFO within a priority. */
static void body_priorities(void) {
    simt_blocker b;
    simt_block_private(&b, 1);
    memset(&g_log, 0, sizeof g_log);
    int prio[4] = {TPH_OS_PRIORITY_LOW, TPH_OS_PRIORITY_NORMAL, TPH_OS_PRIORITY_HIGH, TPH_OS_PRIORITY_HIGH};
    tph_os_work *w[4];
    for (int i = 0; i < 4; i++) {
        tph_os_env env = {b.pool, NULL, NULL, prio[i], false};
        w[i] = tph_os_work_create(log_cb, (void *)(intptr_t)i, &env);
        tph_os_work_submit(w[i]);
    }
    simt_unblock(&b);
    for (int i = 0; i < 4; i++) tph_os_work_wait(w[i], false);
    CHECK(tph_os_load32(&g_log.n) == 4);
    CHECK(g_log.tags[0] == 2 && g_log.tags[1] == 3 && g_log.tags[2] == 1 && g_log.tags[3] == 0);
}
static void test_work_priorities(void **st) {
    (void)st;
    simt_run(body_priorities);
}

/* Close returns at once; the object is freed after its callbacks finish,
 * and a closed pool is freed once no object is bound to it. */
static void body_deferred_free(void) {
    memset(&g_count, 0, sizeof g_count);
    g_count.gate = tph_os_event_create(true, false);
    tph_os_pool *p = tph_os_pool_create();
    tph_os_env env = {p, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_work *w = tph_os_work_create(count_cb, &g_count, &env);
    tph_os_work_submit(w);
    tph_os_work_submit(w);
    CHECK(simt_counter_reaches(&g_count, 1));
    tph_os_work_close(w);
    tph_os_pool_close(p);
    sim_object_stats s = simt_obj(w);
    CHECK(s.closed && !s.freed);
    sim_pool_stats ps = simt_pool(p);
    CHECK(ps.closed && !ps.freed && ps.bound_objects == 1);
    tph_os_event_set(g_count.gate);
    CHECK(simt_until(simt_obj_freed, w));
    CHECK(tph_os_load32(&g_count.n) == 2); /* the queued submit still ran */
    ps = simt_pool(p);
    CHECK(ps.freed && ps.bound_objects == 0);
    CHECK(ps.callbacks_run == 2); /* the pool counts both, as the object does */
    CHECK(simt_obj(w).callbacks_run == 2);
    CHECK(sim_misuse_count() == 0);
}
static void test_work_deferred_free(void **st) {
    (void)st;
    simt_run(body_deferred_free);
}

/* Never more callbacks at once than the pool's maximum. */
static volatile uint32_t g_now_running, g_max_running;
static tph_os_event *g_gate;
static void TPH_OS_CALLBACK conc_cb(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i;
    (void)ctx;
    (void)w;
    uint32_t n = tph_os_fetch_add32(&g_now_running, 1) + 1;
    uint32_t m = tph_os_load32(&g_max_running);
    while (n > m && !tph_os_cas32(&g_max_running, &m, n)) {
    }
    tph_os_event_wait(g_gate, TPH_OS_INFINITE);
    tph_os_fetch_sub32(&g_now_running, 1);
}
static bool pool_running_2(void *p) { return simt_pool((tph_os_pool *)p).running == 2; }
static void body_max(void) {
    g_now_running = g_max_running = 0;
    g_gate = tph_os_event_create(true, false);
    tph_os_pool *p = tph_os_pool_create();
    tph_os_pool_set_max(p, 2);
    tph_os_env env = {p, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_work *w = tph_os_work_create(conc_cb, NULL, &env);
    for (int i = 0; i < 6; i++) tph_os_work_submit(w);
    CHECK(simt_until(pool_running_2, p));
    simt_settle();
    sim_pool_stats ps = simt_pool(p);
    CHECK(ps.workers <= 2 && ps.workers_created <= 2 && ps.running == 2 && ps.queued == 4);
    tph_os_event_set(g_gate);
    tph_os_work_wait(w, false);
    CHECK(tph_os_load32(&g_max_running) == 2);
    CHECK(simt_obj(w).callbacks_run == 6);
}
static void test_pool_thread_maximum(void **st) {
    (void)st;
    simt_run(body_max);
}

/* SetThreadpoolThreadMinimum creates its threads at once and keeps them. */
static void body_min(void) {
    tph_os_pool *p = tph_os_pool_create();
    CHECK(tph_os_pool_set_min(p, 2));
    sim_pool_stats ps = simt_pool(p);
    CHECK(ps.workers == 2 && ps.min_threads == 2);
    sim_pool_retire_idle_workers(p);
    CHECK(simt_pool(p).workers == 2);
    tph_os_pool_close(p);
}
static void test_pool_minimum(void **st) {
    (void)st;
    simt_run(body_min);
}

/* Idle workers retire after the idle timeout: the pool is cold again. */
static bool default_pool_cold(void *arg) {
    (void)arg;
    sim_pool_stats s = simt_pool(NULL);
    return s.workers == 0 && s.started_workers == 0;
}
static void body_idle_timeout(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_work *w = tph_os_work_create(count_cb, &g_count, NULL);
    tph_os_work_submit(w);
    tph_os_work_wait(w, false);
    CHECK(simt_pool(NULL).workers_created >= 1);
    CHECK(simt_until(default_pool_cold, NULL));
    sim_pool_stats ps = simt_pool(NULL);
    CHECK(ps.workers_retired == ps.workers_created);
    tph_os_work_submit(w); /* a cold pool creates a worker again */
    tph_os_work_wait(w, false);
    CHECK(tph_os_load32(&g_count.n) == 2);
}
static void test_pool_idle_timeout(void **st) {
    (void)st;
    sim_config c = sim_config_default();
    c.default_idle_timeout = 20 * SIM_MS;
    simt_run_cfg(body_idle_timeout, &c);
}

/* sim_pool_retire_idle_workers makes the pool cold at once.  It retires
 * only idle workers, and the worker goes idle on its own thread after the
 * callback returned (after the wait above returns): waiting for that state,
 * not for a pause, is what a slow worker thread cannot turn into a failure
 * -- a 30 ms pause before the retire is a real-time bound a loaded machine
 * misses, leaving the worker still busy and the pool warm. */
static bool default_pool_all_idle(void *arg) {
    (void)arg;
    sim_pool_stats s = simt_pool(NULL);
    return s.workers >= 1 && s.idle_workers == s.workers;
}
static void body_force_retire(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_work *w = tph_os_work_create(count_cb, &g_count, NULL);
    tph_os_work_submit(w);
    tph_os_work_wait(w, false);
    CHECK(simt_pool(NULL).started_workers >= 1);
    CHECK(simt_until(default_pool_all_idle, NULL));
    sim_pool_retire_idle_workers(NULL);
    sim_pool_stats ps = simt_pool(NULL);
    CHECK(ps.started_workers == 0 && ps.workers == 0 && ps.workers_retired >= 1);
    /* The retired worker, woken, exits: it does not go idle again. */
    simt_settle();
    ps = simt_pool(NULL);
    CHECK(ps.workers == 0 && ps.idle_workers == 0 && ps.started_workers == 0);
    CHECK(ps.workers_retired == ps.workers_created);
}
static void test_pool_force_retire(void **st) {
    (void)st;
    simt_run(body_force_retire);
}

/* Begin/end with objects alive and workers busy in another pool: end stops
 * and joins everything and frees the memory (ASan builds check the leak). */
static void body_end_busy(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_work *w = tph_os_work_create(count_cb, &g_count, NULL);
    for (int i = 0; i < 50; i++) tph_os_work_submit(w);
    void *leak = tph_os_alloc(100);
    CHECK(leak != NULL);
}
static void test_process_end_with_live_objects(void **st) {
    (void)st;
    for (int i = 0; i < 3; i++) simt_run(body_end_busy);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_work_submits_drain),       cmocka_unit_test(test_work_cancel_drops_queued),
        cmocka_unit_test(test_work_cancel_waits_running), cmocka_unit_test(test_work_priorities),
        cmocka_unit_test(test_work_deferred_free),       cmocka_unit_test(test_pool_thread_maximum),
        cmocka_unit_test(test_pool_minimum),             cmocka_unit_test(test_pool_idle_timeout),
        cmocka_unit_test(test_pool_force_retire),        cmocka_unit_test(test_process_end_with_live_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
