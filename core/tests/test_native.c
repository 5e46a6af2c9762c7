/* <tpheal/native.h>: each accessor names the native object behind its
 * tpheal object -- the handle the pool's own calls carry (the `a` of their
 * api trace records) and the model's object of that kind -- and 0 for NULL.
 * The harness reads objects through these, never through core/src. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

static void work_fn(tph_work *w, void *ctx) { (void)w, (void)ctx; }
static void wait_fn(tph_wait *w, void *ctx, tph_wait_result r) { (void)w, (void)ctx, (void)r; }
static void timer_fn(tph_timer *t, void *ctx) { (void)t, (void)ctx; }
static void periodic_fn(tph_periodic *p, void *ctx) { (void)p, (void)ctx; }
static void io_fn(tph_io *io, void *ctx, void *ov, uint32_t r, uintptr_t n) {
    (void)io, (void)ctx, (void)ov, (void)r, (void)n;
}

static void check_kind(uintptr_t native, sim_object_kind kind) {
    sim_object_stats st;
    memset(&st, 0, sizeof st);
    TPH_CHECK(native != 0);
    TPH_CHECK(sim_object_stats_get((const void *)native, &st));
    TPH_CHECK_EQ(st.kind, kind);
}

static void body_every_kind(void *ctx) {
    tph_work *w;
    tph_wait *wt;
    tph_timer *t;
    tph_periodic *p;
    tph_io *io;
    tph_group *g;
    tph_handle *ev;
    (void)ctx;
    TPH_CHECK_EQ(tph_event_create(&ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_group_create(&g, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_work_create(&w, work_fn, NULL, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_wait_create(&wt, ev, wait_fn, NULL, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_timer_create(&t, timer_fn, NULL, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_create(&p, 1000, periodic_fn, NULL, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_io_create(&io, sim_file_create(), io_fn, NULL, NULL), TPH_OK);
    check_kind(tph_work_native(w), SIM_OBJ_WORK);
    check_kind(tph_wait_native(wt), SIM_OBJ_WAIT);
    check_kind(tph_timer_native(t), SIM_OBJ_TIMER);
    check_kind(tph_periodic_native(p), SIM_OBJ_TIMER);
    check_kind(tph_io_native(io), SIM_OBJ_IO);
    check_kind(tph_group_native(g), SIM_OBJ_GROUP);
    check_kind(tph_handle_native(ev), SIM_OBJ_EVENT);
    TPH_CHECK(tph_timer_native(t) != tph_periodic_native(p));
    /* The same number the object's own pool calls carry. */
    ot_trace_start();
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_arm(wt, TPH_WAIT_FOREVER), TPH_OK);
    TPH_CHECK_EQ(tph_timer_set_after(t, 1000, 0), TPH_OK);
    ot_trace_take();
    TPH_CHECK_EQ(ot_find("SubmitThreadpoolWork", tph_work_native(w), 0) >= 0, true);
    TPH_CHECK_EQ(ot_find("SetThreadpoolWait", tph_wait_native(wt), 0) >= 0, true);
    TPH_CHECK_EQ(ot_find("SetThreadpoolTimer", tph_timer_native(t), 0) >= 0, true);
    TPH_CHECK_EQ(tph_work_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_wait_close(wt), TPH_OK);
    TPH_CHECK_EQ(tph_timer_close(t), TPH_OK);
    TPH_CHECK_EQ(tph_periodic_close(p), TPH_OK);
    TPH_CHECK_EQ(tph_io_close(io), TPH_OK);
    TPH_CHECK_EQ(tph_group_close(g), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(ev), TPH_OK);
}

static void natives_name_the_pool_objects(void **state) {
    (void)state;
    tph_test_run_controlled(body_every_kind, NULL, NULL, 1);
    tph_test_run_native(body_every_kind, NULL, NULL);
}

static void null_is_zero(void **state) {
    (void)state;
    assert_int_equal(tph_work_native(NULL), 0);
    assert_int_equal(tph_wait_native(NULL), 0);
    assert_int_equal(tph_timer_native(NULL), 0);
    assert_int_equal(tph_periodic_native(NULL), 0);
    assert_int_equal(tph_io_native(NULL), 0);
    assert_int_equal(tph_group_native(NULL), 0);
    assert_int_equal(tph_handle_native(NULL), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(natives_name_the_pool_objects),
        cmocka_unit_test(null_is_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
