/* The stamps and counts of a pool entry: how "unhealed" is decided, how the
 * stamps are published under races, how `outstanding` counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"

#if TPHEAL_SELF_HEAL
#include "registry.h"

/* ---- unhealed: a dispatch after the cancellation is what counts ----------- */

static void body_dispatch_after_cancel(void *ctx) {
    tph_registration r = tph_register(0);
    tph_pool_entry *e = r.entry;
    (void)ctx;
    TPH_CHECK(e != NULL);
    /* Never cancelled: healthy, whatever the started stamp says. */
    TPH_CHECK(!tph_entry_unhealed(e));
    tph_entry_stamp_cancelled(e, 1000);
    TPH_CHECK(tph_entry_unhealed(e));
    /* A dispatch before the cancellation answers nothing. */
    tph_entry_stamp_started(e, 999);
    TPH_CHECK(tph_entry_unhealed(e));
    /* Same clock tick: cannot tell the order, so still unhealed. */
    tph_entry_stamp_started(e, 1000);
    TPH_CHECK(tph_entry_unhealed(e));
    TPH_CHECK(tph_test_entry(0).unhealed);
    /* Strictly after: healed. */
    tph_entry_stamp_started(e, 1001);
    TPH_CHECK(!tph_entry_unhealed(e));
    TPH_CHECK(!tph_test_entry(0).unhealed);
    /* A later cancellation reopens it. */
    tph_entry_stamp_cancelled(e, 2000);
    TPH_CHECK(tph_entry_unhealed(e));
    tph_registration_release(&r);
}

static void test_dispatch_after_cancellation_is_what_counts(void **state) {
    (void)state;
    tph_test_run_controlled(body_dispatch_after_cancel, NULL, NULL, 1);
}

/* With the real (simulated) clock: a cancellation and a repair start in the
 * same 15.625 ms tick leave the pool unhealed; one tick later heals it. */
static void body_same_tick_real_clock(void *ctx) {
    tph_registration r = tph_register(0);
    tph_pool_entry *e = r.entry;
    (void)ctx;
    TPH_CHECK(e != NULL);
    tph_test_sleep(TPH_TEST_TICK); /* off zero, onto a tick */
    tph_entry_stamp_cancelled(e, tph_heal_now());
    tph_entry_stamp_started(e, tph_heal_now());
    TPH_CHECK(tph_entry_unhealed(e));
    tph_test_sleep(TPH_TEST_TICK + 1);
    tph_entry_stamp_started(e, tph_heal_now());
    TPH_CHECK(!tph_entry_unhealed(e));
    tph_registration_release(&r);
}

static void test_same_tick_is_unhealed(void **state) {
    (void)state;
    tph_test_run_controlled(body_same_tick_real_clock, NULL, NULL, 1);
}

/* ---- fetch-max publication ------------------------------------------------ */

static void body_out_of_order(void *ctx) {
    tph_registration r = tph_register(0);
    tph_pool_entry *e = r.entry;
    (void)ctx;
    TPH_CHECK(e != NULL);
    /* A canceller that read the clock at 10 and publishes after one that read
     * 30 must not lower the stamp: the repair at 20 would then look like it
     * answered the cancellation at 30. */
    tph_entry_stamp_cancelled(e, 30);
    tph_entry_stamp_cancelled(e, 10);
    TPH_CHECK_EQ(tph_test_entry(0).last_cancelled, 30);
    tph_entry_stamp_started(e, 20);
    TPH_CHECK(tph_entry_unhealed(e));
    /* The started stamp is published the same way. */
    tph_entry_stamp_started(e, 40);
    tph_entry_stamp_started(e, 35);
    TPH_CHECK_EQ(tph_test_entry(0).last_started, 40);
    TPH_CHECK(!tph_entry_unhealed(e));
    /* And the submission stamp. */
    tph_entry_stamp_submitted(e, 50);
    tph_entry_stamp_submitted(e, 45);
    TPH_CHECK_EQ(tph_test_entry(0).last_submitted, 50);
    TPH_CHECK_EQ(tph_test_entry(0).outstanding, 2);
    tph_entry_note_repair_started(e);
    tph_entry_note_repair_started(e);
    tph_registration_release(&r);
}

static void test_out_of_order_publication_keeps_newest(void **state) {
    (void)state;
    tph_test_run_controlled(body_out_of_order, NULL, NULL, 1);
}

/* One large submission stamp racing 8 threads x 500 smaller ones. */
#define RACERS 8
#define PER_RACER 500
#define BIG_STAMP 0x7000000000000000ull

typedef struct race_ctx {
    tph_pool_entry *e;
    uint64_t base;
} race_ctx;

static void small_submitter(void *arg) {
    race_ctx *c = (race_ctx *)arg;
    int i;
    for (i = 0; i < PER_RACER; i++) tph_entry_stamp_submitted(c->e, c->base + (uint64_t)i);
}

