/* Work objects: one callback per submit, cancel_pending drops queued
 * submissions, argument checks and the create's failure paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

static void count_fn(tph_work *w, void *ctx) {
    (void)w;
    ot_count((ot_counter *)ctx);
}

static void work_null_arguments(void **state) {
    tph_work *w = (tph_work *)0x1;
    (void)state;
    assert_int_equal(tph_work_create(NULL, count_fn, NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_work_create(&w, NULL, NULL, NULL), TPH_EINVAL);
    assert_null(w);
    assert_int_equal(tph_work_submit(NULL), TPH_EINVAL);
    assert_int_equal(tph_work_wait(NULL), TPH_EINVAL);
    assert_int_equal(tph_work_stop_and_drain(NULL), TPH_EINVAL);
    assert_int_equal(tph_work_cancel_pending(NULL), TPH_EINVAL);
    assert_int_equal(tph_work_close(NULL), TPH_EINVAL);
}

#define N_SUBMITS 25

static void n_submits_body(void *ctx) {
    ot_counter c;
    tph_work *w;
    uint32_t i;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_work_create(&w, count_fn, &c, NULL), TPH_OK);
    for (i = 0; i < N_SUBMITS; i++) TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_wait(w), TPH_OK);
    /* wait(FALSE) returned, so every one of them has run -- and only those. */
    TPH_CHECK_EQ(ot_get(&c), N_SUBMITS);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_stop_and_drain(w), TPH_OK);
    TPH_CHECK_EQ(ot_get(&c), N_SUBMITS + 1);
    TPH_CHECK_EQ(tph_work_close(w), TPH_OK);
    TPH_CHECK_EQ(ot_get(&c), N_SUBMITS + 1);
}

static void n_submits_give_n_callbacks(void **state) {
    (void)state;
    tph_test_run_both(n_submits_body, NULL, NULL, 8);
}

static void cancel_body(void *ctx) {
    ot_blocked_pool b;
    ot_counter c;
    tph_work *w;
    uint64_t handle;
    sim_object_stats st;
    (void)ctx;
    memset(&c, 0, sizeof c);
    ot_blocked_pool_begin(&b);
    TPH_CHECK_EQ(tph_work_create(&w, count_fn, &c, &b.env), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    ot_trace_take();
    handle = ot_last_a("SubmitThreadpoolWork");
    TPH_CHECK(ot_wait_queued(handle, 3, TPH_TEST_PATIENCE));
    /* The pool's only thread is parked: all three are queued, none running.
     * A cancel that waited for them (FALSE) would deadlock right here. */
    TPH_CHECK_EQ(tph_work_cancel_pending(w), TPH_OK);
    TPH_CHECK(sim_object_stats_get((const void *)(uintptr_t)handle, &st));
    TPH_CHECK_EQ(st.queued, 0);
    TPH_CHECK_EQ(st.cancelled, 3);
    ot_blocked_pool_end(&b);
    TPH_CHECK_EQ(tph_work_close(w), TPH_OK);
    TPH_CHECK_EQ(ot_get(&c), 0);
}

static void cancel_pending_drops_queued_submissions(void **state) {
    (void)state;
    tph_test_run_controlled(cancel_body, NULL, NULL, 1);
    tph_test_run_controlled(cancel_body, NULL, NULL, 2);
}

static tph_err work_attempt(void *ctx) {
    tph_work *w = (tph_work *)0x1;
    ot_counter c;
    tph_err rc;
    memset(&c, 0, sizeof c);
    rc = tph_work_create(&w, count_fn, &c, (const tph_env *)ctx);
    if (rc != TPH_OK) {
        TPH_CHECK(w == NULL);
        return rc;
    }
    /* A created object works, whatever the registration's luck was. */
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_close(w), TPH_OK);
    TPH_CHECK_EQ(ot_get(&c), 1);
    return rc;
}

static void work_fault_body(void *ctx) {
    tph_pool *p;
    tph_env env;
    (void)ctx;
    /* Default pool and a private one (whose first object also registers the
     * pool, which allocates and creates a repair work on it). */
    TPH_CHECK(ot_fault_loop(SIM_FAULT_ALLOC, work_attempt, NULL) >= 1);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_WORK_CREATE, work_attempt, NULL) >= 1);
    TPH_CHECK_EQ(tph_pool_create(&p), TPH_OK);
    tph_env_init(&env);
    tph_env_set_pool(&env, p);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_ALLOC, work_attempt, &env) >= 1);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_WORK_CREATE, work_attempt, &env) >= 1);
    TPH_CHECK_EQ(tph_pool_close(p), TPH_OK);
}

static void work_create_failures_unwind(void **state) {
    (void)state;
    tph_test_run_controlled(work_fault_body, NULL, NULL, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(work_null_arguments),
        cmocka_unit_test(n_submits_give_n_callbacks),
        cmocka_unit_test(cancel_pending_drops_queued_submissions),
        cmocka_unit_test(work_create_failures_unwind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
