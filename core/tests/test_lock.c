/* The user's synchronisation beside the pool: tph_lock excludes (a
 * scheduling point inside the section lets the others run, and none of them
 * gets in), a lock its holder takes again is reported, not a hang, and
 * tph_handle_wait returns signalled once a callback sets the event, or
 * timed out after its timeout in virtual time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "objects_test.h"

static void lock_null_arguments(void **state) {
    (void)state;
    assert_int_equal(tph_lock_create(NULL), TPH_EINVAL);
    assert_int_equal(tph_lock_acquire(NULL), TPH_EINVAL);
    assert_int_equal(tph_lock_release(NULL), TPH_EINVAL);
    assert_int_equal(tph_lock_close(NULL), TPH_EINVAL);
    assert_int_equal(tph_handle_wait(NULL, 0, NULL), TPH_EINVAL);
}

typedef struct section_case {
    tph_lock *lock;
    tph_handle *ev;
    uint32_t inside, most_inside, total; /* under the lock */
} section_case;

static void section_cb(tph_work *w, void *ctx) {
    section_case *c = (section_case *)ctx;
    int i;
    (void)w;
    for (i = 0; i < 4; i++) {
        TPH_CHECK_EQ(tph_lock_acquire(c->lock), TPH_OK);
        c->inside++;
        if (c->inside > c->most_inside) c->most_inside = c->inside;
        tph_event_set(c->ev); /* a scheduling point inside the section */
        c->inside--;
        c->total++;
        TPH_CHECK_EQ(tph_lock_release(c->lock), TPH_OK);
    }
}

static section_case g_section;

static void section_body(void *ctx) {
    section_case *c = &g_section;
    tph_work *w;
    (void)ctx;
    memset(c, 0, sizeof *c);
    TPH_CHECK_EQ(tph_lock_create(&c->lock), TPH_OK);
    TPH_CHECK_EQ(tph_event_create(&c->ev, true, false), TPH_OK);
    TPH_CHECK_EQ(tph_work_create(&w, section_cb, c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_work_close(w), TPH_OK);
    TPH_CHECK_EQ(c->total, 12);
    TPH_CHECK_EQ(c->most_inside, 1);
    TPH_CHECK_EQ(tph_lock_close(c->lock), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(c->ev), TPH_OK);
}

/* 100 seeds: without the exclusion, most of them let a second callback in
 * (the event set inside the section is a switch point). */
static void lock_excludes_across_callbacks(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 1; seed <= 100; seed++) tph_test_run_controlled(section_body, NULL, NULL, seed);
}

static void self_deadlock_body(void *ctx) {
    tph_lock *l;
    (void)ctx;
    TPH_CHECK_EQ(tph_lock_create(&l), TPH_OK);
    TPH_CHECK_EQ(tph_lock_acquire(l), TPH_OK);
    tph_lock_acquire(l); /* not recursive: the scheduler reports it */
}

static void a_lock_taken_twice_is_reported_not_a_hang(void **state) {
    char *blocked = NULL;
    tph_test_outcome o;
    (void)state;
    o = tph_test_run_controlled_outcome(self_deadlock_body, NULL, NULL, 1, &blocked);
    assert_false(o.finished);
    assert_non_null(strstr(o.reason, "recursive rt_lock_acquire"));
    assert_non_null(blocked);
    free(blocked);
}

typedef struct signal_case {
    tph_handle *ev;
} signal_case;

static void signal_cb(tph_work *w, void *ctx) {
    (void)w;
    tph_event_set(((signal_case *)ctx)->ev);
}

static void handle_wait_body(void *ctx) {
    signal_case c;
    tph_work *w;
    bool signalled = true;
    uint64_t before;
    (void)ctx;
    TPH_CHECK_EQ(tph_event_create(&c.ev, false, false), TPH_OK);
    before = rt_now();
    TPH_CHECK_EQ(tph_handle_wait(c.ev, 10, &signalled), TPH_OK);
    TPH_CHECK(!signalled);
    TPH_CHECK(rt_now() - before >= 10 * TPH_TEST_MS);
    TPH_CHECK_EQ(tph_work_create(&w, signal_cb, &c, NULL), TPH_OK);
    TPH_CHECK_EQ(tph_work_submit(w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_wait(c.ev, TPH_WAIT_FOREVER, &signalled), TPH_OK);
    TPH_CHECK(signalled);
    TPH_CHECK_EQ(tph_work_close(w), TPH_OK);
    TPH_CHECK_EQ(tph_handle_close(c.ev), TPH_OK);
}

static void handle_wait_signalled_or_timed_out(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 1; seed <= 20; seed++) tph_test_run_controlled(handle_wait_body, NULL, NULL, seed);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lock_null_arguments),
        cmocka_unit_test(lock_excludes_across_callbacks),
        cmocka_unit_test(a_lock_taken_twice_is_reported_not_a_hang),
        cmocka_unit_test(handle_wait_signalled_or_timed_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