static void big_submitter(void *arg) {
    race_ctx *c = (race_ctx *)arg;
    tph_entry_stamp_submitted(c->e, BIG_STAMP);
}

static void body_submission_race(void *ctx) {
    tph_registration r = tph_register(0);
    race_ctx c;
    rt_thread *t[RACERS + 1];
    int i;
    tph_heal_entry_info info;
    (void)ctx;
    TPH_CHECK(r.entry != NULL);
    c.e = r.entry;
    c.base = 1;
    /* The big one starts in the middle of the pack, so smaller stamps land
     * both before and after it. */
    for (i = 0; i < RACERS / 2; i++) t[i] = tph_test_spawn("small", small_submitter, &c);
    t[RACERS / 2] = tph_test_spawn("big", big_submitter, &c);
    for (i = RACERS / 2 + 1; i <= RACERS; i++) t[i] = tph_test_spawn("small", small_submitter, &c);
    for (i = 0; i <= RACERS; i++) rt_join(t[i]);
    info = tph_test_entry(0);
    TPH_CHECK_EQ(info.last_submitted, BIG_STAMP);
    TPH_CHECK_EQ(info.outstanding, RACERS * PER_RACER + 1);
    /* The entry is pinned by the count; the process end reclaims it. */
    tph_registration_release(&r);
    TPH_CHECK_EQ(tph_heal_entry_count(), 1);
}

static void test_submission_stamp_race(void **state) {
    (void)state;
    tph_test_run_both(body_submission_race, NULL, NULL, 3);
}

/* ---- outstanding ------------------------------------------------------------ */

static void body_outstanding_saturates(void *ctx) {
    tph_registration r = tph_register(0);
    tph_pool_entry *e = r.entry;
    (void)ctx;
    TPH_CHECK(e != NULL);
    TPH_CHECK(!tph_entry_repair_in_flight(e));
    /* A start with nothing outstanding must not wrap to four billion. */
    tph_entry_note_repair_started(e);
    TPH_CHECK_EQ(tph_test_entry(0).outstanding, 0);
    TPH_CHECK(!tph_entry_repair_in_flight(e));
    tph_entry_stamp_submitted(e, 5);
    TPH_CHECK(tph_entry_repair_in_flight(e));
    tph_entry_note_repair_started(e);
    TPH_CHECK(!tph_entry_repair_in_flight(e));
    tph_registration_release(&r);
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
}

static void test_outstanding_saturates(void **state) {
    (void)state;
    tph_test_run_controlled(body_outstanding_saturates, NULL, NULL, 1);
}

/* A retry leaves two repairs outstanding; the first one starting does not make
 * the entry look idle while the second is still queued. */
static void body_two_outstanding(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    tph_pool_key_t key;
    tph_pool_entry *e;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    key = b.key;
    r = tph_register(key);
    e = r.entry;
    TPH_CHECK(e != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(e, tph_heal_now());
    tph_test_sleep(TPH_TEST_TICK + 1);
    tph_entry_submit_repair(e);
    tph_entry_submit_repair(e); /* the overdue retry */
    TPH_CHECK_EQ(tph_test_entry(key).outstanding, 2);
    /* The entry's own object holds it; with the object gone the queued
     * repairs still must. */
    tph_registration_release(&r);
    TPH_CHECK_EQ(tph_heal_entry_count(), 1);
    tph_test_hold("repair-started", key);
    tph_test_blocker_open(&b);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    /* First repair started (and healed the stamp); the second is queued
     * behind it on the pool's one thread. */
    TPH_CHECK_EQ(tph_test_entry(key).outstanding, 1);
    TPH_CHECK(!tph_test_entry(key).unhealed);
    TPH_CHECK(tph_entry_repair_in_flight(e));
    TPH_CHECK(!tph_entry_is_retirable(e));
    tph_heal_retire_idle();
    TPH_CHECK_EQ(tph_heal_entry_count(), 1);
    tph_test_release_hold();
    TPH_CHECK(tph_test_wait_event("repair-ran", key, 2, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_test_entry(key).outstanding, 0);
    TPH_CHECK_EQ(tph_test_entry(key).repairs_run, 2);
    tph_heal_retire_idle();
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
    tph_test_blocker_finish(&b);
}

static void test_retry_leaves_two_outstanding(void **state) {
    (void)state;
    tph_test_run_both(body_two_outstanding, NULL, NULL, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatch_after_cancellation_is_what_counts),
        cmocka_unit_test(test_same_tick_is_unhealed),
        cmocka_unit_test(test_out_of_order_publication_keeps_newest),
        cmocka_unit_test(test_submission_stamp_race),
        cmocka_unit_test(test_outstanding_saturates),
        cmocka_unit_test(test_retry_leaves_two_outstanding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TPHEAL_SELF_HEAL */

/* Built without the registry: nothing here applies (test_heal_registry.c
 * checks what the off build does promise). */
TPH_TEST_MAIN_WITHOUT_SELF_HEAL()

#endif
