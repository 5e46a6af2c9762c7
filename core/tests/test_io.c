/* I/O objects: every start ends in one callback or one cancel, the
 * outstanding count, run-down, argument checks and failure paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

typedef struct io_ctx {
    ot_counter c;
    volatile uint64_t bytes;
    volatile uint64_t outstanding_in_cb; /* what the callback saw */
} io_ctx;

static void io_fn(tph_io *io, void *ctx, void *ov, uint32_t result, uintptr_t bytes) {
    io_ctx *x = (io_ctx *)ctx;
    (void)ov;
    (void)result;
    tph_os_fetch_add64(&x->bytes, bytes);
    tph_os_store64(&x->outstanding_in_cb, tph_io_outstanding(io));
    ot_count(&x->c);
}

static void io_null_arguments(void **state) {
    tph_io *io = (tph_io *)0x1;
    (void)state;
    assert_int_equal(tph_io_create(NULL, (void *)0x1, io_fn, NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_io_create(&io, NULL, io_fn, NULL, NULL), TPH_EINVAL);
    assert_null(io);
    assert_int_equal(tph_io_create(&io, (void *)0x1, NULL, NULL, NULL), TPH_EINVAL);
    assert_int_equal(tph_io_start(NULL), TPH_EINVAL);
    assert_int_equal(tph_io_cancel(NULL), TPH_EINVAL);
    assert_int_equal(tph_io_outstanding(NULL), 0);
    assert_int_equal(tph_io_run_down(NULL), TPH_EINVAL);
    assert_int_equal(tph_io_close(NULL), TPH_EINVAL);
}

static void accounting_body(void *ctx) {
    io_ctx x;
    tph_io *io;
    void *file = sim_file_create();
    int ov[4];
    (void)ctx;
    memset(&x, 0, sizeof x);
    TPH_CHECK_EQ(tph_io_create(&io, file, io_fn, &x, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_io_outstanding(io), 0);
    /* A cancel with nothing started would unbalance the native count. */
    TPH_CHECK_EQ(tph_io_cancel(io), TPH_EINVAL);

    TPH_CHECK_EQ(tph_io_start(io), TPH_OK);
    TPH_CHECK_EQ(tph_io_start(io), TPH_OK);
    TPH_CHECK_EQ(tph_io_start(io), TPH_OK);
    TPH_CHECK_EQ(tph_io_outstanding(io), 3);
    /* One "fails synchronously": the caller cancels its start. */
    TPH_CHECK_EQ(tph_io_cancel(io), TPH_OK);
    TPH_CHECK_EQ(tph_io_outstanding(io), 2);
    TPH_CHECK(sim_io_complete(file, &ov[0], 0, 10));
    TPH_CHECK(ot_wait_count(&x.c, 1, TPH_TEST_PATIENCE));
    /* Counted down before the user function ran. */
    TPH_CHECK_EQ(x.outstanding_in_cb, 1);
    TPH_CHECK(sim_io_complete(file, &ov[1], 0, 32));
    TPH_CHECK_EQ(tph_io_run_down(io), TPH_OK);
    TPH_CHECK_EQ(ot_get(&x.c), 2);
    TPH_CHECK_EQ(x.bytes, 42);
    TPH_CHECK_EQ(tph_io_outstanding(io), 0);
    TPH_CHECK_EQ(tph_io_close(io), TPH_OK);
}

static void every_start_ends_in_a_callback_or_a_cancel(void **state) {
    (void)state;
    tph_test_run_both(accounting_body, NULL, NULL, 4);
}

static void rundown_body(void *ctx) {
    ot_blocked_pool b;
    io_ctx x;
    tph_io *io;
    void *file = sim_file_create();
    int ov;
    (void)ctx;
    memset(&x, 0, sizeof x);
    ot_blocked_pool_begin(&b);
    TPH_CHECK_EQ(tph_io_create(&io, file, io_fn, &x, &b.env), TPH_OK);
    TPH_CHECK_EQ(tph_io_start(io), TPH_OK);
    TPH_CHECK(sim_io_complete(file, &ov, 0, 7));
    tph_test_sleep(50 * TPH_TEST_MS);
    TPH_CHECK_EQ(ot_get(&x.c), 0); /* queued behind the parked thread */
    ot_gate_open(&b.gate);
    /* The run-down waits for the queued completion: none is dropped. */
    TPH_CHECK_EQ(tph_io_run_down(io), TPH_OK);
    TPH_CHECK_EQ(ot_get(&x.c), 1);
    TPH_CHECK_EQ(tph_io_outstanding(io), 0);
    ot_blocked_pool_end(&b);
    TPH_CHECK_EQ(tph_io_close(io), TPH_OK);
}

static void run_down_waits_for_queued_completions(void **state) {
    (void)state;
    tph_test_run_controlled(rundown_body, NULL, NULL, 1);
    tph_test_run_controlled(rundown_body, NULL, NULL, 2);
}

/* The other thread's part: it ends the open start only after the close has
 * had ample (virtual) time to return early. */
typedef struct late_cancel {
    tph_io *io;
    volatile uint32_t cancelled;
} late_cancel;

static void cancel_later(void *arg) {
    late_cancel *l = (late_cancel *)arg;
    tph_test_sleep(50 * TPH_TEST_MS);
    TPH_CHECK_EQ(tph_io_cancel(l->io), TPH_OK);
    tph_os_store32(&l->cancelled, 1);
}

static void open_start_close_body(void *ctx) {
    io_ctx x;
    late_cancel l;
    rt_thread *t;
    void *file = sim_file_create();
    (void)ctx;
    memset(&x, 0, sizeof x);
    memset(&l, 0, sizeof l);
    TPH_CHECK_EQ(tph_io_create(&l.io, file, io_fn, &x, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_io_start(l.io), TPH_OK);
    t = tph_test_spawn("canceller", cancel_later, &l);
    /* A start never ended: the close drains it -- it returns only once the
     * other thread cancelled it, and never frees the object under it (the
     * pool's wait blocks on an open start: conformance
     * io.wait_blocks_on_open_start). */
    TPH_CHECK_EQ(tph_io_close(l.io), TPH_OK);
    TPH_CHECK_EQ(tph_os_load32(&l.cancelled), 1);
    TPH_CHECK_EQ(ot_get(&x.c), 0);
    rt_join(t);
}

static void close_drains_a_start_until_it_is_cancelled(void **state) {
    (void)state;
    tph_test_run_controlled(open_start_close_body, NULL, NULL, 1);
    tph_test_run_controlled(open_start_close_body, NULL, NULL, 2);
}

static tph_err io_attempt(void *ctx) {
    tph_io *io = (tph_io *)0x1;
    tph_err rc = tph_io_create(&io, ctx, io_fn, NULL, NULL);
    if (rc != TPH_OK) {
        TPH_CHECK(io == NULL);
        return rc;
    }
    TPH_CHECK_EQ(tph_io_close(io), TPH_OK);
    return rc;
}

static void io_fault_body(void *ctx) {
    void *file = sim_file_create();
    (void)ctx;
    TPH_CHECK(ot_fault_loop(SIM_FAULT_ALLOC, io_attempt, file) >= 1);
    TPH_CHECK(ot_fault_loop(SIM_FAULT_IO_CREATE, io_attempt, file) >= 1);
}

static void io_create_failures_unwind(void **state) {
    (void)state;
    tph_test_run_controlled(io_fault_body, NULL, NULL, 1);
}

/* A close refuses starts from its first step: a start let in while the
 * close runs the object down would leave a completion aimed at memory the
 * close is about to free (or, on the real pool, a run-down that never
 * returns).  The closer is parked at its run-down's native wait. */
typedef struct closer_arg {
    tph_io *io;
    tph_err got;
} closer_arg;

static void closer(void *arg) {
    closer_arg *c = (closer_arg *)arg;
    c->got = tph_io_close(c->io);
}

static void start_during_close_body(void *ctx) {
    io_ctx x;
    closer_arg c;
    rt_thread *t;
    void *file = sim_file_create();
    (void)ctx;
    memset(&x, 0, sizeof x);
    TPH_CHECK_EQ(tph_io_create(&c.io, file, io_fn, &x, NULL), TPH_OK);
    c.got = TPH_EINVAL;
    tph_test_hold("WaitForThreadpoolIoCallbacks", TPH_TEST_ANY);
    t = tph_test_spawn("closer", closer, &c);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_io_start(c.io), TPH_EBUSY);
    TPH_CHECK_EQ(tph_io_outstanding(c.io), 0);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK_EQ(c.got, TPH_OK);
    TPH_CHECK_EQ(ot_get(&x.c), 0);
}

static void close_refuses_a_start_from_its_first_step(void **state) {
    (void)state;
    tph_test_run_both(start_during_close_body, NULL, NULL, 3);
}

/* A start is counted before its native call: parked at StartThreadpoolIo,
 * the object already says one start is outstanding (a completion can only
 * follow the caller's overlapped call, but counting first keeps the count
 * from ever going below zero whatever the backend does). */
static void starter(void *arg) { (void)tph_io_start((tph_io *)arg); }

static void start_counted_first_body(void *ctx) {
    io_ctx x;
    tph_io *io;
    rt_thread *t;
    void *file = sim_file_create();
    (void)ctx;
    memset(&x, 0, sizeof x);
    TPH_CHECK_EQ(tph_io_create(&io, file, io_fn, &x, NULL), TPH_OK);
    tph_test_hold("StartThreadpoolIo", TPH_TEST_ANY);
    t = tph_test_spawn("starter", starter, io);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_io_outstanding(io), 1);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK_EQ(tph_io_cancel(io), TPH_OK);
    TPH_CHECK_EQ(tph_io_outstanding(io), 0);
    TPH_CHECK_EQ(tph_io_close(io), TPH_OK);
}

static void start_is_counted_before_its_native_call(void **state) {
    (void)state;
    tph_test_run_both(start_counted_first_body, NULL, NULL, 2);
}

/* A cancel reads the outstanding count before deciding: whatever its stack
 * held before (zeros here, which an unread count would take for "nothing
 * started"), an outstanding start is cancelled. */
static void cancel_reads_count_body(void *ctx) {
    io_ctx x;
    tph_io *io;
    void *file = sim_file_create();
    (void)ctx;
    memset(&x, 0, sizeof x);
    TPH_CHECK_EQ(tph_io_create(&io, file, io_fn, &x, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_io_start(io), TPH_OK);
    tph_test_fill_stack(0);
    TPH_CHECK_EQ(tph_io_cancel(io), TPH_OK);
    TPH_CHECK_EQ(tph_io_outstanding(io), 0);
    TPH_CHECK_EQ(tph_io_close(io), TPH_OK);
}

static void cancel_reads_the_count_first(void **state) {
    (void)state;
    tph_test_run_controlled(cancel_reads_count_body, NULL, NULL, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(io_null_arguments),
        cmocka_unit_test(every_start_ends_in_a_callback_or_a_cancel),
        cmocka_unit_test(run_down_waits_for_queued_completions),
        cmocka_unit_test(close_drains_a_start_until_it_is_cancelled),
        cmocka_unit_test(io_create_failures_unwind),
        cmocka_unit_test(close_refuses_a_start_from_its_first_step),
        cmocka_unit_test(start_is_counted_before_its_native_call),
        cmocka_unit_test(cancel_reads_the_count_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
