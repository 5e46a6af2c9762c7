/* Periodic timers: the period's limits, ticks over virtual time, stop and
 * stop_and_drain, and the create's failure paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

static void count_fn(tph_periodic *p, void *ctx) {
    (void)p;
    ot_count((ot_counter *)ctx);
}

static void periodic_null_arguments(void **state) {
    tph_periodic *p = (tph_periodic *)0x1;
    (void)state;
    assert_int_equal(tph_periodic_create(NULL, 10, count_fn, NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_periodic_create(&p, 10, NULL, NULL, NULL), TPH_EINVAL);
    assert_null(p);
    assert_int_equal(tph_periodic_start(NULL), TPH_EINVAL);
    assert_int_equal(tph_periodic_start_after(NULL, 1), TPH_EINVAL);
    assert_int_equal(tph_periodic_start_with_window(NULL, 1, 1), TPH_EINVAL);
    assert_int_equal(tph_periodic_stop(NULL), TPH_EINVAL);
    assert_false(tph_periodic_is_running(NULL));
    assert_int_equal(tph_periodic_wait(NULL), TPH_EINVAL);
    assert_int_equal(tph_periodic_stop_and_drain(NULL), TPH_EINVAL);
    assert_int_equal(tph_periodic_close(NULL), TPH_EINVAL);
}

static void limits_body(void *ctx) {
    tph_periodic *p = (tph_periodic *)0x1;
    (void)ctx;
    /* 0 would be a one-shot natively; 2^32 does not fit the DWORD period. */
    TPH_CHECK_EQ(tph_periodic_create(&p, 0, count_fn, NULL, NULL), TPH_EINVAL);
    TPH_CHECK(p == NULL);
    TPH_CHECK_EQ(tph_periodic_create(&p, 1ull << 32, count_fn, NULL, NULL), TPH_EINVAL);
    TPH_CHECK_EQ(tph_periodic_create(&p, UINT64_MAX, count_fn, NULL, NULL), TPH_EINVAL);
    TPH_CHECK_EQ(tph_periodic_create(&p, 1, count_fn, NULL, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_create(&p, UINT32_MAX, count_fn, NULL, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_start_after(p, UINT64_MAX), TPH_EINVAL);
    TPH_CHECK(!tph_periodic_is_running(p));
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
}

static void period_limits(void **state) {
    (void)state;
    tph_test_run_controlled(limits_body, NULL, NULL, 1);
}

static void ticks_body(void *ctx) {
    ot_counter c;
    tph_periodic *p;
    uint32_t n;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_periodic_create(&p, 100, count_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_start(p), TPH_OK);
    TPH_CHECK(tph_periodic_is_running(p));
    tph_test_sleep(50 * TPH_TEST_MS);
    TPH_CHECK_EQ(ot_get(&c), 0); /* the first tick comes after one period */
    tph_test_sleep(1000 * TPH_TEST_MS);
    TPH_CHECK_EQ(tph_periodic_stop_and_drain(p), TPH_OK);
    TPH_CHECK(!tph_periodic_is_running(p));
    n = ot_get(&c);
    /* Due at 100, 200, ... 1000 ms; the sim may round due times to the
     * 15.6 ms interrupt tick, which can cost the last one. */
    TPH_CHECK(n >= 9 && n <= 10);
    tph_test_sleep(500 * TPH_TEST_MS);
    TPH_CHECK_EQ(ot_get(&c), n); /* stopped and drained: nothing after */
    /* start_after: the first tick at the given due time. */
    TPH_CHECK_EQ(tph_periodic_start_after(p, 0), TPH_OK);
    TPH_CHECK(ot_wait_count(&c, n + 1, 50 * TPH_TEST_MS));
    TPH_CHECK_EQ(tph_periodic_stop(p), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_wait(p), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_start_with_window(p, 10, 5), TPH_OK);
    TPH_CHECK(ot_wait_count(&c, n + 2, 200 * TPH_TEST_MS));
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
}

static void ticks_counted_over_virtual_time(void **state) {
    (void)state;
    tph_test_run_controlled(ticks_body, NULL, NULL, 1);
    tph_test_run_controlled(ticks_body, NULL, NULL, 2);
    tph_test_run_controlled(ticks_body, NULL, NULL, 3);
}

static void slow_fn(tph_periodic *p, void *ctx) {
    ot_counter *c = (ot_counter *)ctx;
    (void)p;
    ot_enter(c);
    tph_test_sleep(250 * TPH_TEST_MS);
    ot_count(c);
    ot_leave(c);
}

static void overlap_body(void *ctx) {
    ot_counter c;
    tph_periodic *p;
    (void)ctx;
    memset(&c, 0, sizeof c);
    TPH_CHECK_EQ(tph_periodic_create(&p, 50, slow_fn, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_start(p), TPH_OK);
    tph_test_sleep(600 * TPH_TEST_MS);
    TPH_CHECK_EQ(tph_periodic_stop_and_drain(p), TPH_OK);
    /* stop_and_drain returned: every tick, however overlapped, finished. */
    TPH_CHECK_EQ(c.inside, 0);
    TPH_CHECK(c.max_inside > 1); /* ticks overlap by contract */
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
}

static void ticks_overlap_and_stop_and_drain_waits_for_all(void **state) {
    (void)state;
    tph_test_run_controlled(overlap_body, NULL, NULL, 1);
    tph_test_run_controlled(overlap_body, NULL, NULL, 2);
}

static tph_err periodic_attempt(void *ctx) {
    tph_periodic *p = (tph_periodic *)0x1;
    tph_err rc = tph_periodic_create(&p, 10, count_fn, NULL, (const tph_env *)ctx);
    if (rc != TPH_OK) {
        TPH_CHECK(p == NULL);
        return rc;
    }
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
    return rc;
}

static void periodic_fault_body(void *ctx) {
    (void)ctx;
    TPH_CHECK(ot_fault_loop(SIM_FAULT_ALLOC, periodic_attempt, NULL) >= 1);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_TIMER_CREATE, periodic_attempt, NULL) >= 1);
}

static void periodic_create_failures_unwind(void **state) {
    (void)state;
    tph_test_run_controlled(periodic_fault_body, NULL, NULL, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(periodic_null_arguments),
        cmocka_unit_test(period_limits),
        cmocka_unit_test(ticks_counted_over_virtual_time),
        cmocka_unit_test(ticks_overlap_and_stop_and_drain_waits_for_all),
        cmocka_unit_test(periodic_create_failures_unwind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
