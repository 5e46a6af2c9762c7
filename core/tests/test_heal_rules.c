/* Registry and healer rules each held by an outcome that changes when the
 * rule is broken: the tick's batched walk past one batch, the cancellation
 * stamped before the healer is started, and the overdue arithmetic (its
 * saturation and its exact threshold). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"

#if TPHEAL_SELF_HEAL
#include "healer.h"
#include "registry.h"

/* 5 s in interrupt-time units: healer.c's OVERDUE_AFTER, restated here as
 * the documented figure the test holds the code to. */
#define OVERDUE (5ull * TPH_TEST_SECOND)

/* ---- one tick visits every entry, however many batches ------------------- */

/* More than one of the tick's 16-entry batches, and not a multiple of 16
 * (kept small: the test support counts at most 256 (event, pool) pairs). */
#define MANY 21

static void body_tick_walks_every_batch(void *ctx) {
    tph_os_pool *pools[MANY];
    tph_registration regs[MANY];
    size_t i;
    (void)ctx;
    for (i = 0; i < MANY; i++) {
        tph_test_announce("CreateThreadpool", 0, 0);
        pools[i] = tph_os_pool_create();
        TPH_CHECK(pools[i] != NULL);
        regs[i] = tph_register((uintptr_t)pools[i]);
        TPH_CHECK(regs[i].entry != NULL);
    }
    tph_test_sleep(TPH_TEST_TICK);
    for (i = 0; i < MANY; i++) tph_entry_stamp_cancelled(regs[i].entry, tph_heal_now());
    tph_test_sleep(TPH_TEST_TICK + 1);
    /* One pass: every owed entry gets exactly one submit, none is visited
     * twice (a second visit would read its repair as in flight). */
    tph_heal_tick();
    for (i = 0; i < MANY; i++)
        TPH_CHECK_EQ(tph_test_event_count("repair-submitted", (uintptr_t)pools[i]), 1);
    TPH_CHECK_EQ(tph_test_event_count("repair-submitted", TPH_TEST_ANY), MANY);
    TPH_CHECK_EQ(tph_test_event_count("repair-in-flight", TPH_TEST_ANY), 0);
    TPH_CHECK(tph_test_wait_event("repair-ran", TPH_TEST_ANY, MANY, TPH_TEST_PATIENCE));
    for (i = 0; i < MANY; i++) tph_registration_release(&regs[i]);
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
    for (i = 0; i < MANY; i++) {
        tph_test_announce("CloseThreadpool", (uintptr_t)pools[i], 0);
        tph_os_pool_close(pools[i]);
    }
}

static void test_tick_walks_every_batch(void **state) {
    (void)state;
    tph_test_run_both(body_tick_walks_every_batch, NULL, NULL, 2);
}

/* ---- the cancellation is stamped before the healer starts ------------------ */

typedef struct start_seen {
    uintptr_t key;
    bool started;
    uint64_t cancelled_at_start;
} start_seen;

static void on_healer_started(const tph_trace_record *rec, void *ctx) {
    start_seen *s = (start_seen *)ctx;
    tph_heal_entry_info info;
    if (strcmp(rec->event, "healer-started") != 0) return;
    s->started = true;
    if (tph_heal_entry_get(s->key, &info)) s->cancelled_at_start = info.last_cancelled;
}

static void body_stamp_before_healer_start(void *ctx) {
    start_seen *s = (start_seen *)ctx;
    tph_test_blocker b;
    tph_registration r;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    memset(s, 0, sizeof *s);
    s->key = b.key;
    tph_test_chain_hook(on_healer_started, s);
    TPH_CHECK(!tph_heal_healer_running());
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_owe_repair(&r));
    tph_test_chain_hook(NULL, NULL);
    /* The healer's first tick may run the moment it exists: by then the
     * pool it was started for must already read as owed. */
    TPH_CHECK(s->started);
    TPH_CHECK(s->cancelled_at_start != 0);
    TPH_CHECK_EQ(s->cancelled_at_start, tph_test_entry(b.key).last_cancelled);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_stamp_before_healer_start(void **state) {
    start_seen s;
    (void)state;
    tph_test_run_both(body_stamp_before_healer_start, &s, NULL, 3);
}

/* ---- a cancellation with an entry marks it without registering again -------- */

static void body_cancel_uses_own_entry(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_owe_repair(&r));
    /* The retry is for an empty registration only: a claim that holds an
     * entry is marked directly, with no second claim taken and given back. */
    TPH_CHECK_EQ(tph_test_event_count("registered", b.key), 0);
    TPH_CHECK_EQ(tph_test_event_count("released", b.key), 0);
    TPH_CHECK_EQ(tph_test_event_count("cancelled", b.key), 1);
    TPH_CHECK_EQ(tph_test_entry(b.key).objects, 1);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_cancel_uses_own_entry(void **state) {
    (void)state;
    tph_test_run_controlled(body_cancel_uses_own_entry, NULL, NULL, 1);
}

/* ---- overdue arithmetic ------------------------------------------------------ */

/* Sleeps to just past the next interrupt-clock tick, so the next few
 * readings of tph_heal_now() (within one tick) are equal. */
static void align_to_tick(void) {
    uint64_t now = rt_now();
    tph_test_sleep(TPH_TEST_TICK - now % TPH_TEST_TICK + 1);
}

typedef struct overdue_case {
    /* last_submitted relative to the clock at the tick: submitted = now - back
     * (back may be "negative" via ahead) */
    uint64_t back;
    uint64_t ahead;
    bool expect_overdue;
} overdue_case;

