/* Environments, pool keys and error names: argument checks and the values
 * objects are created with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"
#include "object.h"

static void env_init_gives_the_default_pool(void **state) {
    tph_env env;
    (void)state;
    memset(&env, 0xAB, sizeof env);
    tph_env_init(&env);
    assert_null(env.pool);
    assert_null(env.group);
    assert_int_equal(env.priority, TPH_PRIORITY_NORMAL);
    assert_false(env.runs_long);
    tph_env_init(NULL); /* no crash */
}

static void env_setters_reject_null_env(void **state) {
    (void)state;
    assert_int_equal(tph_env_set_pool(NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_env_set_priority(NULL, TPH_PRIORITY_LOW), TPH_EINVAL);
    assert_int_equal(tph_env_set_runs_long(NULL, true), TPH_EINVAL);
    assert_int_equal(tph_env_set_group(NULL, NULL), TPH_EINVAL);
}

static void env_priority_out_of_range_is_rejected(void **state) {
    tph_env env;
    (void)state;
    tph_env_init(&env);
    assert_int_equal(tph_env_set_priority(&env, (tph_priority)3), TPH_EINVAL);
    assert_int_equal(tph_env_set_priority(&env, (tph_priority)-1), TPH_EINVAL);
    assert_int_equal(env.priority, TPH_PRIORITY_NORMAL);
    assert_int_equal(tph_env_set_priority(&env, TPH_PRIORITY_HIGH), TPH_OK);
    assert_int_equal(env.priority, TPH_PRIORITY_HIGH);
    assert_int_equal(tph_env_set_runs_long(&env, true), TPH_OK);
    assert_true(env.runs_long);
}

static void key_of_null_env_or_pool_is_zero(void **state) {
    tph_env env;
    (void)state;
    assert_true(tph_key_of_env(NULL) == 0);
    tph_env_init(&env);
    assert_true(tph_key_of_env(&env) == 0);
    assert_true(tph_pool_key(NULL) == 0);
}

static void key_body(void *ctx) {
    tph_pool *p;
    tph_env env;
    (void)ctx;
    TPH_CHECK_EQ(tph_pool_create(&p), TPH_OK);
    tph_env_init(&env);
    TPH_CHECK_EQ(tph_env_set_pool(&env, p), TPH_OK);
    /* The key is the raw native pool handle, the value the sim knows it by. */
    TPH_CHECK(tph_pool_key(p) != 0);
    TPH_CHECK_EQ(sim_object_kind_of((const void *)tph_pool_key(p)), SIM_OBJ_POOL);
    TPH_CHECK_EQ(tph_key_of_env(&env), tph_pool_key(p));
    TPH_CHECK_EQ(tph_env_set_pool(&env, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_key_of_env(&env), 0);
    TPH_CHECK_EQ(tph_pool_close(p), TPH_OK);
}

static void key_of_a_private_pool_is_its_handle(void **state) {
    (void)state;
    tph_test_run_controlled(key_body, NULL, NULL, 1);
}

static void error_names(void **state) {
    (void)state;
    assert_string_equal(tph_err_name(TPH_OK), "TPH_OK");
    assert_string_equal(tph_err_name(TPH_EINVAL), "TPH_EINVAL");
    assert_string_equal(tph_err_name(TPH_ENOMEM), "TPH_ENOMEM");
    assert_string_equal(tph_err_name(TPH_EBUSY), "TPH_EBUSY");
    assert_string_equal(tph_err_name((tph_err)99), "TPH_E?");
}

/* The environment's priority reaches the native object: on a pool of one
 * busy thread, work queued at low priority runs after work queued later at
 * high priority, and normal sits between them. */
static volatile uint32_t order_next;
static volatile uint32_t ran_at[3];

static void note_order(tph_work *w, void *ctx) {
    uint32_t at = tph_os_fetch_add32(&order_next, 1);
    (void)w;
    tph_os_store32(&ran_at[(uintptr_t)ctx], at);
}

static void priority_body(void *ctx) {
    static const tph_priority prio[3] = {TPH_PRIORITY_LOW, TPH_PRIORITY_NORMAL, TPH_PRIORITY_HIGH};
    ot_blocked_pool b;
    tph_env env[3];
    tph_work *w[3];
    uintptr_t i;
    (void)ctx;
    order_next = 0;
    ot_blocked_pool_begin(&b);
    for (i = 0; i < 3; i++) {
        env[i] = b.env;
        TPH_CHECK_EQ(tph_env_set_priority(&env[i], prio[i]), TPH_OK);
        TPH_CHECK_EQ(tph_work_create(&w[i], note_order, (void *)i, &env[i]), TPH_OK);
        TPH_CHECK_EQ(tph_work_submit(w[i]), TPH_OK); /* low first, high last */
    }
    ot_gate_open(&b.gate);
    for (i = 0; i < 3; i++) TPH_CHECK_EQ(tph_work_wait(w[i]), TPH_OK);
    TPH_CHECK_EQ(tph_os_load32(&ran_at[2]), 0); /* high: first after the blocker */
    TPH_CHECK_EQ(tph_os_load32(&ran_at[1]), 1);
    TPH_CHECK_EQ(tph_os_load32(&ran_at[0]), 2);
    for (i = 0; i < 3; i++) TPH_CHECK_EQ(tph_work_close(w[i]), TPH_OK);
    ot_blocked_pool_end(&b);
}

static void env_priority_orders_the_queue(void **state) {
    (void)state;
    tph_test_run_both(priority_body, NULL, NULL, 3);
}

/* The native object gets the environment's runs-long hint, and an object
 * made with no environment gets none of it -- whatever the stack held
 * before (the core fills a stack tph_os_env for the native create; a
 * field it forgot would carry the poison below into the pool). */
static uintptr_t last_work_handle;

static void note_create(const tph_trace_record *rec, void *ctx) {
    (void)ctx;
    if (strcmp(rec->event, "SubmitThreadpoolWork") == 0) last_work_handle = (uintptr_t)rec->a;
}

static bool runs_long_of(tph_work *w) {
    sim_object_stats st;
    memset(&st, 0, sizeof st);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK(sim_object_stats_get((const void *)last_work_handle, &st));
    return st.runs_long;
}

static void runs_long_body(void *ctx) {
    tph_env env;
    tph_work *w[3];
    int i;
    (void)ctx;
    tph_test_chain_hook(note_create, NULL);
    tph_env_init(&env);
    TPH_CHECK_EQ(tph_env_set_runs_long(&env, true), TPH_OK);
    TPH_CHECK_EQ(tph_work_create(&w[0], note_order, (void *)0, &env), TPH_OK);
    TPH_CHECK(runs_long_of(w[0]));
    TPH_CHECK_EQ(tph_env_set_runs_long(&env, false), TPH_OK);
    TPH_CHECK_EQ(tph_work_create(&w[1], note_order, (void *)1, &env), TPH_OK);
    TPH_CHECK(!runs_long_of(w[1]));
    tph_test_fill_stack(0xFF);
    TPH_CHECK_EQ(tph_work_create(&w[2], note_order, (void *)2, NULL), TPH_OK);
    TPH_CHECK(!runs_long_of(w[2]));
    for (i = 0; i < 3; i++) {
        TPH_CHECK_EQ(tph_work_wait(w[i]), TPH_OK);
        TPH_CHECK_EQ(tph_work_close(w[i]), TPH_OK);
    }
    tph_test_chain_hook(NULL, NULL);
}

static void env_runs_long_reaches_the_native_object(void **state) {
    (void)state;
    tph_test_run_both(runs_long_body, NULL, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(env_init_gives_the_default_pool),
        cmocka_unit_test(env_setters_reject_null_env),
        cmocka_unit_test(env_priority_out_of_range_is_rejected),
        cmocka_unit_test(env_priority_orders_the_queue),
        cmocka_unit_test(env_runs_long_reaches_the_native_object),
        cmocka_unit_test(key_of_null_env_or_pool_is_zero),
        cmocka_unit_test(key_of_a_private_pool_is_its_handle),
        cmocka_unit_test(error_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
