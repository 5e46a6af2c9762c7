/* One healer pass (tph_heal_tick), driven by hand: what it submits, what it
 * leaves alone, the overdue path, and the teardown drain of a retired entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"

#if TPHEAL_SELF_HEAL
#include "registry.h"

/* ---- a tick leaves alone a pool that needs nothing ------------------------------ */

static void body_tick_leaves_healthy(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_heal_tick();
    tph_test_quiet(TPH_TEST_SECOND);
    TPH_CHECK_EQ(tph_test_event_count("repair-submitted", b.key), 0);
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 0);
    TPH_CHECK_EQ(tph_test_entry(b.key).repairs_run, 0);
    /* Cancelled and then answered by a later repair: also left alone. */
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(r.entry, tph_heal_now());
    tph_test_sleep(TPH_TEST_TICK + 1);
    tph_heal_tick();
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    TPH_CHECK(!tph_test_entry(b.key).unhealed);
    tph_heal_tick();
    tph_heal_tick();
    TPH_CHECK_EQ(tph_test_event_count("repair-submitted", b.key), 1);
    TPH_CHECK_EQ(tph_test_entry(b.key).repairs_run, 1);
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_tick_leaves_healthy_pool_alone(void **state) {
    (void)state;
    tph_test_run_both(body_tick_leaves_healthy, NULL, NULL, 2);
}

/* ---- the tick submits the entry's own pre-created work --------------------------- */

static void body_tick_submits_own_work(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    uint64_t creates;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    creates = sim_fault_calls(SIM_FAULT_WORK_CREATE);
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(r.entry, tph_heal_now());
    tph_test_sleep(TPH_TEST_TICK + 1);
    tph_heal_tick();
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    /* Nothing was created on the healing path; the entry's own work ran. */
    TPH_CHECK_EQ(sim_fault_calls(SIM_FAULT_WORK_CREATE), creates);
    TPH_CHECK_EQ(tph_test_entry(b.key).repairs_run, 1);
    TPH_CHECK(!tph_test_entry(b.key).unhealed);
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_tick_submits_precreated_work(void **state) {
    (void)state;
    tph_test_run_both(body_tick_submits_own_work, NULL, NULL, 2);
}

/* ---- a repair in flight blocks a second submission ------------------------------- */

static void body_in_flight_blocks_second(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(r.entry, tph_heal_now());
    tph_heal_tick();
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 1);
    tph_test_quiet(TPH_TEST_SECOND); /* well inside the 5 s allowance */
    tph_heal_tick();
    tph_heal_tick();
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 1);
    TPH_CHECK_EQ(tph_test_event_count("repair-submitted", b.key), 1);
    TPH_CHECK_EQ(tph_test_event_count("repair-in-flight", b.key), 2);
    TPH_CHECK_EQ(tph_test_event_count("repair-overdue", b.key), 0);
    tph_test_blocker_open(&b);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_in_flight_blocks_second_submission(void **state) {
    (void)state;
    tph_test_run_both(body_in_flight_blocks_second, NULL, NULL, 2);
}

/* ---- a cancellation during a tick is not lost ------------------------------------ */

typedef struct tick_thread_ctx {
    int unused;
} tick_thread_ctx;

static void run_tick(void *arg) {
    (void)arg;
    tph_heal_tick();
}

static void body_cancel_during_tick(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    rt_thread *t;
    uint64_t second;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(r.entry, tph_heal_now());
    /* The tick has read the entry as owed and is about to submit... */
    tph_test_hold("repair-submitted", b.key);
    t = tph_test_spawn("tick", run_tick, NULL);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    /* ...when a second cancellation lands. */
    tph_test_sleep(2 * TPH_TEST_TICK);
    second = tph_heal_now();
    tph_entry_stamp_cancelled(r.entry, second);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    /* The tick cleared nothing: the second cancellation still stands unless
     * a repair started strictly after it. */
    TPH_CHECK_EQ(tph_test_entry(b.key).last_cancelled, second);
    TPH_CHECK(tph_test_entry(b.key).unhealed == (tph_test_entry(b.key).last_started <= second));
    /* And the next tick answers it. */
    tph_test_sleep(TPH_TEST_TICK + 1);
    if (tph_test_entry(b.key).unhealed) {
        tph_heal_tick();
        TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 2, TPH_TEST_PATIENCE));
    }
    TPH_CHECK(!tph_test_entry(b.key).unhealed);
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_cancel_during_tick_not_lost(void **state) {
    (void)state;
    tph_test_run_both(body_cancel_during_tick, NULL, NULL, 3);
}

/* ---- overdue ---------------------------------------------------------------------- */

/* b of the last "repair-overdue": the entry's episodes counted with it. */
static uint64_t overdue_b = UINT64_MAX;

static void note_overdue(const tph_trace_record *rec, void *ctx) {
    (void)ctx;
    if (strcmp(rec->event, "repair-overdue") == 0) overdue_b = rec->b;
}

