/* The fail-fast build (linked with tpheal_core_sim_failfast): a close owed a
 * drain ends the process -- and only AFTER its drain, native close and free,
 * so a fail-fast never leaves a callback running against freed memory.
 *
 * Each case runs in a forked child (tph_test_child).  The order is checked
 * from inside the run by a trace hook at the "fail-fast" record: if the drain,
 * the close or the free had not happened yet, the hook ends the process with
 * a "tph-test:" reason instead, and the parent sees the wrong reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

#define FF_REASON "tpheal: drop-obligation-owed"

typedef struct ff_state {
    const char *drain_call;
    const char *close_call;
    uint64_t id;            /* native handle of the object under test */
    uint64_t blocks_before; /* core blocks before the object was created */
    uint64_t kind_code;     /* b of drop-obligation-owed */
    bool drained, closed, dropped;
    bool recorded; /* the fail-fast record, naming the object, came first */
} ff_state;

static ff_state ff;

static void ff_hook(const tph_trace_record *rec, void *ctx) {
    sim_object_stats st;
    (void)ctx;
    if (ff.id == 0) return;
    if (strcmp(rec->event, ff.drain_call) == 0 && rec->a == ff.id && !ff.closed) ff.drained = true;
    if (strcmp(rec->event, ff.close_call) == 0 && rec->a == ff.id) ff.closed = ff.drained;
    if (strcmp(rec->event, "drop-obligation-owed") == 0 && rec->a == ff.id) {
        ff.dropped = true;
        ff.kind_code = rec->b;
    }
    if (strcmp(rec->event, "fail-fast") != 0) return;
    /* The record names what ended the process: the object's id and kind,
     * as drop-obligation-owed did. */
    ff.recorded = rec->a == ff.id && rec->b == ff.kind_code;
    if (!ff.drained) tph_test__fail(__FILE__, __LINE__, "fail-fast before the drain");
    if (!ff.closed) tph_test__fail(__FILE__, __LINE__, "fail-fast before the native close");
    if (!ff.dropped) tph_test__fail(__FILE__, __LINE__, "fail-fast without drop-obligation-owed");
    if (!sim_object_stats_get((const void *)(uintptr_t)ff.id, &st) || !st.closed)
        tph_test__fail(__FILE__, __LINE__, "object not closed at fail-fast");
    if (st.running != 0 || st.queued != 0)
        tph_test__fail(__FILE__, __LINE__, "a callback outstanding at fail-fast");
    if (sim_core_blocks_live() != ff.blocks_before)
        tph_test__fail(__FILE__, __LINE__, "object not freed at fail-fast");
}

static void ff_begin(const char *drain_call, const char *close_call) {
    memset(&ff, 0, sizeof ff);
    ff.drain_call = drain_call;
    ff.close_call = close_call;
    tph_test_chain_hook(ff_hook, NULL);
    ot_trace_start();
}

static void wait_fn(tph_wait *w, void *c, tph_wait_result r) {
    (void)w;
    (void)r;
    ot_count((ot_counter *)c);
}

static ot_counter wait_calls;
static bool drain_first;

