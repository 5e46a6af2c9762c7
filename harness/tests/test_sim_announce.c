/* The announcement rule (harness/sim/sim_announce.c): a native call must
 * follow its caller's `api/<call>` record naming the same object and
 * argument.  Each way of breaking it is reported, and a kept rule is not.
 * And the freed-context check (os_sim.c): a callback whose context the core
 * freed is reported and not run. */
#include "test_sim_util.h"

static const char *first_problem(void) {
    static sim_misuse m;
    if (!sim_misuse_get(0, &m)) return "";
    return m.problem;
}

static void body_announced_calls_are_clean(void) {
    sim_announce_check(true);
    sim_announce_note("api", "CreateThreadpool", 0, 0);
    tph_os_pool *p = tph_os_pool_create();
    CHECK(p != NULL);
    sim_announce_note("api", "SetThreadpoolThreadMaximum", (uintptr_t)p, 3);
    tph_os_pool_set_max(p, 3);
    tph_os_env env = {p, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    sim_announce_note("api", "CreateThreadpoolWork", (uintptr_t)p, 0);
    tph_os_work *w = tph_os_work_create(NULL, NULL, &env);
    CHECK(w != NULL);
    /* The object's handle or its pool's key (how the registry names its
     * repair work) both name it. */
    sim_announce_note("api", "WaitForThreadpoolWorkCallbacks", (uintptr_t)w, 1);
    tph_os_work_wait(w, true);
    sim_announce_note("api", "CloseThreadpoolWork", (uintptr_t)p, 0);
    tph_os_work_close(w);
    sim_announce_note("api", "CloseThreadpool", (uintptr_t)p, 0);
    tph_os_pool_close(p);
    CHECK(sim_misuse_count() == 0);
    sim_announce_check(false);
}
static void test_announced_calls_are_clean(void **st) {
    (void)st;
    simt_run(body_announced_calls_are_clean);
}

/* One broken announcement per run: the first report names the problem. */
typedef enum { UNANNOUNCED, OTHER_CALL, OTHER_OBJECT, OTHER_ARGUMENT, CONSUMED, RECORD_BETWEEN } breach;
static breach g_breach;

static void body_breach(void) {
    sim_announce_check(true);
    sim_announce_note("api", "CreateThreadpoolWork", 0, 0);
    tph_os_work *w = tph_os_work_create(NULL, NULL, NULL);
    sim_announce_note("api", "CreateThreadpoolWork", 0, 0);
    tph_os_work *other = tph_os_work_create(NULL, NULL, NULL);
    CHECK(w != NULL && other != NULL && sim_misuse_count() == 0);
    switch (g_breach) {
    case UNANNOUNCED:
        break;
    case OTHER_CALL:
        sim_announce_note("api", "CloseThreadpoolWork", (uintptr_t)w, 0);
        break;
    case OTHER_OBJECT:
        sim_announce_note("api", "WaitForThreadpoolWorkCallbacks", (uintptr_t)other, 0);
        break;
    case OTHER_ARGUMENT:
        sim_announce_note("api", "WaitForThreadpoolWorkCallbacks", (uintptr_t)w, 1);
        break;
    case RECORD_BETWEEN: /* another record of the thread after the announcement */
        sim_announce_note("api", "WaitForThreadpoolWorkCallbacks", (uintptr_t)w, 0);
        sim_announce_note("heal", "repair-closed", 0, 0);
        break;
    case CONSUMED: /* one record announces one call */
        sim_announce_note("api", "WaitForThreadpoolWorkCallbacks", (uintptr_t)w, 0);
        tph_os_work_wait(w, false);
        CHECK(sim_misuse_count() == 0);
        break;
    }
    tph_os_work_wait(w, false);
    /* A record between the announcement and the call breaks both halves:
     * the announced call was not made next, and the call had no record
     * just before it. */
    size_t want_n = g_breach == RECORD_BETWEEN ? 2 : 1;
    CHECK(sim_misuse_count() == want_n);
    const char *want = g_breach == OTHER_CALL       ? "names another call"
                       : g_breach == OTHER_OBJECT   ? "names another object"
                       : g_breach == OTHER_ARGUMENT ? "carries another argument"
                       : g_breach == RECORD_BETWEEN ? "announced but never called"
                                                    : "no api/ trace record";
    CHECK(strstr(first_problem(), want) != NULL);
    /* Announced and then never called: reported when checking ends. */
    sim_announce_note("api", "CloseThreadpoolWork", (uintptr_t)w, 0);
    sim_announce_check(false);
    CHECK(sim_misuse_count() == want_n + 1);
    /* Off: nothing is checked. */
    tph_os_work_close(w);
    tph_os_work_close(other);
    CHECK(sim_misuse_count() == want_n + 1);
}
static void test_each_breach_is_reported(void **st) {
    (void)st;
    for (g_breach = UNANNOUNCED; g_breach <= RECORD_BETWEEN; g_breach++) simt_run(body_breach);
}

/* A create names no object yet: its record's object is 0 (and so is its
 * pool key, CreateThreadpoolCleanupGroup having no pool).  A record naming
 * any other object announced some other call. */
static void body_create_names_no_object(void) {
    sim_announce_check(true);
    sim_announce_note("api", "CreateThreadpoolCleanupGroup", 1, 0);
    tph_os_group *g = tph_os_group_create();
    CHECK(g != NULL);
    CHECK(sim_misuse_count() == 1);
    CHECK(strstr(first_problem(), "names another object") != NULL);
    sim_announce_note("api", "CloseThreadpoolCleanupGroup", (uintptr_t)g, 0);
    tph_os_group_close(g);
    CHECK(sim_misuse_count() == 1);
    sim_announce_check(false);
}
static void test_create_names_no_object(void **st) {
    (void)st;
    simt_run(body_create_names_no_object);
}

static volatile uint32_t g_ran;

static void TPH_OS_CALLBACK count_run(tph_os_instance *i, void *ctx, tph_os_work *w) {
    (void)i;
    (void)ctx;
    (void)w;
    tph_os_fetch_add32(&g_ran, 1);
}

static void body_callback_into_freed_context(void) {
    simt_blocker b;
    g_ran = 0;
    simt_block_private(&b, 1);
    tph_os_env env = {b.pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    void *live = tph_os_alloc(64), *gone = tph_os_alloc(64);
    tph_os_work *w1 = tph_os_work_create(count_run, live, &env);
    tph_os_work *w2 = tph_os_work_create(count_run, gone, &env);
    tph_os_work_submit(w1);
    tph_os_work_submit(w2);
    tph_os_free(gone); /* freed with its callback still queued */
    simt_unblock(&b);
    tph_os_work_wait(w1, false);
    tph_os_work_wait(w2, false);
    CHECK(tph_os_load32(&g_ran) == 1);
    CHECK(sim_misuse_count() == 1);
    CHECK(strstr(first_problem(), "freed by the core") != NULL);
    /* An address handed out again is a live context again. */
    tph_os_free(live);
    tph_os_work_close(w1);
    tph_os_work_close(w2);
}
static void test_callback_into_freed_context_is_reported(void **st) {
    (void)st;
    simt_run(body_callback_into_freed_context);
}

/* The report names the kind of callback that would have run: one queued of
 * each kind, all four contexts freed, four reports in queue order. */
static void TPH_OS_CALLBACK count_timer(tph_os_instance *i, void *ctx, tph_os_timer *t) {
    (void)i, (void)ctx, (void)t;
    tph_os_fetch_add32(&g_ran, 1);
}
static void TPH_OS_CALLBACK count_wait(tph_os_instance *i, void *ctx, tph_os_wait *w, uint32_t r) {
    (void)i, (void)ctx, (void)w, (void)r;
    tph_os_fetch_add32(&g_ran, 1);
}
static void TPH_OS_CALLBACK count_io(tph_os_instance *i, void *ctx, void *ov, uint32_t r, uintptr_t n, tph_os_io *io) {
    (void)i, (void)ctx, (void)ov, (void)r, (void)n, (void)io;
    tph_os_fetch_add32(&g_ran, 1);
}
static void body_freed_context_report_names_the_kind(void) {
    static const char *const want[] = {"work callback", "timer callback", "wait callback", "io callback"};
    simt_blocker b;
    const int64_t now = 0;
    g_ran = 0;
    simt_block_private(&b, 1);
    tph_os_env env = {b.pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    void *gone[4];
    for (int k = 0; k < 4; k++) gone[k] = tph_os_alloc(64);
    tph_os_work *w = tph_os_work_create(count_run, gone[0], &env);
    tph_os_timer *t = tph_os_timer_create(count_timer, gone[1], &env);
    tph_os_wait *wt = tph_os_wait_create(count_wait, gone[2], &env);
    void *file = sim_file_create();
    tph_os_io *io = tph_os_io_create(file, count_io, gone[3], &env);
    tph_os_event *ev = tph_os_event_create(true, true);
    tph_os_work_submit(w);
    tph_os_timer_set(t, &now, 0, 0);
    CHECK(simt_until(simt_obj_queued_is_1, t));
    tph_os_wait_set(wt, ev, TPH_OS_INFINITE);
    tph_os_io_start(io);
    CHECK(sim_io_complete(file, NULL, 0, 1));
    for (int k = 0; k < 4; k++) tph_os_free(gone[k]);
    simt_unblock(&b);
    tph_os_work_wait(w, false);
    tph_os_timer_wait(t, false);
    tph_os_wait_wait(wt, false);
    tph_os_io_wait(io, false);
    CHECK(tph_os_load32(&g_ran) == 0);
    CHECK(sim_misuse_count() == 4);
    for (size_t k = 0; k < 4; k++) {
        sim_misuse m;
        CHECK(sim_misuse_get(k, &m) && strcmp(m.call, want[k]) == 0);
    }
    tph_os_work_close(w);
    tph_os_timer_close(t);
    tph_os_wait_close(wt);
    tph_os_io_close(io);
    tph_os_event_close(ev);
}
static void test_freed_context_report_names_the_kind(void **st) {
    (void)st;
    simt_run(body_freed_context_report_names_the_kind);
}

/* Every freed context is remembered, not only the first: two contexts
 * freed with their callbacks queued are both reported and neither runs. */
static void body_two_freed_contexts(void) {
    simt_blocker b;
    g_ran = 0;
    simt_block_private(&b, 1);
    tph_os_env env = {b.pool, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    void *live = tph_os_alloc(64), *gone1 = tph_os_alloc(64), *gone2 = tph_os_alloc(64);
    tph_os_work *w0 = tph_os_work_create(count_run, live, &env);
    tph_os_work *w1 = tph_os_work_create(count_run, gone1, &env);
    tph_os_work *w2 = tph_os_work_create(count_run, gone2, &env);
    tph_os_work_submit(w0);
    tph_os_work_submit(w1);
    tph_os_work_submit(w2);
    tph_os_free(gone1);
    tph_os_free(gone2); /* second on the freed list */
    simt_unblock(&b);
    tph_os_work_wait(w0, false);
    tph_os_work_wait(w1, false);
    tph_os_work_wait(w2, false);
    CHECK(tph_os_load32(&g_ran) == 1);
    CHECK(sim_misuse_count() == 2);
    tph_os_free(live);
    tph_os_work_close(w0);
    tph_os_work_close(w1);
    tph_os_work_close(w2);
}
static void test_two_freed_contexts_are_reported(void **st) {
    (void)st;
    simt_run(body_two_freed_contexts);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_announced_calls_are_clean),
        cmocka_unit_test(test_each_breach_is_reported),
        cmocka_unit_test(test_create_names_no_object),
        cmocka_unit_test(test_callback_into_freed_context_is_reported),
        cmocka_unit_test(test_freed_context_report_names_the_kind),
        cmocka_unit_test(test_two_freed_contexts_are_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
