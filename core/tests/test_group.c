/* Cleanup groups: a draining release lets callbacks run, a cancelling one
 * drops them and calls the cancel function once per member, only the
 * cancelling one marks the members' pools, and the claim on each pool is
 * taken before the native release. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

typedef struct gctx {
    ot_counter callbacks;
    ot_counter cancels;
    void *cleanup_seen;
    uint32_t member_ctx_ok;
} gctx;

static gctx *current;

static void work_fn(tph_work *w, void *ctx) {
    (void)w;
    ot_count(&((gctx *)ctx)->callbacks);
}

static void wait_fn(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w;
    (void)r;
    ot_count(&((gctx *)ctx)->callbacks);
}

static void cancel_fn(void *object_ctx, void *cleanup_ctx) {
    /* The member's own user context, and the release's cleanup context. */
    if (object_ctx == current) tph_os_fetch_add32(&current->member_ctx_ok, 1);
    current->cleanup_seen = cleanup_ctx;
    ot_count(&current->cancels);
}

static void group_null_arguments(void **state) {
    (void)state;
    assert_int_equal(tph_group_create(NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_group_close_members_draining(NULL), TPH_EINVAL);
#if TPHEAL_SELF_HEAL
    assert_int_equal(tph_group_close_members_cancelling(NULL, NULL), TPH_EINVAL);
#endif
    assert_int_equal(tph_group_close_members_cancelling_no_heal_tracking(NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_group_close(NULL), TPH_EINVAL);
}

/* Three work members with a queued callback each, and one wait member with a
 * queued callback, all behind the blocked pool's parked thread. */
typedef struct members {
    ot_blocked_pool b;
    tph_group *g;
    tph_env env;
    tph_work *w[3];
    tph_handle *ev;
    tph_wait *wt;
    gctx x;
} members;

static void members_begin(members *m) {
    int i;
    uint64_t wait_handle;
    memset(&m->x, 0, sizeof m->x);
    current = &m->x;
    ot_blocked_pool_begin(&m->b);
    TPH_CHECK_EQ(tph_group_create(&m->g, cancel_fn), TPH_OK);
    m->env = m->b.env;
    TPH_CHECK_EQ(tph_env_set_group(&m->env, m->g), TPH_OK);
    for (i = 0; i < 3; i++) {
        TPH_CHECK_EQ(tph_work_create(&m->w[i], work_fn, &m->x, &m->env), TPH_OK);
        TPH_CHECK_EQ(tph_work_submit(m->w[i]), TPH_OK);
    }
    TPH_CHECK_EQ(tph_event_create(&m->ev, true, true), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&m->wt, m->ev, wait_fn, &m->x, &m->env), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_wait_arm(m->wt, TPH_WAIT_FOREVER), TPH_OK);
    ot_trace_take();
    wait_handle = ot_last_a("SetThreadpoolWait");
    TPH_CHECK(ot_wait_queued(wait_handle, 1, TPH_TEST_PATIENCE));
    tph_test_sleep(2 * TPH_TEST_TICK);
}

static void members_end(members *m) {
    TPH_CHECK_EQ(tph_group_close(m->g), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(m->ev), TPH_OK);
    TPH_CHECK_EQ(tph_pool_close(m->b.pool), TPH_OK);
}

static void draining_body(void *ctx) {
    members m;
    tph_heal_entry_info info;
    (void)ctx;
    members_begin(&m);
    /* A draining release waits for the queued callbacks: the parked thread
     * must be let go first. */
    ot_gate_open(&m.b.gate);
    TPH_CHECK_EQ(tph_group_close_members_draining(m.g), TPH_OK);
    TPH_CHECK_EQ(ot_get(&m.x.callbacks), 4);
    TPH_CHECK_EQ(ot_get(&m.x.cancels), 0);
    /* Nothing removed, nothing owed (and no registry at all without self-heal). */
    TPH_CHECK_EQ(tph_heal_entry_get(tph_pool_key(m.b.pool), &info), TPHEAL_SELF_HEAL);
    if (TPHEAL_SELF_HEAL) TPH_CHECK_EQ(info.last_cancelled, 0);
    TPH_CHECK(!tph_heal_healer_running());
    TPH_CHECK_EQ(tph_work_close(m.b.blocker), TPH_OK);
    members_end(&m);
}

static void draining_release_lets_callbacks_run_and_marks_nothing(void **state) {
    (void)state;
    tph_test_run_controlled(draining_body, NULL, NULL, 1);
    tph_test_run_controlled(draining_body, NULL, NULL, 2);
}

#if TPHEAL_SELF_HEAL
static int cleanup_token;

static void cancelling_body(void *ctx) {
    members m;
    tph_heal_entry_info info;
    long claim, release;
    uintptr_t key;
    (void)ctx;
    members_begin(&m);
    key = tph_pool_key(m.b.pool);
    ot_trace_start();
    TPH_CHECK_EQ(tph_group_close_members_cancelling(m.g, &cleanup_token), TPH_OK);
    ot_trace_take();
    /* Dropped, with the cancel function once per member (3 works + 1 wait). */
    TPH_CHECK_EQ(ot_get(&m.x.cancels), 4);
    TPH_CHECK_EQ(m.x.member_ctx_ok, 4);
    TPH_CHECK(m.x.cleanup_seen == &cleanup_token);
    /* The pool is stamped as owed a repair. */
    TPH_CHECK(tph_heal_entry_get(key, &info));
    TPH_CHECK(info.last_cancelled != 0);
    /* The claims came before the native release. */
    claim = ot_find("registered", key, 0);
    release = ot_find("CloseThreadpoolCleanupGroupMembers", TPH_TEST_ANY, 0);
    TPH_CHECK(claim >= 0);
    TPH_CHECK(release >= 0);
    TPH_CHECK(claim < release);
    TPH_CHECK_EQ(ot_count_events("registered", key), 4);
    TPH_CHECK(ot_find("cancelled", key, (size_t)release) > release);
    ot_gate_open(&m.b.gate);
    TPH_CHECK_EQ(tph_work_close(m.b.blocker), TPH_OK);
    TPH_CHECK_EQ(ot_get(&m.x.callbacks), 0);
    members_end(&m);
}

static void cancelling_release_drops_callbacks_marks_pools_claims_first(void **state) {
    (void)state;
    tph_test_run_controlled(cancelling_body, NULL, NULL, 1);
    tph_test_run_controlled(cancelling_body, NULL, NULL, 2);
    tph_test_run_controlled(cancelling_body, NULL, NULL, 3);
}

/* One member of every kind, each on a pool of its own: the cancelling
 * release marks every member's pool (the seed's rule: the release may have
 * cancelled anything any member had queued), not only the waits' and not
 * only one pool per release.  With every member on one pool, as above, a
 * release that marked only its first member, or only waits, passed. */
static void io_fn(tph_io *io, void *ctx, void *ov, uint32_t r, uintptr_t n) {
    (void)io, (void)ctx, (void)ov, (void)r, (void)n;
}
static void timer_fn(tph_timer *t, void *ctx) { (void)t, (void)ctx; }
static void periodic_fn(tph_periodic *t, void *ctx) { (void)t, (void)ctx; }

static void every_kind_body(void *ctx) {
    enum { KINDS = 5 };
    tph_pool *pool[KINDS];
    tph_env env[KINDS], on_default;
    tph_group *g;
    tph_work *w, *w_default;
    tph_wait *wt;
    tph_timer *t;
    tph_periodic *pe;
    tph_io *io;
    tph_handle *ev;
    gctx x;
    int i;
    (void)ctx;
    memset(&x, 0, sizeof x);
    current = &x;
    TPH_CHECK_EQ(tph_group_create(&g, cancel_fn), TPH_OK);
    for (i = 0; i < KINDS; i++) {
        TPH_CHECK_EQ(tph_pool_create(&pool[i]), TPH_OK);
        tph_env_init(&env[i]);
        TPH_CHECK_EQ(tph_env_set_pool(&env[i], pool[i]), TPH_OK);
        TPH_CHECK_EQ(tph_env_set_group(&env[i], g), TPH_OK);
    }
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_work_create(&w, work_fn, &x, &env[0]), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&wt, ev, wait_fn, &x, &env[1]), TPH_OK);
    TPH_CHECK_EQ(tph_timer_create(&t, timer_fn, &x, &env[2]), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_create(&pe, 1000, periodic_fn, &x, &env[3]), TPH_OK);
    TPH_CHECK_EQ(tph_io_create(&io, sim_file_create(), io_fn, &x, &env[4]), TPH_OK);
    /* ...and one on the default pool (key 0), the pool the stall is measured
     * on: a release that skipped key 0 as "no pool" left it owed nothing. */
    tph_env_init(&on_default);
    TPH_CHECK_EQ(tph_env_set_group(&on_default, g), TPH_OK);
    TPH_CHECK_EQ(tph_work_create(&w_default, work_fn, &x, &on_default), TPH_OK);
    ot_trace_start();
    TPH_CHECK_EQ(tph_group_close_members_cancelling(g, &cleanup_token), TPH_OK);
    ot_trace_take();
    for (i = 0; i < KINDS; i++) {
        tph_heal_entry_info info;
        uintptr_t key = tph_pool_key(pool[i]);
        TPH_CHECK(tph_heal_entry_get(key, &info));
        TPH_CHECK(info.last_cancelled != 0);
        TPH_CHECK_EQ(ot_count_events("cancelled", key), 1);
    }
    {
        tph_heal_entry_info info;
        TPH_CHECK(tph_heal_entry_get(0, &info));
        TPH_CHECK(info.last_cancelled != 0);
        TPH_CHECK_EQ(ot_count_events("cancelled", 0), 1);
    }
    TPH_CHECK_EQ(tph_group_close(g), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
    tph_test_sleep(TPH_TEST_SECOND);
    for (i = 0; i < KINDS; i++) TPH_CHECK_EQ(tph_pool_close(pool[i]), TPH_OK);
}