static void wait_body(void *ctx) {
    tph_handle *ev;
    tph_wait *w;
    (void)ctx;
    memset(&wait_calls, 0, sizeof wait_calls);
    TPH_CHECK_EQ(tph_event_create(&ev, true, true), TPH_OK);
    ff_begin("WaitForThreadpoolWaitCallbacks", "CloseThreadpoolWait");
    ff.blocks_before = sim_core_blocks_live();
    TPH_CHECK_EQ(tph_wait_create(&w, ev, wait_fn, &wait_calls, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    ot_trace_take();
    ff.id = ot_last_a("SetThreadpoolWait");
    if (drain_first) TPH_CHECK_EQ(tph_wait_stop_and_drain(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_close(w), TPH_OK);
    /* Reached only when the close owed nothing. */
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void io_fn(tph_io *io, void *c, void *ov, uint32_t r, uintptr_t n) {
    (void)io; (void)ov; (void)r; (void)n;
    ot_count((ot_counter *)c);
}

static void io_body(void *ctx) {
    tph_io *io;
    ot_counter calls;
    void *file = sim_file_create();
    int ov;
    (void)ctx;
    memset(&calls, 0, sizeof calls);
    ff_begin("WaitForThreadpoolIoCallbacks", "CloseThreadpoolIo");
    ff.blocks_before = sim_core_blocks_live();
    TPH_CHECK_EQ(tph_io_create(&io, file, io_fn, &calls, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_io_start(io), TPH_OK);
    ot_trace_take();
    ff.id = ot_last_a("StartThreadpoolIo");
    TPH_CHECK(sim_io_complete(file, &ov, 0, 1));
    /* Never run down by the owner: the close does it, then fails fast. */
    TPH_CHECK_EQ(tph_io_close(io), TPH_OK);
}

/* A process that ended without the fail-fast record (or with one naming
 * another object) is reported as such: the trace is how a user learns what
 * ended the process. */
static tph_test_outcome with_record_check(tph_test_outcome o) {
    if (o.ended && !ff.recorded)
        snprintf(o.reason, sizeof o.reason, "ended without the fail-fast record naming the object");
    return o;
}

static tph_test_outcome run_wait(void *ctx) {
    (void)ctx;
    return with_record_check(tph_test_run_controlled_outcome(wait_body, NULL, NULL, 1, NULL));
}

static tph_test_outcome run_wait_seed(void *ctx) {
    return with_record_check(
        tph_test_run_controlled_outcome(wait_body, NULL, NULL, (uint64_t)(uintptr_t)ctx, NULL));
}

static tph_test_outcome run_io(void *ctx) {
    return with_record_check(
        tph_test_run_controlled_outcome(io_body, NULL, NULL, (uint64_t)(uintptr_t)ctx, NULL));
}

static void expect_fail_fast(tph_test_outcome o) {
    if (!o.ended || strcmp(o.reason, FF_REASON) != 0)
        fail_msg("expected the process to end with \"%s\", got finished=%d ended=%d \"%s\"",
                 FF_REASON, o.finished, o.ended, o.reason);
}

static void build_is_fail_fast(void **state) {
    (void)state;
    assert_int_equal(TPHEAL_FAIL_FAST, 1);
}

static void wait_close_owed_a_drain_ends_the_process_after_teardown(void **state) {
    uintptr_t seed;
    (void)state;
    drain_first = false;
    expect_fail_fast(tph_test_child(run_wait, NULL));
    for (seed = 2; seed <= 4; seed++) expect_fail_fast(tph_test_child(run_wait_seed, (void *)seed));
}

static void io_close_owed_a_run_down_ends_the_process_after_it(void **state) {
    uintptr_t seed;
    (void)state;
    for (seed = 1; seed <= 3; seed++) expect_fail_fast(tph_test_child(run_io, (void *)seed));
}

static void a_drained_close_does_not_end_the_process(void **state) {
    tph_test_outcome o;
    (void)state;
    drain_first = true;
    o = tph_test_child(run_wait, NULL);
    drain_first = false;
    if (!o.finished || o.ended) fail_msg("drained close ended the run: %s", o.reason);
}

#if TPHEAL_SELF_HEAL
/* ---- an untracked group cancellation ------------------------------------------ */
/* A cancelling release whose pool could not be registered ends the process
 * too -- after the native release and after every member is freed. */
#define FF_UNTRACKED "tpheal: cancel-untracked"

static struct {
    uint64_t blocks_after_members; /* core blocks with the members freed */
    bool released, untracked;
} gu;

static void gu_hook(const tph_trace_record *rec, void *ctx) {
    (void)ctx;
    if (strcmp(rec->event, "CloseThreadpoolCleanupGroupMembers") == 0) gu.released = true;
    if (strcmp(rec->event, "cancel-untracked") == 0) gu.untracked = gu.released;
    if (strcmp(rec->event, "fail-fast") != 0) return;
    /* The record names what ended the process: the object's id and kind,
     * as drop-obligation-owed did. */
    ff.recorded = rec->a == ff.id && rec->b == ff.kind_code;
    if (!gu.released) tph_test__fail(__FILE__, __LINE__, "fail-fast before the release");
    if (!gu.untracked) tph_test__fail(__FILE__, __LINE__, "fail-fast without cancel-untracked");
    if (sim_core_blocks_live() != gu.blocks_after_members)
        tph_test__fail(__FILE__, __LINE__, "members not freed at fail-fast");
}

static void gu_body(void *ctx) {
    tph_pool *p;
    tph_group *g;
    tph_env env;
    tph_handle *ev;
    tph_wait *w;
    (void)ctx;
    memset(&gu, 0, sizeof gu);
    TPH_CHECK_EQ(tph_pool_create(&p), TPH_OK);
    TPH_CHECK_EQ(tph_group_create(&g, NULL), TPH_OK);
    tph_env_init(&env);
    tph_env_set_pool(&env, p);
    tph_env_set_group(&env, g);
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    /* Every repair work on this pool fails: it can never be registered. */
    tph_test_fail_call_on_pool(SIM_FAULT_WORK_CREATE, 1, true, tph_pool_key(p));
    gu.blocks_after_members = sim_core_blocks_live();
    TPH_CHECK_EQ(tph_wait_create(&w, ev, wait_fn, &wait_calls, &env), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(w, TPH_WAIT_FOREVER), TPH_OK);
    tph_test_chain_hook(gu_hook, NULL);
    ot_trace_start();
    TPH_CHECK_EQ(tph_group_close_members_cancelling(g, NULL), TPH_OK);
    TPH_CHECK(!"not reached: the untracked cancellation ends the process");
}

static tph_test_outcome run_gu(void *ctx) {
    return tph_test_run_controlled_outcome(gu_body, NULL, NULL, (uint64_t)(uintptr_t)ctx, NULL);
}

static void untracked_group_cancel_ends_the_process_after_the_frees(void **state) {
    uintptr_t seed;
    (void)state;
    for (seed = 1; seed <= 3; seed++) {
        tph_test_outcome o = tph_test_child(run_gu, (void *)seed);
        if (!o.ended || strcmp(o.reason, FF_UNTRACKED) != 0)
            fail_msg("expected \"%s\", got finished=%d ended=%d \"%s\"", FF_UNTRACKED,
                     o.finished, o.ended, o.reason);
    }
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(build_is_fail_fast),
        cmocka_unit_test(wait_close_owed_a_drain_ends_the_process_after_teardown),
        cmocka_unit_test(io_close_owed_a_run_down_ends_the_process_after_it),
        cmocka_unit_test(a_drained_close_does_not_end_the_process),
#if TPHEAL_SELF_HEAL
        cmocka_unit_test(untracked_group_cancel_ends_the_process_after_the_frees),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
