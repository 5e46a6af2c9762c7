/* Private pools: argument checks, thread limits, and the create's failure
 * paths under fault injection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

static void pool_null_arguments(void **state) {
    (void)state;
    assert_int_equal(tph_pool_create(NULL), TPH_EINVAL);
    assert_int_equal(tph_pool_set_thread_limits(NULL, 1, 1), TPH_EINVAL);
    assert_int_equal(tph_pool_close(NULL), TPH_EINVAL);
}

static void limits_body(void *ctx) {
    tph_pool *p;
    sim_pool_stats st;
    (void)ctx;
    TPH_CHECK_EQ(tph_pool_create(&p), TPH_OK);
    TPH_CHECK_EQ(tph_pool_set_thread_limits(p, 0, 0), TPH_EINVAL);   /* max 0 */
    TPH_CHECK_EQ(tph_pool_set_thread_limits(p, 3, 2), TPH_EINVAL);   /* min > max */
    TPH_CHECK(sim_pool_stats_get((tph_os_pool *)tph_pool_key(p), &st));
    TPH_CHECK_EQ(st.max_threads, 512); /* rejected calls changed nothing */
    TPH_CHECK_EQ(tph_pool_set_thread_limits(p, 2, 4), TPH_OK);
    TPH_CHECK(sim_pool_stats_get((tph_os_pool *)tph_pool_key(p), &st));
    TPH_CHECK_EQ(st.min_threads, 2);
    TPH_CHECK_EQ(st.max_threads, 4);
    TPH_CHECK_EQ(tph_pool_set_thread_limits(p, 0, 1), TPH_OK);
    TPH_CHECK(sim_pool_stats_get((tph_os_pool *)tph_pool_key(p), &st));
    TPH_CHECK_EQ(st.min_threads, 0);
    TPH_CHECK_EQ(st.max_threads, 1);
    {
        tph_os_pool *raw = (tph_os_pool *)tph_pool_key(p); /* p is dead after close */
        TPH_CHECK_EQ(tph_pool_close(p), TPH_OK);
        TPH_CHECK(sim_pool_stats_get(raw, &st));
        TPH_CHECK(st.closed);
    }
}

static void thread_limits_are_checked_and_applied(void **state) {
    (void)state;
    tph_test_run_controlled(limits_body, NULL, NULL, 1);
}

static tph_err pool_attempt(void *ctx) {
    tph_pool *p = (tph_pool *)0x1;
    tph_err rc = tph_pool_create(&p);
    (void)ctx;
    if (rc != TPH_OK) {
        TPH_CHECK(p == NULL);
        return rc;
    }
    TPH_CHECK_EQ(tph_pool_close(p), TPH_OK);
    return rc;
}

static void fault_body(void *ctx) {
    uint32_t before = sim_pool_count();
    (void)ctx;
    /* The struct allocation, then the native pool: each failure unwinds. */
    TPH_CHECK_EQ(ot_fault_loop(SIM_FAULT_ALLOC, pool_attempt, NULL), 1);
    TPH_CHECK_EQ(sim_pool_count(), before + 1); /* only the successful one */
    TPH_CHECK_EQ(ot_fault_loop(SIM_FAULT_POOL_CREATE, pool_attempt, NULL), 1);
}

static void pool_create_failures_unwind(void **state) {
    (void)state;
    tph_test_run_controlled(fault_body, NULL, NULL, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pool_null_arguments),
        cmocka_unit_test(thread_limits_are_checked_and_applied),
        cmocka_unit_test(pool_create_failures_unwind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
