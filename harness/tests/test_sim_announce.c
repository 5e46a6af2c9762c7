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
        cmocka_unit_test(test_two_freed_contexts_are_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