/* b of the last "repair-in-flight": how long the repair has waited. */
static uint64_t inflight_waited = UINT64_MAX;

static void note_inflight(const tph_trace_record *rec, void *ctx) {
    (void)ctx;
    if (strcmp(rec->event, "repair-in-flight") == 0) inflight_waited = rec->b;
}

static void body_overdue_threshold(void *ctx) {
    const overdue_case *oc = (const overdue_case *)ctx;
    tph_test_blocker b;
    tph_registration r;
    uint64_t now;
    TPH_CHECK(tph_test_blocker_start(&b)); /* kept closed: nothing runs */
    tph_test_chain_hook(note_inflight, NULL);
    inflight_waited = UINT64_MAX;
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    /* Far enough into the run that `now - back` is a real past reading. */
    tph_test_sleep(2 * OVERDUE);
    align_to_tick();
    now = tph_heal_now();
    tph_entry_stamp_cancelled(r.entry, now);
    /* One repair in flight, submitted at the chosen moment. */
    tph_entry_stamp_submitted(r.entry, now - oc->back + oc->ahead);
    tph_heal_tick();
    TPH_CHECK_EQ(tph_heal_now(), now); /* the tick read the same clock */
    TPH_CHECK_EQ(tph_test_event_count("repair-overdue", b.key), oc->expect_overdue ? 1 : 0);
    TPH_CHECK_EQ(tph_test_event_count("repair-in-flight", b.key), oc->expect_overdue ? 0 : 1);
    TPH_CHECK_EQ(tph_test_entry(b.key).overdue_episodes, oc->expect_overdue ? 1 : 0);
    /* The wait it reports: the time since the submission, and 0 -- not a
     * wrapped or invented figure -- for one stamped after the clock read. */
    if (!oc->expect_overdue) TPH_CHECK_EQ(inflight_waited, oc->ahead ? 0 : oc->back);
    tph_test_chain_hook(NULL, NULL);
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, oc->expect_overdue ? 2 : 1);
    tph_test_blocker_open(&b);
    if (oc->expect_overdue)
        TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    /* The stamped-only submission never reached the pool: clear it by hand
     * so the entry can retire. */
    tph_entry_note_repair_started(r.entry);
    tph_entry_stamp_started(r.entry, tph_heal_now() + 1);
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_overdue_at_exactly_the_threshold(void **state) {
    overdue_case oc = {OVERDUE, 0, true};
    (void)state;
    tph_test_run_controlled(body_overdue_threshold, &oc, NULL, 1);
    tph_test_run_controlled(body_overdue_threshold, &oc, NULL, 2);
}

static void test_not_overdue_just_below_the_threshold(void **state) {
    overdue_case oc = {OVERDUE - 1, 0, false};
    (void)state;
    tph_test_run_controlled(body_overdue_threshold, &oc, NULL, 1);
    tph_test_run_controlled(body_overdue_threshold, &oc, NULL, 2);
}

static void test_submit_stamp_ahead_of_clock_reads_zero_wait(void **state) {
    /* A submission stamped after the tick read its clock (another thread's
     * inline submit): the wait saturates at zero, where a plain subtraction
     * wraps to ~58 000 years and reports a fresh repair overdue. */
    overdue_case oc = {0, 10 * TPH_TEST_SECOND, false};
    (void)state;
    tph_test_run_controlled(body_overdue_threshold, &oc, NULL, 1);
    tph_test_run_controlled(body_overdue_threshold, &oc, NULL, 2);
}

/* ---- a tick's record is inside its serialisation ---------------------------------- */

/* "healer-tick" is recorded with the tick lock held: a hold there parks one
 * tick while every other waits at the lock, which is how the scenarios make
 * two ticks contend (concurrent-ticks-one-overdue-episode).  Recorded before
 * the lock, a second tick would record (and park) too. */
static void ticker(void *arg) {
    (void)arg;
    tph_heal_tick();
}

static void body_tick_record_inside_lock(void *ctx) {
    rt_thread *t1, *t2;
    (void)ctx;
    tph_test_hold("healer-tick", TPH_TEST_ANY);
    t1 = tph_test_spawn("tick-1", ticker, NULL);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    t2 = tph_test_spawn("tick-2", ticker, NULL);
    tph_test_quiet(TPH_TEST_SECOND);
    TPH_CHECK_EQ(tph_test_event_count("healer-tick", TPH_TEST_ANY), 1);
    TPH_CHECK_EQ(tph_test_held_now(), 1);
    tph_test_release_hold();
    rt_join(t1);
    rt_join(t2);
    TPH_CHECK_EQ(tph_test_event_count("healer-tick", TPH_TEST_ANY), 2);
}

static void test_tick_record_inside_its_lock(void **state) {
    (void)state;
    tph_test_run_both(body_tick_record_inside_lock, NULL, NULL, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tick_walks_every_batch),
        cmocka_unit_test(test_tick_record_inside_its_lock),
        cmocka_unit_test(test_stamp_before_healer_start),
        cmocka_unit_test(test_cancel_uses_own_entry),
        cmocka_unit_test(test_overdue_at_exactly_the_threshold),
        cmocka_unit_test(test_not_overdue_just_below_the_threshold),
        cmocka_unit_test(test_submit_stamp_ahead_of_clock_reads_zero_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TPHEAL_SELF_HEAL */

TPH_TEST_MAIN_WITHOUT_SELF_HEAL()

#endif