static void cancelling_release_marks_the_pool_of_every_member_kind(void **state) {
    (void)state;
    tph_test_run_controlled(every_kind_body, NULL, NULL, 1);
    tph_test_run_controlled(every_kind_body, NULL, NULL, 2);
}
#endif

static void no_heal_body(void *ctx) {
    members m;
    tph_heal_entry_info info;
    uint64_t allocs;
    (void)ctx;
    members_begin(&m);
    allocs = sim_fault_calls(SIM_FAULT_ALLOC);
    ot_trace_start();
    TPH_CHECK_EQ(tph_group_close_members_cancelling_no_heal_tracking(m.g, NULL), TPH_OK);
    ot_trace_take();
    TPH_CHECK_EQ(ot_get(&m.x.cancels), 4);
    /* Marks, allocates and starts nothing. */
    TPH_CHECK_EQ(sim_fault_calls(SIM_FAULT_ALLOC), allocs);
    TPH_CHECK_EQ(tph_heal_entry_get(tph_pool_key(m.b.pool), &info), TPHEAL_SELF_HEAL);
    if (TPHEAL_SELF_HEAL) TPH_CHECK_EQ(info.last_cancelled, 0);
    TPH_CHECK(!tph_heal_healer_running());
    TPH_CHECK_EQ(ot_count_events("registered", TPH_TEST_ANY), 0);
    ot_gate_open(&m.b.gate);
    TPH_CHECK_EQ(tph_work_close(m.b.blocker), TPH_OK);
    TPH_CHECK_EQ(ot_get(&m.x.callbacks), 0);
    members_end(&m);
}

