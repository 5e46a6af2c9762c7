/* The fail-fast build (TPHEAL_FAIL_FAST=1): a pool that will not take its
 * repair ends the process on the second overdue episode -- not the first --
 * and an untracked cancellation ends it too.  Each run happens in a child
 * process, because the end comes on whichever thread noticed (a pool thread
 * when the healer's own tick does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"

#if TPHEAL_SELF_HEAL
#include "healer.h"
#include "registry.h"

#define UNREPAIRABLE "tpheal: pool-unrepairable"
#define UNTRACKED "tpheal: cancel-untracked"

/* How far a body got before the end: the reason alone cannot tell an end at
 * the second episode from one at the first. */
static int g_stage;
/* b of the fail-fast record (what ended the process: for an untracked
 * cancellation 0, for an unrepairable pool its overdue episodes). */
static uint64_t g_ff_b = UINT64_MAX;
/* a of that record, and the pool a body expects it to name (0: not checked). */
static uint64_t g_ff_a, g_want_a;

static void record_ff(const tph_trace_record *rec, void *ctx) {
    (void)ctx;
    if (strcmp(rec->event, "fail-fast") == 0) {
        g_ff_a = rec->a;
        g_ff_b = rec->b;
    }
}

/* Ticks by hand: the first overdue episode re-submits, the second ends. */
static void body_manual_ticks(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    (void)ctx;
    TPH_CHECK(TPHEAL_FAIL_FAST == 1);
    TPH_CHECK(tph_test_blocker_start(&b));
    g_want_a = b.key; /* the end names the pool that would not take its repair */
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(r.entry, tph_heal_now());
    tph_heal_tick();
    tph_test_sleep(5 * TPH_TEST_SECOND + TPH_TEST_TICK);
    tph_heal_tick(); /* episode 1: reported, re-submitted, still alive */
    TPH_CHECK_EQ(tph_test_event_count("repair-overdue", b.key), 1);
    TPH_CHECK_EQ(tph_test_event_count("fail-fast", TPH_TEST_ANY), 0);
    g_stage = 1;
    tph_test_sleep(5 * TPH_TEST_SECOND + TPH_TEST_TICK);
    tph_heal_tick(); /* episode 2: the end */
    TPH_CHECK(!"the second overdue episode should have ended the process");
}

/* The healer's own tick notices, on its pool thread. */
static void body_healer_ticks(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    g_want_a = b.key; /* the end names the pool that would not take its repair */
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_owe_repair(&r));
    TPH_CHECK(tph_heal_healer_running());
    /* ~5.5 s in: one episode seen, the process goes on. */
    tph_test_sleep(6 * TPH_TEST_SECOND);
    TPH_CHECK_EQ(tph_test_event_count("repair-overdue", b.key), 1);
    g_stage = 1;
    tph_test_sleep(30 * TPH_TEST_SECOND);
    TPH_CHECK(!"the healer should have ended the process");
}

static void noop_wait(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w;
    (void)ctx;
    (void)r;
}

/* A cancellation whose pool can never be registered. */
static void body_untracked(void *ctx) {
    tph_handle *ev = NULL;
    tph_wait *w = NULL;
    (void)ctx;
    tph_test_fail_call_on_pool(SIM_FAULT_WORK_CREATE, 1, true, 0);
    TPH_CHECK(tph_event_create(&ev, true, false) == TPH_OK);
    /* Creating the wait still succeeds: registration is best effort. */
    TPH_CHECK(tph_wait_create(&w, ev, noop_wait, NULL, NULL) == TPH_OK);
    TPH_CHECK(tph_test_event_count("register-failed", 0) >= 1);
    g_stage = 1;
    tph_wait_try_cancel_pending(w);
    TPH_CHECK(!"an untracked cancellation should have ended the process");
}

typedef struct child_case {
    tph_test_body_fn body;
    bool native;
    uint64_t seed;
} child_case;

static tph_test_outcome in_child(void *ctx) {
    child_case *c = (child_case *)ctx;
    tph_test_outcome o;
    size_t len;
    g_stage = 0;
    g_ff_b = UINT64_MAX;
    g_ff_a = 0;
    g_want_a = 0;
    tph_test_chain_hook(record_ff, NULL);
    if (c->native)
        o = tph_test_run_native_outcome(c->body, NULL, NULL, c->seed);
    else
        o = tph_test_run_controlled_outcome(c->body, NULL, NULL, c->seed, NULL);
    len = strlen(o.reason);
    snprintf(o.reason + len, sizeof o.reason - len, " [stage %d] [record b=%llu]%s", g_stage,
             (unsigned long long)g_ff_b, g_want_a != 0 && g_ff_a != g_want_a ? " [record names another pool]" : "");
    return o;
}

