/* The self-heal-off build (TPHEAL_SELF_HEAL=0): no registry, no healer, a
 * registration that costs nothing, and the untracked forms still working.
 * In a self-heal build this file only skips: the shape it checks is the
 * other build's.  (That calling the self-heal-only functions is a compile
 * error there is checked by core/tests/CMakeLists.txt.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "object.h"
#include "objects_test.h"

#if !TPHEAL_SELF_HEAL

/* The field is nothing: a struct holding it is the size of its other member.
 * Every object context carries it, so a byte here would be paid by all. */
struct probe {
    char c;
    TPH_REGISTRATION_FIELD
};
typedef char registration_field_is_empty[sizeof(struct probe) == 1 ? 1 : -1];

static void registration_costs_nothing(void **state) {
    struct probe p;
    (void)state;
    assert_int_equal(sizeof(struct probe), 1);
    /* The claim and release spell the same and do nothing. */
    TPH_REGISTER(&p, 42);
    TPH_RELEASE(&p);
    (void)sizeof(registration_field_is_empty);
}

static void nop_wait(tph_wait *w, void *c, tph_wait_result r) {
    (void)w;
    (void)r;
    ot_count((ot_counter *)c);
}

static void untracked_body(void *ctx) {
    ot_blocked_pool b;
    ot_counter calls;
    tph_handle *ev;
    tph_wait *w;
    tph_group *g;
    tph_env env;
    (void)ctx;
    memset(&calls, 0, sizeof calls);
    ot_blocked_pool_begin(&b);
    TPH_CHECK_EQ(tph_event_create(&ev, true, true), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&w, ev, nop_wait, &calls, &b.env), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    ot_trace_take();
    TPH_CHECK(ot_wait_queued(ot_last_a("SetThreadpoolWait"), 1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_wait_try_cancel_pending_no_heal_tracking(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);

    TPH_CHECK_EQ(tph_group_create(&g, NULL), TPH_OK);
    env = b.env;
    tph_env_set_group(&env, g);
    TPH_CHECK_EQ(tph_wait_create(&w, ev, nop_wait, &calls, &env), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    tph_test_sleep(50 * TPH_TEST_MS);
    TPH_CHECK_EQ(tph_group_close_members_cancelling_no_heal_tracking(g, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_group_close(g), TPH_OK);
    ot_blocked_pool_end(&b);
    TPH_CHECK_EQ(ot_get(&calls), 0); /* both queued callbacks were dropped */
    /* Nothing registered, nothing started. */
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
    TPH_CHECK(!tph_heal_healer_running());
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void untracked_cancellations_work_and_register_nothing(void **state) {
    (void)state;
    tph_test_run_controlled(untracked_body, NULL, NULL, 1);
    tph_test_run_controlled(untracked_body, NULL, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registration_costs_nothing),
        cmocka_unit_test(untracked_cancellations_work_and_register_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void self_heal_build(void **state) {
    (void)state;
    skip(); /* the self-heal-off shape is checked in that build */
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(self_heal_build)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