static void no_heal_tracking_release_marks_nothing(void **state) {
    (void)state;
    tph_test_run_controlled(no_heal_body, NULL, NULL, 1);
}

static void individual_body(void *ctx) {
    gctx x;
    tph_group *g;
    tph_env env;
    tph_work *a, *b;
    (void)ctx;
    memset(&x, 0, sizeof x);
    current = &x;
    TPH_CHECK_EQ(tph_group_create(&g, cancel_fn), TPH_OK);
    tph_env_init(&env);
    tph_env_set_group(&env, g);
    TPH_CHECK_EQ(tph_work_create(&a, work_fn, &x, &env), TPH_OK);
    TPH_CHECK_EQ(tph_work_create(&b, work_fn, &x, &env), TPH_OK);
    /* Members still listed: closing the group would orphan them. */
    TPH_CHECK_EQ(tph_group_close(g), TPH_EBUSY);
    /* A member closed on its own leaves the list... */
    TPH_CHECK_EQ(tph_work_close(a), TPH_OK);
    TPH_CHECK_EQ(tph_group_close(g), TPH_EBUSY);
    /* ...and the release frees only the rest (a double free would be caught
     * by the sim's allocator). */
    TPH_CHECK_EQ(tph_group_close_members_draining(g), TPH_OK);
    TPH_CHECK_EQ(tph_group_close(g), TPH_OK);
    TPH_CHECK_EQ(tph_heal_entry_count(), 0); /* every registration released */
}

static void member_closed_alone_leaves_the_group(void **state) {
    (void)state;
    tph_test_run_both(individual_body, NULL, NULL, 2);
}

static tph_err group_attempt(void *ctx) {
    tph_group *g = (tph_group *)0x1;
    tph_err rc = tph_group_create(&g, NULL);
    (void)ctx;
    if (rc != TPH_OK) {
        TPH_CHECK(g == NULL);
        return rc;
    }
    TPH_CHECK_EQ(tph_group_close(g), TPH_OK);
    return rc;
}

static void group_fault_body(void *ctx) {
    (void)ctx;
    TPH_CHECK_EQ(ot_fault_loop(SIM_FAULT_ALLOC, group_attempt, NULL), 1);
    TPH_CHECK_EQ(ot_fault_loop(SIM_FAULT_GROUP_CREATE, group_attempt, NULL), 1);
}

static void group_create_failures_unwind(void **state) {
    (void)state;
    tph_test_run_controlled(group_fault_body, NULL, NULL, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group_null_arguments),
        cmocka_unit_test(draining_release_lets_callbacks_run_and_marks_nothing),
#if TPHEAL_SELF_HEAL
        cmocka_unit_test(cancelling_release_drops_callbacks_marks_pools_claims_first),
        cmocka_unit_test(cancelling_release_marks_the_pool_of_every_member_kind),
#endif
        cmocka_unit_test(no_heal_tracking_release_marks_nothing),
        cmocka_unit_test(member_closed_alone_leaves_the_group),
        cmocka_unit_test(group_create_failures_unwind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
