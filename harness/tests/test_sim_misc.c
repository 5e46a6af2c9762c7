/* The sim's I/O accounting, cleanup groups, misuse reports, fault
 * injection and fail-fast. */
#include "test_sim_util.h"

static simt_counter g_count;
static volatile uint64_t g_bytes;
static void *volatile g_overlapped;

static void TPH_OS_CALLBACK io_cb(tph_os_instance *i, void *ctx, void *ov, uint32_t r, uintptr_t n, tph_os_io *io) {
    (void)i;
    (void)io;
    (void)r;
    tph_os_store64(&g_bytes, n);
    tph_os_store_ptr(&g_overlapped, ov);
    tph_os_fetch_add32(&((simt_counter *)ctx)->n, 1);
}

static void body_io(void) {
    memset(&g_count, 0, sizeof g_count);
    void *f = sim_file_create();
    tph_os_io *io = tph_os_io_create(f, io_cb, &g_count, NULL);
    CHECK(io != NULL);
    static int ov1, ov2;
    tph_os_io_start(io);
    tph_os_io_start(io);
    CHECK(simt_obj(io).io_pending == 2);
    CHECK(sim_io_complete(f, &ov1, 0, 42));
    CHECK(simt_counter_reaches(&g_count, 1));
    CHECK(tph_os_load64(&g_bytes) == 42 && tph_os_load_ptr(&g_overlapped) == &ov1);
    tph_os_io_cancel(io); /* the second read failed synchronously */
    CHECK(simt_obj(io).io_pending == 0);
    CHECK(sim_misuse_count() == 0);
    CHECK(!sim_io_complete(f, &ov2, 0, 1)); /* nothing started */
    CHECK(sim_misuse_count() == 1);
    tph_os_io_cancel(io); /* nothing to cancel */
    CHECK(sim_misuse_count() == 2);
    /* Close with an I/O outstanding: freed only after its completion ran. */
    tph_os_io_start(io);
    tph_os_io_close(io);
    CHECK(!simt_obj(io).freed);
    CHECK(sim_io_complete(f, &ov2, 0, 7));
    CHECK(simt_until(simt_obj_freed, io));
    CHECK(tph_os_load32(&g_count.n) == 2);
    /* A completion on a file no io object is bound to is misuse, and names
     * the file. */
    void *lone = sim_file_create();
    CHECK(!sim_io_complete(lone, &ov1, 0, 1));
    CHECK(sim_misuse_count() == 3);
    sim_misuse m;
    CHECK(sim_misuse_get(2, &m) && strcmp(m.call, "sim_io_complete") == 0);
    char buf[256];
    sim_misuse_format(&m, buf, sizeof buf);
    CHECK(strstr(buf, "no io object bound to the file") != NULL);
}
static void test_io_accounting(void **st) {
    (void)st;
    simt_run(body_io);
}

/* Close with a start open, then that start cancelled (the read failed
 * synchronously): the cancel ended the last thing the closed io object
 * waited for, so it is freed by the cancel, at once -- no completion will
 * ever come to free it later. */
static void body_io_close_then_cancel(void) {
    void *f = sim_file_create();
    tph_os_io *io = tph_os_io_create(f, io_cb, &g_count, NULL);
    CHECK(io != NULL);
    tph_os_io_start(io);
    tph_os_io_close(io);
    CHECK(!simt_obj(io).freed);
    tph_os_io_cancel(io);
    CHECK(simt_obj(io).freed);
    CHECK(simt_pool(NULL).bound_objects == 0);
    CHECK(sim_misuse_count() == 0);
}
static void test_io_freed_by_last_cancel(void **st) {
    (void)st;
    simt_run(body_io_close_then_cancel);
}