static void expect_end(tph_test_body_fn body, bool native, uint64_t seed, const char *reason) {
    child_case c;
    tph_test_outcome o;
    char want_b[40];
    snprintf(want_b, sizeof want_b, "[record b=%d]", strcmp(reason, UNTRACKED) == 0 ? 0 : 2);
    c.body = body;
    c.native = native;
    c.seed = seed;
    o = tph_test_child(in_child, &c);
    if (!o.ended || strstr(o.reason, reason) == NULL || strstr(o.reason, "[stage 1]") == NULL ||
        strstr(o.reason, want_b) == NULL || strstr(o.reason, "another pool") != NULL)
        fail_msg("%s run (seed %llu): expected the process to end with \"%s\"; got %s \"%s\"",
                 native ? "native" : "controlled", (unsigned long long)seed, reason,
                 o.ended ? "an end with" : "no end,", o.reason);
}

/* A cancelling group release over members whose pools are tracked ends
 * nothing; one whose member's pool could not be registered ends the process
 * naming that pool. */
static void noop_member(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w;
    (void)ctx;
    (void)r;
}

static void group_release_body(bool untracked) {
    tph_pool *pool;
    tph_group *g;
    tph_env env;
    tph_handle *ev = NULL;
    tph_wait *w[2];
    int i;
    TPH_CHECK(tph_pool_create(&pool) == TPH_OK);
    if (untracked) {
        tph_test_fail_call_on_pool(SIM_FAULT_WORK_CREATE, 1, true, tph_pool_key(pool));
        g_want_a = tph_pool_key(pool);
    }
    TPH_CHECK(tph_group_create(&g, NULL) == TPH_OK);
    tph_env_init(&env);
    TPH_CHECK(tph_env_set_pool(&env, pool) == TPH_OK);
    TPH_CHECK(tph_env_set_group(&env, g) == TPH_OK);
    TPH_CHECK(tph_event_create(&ev, true, false) == TPH_OK);
    for (i = 0; i < 2; i++) {
        TPH_CHECK(tph_wait_create(&w[i], ev, noop_member, NULL, &env) == TPH_OK);
        TPH_CHECK(tph_wait_arm(w[i], TPH_WAIT_FOREVER) == TPH_OK);
    }
    g_stage = 1;
    TPH_CHECK(tph_group_close_members_cancelling(g, NULL) == TPH_OK);
    g_stage = 2;
    TPH_CHECK(tph_group_close(g) == TPH_OK);
    TPH_CHECK(tph_handle_close(ev) == TPH_OK);
    TPH_CHECK(tph_pool_close(pool) == TPH_OK);
}

static void body_group_tracked(void *ctx) {
    (void)ctx;
    group_release_body(false);
}

static void body_group_untracked(void *ctx) {
    (void)ctx;
    group_release_body(true);
    TPH_CHECK(!"an untracked member's release should have ended the process");
}

static void test_group_release_ends_only_for_untracked_members(void **state) {
    child_case c;
    tph_test_outcome o;
    (void)state;
    expect_end(body_group_untracked, false, 1, UNTRACKED);
    expect_end(body_group_untracked, false, 3, UNTRACKED);
    c.body = body_group_tracked;
    c.native = false;
    c.seed = 1;
    o = tph_test_child(in_child, &c);
    if (!o.finished || o.ended) fail_msg("tracked members: the release ended the process: %s", o.reason);
}

static void test_second_overdue_episode_ends_process(void **state) {
    (void)state;
    expect_end(body_manual_ticks, false, 1, UNREPAIRABLE);
    expect_end(body_manual_ticks, false, 2, UNREPAIRABLE);
}

static void test_healer_tick_ends_process_on_pool_thread(void **state) {
    (void)state;
    expect_end(body_healer_ticks, false, 1, UNREPAIRABLE);
    expect_end(body_healer_ticks, false, 7, UNREPAIRABLE);
}

static void test_untracked_cancel_ends_process(void **state) {
    (void)state;
    expect_end(body_untracked, false, 1, UNTRACKED);
    expect_end(body_untracked, true, 0, UNTRACKED);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_overdue_episode_ends_process),
        cmocka_unit_test(test_healer_tick_ends_process_on_pool_thread),
        cmocka_unit_test(test_untracked_cancel_ends_process),
        cmocka_unit_test(test_group_release_ends_only_for_untracked_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TPHEAL_SELF_HEAL */

/* Built without the registry: nothing here applies (test_heal_registry.c
 * checks what the off build does promise). */
TPH_TEST_MAIN_WITHOUT_SELF_HEAL()

#endif
