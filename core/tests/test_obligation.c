/* Broken obligations in the default build (no fail-fast): each is a trace
 * event and nothing more -- the process goes on -- and an untracked
 * cancellation is reported only after the teardown it came with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "object.h"
#include "objects_test.h"
#include "obligation.h"

static void kind_codes_are_distinct(void **state) {
    (void)state;
    assert_int_equal(tph_object_kind_code("work"), 1);
    assert_int_equal(tph_object_kind_code("wait"), 2);
    assert_int_equal(tph_object_kind_code("timer"), 3);
    assert_int_equal(tph_object_kind_code("periodic"), 4);
    assert_int_equal(tph_object_kind_code("io"), 5);
    assert_int_equal(tph_object_kind_code("other"), 0);
}

static void report_body(void *ctx) {
    long drop;
    (void)ctx;
    ot_trace_start();
    tph_obligation_drop_owed("timer", 77);
    tph_obligation_untracked(5);
    tph_obligation_unrepairable(5, 2);
    ot_trace_take();
    drop = ot_find("drop-obligation-owed", 77, 0);
    TPH_CHECK(drop >= 0);
    TPH_CHECK_EQ(ot_recs[drop].b, 3);
    TPH_CHECK_EQ(ot_count_events("fail-fast", TPH_TEST_ANY), 0);
    TPH_CHECK(sim_fail_fast_reason() == NULL);
}

static void reports_do_not_end_the_process_without_fail_fast(void **state) {
    (void)state;
    assert_int_equal(TPHEAL_FAIL_FAST, 0);
    tph_test_run_controlled(report_body, NULL, NULL, 1);
}

#if TPHEAL_SELF_HEAL
static void nop_wait(tph_wait *w, void *c, tph_wait_result r) {
    (void)w;
    (void)c;
    (void)r;
}

/* Every repair-work create on `pool` fails from now on: the pool can never be
 * registered, so a cancellation on it is left untracked. */
static void fail_registration_of(tph_pool *pool) {
    tph_test_fail_call_on_pool(SIM_FAULT_WORK_CREATE, 1, true, tph_pool_key(pool));
}

static void group_untracked_body(void *ctx) {
    tph_pool *p;
    tph_group *g;
    tph_env env;
    tph_handle *ev;
    tph_wait *w;
    uintptr_t key;
    uint64_t blocks;
    long release, untracked;
    (void)ctx;
    TPH_CHECK_EQ(tph_pool_create(&p), TPH_OK);
    key = tph_pool_key(p);
    TPH_CHECK_EQ(tph_group_create(&g, NULL), TPH_OK);
    tph_env_init(&env);
    tph_env_set_pool(&env, p);
    tph_env_set_group(&env, g);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    fail_registration_of(p);
    blocks = sim_core_blocks_live();
    /* Registration is best effort: the wait is created without an entry. */
    TPH_CHECK_EQ(tph_wait_create(&w, ev, nop_wait, NULL, &env), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_group_close_members_cancelling(g, NULL), TPH_OK);
    ot_trace_take();
    sim_fault_disarm_all();
    release = ot_find("CloseThreadpoolCleanupGroupMembers", TPH_TEST_ANY, 0);
    untracked = ot_find("cancel-untracked", key, 0);
    TPH_CHECK(release >= 0);
    TPH_CHECK(untracked > release);
    /* The claim was tried before the release and never after it: a
     * registration after the release could name a freed pool. */
    TPH_CHECK_EQ(ot_find("register-failed", key, (size_t)release), -1);
    TPH_CHECK(ot_find("register-failed", key, 0) >= 0);
    /* The member is freed all the same. */
    TPH_CHECK_EQ(sim_core_blocks_live(), blocks);
    TPH_CHECK_EQ(tph_group_close(g), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(p), TPH_OK);
}

static void group_release_untracked_is_reported_and_never_reregisters(void **state) {
    (void)state;
    tph_test_run_controlled(group_untracked_body, NULL, NULL, 1);
}

static void wait_untracked_body(void *ctx) {
    tph_pool *p;
    tph_env env;
    tph_handle *ev;
    tph_wait *w;
    uintptr_t key;
    long cancel, retry;
    (void)ctx;
    TPH_CHECK_EQ(tph_pool_create(&p), TPH_OK);
    key = tph_pool_key(p);
    tph_env_init(&env);
    tph_env_set_pool(&env, p);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    fail_registration_of(p);
    TPH_CHECK_EQ(tph_wait_create(&w, ev, nop_wait, NULL, &env), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_wait_try_cancel_pending(w), TPH_OK);
    ot_trace_take();
    /* The object's own path may retry its registration (the pool is alive:
     * the wait is bound to it), after the cancelling call. */
    cancel = ot_find("WaitForThreadpoolWaitCallbacks", TPH_TEST_ANY, 0);
    retry = ot_find("register-failed", key, 0);
    TPH_CHECK(cancel >= 0);
    TPH_CHECK_EQ(ot_recs[cancel].b, 1);
    TPH_CHECK(retry > cancel);
    TPH_CHECK(ot_find("cancel-untracked", key, 0) > retry);
    sim_fault_disarm_all();
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(p), TPH_OK);
}

static void wait_untracked_retries_registration_after_the_cancel(void **state) {
    (void)state;
    tph_test_run_controlled(wait_untracked_body, NULL, NULL, 1);
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kind_codes_are_distinct),
        cmocka_unit_test(reports_do_not_end_the_process_without_fail_fast),
#if TPHEAL_SELF_HEAL
        cmocka_unit_test(group_release_untracked_is_reported_and_never_reregisters),
        cmocka_unit_test(wait_untracked_retries_registration_after_the_cancel),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
