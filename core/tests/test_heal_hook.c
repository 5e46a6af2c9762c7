/* A trace hook may read the registry: no heal or api trace event is recorded
 * with the registry lock held.  A hook that calls tph_heal_entry_get from
 * inside an event fired under that lock re-takes a non-recursive lock on its
 * own thread -- a deadlock on Win32 (SRW lock), and on the sim a thread
 * blocked forever, which the controlled scheduler reports.  arm_repair's
 * CreateThreadpoolWork event was such an event. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"

#if TPHEAL_SELF_HEAL
#include "registry.h"

typedef struct reads {
    uint64_t in_hook; /* registry reads made from inside the hook */
} reads;

static void reading_hook(const tph_trace_record *rec, void *ctx) {
    reads *r = (reads *)ctx;
    tph_heal_entry_info info;
    if (strcmp(rec->target, "heal") != 0 && strcmp(rec->target, "api") != 0) return;
    (void)tph_heal_entry_get((uintptr_t)rec->a, &info);
    (void)tph_heal_entry_count();
    /* The hook runs on every thread that records: an atomic, or the race
     * build reports the test's own race. */
    tph_os_fetch_add64(&r->in_hook, 1);
}

static void on_signal(tph_wait *w, void *ctx, tph_wait_result res) {
    (void)w;
    (void)ctx;
    (void)res;
}

static void body_hook_reads_registry(void *ctx) {
    reads *rd = (reads *)ctx;
    tph_pool *pool = NULL;
    tph_env env;
    tph_handle *ev = NULL;
    tph_wait *w = NULL;
    tph_registration r;
    rd->in_hook = 0;
    tph_test_chain_hook(reading_hook, rd);
    TPH_CHECK(tph_pool_create(&pool) == TPH_OK);
    tph_env_init(&env);
    TPH_CHECK(tph_env_set_pool(&env, pool) == TPH_OK);
    TPH_CHECK(tph_event_create(&ev, true, false) == TPH_OK);
    /* The first object on the pool creates its entry and repair work. */
    TPH_CHECK(tph_wait_create(&w, ev, on_signal, NULL, &env) == TPH_OK);
    TPH_CHECK_EQ(tph_test_event_count("CreateThreadpoolWork", tph_pool_key(pool)), 1);
    /* A second claim, a cancellation (which starts the healer: its pool is
     * registered too), a tick, a release and a retirement. */
    r = tph_register(tph_pool_key(pool));
    TPH_CHECK(r.entry != NULL);
    TPH_CHECK(tph_wait_arm(w, TPH_WAIT_FOREVER) == TPH_OK);
    TPH_CHECK(tph_wait_try_cancel_pending(w) == TPH_OK);
    tph_test_sleep(TPH_TEST_TICK + 1);
    tph_heal_tick();
    TPH_CHECK(tph_test_wait_event("repair-ran", tph_pool_key(pool), 1, TPH_TEST_PATIENCE));
    tph_registration_release(&r);
    TPH_CHECK(tph_wait_close(w) == TPH_OK);
    tph_heal_tick();
    tph_heal_retire_idle();
    TPH_CHECK(!tph_heal_entry_get(tph_pool_key(pool), NULL));
    TPH_CHECK(tph_handle_close(ev) == TPH_OK);
    TPH_CHECK(tph_pool_close(pool) == TPH_OK);
    /* The hook really ran on the registration path. */
    TPH_CHECK(tph_os_load64(&rd->in_hook) > 10);
    tph_test_chain_hook(NULL, NULL);
}

static void test_hook_may_read_registry(void **state) {
    reads rd;
    uint64_t seed;
    (void)state;
    /* Controlled only: before the fix this is a self-deadlock, which the
     * controlled scheduler reports and native threads would hang on. */
    for (seed = 1; seed <= 20; seed++)
        tph_test_run_controlled(body_hook_reads_registry, &rd, NULL, seed);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hook_may_read_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TPHEAL_SELF_HEAL */

TPH_TEST_MAIN_WITHOUT_SELF_HEAL()

#endif