static void body_overdue(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    int round;
    (void)ctx;
    tph_test_chain_hook(note_overdue, NULL);
    TPH_CHECK(tph_test_blocker_start(&b));
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(r.entry, tph_heal_now());
    tph_heal_tick();
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 1);
    /* Just short of 5 s: still only "in flight". */
    tph_test_sleep(5 * TPH_TEST_SECOND - TPH_TEST_TICK);
    tph_heal_tick();
    TPH_CHECK_EQ(tph_test_event_count("repair-overdue", b.key), 0);
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 1);
    /* Past it: reported and submitted again; and without fail-fast, again
     * and again. */
    for (round = 1; round <= 3; round++) {
        tph_test_sleep(5 * TPH_TEST_SECOND + TPH_TEST_TICK);
        tph_heal_tick();
        TPH_CHECK_EQ(tph_test_event_count("repair-overdue", b.key), (uint64_t)round);
        TPH_CHECK_EQ(tph_test_entry(b.key).overdue_episodes, (uint64_t)round);
        TPH_CHECK_EQ(overdue_b, (uint64_t)round); /* the record names the episode */
        TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, (uint64_t)round + 1);
        TPH_CHECK_EQ(tph_test_event_count("repair-submitted", b.key), (uint64_t)round + 1);
    }
    TPH_CHECK_EQ(tph_test_event_count("fail-fast", TPH_TEST_ANY), 0);
    /* The pool dispatches again: every queued repair runs, and the episodes
     * are over. */
    /* The first repair to run ends the episodes before it says it ran: held
     * at its "repair-ran", the entry already reads no episode. */
    tph_test_hold("repair-ran", b.key);
    tph_test_blocker_open(&b);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_test_entry(b.key).overdue_episodes, 0);
    tph_test_release_hold();
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 4, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 0);
    TPH_CHECK_EQ(tph_test_entry(b.key).overdue_episodes, 0);
    TPH_CHECK(!tph_test_entry(b.key).unhealed);
    tph_registration_release(&r);
    tph_heal_tick();
    TPH_CHECK(!tph_heal_entry_get(b.key, NULL));
    tph_test_chain_hook(NULL, NULL);
    tph_test_blocker_finish(&b);
}

static void test_overdue_resubmitted_and_retried(void **state) {
    (void)state;
    /* 15+ seconds of waiting: virtual time only. */
    tph_test_run_controlled(body_overdue, NULL, NULL, 1);
    tph_test_run_controlled(body_overdue, NULL, NULL, 2);
}

/* ---- retiring waits for a repair callback already running --------------------------- */

typedef struct retire_ctx {
    tph_registration r;
    bool done;
} retire_ctx;

static void releaser(void *arg) {
    retire_ctx *c = (retire_ctx *)arg;
    tph_registration_release(&c->r);
    c->done = true;
}

static void body_retire_waits(void *ctx) {
    tph_test_blocker b;
    retire_ctx c;
    rt_thread *t;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    c.done = false;
    c.r = tph_register(b.key);
    TPH_CHECK(c.r.entry != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(c.r.entry, tph_heal_now());
    tph_test_sleep(TPH_TEST_TICK + 1);
    /* Park the repair just after it stamped and counted itself -- the moment
     * the entry becomes retirable while its callback still runs. */
    tph_test_hold("repair-started", b.key);
    tph_entry_submit_repair(c.r.entry);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    TPH_CHECK(tph_entry_is_retirable(c.r.entry) == false); /* one object left */
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 0);
    TPH_CHECK(!tph_test_entry(b.key).unhealed);
    t = tph_test_spawn("releaser", releaser, &c);
    TPH_CHECK(tph_test_wait_event("entry-retired", b.key, 1, TPH_TEST_PATIENCE));
    /* The teardown must be blocked in its drain. */
    tph_test_quiet(TPH_TEST_SECOND);
    TPH_CHECK(!c.done);
    TPH_CHECK_EQ(tph_test_event_count("repair-closed", b.key), 0);
    TPH_CHECK_EQ(tph_test_event_count("repair-ran", b.key), 0);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK(c.done);
    TPH_CHECK_EQ(tph_test_event_count("repair-ran", b.key), 1);
    TPH_CHECK_EQ(tph_test_event_count("repair-closed", b.key), 1);
    TPH_CHECK(!tph_heal_entry_get(b.key, NULL));
    tph_test_blocker_finish(&b);
}

static void test_retire_waits_for_running_repair(void **state) {
    (void)state;
    tph_test_run_both(body_retire_waits, NULL, NULL, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tick_leaves_healthy_pool_alone),
        cmocka_unit_test(test_tick_submits_precreated_work),
        cmocka_unit_test(test_in_flight_blocks_second_submission),
        cmocka_unit_test(test_cancel_during_tick_not_lost),
        cmocka_unit_test(test_overdue_resubmitted_and_retried),
        cmocka_unit_test(test_retire_waits_for_running_repair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TPHEAL_SELF_HEAL */

/* Built without the registry: nothing here applies (test_heal_registry.c
 * checks what the off build does promise). */
TPH_TEST_MAIN_WITHOUT_SELF_HEAL()

#endif