/* A cancelling I/O wait drops queued completions. */
static void body_io_cancel(void) {
    simt_blocker b;
    simt_block_private(&b, 1);
    memset(&g_count, 0, sizeof g_count);
    tph_os_env env = {b.pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    void *f = sim_file_create();
    tph_os_io *io = tph_os_io_create(f, io_cb, &g_count, &env);
    tph_os_io_start(io);
    tph_os_io_start(io);
    CHECK(sim_io_complete(f, NULL, 0, 1) && sim_io_complete(f, NULL, 0, 2));
    CHECK(simt_obj(io).queued == 2);
    tph_os_io_wait(io, true);
    CHECK(simt_obj(io).cancelled == 2);
    simt_unblock(&b);
    tph_os_io_wait(io, false);
    CHECK(tph_os_load32(&g_count.n) == 0);
    CHECK(tph_os_io_create(f, io_cb, NULL, NULL) == NULL); /* file already bound */
    CHECK(sim_misuse_count() == 1);
}
static void test_io_cancel_drops_completions(void **st) {
    (void)st;
    simt_run(body_io_cancel);
}

/* ---- cleanup groups ---- */
static volatile uint32_t g_cancel_calls;
static void *volatile g_cleanup_seen;
static void TPH_OS_CALLBACK group_cancel_cb(void *object_ctx, void *cleanup_ctx) {
    (void)object_ctx;
    tph_os_store_ptr(&g_cleanup_seen, cleanup_ctx);
    tph_os_fetch_add32(&g_cancel_calls, 1);
}
static void TPH_OS_CALLBACK work_cb(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i;
    (void)w;
    tph_os_fetch_add32(&((simt_counter *)ctx)->n, 1);
}
static void TPH_OS_CALLBACK wait_cb(tph_os_instance *i, void *ctx, tph_os_wait *w, uint32_t r) {
    (void)i;
    (void)w;
    (void)r;
    tph_os_fetch_add32(&((simt_counter *)ctx)->n, 1);
}

typedef struct group_setup {
    simt_blocker b;
    tph_os_group *g;
    tph_os_work *work;
    tph_os_wait *wait;
    tph_os_timer *timer;
    tph_os_work *outsider; /* same pool, not in the group */
} group_setup;

static void TPH_OS_CALLBACK timer_cb(tph_os_instance *i, void *ctx, tph_os_timer *t) {
    (void)i;
    (void)t;
    tph_os_fetch_add32(&((simt_counter *)ctx)->n, 1);
}

static void group_setup_make(group_setup *s) {
    memset(&g_count, 0, sizeof g_count);
    g_cancel_calls = 0;
    g_cleanup_seen = NULL;
    simt_block_private(&s->b, 1);
    s->g = tph_os_group_create();
    tph_os_env env = {s->b.pool, s->g, group_cancel_cb, TPH_OS_PRIORITY_NORMAL, false};
    s->work = tph_os_work_create(work_cb, &g_count, &env);
    s->wait = tph_os_wait_create(wait_cb, &g_count, &env);
    s->timer = tph_os_timer_create(timer_cb, &g_count, &env);
    tph_os_env plain = {s->b.pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    s->outsider = tph_os_work_create(work_cb, &g_count, &plain);
    tph_os_work_submit(s->work);
    tph_os_work_submit(s->work);
    tph_os_event *ev = tph_os_event_create(true, true);
    tph_os_wait_set(s->wait, ev, TPH_OS_INFINITE); /* queued at once */
    int64_t far = -(int64_t)(3600 * SIM_SECOND);
    tph_os_timer_set(s->timer, &far, 0, 0);
    CHECK(simt_obj(s->work).queued == 2 && simt_obj(s->wait).queued == 1);
    CHECK(simt_obj(s->work).group_id == simt_obj(s->g).id);
}

static int g_cleanup_ctx;
static void releaser(void *g) { tph_os_group_close_members((tph_os_group *)g, true, &g_cleanup_ctx); }

/* With cancel: pending dropped, cancel callback once per member (member ctx,
 * cleanup ctx), running callbacks waited for, members closed. */
static void body_group_cancel(void) {
    group_setup s;
    group_setup_make(&s);
    /* Released from another thread while the blocker still runs: the
     * release must wait for running callbacks of its members only. */
    rt_thread *t = rt_spawn("releaser", releaser, s.g, false);
    rt_join(t);
    CHECK(tph_os_load32(&g_cancel_calls) == 3);
    CHECK(tph_os_load_ptr(&g_cleanup_seen) == &g_cleanup_ctx);
    CHECK(simt_obj(s.work).group_cancel_calls == 1 && simt_obj(s.wait).group_cancel_calls == 1);
    CHECK(simt_obj(s.work).cancelled == 2 && simt_obj(s.wait).cancelled == 1);
    CHECK(simt_obj(s.work).freed && simt_obj(s.wait).freed && simt_obj(s.timer).freed);
    CHECK(!simt_obj(s.timer).armed);
    tph_os_work_submit(s.outsider);
    simt_unblock(&s.b);
    tph_os_work_wait(s.outsider, false);
    CHECK(tph_os_load32(&g_count.n) == 1); /* only the outsider ran */
    tph_os_work_submit(s.work);            /* a released member is closed */
    CHECK(sim_misuse_count() == 1);
    tph_os_group_close(s.g);
    CHECK(sim_misuse_count() == 1);
}
static void test_group_close_members_cancel(void **st) {
    (void)st;
    simt_run(body_group_cancel);
}

static void releaser_nocancel(void *g) { tph_os_group_close_members((tph_os_group *)g, false, NULL); }

/* Without cancel: pending callbacks run first; no cancel callback. */
static void body_group_nocancel(void) {
    group_setup s;
    group_setup_make(&s);
    rt_thread *t = rt_spawn("releaser", releaser_nocancel, s.g, false);
    simt_settle();
    CHECK(!simt_obj(s.work).freed); /* waiting for the pending ones */
    simt_unblock(&s.b);
    rt_join(t);
    CHECK(tph_os_load32(&g_count.n) == 3);
    CHECK(tph_os_load32(&g_cancel_calls) == 0);
    CHECK(simt_obj(s.work).freed && simt_obj(s.wait).freed && simt_obj(s.timer).freed);
}
static void test_group_close_members_no_cancel(void **st) {
    (void)st;
    simt_run(body_group_nocancel);
}

/* A member closed on its own leaves the group: no cancel call for it. */
static void body_group_member_closed(void) {
    group_setup s;
    group_setup_make(&s);
    CHECK(simt_obj(s.timer).group_id == simt_obj(s.g).id);
    tph_os_timer_close(s.timer);
    CHECK(simt_obj(s.timer).group_id == 0); /* 0: in no group */
    CHECK(simt_obj(s.timer).freed);         /* disarmed, nothing queued: freed at once */
    simt_unblock(&s.b);
    tph_os_group_close_members(s.g, true, NULL);
    CHECK(tph_os_load32(&g_cancel_calls) == 2);
    CHECK(simt_obj(s.timer).group_cancel_calls == 0);
}
static void test_group_member_closed_alone(void **st) {
    (void)st;
    simt_run(body_group_member_closed);
}

/* ---- misuse ---- */
static void body_misuse(void) {
    memset(&g_count, 0, sizeof g_count);
    tph_os_work *w = tph_os_work_create(work_cb, &g_count, NULL);
    tph_os_work_close(w);
    CHECK(sim_misuse_count() == 0);
    tph_os_work_submit(w);
    CHECK(sim_misuse_count() == 1);
    sim_misuse m;
    CHECK(sim_misuse_get(0, &m));
    char buf[128];
    sim_misuse_format(&m, buf, sizeof buf);
    CHECK(strcmp(buf, "SubmitThreadpoolWork(work#1): object already freed") == 0);
    tph_os_work_close(w); /* double close */
    CHECK(sim_misuse_count() == 2);
    CHECK(sim_misuse_get(1, &m) && strcmp(m.call, "CloseThreadpoolWork") == 0 && m.id == 1);

    tph_os_pool *p = tph_os_pool_create();
    tph_os_pool_close(p);
    tph_os_env env = {p, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    CHECK(tph_os_work_create(work_cb, NULL, &env) == NULL); /* env names a freed pool */
    CHECK(sim_misuse_count() == 3);
    CHECK(sim_misuse_get(2, &m) && m.kind == SIM_OBJ_POOL && m.id == 1);
    tph_os_wait_wait((tph_os_wait *)(uintptr_t)0x12345670, false); /* not a handle */
    CHECK(sim_misuse_count() == 4);
    CHECK(sim_misuse_get(3, &m) && m.id == 0 && strcmp(m.problem, "unknown handle") == 0);
    tph_os_pool_close(NULL);
    CHECK(sim_misuse_count() == 5);
    CHECK(!sim_misuse_get(5, &m));
}
static void test_misuse_reports(void **st) {
    (void)st;
    simt_run(body_misuse);
}

/* The misuse list grows past its first allocation (16 records) and past
 * the doubling after it, every record kept in order. */
static void body_many_misuses(void) {
    uintptr_t i;
    for (i = 1; i <= 40; i++) tph_os_wait_wait((tph_os_wait *)(i << 8), false); /* not handles */
    CHECK(sim_misuse_count() == 40);
    for (i = 0; i < 40; i++) {
        sim_misuse m;
        CHECK(sim_misuse_get(i, &m) && strcmp(m.call, "WaitForThreadpoolWaitCallbacks") == 0 &&
              strcmp(m.problem, "unknown handle") == 0);
    }
}
static void test_misuse_list_grows(void **st) {
    (void)st;
    simt_run(body_many_misuses);
}

/* Closed-but-busy objects report "closed", and stable ids follow creation order. */
static void body_ids(void) {
    tph_os_work *a = tph_os_work_create(work_cb, &g_count, NULL);
    tph_os_wait *b = tph_os_wait_create(wait_cb, &g_count, NULL);
    tph_os_work *c = tph_os_work_create(work_cb, &g_count, NULL);
    CHECK(sim_object_id(a) == 1 && sim_object_id(b) == 1 && sim_object_id(c) == 2);
    CHECK(sim_object_kind_of(b) == SIM_OBJ_WAIT && sim_object_kind_of(c) == SIM_OBJ_WORK);
    CHECK(sim_object_id(NULL) == 0 && sim_pool_count() == 1 && sim_pool_at(0) == NULL);
    tph_os_pool *p = tph_os_pool_create();
    CHECK(sim_pool_count() == 2 && sim_pool_at(1) == p && sim_object_id(p) == 1);
}
static void test_stable_ids(void **st) {
    (void)st;
    simt_run(body_ids);
    /* Same sequence, same handle values: handles are not addresses. */
}

/* The default pool's thread maximum is Windows' 512 (harness/sim/README.md),
 * and a private pool starts with the same: a pool stalls or queues
 * depending on it, so a scenario run against another maximum would model
 * another pool.  Read through the pool query, as the oracles do, in a
 * process begun with the defaults. */
static void body_default_maxima(void) {
    CHECK(simt_pool(NULL).max_threads == 512);
    tph_os_pool *p = tph_os_pool_create();
    CHECK(p != NULL && simt_pool(p).max_threads == 512);
}
static void test_default_pool_maxima(void **st) {
    (void)st;
    sim_config c = sim_config_default();
    assert_int_equal(c.default_max_threads, 512);
    assert_int_equal(c.private_max_threads, 512);
    simt_run(body_default_maxima);
}

/* The idle timeout after which a worker retires is Windows' 67 s on both
 * kinds of pool (harness/sim/README.md): the default pool is cold again
 * after it and can stall, so a scenario run with another timeout would
 * model another pool.  test_sim_sched checks a worker's retirement at
 * 67 s in virtual time. */
static void test_default_idle_timeouts(void **st) {
    (void)st;
    sim_config c = sim_config_default();
    assert_int_equal(c.default_idle_timeout, 67 * SIM_SECOND);
    assert_int_equal(c.private_idle_timeout, 67 * SIM_SECOND);
}

/* ---- faults ---- */
static void *create_of(sim_fault_kind k, tph_os_pool *pool) {
    tph_os_env env = {pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    switch (k) {
    case SIM_FAULT_ALLOC: return tph_os_alloc(8);
    case SIM_FAULT_POOL_CREATE: return tph_os_pool_create();
    case SIM_FAULT_WORK_CREATE: return tph_os_work_create(work_cb, NULL, &env);
    case SIM_FAULT_WAIT_CREATE: return tph_os_wait_create(wait_cb, NULL, &env);
    case SIM_FAULT_TIMER_CREATE: return tph_os_timer_create(timer_cb, NULL, &env);
    case SIM_FAULT_IO_CREATE: return tph_os_io_create(sim_file_create(), io_cb, NULL, &env);
    case SIM_FAULT_GROUP_CREATE: return tph_os_group_create();
    case SIM_FAULT_EVENT_CREATE: return tph_os_event_create(false, false);
    default: return NULL;
    }
}
static void body_faults(void) {
    for (int k = 0; k < SIM_FAULT_KIND_COUNT; k++) {
        sim_fault f = {(sim_fault_kind)k, 2, false, false, 0};
        sim_fault_arm(&f);
        uint64_t before = sim_fault_calls((sim_fault_kind)k);
        CHECK(create_of((sim_fault_kind)k, NULL) != NULL);
        CHECK(sim_fault_fired((sim_fault_kind)k) == 0);
        CHECK(create_of((sim_fault_kind)k, NULL) == NULL);
        CHECK(sim_fault_fired((sim_fault_kind)k) == 1);
        CHECK(create_of((sim_fault_kind)k, NULL) != NULL);
        CHECK(sim_fault_calls((sim_fault_kind)k) == before + 3);
        CHECK(sim_fault_matching_calls((sim_fault_kind)k) == 3);
        if (simt_failure[0]) {
            fprintf(stderr, "fault kind %s\n", sim_fault_kind_name((sim_fault_kind)k));
            return;
        }
    }
    /* From the Nth on. */
    sim_fault f = {SIM_FAULT_EVENT_CREATE, 2, true, false, 0};
    sim_fault_arm(&f);
    CHECK(tph_os_event_create(false, false) != NULL);
    CHECK(tph_os_event_create(false, false) == NULL);
    CHECK(tph_os_event_create(false, false) == NULL);
    CHECK(sim_fault_fired(SIM_FAULT_EVENT_CREATE) == 2);
    /* Only for one pool key. */
    tph_os_pool *p = tph_os_pool_create();
    sim_fault g = {SIM_FAULT_WORK_CREATE, 1, true, true, (uintptr_t)p};
    sim_fault_arm(&g);
    CHECK(create_of(SIM_FAULT_WORK_CREATE, NULL) != NULL);
    CHECK(create_of(SIM_FAULT_WORK_CREATE, p) == NULL);
    CHECK(sim_fault_matching_calls(SIM_FAULT_WORK_CREATE) == 1);
    sim_fault_disarm_all();
    CHECK(create_of(SIM_FAULT_WORK_CREATE, p) != NULL);
    CHECK(sim_misuse_count() == 0);
}
static void test_faults_fail_nth_call(void **st) {
    (void)st;
    simt_run(body_faults);
}

/* ---- fail-fast ---- */
static void TPH_OS_CALLBACK ff_cb(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i;
    (void)ctx;
    (void)w;
    tph_os_fail_fast("test: broken obligation");
}
static void ff_main(void *arg) {
    (void)arg;
    sim_process_begin(NULL);
    tph_os_work *w = tph_os_work_create(ff_cb, NULL, NULL);
    tph_os_work *idle = tph_os_work_create(work_cb, &g_count, NULL);
    tph_os_work_submit(idle);
    tph_os_work_submit(w);
    tph_os_work_wait(w, false); /* never returns: the process ends */
    simt_failure[0] = 'x';
}
static void test_fail_fast_ends_process(void **st) {
    (void)st;
    simt_failure[0] = '\0';
    memset(&g_count, 0, sizeof g_count);
    rt_native_options o;
    rt_native_options_default(&o);
    assert_int_equal(rt_native_run(ff_main, NULL, &o), 1);
    rt_native_result r;
    rt_native_last_result(&r);
    assert_true(r.ended);
    assert_string_equal(r.reason, "test: broken obligation");
    assert_string_equal(sim_fail_fast_reason(), "test: broken obligation");
    assert_true(sim_process_active());
    sim_process_end(); /* after an ended native run: joins and frees */
    assert_false(sim_process_active());
    assert_int_equal(simt_failure[0], '\0');
}

/* A program linking the installed library never calls sim_process_begin: on
 * the native runtime its first pool call, whichever it is, begins the
 * default process (sim_process.c, sim_need_process) and then does what it
 * was asked.  One run per entry point, each the first call of its process;
 * a call that took the model lock before making sure a process exists
 * crashed there instead. */
static void TPH_OS_CALLBACK first_nop_work(tph_os_instance *i, void *c, tph_os_work *w) {
    (void)i, (void)c, (void)w;
}
static void TPH_OS_CALLBACK first_nop_timer(tph_os_instance *i, void *c, tph_os_timer *t) {
    (void)i, (void)c, (void)t;
}
static void TPH_OS_CALLBACK first_nop_wait(tph_os_instance *i, void *c, tph_os_wait *w, uint32_t r) {
    (void)i, (void)c, (void)w, (void)r;
}
typedef enum {
    FIRST_EVENT, FIRST_GROUP, FIRST_FILE, FIRST_IO_COMPLETE, FIRST_IO_WAIT, FIRST_IO_CLOSE, FIRST_OBJECT_HANDLE, FIRST_POOL,
    FIRST_POOL_COUNT, FIRST_MISUSE_COUNT, FIRST_TIMER, FIRST_WAIT, FIRST_WORK, FIRST_GROUP_CLOSE, FIRST_POOL_SET_MAX,
    FIRST_POOL_SET_MIN, FIRST_EVENT_SET, FIRST_TIMER_CLOSE, FIRST_TIMER_WAIT, FIRST_COUNT
} first_call;
static first_call g_first;
static void first_call_main(void *arg) {
    (void)arg;
    CHECK(!sim_process_active());
    const char *want_call = NULL; /* a call on a null handle: its one misuse report */
    const char *want_problem = "null handle";
    switch (g_first) {
    case FIRST_EVENT: {
        tph_os_event *e = tph_os_event_create(true, false);
        CHECK(e != NULL);
        tph_os_event_close(e);
        break;
    }
    case FIRST_GROUP: {
        tph_os_group *g = tph_os_group_create();
        CHECK(g != NULL);
        tph_os_group_close(g);
        break;
    }
    case FIRST_FILE:
        CHECK(sim_file_create() != NULL);
        break;
    case FIRST_IO_COMPLETE:
        CHECK(!sim_io_complete(NULL, NULL, 0, 0));
        want_call = "sim_io_complete";
        break;
    case FIRST_IO_WAIT:
        tph_os_io_wait(NULL, false);
        want_call = "WaitForThreadpoolIoCallbacks";
        break;
    case FIRST_IO_CLOSE:
        tph_os_io_close(NULL);
        want_call = "CloseThreadpoolIo";
        break;
    case FIRST_OBJECT_HANDLE:
        CHECK(sim_object_handle(SIM_OBJ_WORK, 1) == NULL); /* nothing made yet */
        break;
    case FIRST_POOL: {
        tph_os_pool *p = tph_os_pool_create();
        CHECK(p != NULL);
        tph_os_pool_close(p);
        break;
    }
    case FIRST_POOL_COUNT:
        CHECK(sim_pool_count() == 1);
        break;
    case FIRST_MISUSE_COUNT:
        CHECK(sim_misuse_count() == 0);
        break;
    case FIRST_TIMER: {
        tph_os_timer *t = tph_os_timer_create(first_nop_timer, NULL, NULL);
        CHECK(t != NULL);
        tph_os_timer_close(t);
        break;
    }
    case FIRST_WAIT: {
        tph_os_wait *w = tph_os_wait_create(first_nop_wait, NULL, NULL);
        CHECK(w != NULL);
        tph_os_wait_close(w);
        break;
    }
    case FIRST_WORK: {
        tph_os_work *w = tph_os_work_create(first_nop_work, NULL, NULL);
        CHECK(w != NULL);
        tph_os_work_close(w);
        break;
    }
    case FIRST_GROUP_CLOSE:
        tph_os_group_close(NULL);
        want_call = "CloseThreadpoolCleanupGroup";
        break;
    case FIRST_POOL_SET_MAX: /* the default pool's maximum is not the caller's to set */
        tph_os_pool_set_max(NULL, 1);
        want_call = "SetThreadpoolThreadMaximum";
        want_problem = "default pool";
        break;
    case FIRST_POOL_SET_MIN: /* nor its minimum */
        CHECK(!tph_os_pool_set_min(NULL, 1));
        want_call = "SetThreadpoolThreadMinimum";
        want_problem = "default pool";
        break;
    case FIRST_EVENT_SET:
        tph_os_event_set(NULL);
        want_call = "SetEvent";
        break;
    case FIRST_TIMER_CLOSE:
        tph_os_timer_close(NULL);
        want_call = "CloseThreadpoolTimer";
        break;
    case FIRST_TIMER_WAIT:
        tph_os_timer_wait(NULL, false);
        want_call = "WaitForThreadpoolTimerCallbacks";
        break;
    case FIRST_COUNT:
        break;
    }
    CHECK(sim_process_active());
    CHECK(sim_misuse_count() == (want_call ? 1u : 0u));
    sim_misuse m;
    if (want_call) CHECK(sim_misuse_get(0, &m) && strcmp(m.call, want_call) == 0 && strcmp(m.problem, want_problem) == 0);
    sim_process_end();
}
static void test_first_call_begins_process(void **st) {
    (void)st;
    for (g_first = FIRST_EVENT; g_first < FIRST_COUNT; g_first++) {
        simt_failure[0] = '\0';
        assert_false(sim_process_active());
        rt_native_options o;
        rt_native_options_default(&o);
        o.seed = 1;
        assert_int_equal(rt_native_run(first_call_main, NULL, &o), 0);
        if (simt_failure[0]) fail_msg("first call %d: %s", (int)g_first, simt_failure);
        assert_false(sim_process_active());
    }
}

/* The queries that need no process answer "nothing" without one, and do not
 * begin one: no core block is live (the count is the process's: ending
 * the process frees them all), no handle is known, no fail-fast happened. */
static void alloc_and_end_main(void *arg) {
    (void)arg;
    sim_process_begin(NULL);
    CHECK(tph_os_alloc(64) != NULL); /* never freed: the end frees it */
    CHECK(sim_core_blocks_live() == 1);
    sim_process_end();
}
static void test_queries_without_process(void **st) {
    (void)st;
    simt_failure[0] = '\0';
    rt_native_options o;
    rt_native_options_default(&o);
    o.seed = 1;
    assert_int_equal(rt_native_run(alloc_and_end_main, NULL, &o), 0);
    if (simt_failure[0]) fail_msg("%s", simt_failure);
    assert_false(sim_process_active());
    assert_int_equal(sim_core_blocks_live(), 0);
    void *some_handle = (void *)(uintptr_t)((1u << 4) | SIM_OBJ_WORK);
    assert_int_equal(sim_object_kind_of(some_handle), SIM_OBJ_NONE);
    assert_int_equal(sim_object_id(some_handle), 0);
    assert_null(sim_fail_fast_reason());
    assert_false(sim_process_active());
}

/* Outside a simulated process the core's allocations are plain blocks,
 * tracked by no process: allocated, written, freed, and counted nowhere. */
static void test_alloc_outside_a_process_is_untracked(void **state) {
    unsigned char *p;
    (void)state;
    assert_false(sim_process_active());
    p = (unsigned char *)tph_os_alloc(64);
    assert_non_null(p);
    memset(p, 0xa5, 64);
    assert_int_equal(p[63], 0xa5);
    tph_os_free(p);
    tph_os_free(NULL);
    assert_false(sim_process_active());
    assert_int_equal(sim_core_blocks_live(), 0);
}

/* Each fault site by its scenario word; "?" past the sites. */
static void test_fault_kinds_have_names(void **state) {
    static const char *const want[SIM_FAULT_KIND_COUNT] = {
        "alloc", "pool-create", "work-create", "wait-create", "timer-create", "io-create", "group-create",
        "event-create"};
    int k;
    (void)state;
    for (k = 0; k < SIM_FAULT_KIND_COUNT; k++) assert_string_equal(sim_fault_kind_name((sim_fault_kind)k), want[k]);
    assert_string_equal(sim_fault_kind_name(SIM_FAULT_KIND_COUNT), "?");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_outside_a_process_is_untracked),
        cmocka_unit_test(test_fault_kinds_have_names),
        cmocka_unit_test(test_io_accounting),
        cmocka_unit_test(test_io_cancel_drops_completions),
        cmocka_unit_test(test_io_freed_by_last_cancel),
        cmocka_unit_test(test_group_close_members_cancel),
        cmocka_unit_test(test_group_close_members_no_cancel),
        cmocka_unit_test(test_group_member_closed_alone),
        cmocka_unit_test(test_misuse_reports),
        cmocka_unit_test(test_misuse_list_grows),
        cmocka_unit_test(test_stable_ids),
        cmocka_unit_test(test_default_pool_maxima),
        cmocka_unit_test(test_default_idle_timeouts),
        cmocka_unit_test(test_faults_fail_nth_call),
        cmocka_unit_test(test_fail_fast_ends_process),
        cmocka_unit_test(test_first_call_begins_process),
        cmocka_unit_test(test_queries_without_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
