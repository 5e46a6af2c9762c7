/* The registry: keys, sharing and retirement of entries, the retention of an
 * entry owing a repair, best-effort registration and its retry at
 * cancellation, and which releases mark a pool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"

#if TPHEAL_SELF_HEAL
#include "healer.h"
#include "object.h"
#include "registry.h"

static bool entry_of(tph_pool_key_t key, tph_heal_entry_info *out) {
    memset(out, 0, sizeof *out);
    return tph_heal_entry_get(key, out);
}

/* ---- keys ------------------------------------------------------------------ */

static void body_key_of_env(void *ctx) {
    tph_env env;
    tph_pool *pool = NULL;
    (void)ctx;
    TPH_CHECK_EQ(tph_key_of_env(NULL), 0);
    tph_env_init(&env);
    TPH_CHECK_EQ(tph_key_of_env(&env), 0);
    TPH_CHECK(tph_pool_create(&pool) == TPH_OK);
    TPH_CHECK(tph_env_set_pool(&env, pool) == TPH_OK);
    TPH_CHECK(tph_pool_key(pool) != 0);
    TPH_CHECK_EQ(tph_key_of_env(&env), tph_pool_key(pool));
    TPH_CHECK_EQ(tph_pool_key(NULL), 0);
    tph_pool_close(pool);
}

static void test_key_of_env(void **state) {
    (void)state;
    tph_test_run_controlled(body_key_of_env, NULL, NULL, 1);
}

/* ---- sharing and retirement ------------------------------------------------- */

static void body_sharing_and_retirement(void *ctx) {
    tph_test_blocker b;
    tph_registration r1, r2, r3;
    tph_heal_entry_info info, all[4];
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    r1 = tph_register(b.key);
    r2 = tph_register(b.key);
    r3 = tph_register(0);
    TPH_CHECK(r1.entry != NULL && r1.entry == r2.entry);
    TPH_CHECK(r3.entry != NULL && r3.entry != r1.entry);
    TPH_CHECK_EQ(r1.key, b.key);
    TPH_CHECK_EQ(tph_heal_entry_count(), 2);
    /* Registration order. */
    TPH_CHECK_EQ(tph_heal_entries(all, 4), 2);
    TPH_CHECK_EQ(all[0].key, b.key);
    TPH_CHECK_EQ(all[1].key, 0);
    TPH_CHECK(entry_of(b.key, &info));
    TPH_CHECK_EQ(info.objects, 2);
    TPH_CHECK_EQ(tph_test_event_count("entry-created", b.key), 1);
    TPH_CHECK_EQ(tph_test_event_count("registered", b.key), 1);
    tph_registration_release(&r1);
    TPH_CHECK(r1.entry == NULL);
    TPH_CHECK(entry_of(b.key, &info));
    TPH_CHECK_EQ(info.objects, 1);
    TPH_CHECK_EQ(tph_test_event_count("released", b.key), 1);
    /* The last object goes, nothing is owed: retired, and its repair work
     * drained and closed. */
    tph_registration_release(&r2);
    TPH_CHECK(!entry_of(b.key, &info));
    TPH_CHECK_EQ(tph_test_event_count("entry-retired", b.key), 1);
    TPH_CHECK_EQ(tph_test_event_count("repair-closed", b.key), 1);
    TPH_CHECK_EQ(tph_heal_entry_count(), 1);
    /* A later object on the same pool gets a fresh entry. */
    r1 = tph_register(b.key);
    TPH_CHECK(r1.entry != NULL);
    TPH_CHECK_EQ(tph_test_event_count("entry-created", b.key), 2);
    tph_registration_release(&r1);
    tph_registration_release(&r3);
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
    /* Releasing an empty registration is harmless. */
    tph_registration_release(&r3);
    tph_test_blocker_finish(&b);
}

static void test_sharing_and_retirement(void **state) {
    (void)state;
    tph_test_run_both(body_sharing_and_retirement, NULL, NULL, 2);
}

/* ---- an entry owing a repair outlives its last object ------------------------ */

static void body_owing_entry_outlives(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    tph_heal_entry_info info;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_test_sleep(TPH_TEST_TICK);
    tph_entry_stamp_cancelled(r.entry, tph_heal_now());
    tph_registration_release(&r);
    /* Owed: kept by release, and by retire_idle. */
    TPH_CHECK(entry_of(b.key, &info));
    TPH_CHECK_EQ(info.objects, 0);
    TPH_CHECK(info.unhealed);
    TPH_CHECK_EQ(tph_test_event_count("entry-retired", b.key), 0);
    tph_heal_retire_idle();
    TPH_CHECK(entry_of(b.key, &info));
    /* The tick submits its repair; queued behind the blocker it is still
     * outstanding, which also keeps the entry. */
    tph_test_sleep(TPH_TEST_TICK + 1);
    tph_heal_tick();
    TPH_CHECK(entry_of(b.key, &info));
    TPH_CHECK_EQ(info.outstanding, 1);
    tph_test_blocker_open(&b);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    /* Answered: the next tick retires it. */
    tph_heal_tick();
    TPH_CHECK(!entry_of(b.key, &info));
    TPH_CHECK_EQ(tph_test_event_count("repair-closed", b.key), 1);
    tph_test_blocker_finish(&b);
}

static void test_owing_entry_outlives_last_object(void **state) {
    (void)state;
    tph_test_run_both(body_owing_entry_outlives, NULL, NULL, 3);
}

/* A submitted repair not yet started keeps the entry at release too (both
 * retirement sites ask the same rule). */
static void body_outstanding_keeps_entry_at_release(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    tph_heal_entry_info info;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_entry_submit_repair(r.entry); /* no cancellation: only outstanding */
    tph_registration_release(&r);
    TPH_CHECK(entry_of(b.key, &info));
    TPH_CHECK_EQ(info.outstanding, 1);
    TPH_CHECK(!info.unhealed);
    tph_heal_retire_idle();
    TPH_CHECK(entry_of(b.key, &info));
    tph_test_blocker_open(&b);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    tph_heal_retire_idle();
    TPH_CHECK(!entry_of(b.key, &info));
    tph_test_blocker_finish(&b);
}

static void test_outstanding_keeps_entry_at_release(void **state) {
    (void)state;
    tph_test_run_both(body_outstanding_keeps_entry_at_release, NULL, NULL, 2);
}

/* One pass retires every idle entry, not only the last one it unlinked: the
 * retired entries are chained through their own links, and a lost link
 * would leak the others (their repair work never closed). */
static void body_one_pass_retires_all(void *ctx) {
    tph_test_blocker b[3];
    tph_registration r[3];
    tph_heal_entry_info info;
    int i;
    for (i = 0; i < 3; i++) {
        TPH_CHECK(tph_test_blocker_start(&b[i]));
        r[i] = tph_register(b[i].key);
        TPH_CHECK(r[i].entry != NULL);
        tph_entry_submit_repair(r[i].entry); /* outstanding keeps it at release */
        tph_registration_release(&r[i]);
    }
    TPH_CHECK_EQ(tph_heal_entry_count(), 3);
    /* The first and the last become idle; the middle one still owes. */
    tph_test_blocker_open(&b[0]);
    tph_test_blocker_open(&b[2]);
    TPH_CHECK(tph_test_wait_event("repair-ran", b[0].key, 1, TPH_TEST_PATIENCE));
    TPH_CHECK(tph_test_wait_event("repair-ran", b[2].key, 1, TPH_TEST_PATIENCE));
    /* The tick's pass: its batch holds every entry while it visits them and
     * gives each back before retiring the idle ones (then torn down). */
    if (*(const bool *)ctx) tph_heal_tick();
    tph_heal_retire_idle();
    TPH_CHECK_EQ(tph_heal_entry_count(), 1);
    for (i = 0; i < 3; i += 2) {
        TPH_CHECK(!entry_of(b[i].key, &info));
        TPH_CHECK_EQ(tph_test_event_count("entry-retired", b[i].key), 1);
        TPH_CHECK_EQ(tph_test_event_count("repair-closed", b[i].key), 1);
    }
    TPH_CHECK(entry_of(b[1].key, &info));
    TPH_CHECK_EQ(tph_test_event_count("entry-retired", b[1].key), 0);
    tph_test_blocker_open(&b[1]);
    TPH_CHECK(tph_test_wait_event("repair-ran", b[1].key, 1, TPH_TEST_PATIENCE));
    tph_heal_retire_idle();
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
    TPH_CHECK_EQ(tph_test_event_count("repair-closed", b[1].key), 1);
    for (i = 0; i < 3; i++) tph_test_blocker_finish(&b[i]);
}

static void test_one_pass_retires_every_idle_entry(void **state) {
    bool by_tick = false;
    (void)state;
    tph_test_run_both(body_one_pass_retires_all, &by_tick, NULL, 2);
    by_tick = true;
    tph_test_run_both(body_one_pass_retires_all, &by_tick, NULL, 2);
}

/* Unlinking the last entry moves the tail to the one before it: a later
 * entry must be reachable from the head (a tail left on the unlinked entry
 * would hang the newcomer off freed memory). */
static void body_tail_unlink_keeps_list(void *ctx) {
    tph_test_blocker b[4];
    tph_registration r[4];
    tph_heal_entry_info all[8];
    size_t n, i;
    int k;
    bool seen[4] = {false, false, false, false};
    (void)ctx;
    for (k = 0; k < 4; k++) TPH_CHECK(tph_test_blocker_start(&b[k]));
    for (k = 0; k < 3; k++) {
        r[k] = tph_register(b[k].key);
        TPH_CHECK(r[k].entry != NULL);
    }
    tph_registration_release(&r[2]); /* the tail: idle, retired at once */
    TPH_CHECK_EQ(tph_test_event_count("entry-retired", b[2].key), 1);
    r[3] = tph_register(b[3].key);
    TPH_CHECK(r[3].entry != NULL);
    n = tph_heal_entries(all, 8);
    TPH_CHECK_EQ(n, 3);
    for (i = 0; i < n && i < 8; i++)
        for (k = 0; k < 4; k++)
            if (all[i].key == b[k].key) seen[k] = true;
    TPH_CHECK(seen[0] && seen[1] && !seen[2] && seen[3]);
    tph_registration_release(&r[3]); /* the tail again, then the head */
    tph_registration_release(&r[0]);
    TPH_CHECK_EQ(tph_heal_entry_count(), 1);
    tph_registration_release(&r[1]);
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
    for (k = 0; k < 4; k++) tph_test_blocker_finish(&b[k]);
}

static void test_tail_unlink_keeps_the_list_whole(void **state) {
    (void)state;
    tph_test_run_both(body_tail_unlink_keeps_list, NULL, NULL, 2);
}

/* Two first objects on one pool: the second waits for the first's entry and
 * shares it, and leaves the creation lock free for the next pool's entry. */
typedef struct first_arg {
    uintptr_t key;
    tph_registration r;
} first_arg;

static void registerer(void *arg) {
    first_arg *f = (first_arg *)arg;
    f->r = tph_register(f->key);
}

static void body_racing_first_objects(void *ctx) {
    tph_test_blocker b[2];
    first_arg one, two;
    tph_registration other;
    rt_thread *t1, *t2;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b[0]));
    TPH_CHECK(tph_test_blocker_start(&b[1]));
    one.key = two.key = b[0].key;
    /* The first is parked making the entry's repair work, creation lock held. */
    tph_test_hold("CreateThreadpoolWork", b[0].key);
    t1 = tph_test_spawn("first", registerer, &one);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    t2 = tph_test_spawn("second", registerer, &two);
    tph_test_quiet(TPH_TEST_SECOND);
    tph_test_release_hold();
    rt_join(t1);
    rt_join(t2);
    TPH_CHECK(one.r.entry != NULL && one.r.entry == two.r.entry);
    TPH_CHECK_EQ(tph_test_event_count("entry-created", b[0].key), 1);
    TPH_CHECK_EQ(tph_test_entry(b[0].key).objects, 2);
    /* The next pool's first object can still make its entry. */
    other = tph_register(b[1].key);
    TPH_CHECK(other.entry != NULL);
    tph_registration_release(&other);
    tph_registration_release(&one.r);
    tph_registration_release(&two.r);
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
    tph_test_blocker_finish(&b[0]);
    tph_test_blocker_finish(&b[1]);
}

static void test_racing_first_objects_share_one_entry(void **state) {
    (void)state;
    tph_test_run_both(body_racing_first_objects, NULL, NULL, 3);
}

/* The read-only view writes at most `max` entries and counts them all. */
static void body_entries_bounded(void *ctx) {
    tph_test_blocker b[3];
    tph_registration r[3];
    tph_heal_entry_info out[3];
    int k;
    (void)ctx;
    for (k = 0; k < 3; k++) {
        TPH_CHECK(tph_test_blocker_start(&b[k]));
        r[k] = tph_register(b[k].key);
        TPH_CHECK(r[k].entry != NULL);
    }
    memset(out, 0xA5, sizeof out);
    TPH_CHECK_EQ(tph_heal_entries(out, 2), 3);
    TPH_CHECK(out[0].key == b[0].key && out[1].key == b[1].key);
    {
        tph_heal_entry_info untouched;
        memset(&untouched, 0xA5, sizeof untouched);
        TPH_CHECK(memcmp(&out[2], &untouched, sizeof untouched) == 0);
    }
    TPH_CHECK_EQ(tph_heal_entries(NULL, 0), 3);
    TPH_CHECK_EQ(tph_heal_entries(out, 0), 3);
    for (k = 0; k < 3; k++) {
        tph_registration_release(&r[k]);
        tph_test_blocker_finish(&b[k]);
    }
}

static void test_entries_view_is_bounded(void **state) {
    (void)state;
    tph_test_run_controlled(body_entries_bounded, NULL, NULL, 1);
}

/* A release records how many objects the entry has left (b of "released",
 * and 0 in "entry-retired" when the last one goes). */
static uint64_t last_released_b = UINT64_MAX, last_retired_b = UINT64_MAX;
static uint64_t last_registered_b = UINT64_MAX, first_created_b = UINT64_MAX;

static void remember_b(const tph_trace_record *rec, void *ctx) {
    (void)ctx;
    if (strcmp(rec->event, "registered") == 0) last_registered_b = rec->b;
    if (strcmp(rec->event, "entry-created") == 0 && first_created_b == UINT64_MAX) first_created_b = rec->b;
    if (strcmp(rec->event, "released") == 0) last_released_b = rec->b;
    if (strcmp(rec->event, "entry-retired") == 0) last_retired_b = rec->b;
}

static void body_release_counts_what_is_left(void *ctx) {
    tph_test_blocker b;
    tph_registration r[3];
    int k;
    (void)ctx;
    tph_test_chain_hook(remember_b, NULL);
    TPH_CHECK(tph_test_blocker_start(&b));
    for (k = 0; k < 3; k++) {
        r[k] = tph_register(b.key);
        /* "registered" (a later object joining the entry) counts the objects now */
        if (k > 0) TPH_CHECK_EQ(last_registered_b, (uint64_t)k + 1);
    }
    TPH_CHECK_EQ(tph_test_entry(b.key).objects, 3);
    /* entry-created carries the entry's serial: a process numbers from 1 */
    TPH_CHECK_EQ(first_created_b, 1);
    tph_registration_release(&r[0]);
    TPH_CHECK_EQ(last_released_b, 2);
    tph_registration_release(&r[1]);
    TPH_CHECK_EQ(last_released_b, 1);
    tph_registration_release(&r[2]);
    TPH_CHECK_EQ(last_retired_b, 0);
    tph_test_chain_hook(NULL, NULL);
    tph_test_blocker_finish(&b);
}

static void test_release_counts_what_is_left(void **state) {
    (void)state;
    tph_test_run_controlled(body_release_counts_what_is_left, NULL, NULL, 1);
}

/* A clock that reads 0 (a machine just booted: sim_config.uptime_base 0)
 * still leaves a cancellation's mark: 0 is the stamps' "never". */
static void body_cancel_at_clock_zero(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    (void)ctx;
    TPH_CHECK_EQ(tph_heal_now(), 0);
    TPH_CHECK(tph_test_blocker_start(&b));
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    TPH_CHECK(tph_owe_repair(&r));
    TPH_CHECK_EQ(tph_test_entry(b.key).last_cancelled, 1);
    TPH_CHECK(tph_test_entry(b.key).unhealed);
    tph_test_blocker_open(&b);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_cancel_at_clock_zero_still_marks(void **state) {
    sim_config cfg = sim_config_default();
    (void)state;
    cfg.uptime_base = 0;
    tph_test_run_controlled(body_cancel_at_clock_zero, NULL, &cfg, 1);
}

/* A process that ends with a thread parked inside the creation lock (an
 * entry being made) leaves it to the next process unlocked: the
 * per-process reset forgets the lock with the entries. */
static void park_registering(void *arg) {
    tph_test_blocker *b = (tph_test_blocker *)arg;
    (void)tph_register(b->key);
}

static void body_end_inside_creation(void *ctx) {
    static tph_test_blocker b;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_hold("CreateThreadpoolWork", b.key);
    (void)tph_test_spawn("registering", park_registering, &b);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    rt_end_process("ended with the creation lock held");
}

static void body_next_process_registers(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_reset_forgets_a_held_creation_lock(void **state) {
    tph_test_outcome o;
    (void)state;
    o = tph_test_run_controlled_outcome(body_end_inside_creation, NULL, NULL, 1, NULL);
    assert_true(o.ended);
    tph_test_run_controlled(body_next_process_registers, NULL, NULL, 1);
}

/* The records a registration makes after creating (or failing to create)
 * an entry come after the creation lock is released: a hook parked there
 * does not hold up the next pool's first object. */
static void body_records_after_creation_lock(void *ctx) {
    tph_test_blocker b[2];
    first_arg one;
    tph_registration other;
    rt_thread *t;
    int failing;
    (void)ctx;
    for (failing = 0; failing < 2; failing++) {
        TPH_CHECK(tph_test_blocker_start(&b[0]));
        TPH_CHECK(tph_test_blocker_start(&b[1]));
        one.key = b[0].key;
        if (failing) {
            tph_test_fail_call_on_pool(SIM_FAULT_WORK_CREATE, 1, false, b[0].key);
        }
        tph_test_hold(failing ? "register-failed" : "entry-created", b[0].key);
        t = tph_test_spawn("first", registerer, &one);
        TPH_CHECK(tph_test_wait_held((uint64_t)failing + 1, TPH_TEST_PATIENCE));
        other = tph_register(b[1].key); /* would wait for the held thread's lock */
        TPH_CHECK(other.entry != NULL);
        TPH_CHECK_EQ(tph_test_held_now(), 1);
        tph_test_release_hold();
        rt_join(t);
        TPH_CHECK((one.r.entry == NULL) == (failing != 0));
        tph_registration_release(&other);
        tph_registration_release(&one.r);
        tph_test_blocker_finish(&b[0]);
        tph_test_blocker_finish(&b[1]);
    }
}

static void test_records_come_after_the_creation_lock(void **state) {
    (void)state;
    tph_test_run_both(body_records_after_creation_lock, NULL, NULL, 3);
}

/* The repair work is an ordinary work item of the pool: normal priority,
 * no runs-long hint -- the shape of the submission measured to release a
 * severed pool (docs/pool-facts.md). */
static void body_repair_work_shape(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    sim_object_stats st;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b)); /* its own work is work#1 */
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    memset(&st, 0, sizeof st);
    TPH_CHECK(sim_object_stats_get(sim_object_handle(SIM_OBJ_WORK, 2), &st));
    TPH_CHECK_EQ(st.priority, TPH_OS_PRIORITY_NORMAL);
    TPH_CHECK(!st.runs_long);
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_repair_work_is_an_ordinary_work_item(void **state) {
    (void)state;
    tph_test_run_controlled(body_repair_work_shape, NULL, NULL, 1);
}

/* The two clock-read records sit between reading the clock and publishing
 * the stamp: a thread parked there has not yet moved the entry's stamp
 * (the window scenarios cancel-/submit-stamp-published-late hold open). */
typedef struct stamper {
    tph_registration *r;
    bool cancel;
} stamper;

static void stamp_thread(void *arg) {
    stamper *s = (stamper *)arg;
    if (s->cancel) (void)tph_owe_repair(s->r);
    else tph_entry_submit_repair(s->r->entry);
}

static void body_clock_read_before_publish(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    stamper s;
    rt_thread *t;
    int cancel;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    for (cancel = 0; cancel < 2; cancel++) {
        tph_heal_entry_info before = tph_test_entry(b.key);
        tph_test_sleep(TPH_TEST_TICK);
        s.r = &r;
        s.cancel = cancel != 0;
        tph_test_hold(cancel ? "cancel-clock-read" : "submit-clock-read", b.key);
        t = tph_test_spawn("stamper", stamp_thread, &s);
        TPH_CHECK(tph_test_wait_held((uint64_t)cancel + 1, TPH_TEST_PATIENCE));
        if (cancel) TPH_CHECK_EQ(tph_test_entry(b.key).last_cancelled, before.last_cancelled);
        else TPH_CHECK_EQ(tph_test_entry(b.key).last_submitted, before.last_submitted);
        tph_test_release_hold();
        rt_join(t);
        if (cancel) TPH_CHECK(tph_test_entry(b.key).last_cancelled > before.last_cancelled);
        else TPH_CHECK(tph_test_entry(b.key).last_submitted > before.last_submitted);
    }
    /* "cancelled" comes after the publish: held there, the stamp is in. */
    {
        tph_heal_entry_info before = tph_test_entry(b.key);
        tph_test_sleep(TPH_TEST_TICK);
        s.cancel = true;
        tph_test_hold("cancelled", b.key);
        t = tph_test_spawn("stamper", stamp_thread, &s);
        TPH_CHECK(tph_test_wait_held(3, TPH_TEST_PATIENCE));
        TPH_CHECK(tph_test_entry(b.key).last_cancelled > before.last_cancelled);
        tph_test_release_hold();
        rt_join(t);
    }
    tph_test_blocker_open(&b);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

/* "repair-submitted-inline" announces the submission, like an api record:
 * held there (no healer: its pool cannot be made), nothing is submitted yet. */
static void body_inline_record_first(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    stamper s;
    rt_thread *t;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    r = tph_register(b.key);
    TPH_CHECK(r.entry != NULL);
    tph_test_fail_call(SIM_FAULT_POOL_CREATE, 1, true);
    tph_test_sleep(TPH_TEST_TICK);
    s.r = &r;
    s.cancel = true;
    tph_test_hold("repair-submitted-inline", b.key);
    t = tph_test_spawn("canceller", stamp_thread, &s);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 0);
    TPH_CHECK_EQ(tph_test_entry(b.key).last_submitted, 0);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK_EQ(tph_test_entry(b.key).outstanding, 1);
    tph_test_blocker_open(&b);
    TPH_CHECK(tph_test_wait_event("repair-ran", b.key, 1, TPH_TEST_PATIENCE));
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_inline_record_precedes_the_submission(void **state) {
    (void)state;
    tph_test_run_both(body_inline_record_first, NULL, NULL, 2);
}

static void test_clock_read_records_precede_the_publish(void **state) {
    (void)state;
    tph_test_run_both(body_clock_read_before_publish, NULL, NULL, 2);
}

/* ---- best effort, and the retry at cancellation --------------------------- */

static void fail_work_create_for(uintptr_t key, bool from_nth_on) {
    tph_test_fail_call_on_pool(SIM_FAULT_WORK_CREATE, 1, from_nth_on, key);
}

static void body_reregister_at_cancel(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    tph_heal_entry_info info;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    fail_work_create_for(b.key, false);
    r = tph_register(b.key);
    /* Empty, but it still names its pool. */
    TPH_CHECK(r.entry == NULL);
    TPH_CHECK_EQ(r.key, b.key);
    TPH_CHECK_EQ(sim_fault_fired(SIM_FAULT_WORK_CREATE), 1);
    TPH_CHECK_EQ(tph_test_event_count("register-failed", b.key), 1);
    TPH_CHECK(!entry_of(b.key, &info));
    /* The cancellation registers again, and this time it works. */
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_owe_repair(&r));
    TPH_CHECK(entry_of(b.key, &info));
    TPH_CHECK(info.last_cancelled != 0);
    TPH_CHECK_EQ(info.objects, 0); /* the retry's claim was given back */
    TPH_CHECK_EQ(tph_test_event_count("cancel-untracked", b.key), 0);
    TPH_CHECK(r.entry == NULL);
    tph_registration_release(&r);
    tph_test_blocker_finish(&b);
}

static void test_reregister_at_cancel(void **state) {
    (void)state;
    tph_test_run_both(body_reregister_at_cancel, NULL, NULL, 2);
}

static void body_untracked(void *ctx) {
    tph_test_blocker b;
    tph_registration r;
    tph_heal_entry_info info;
    uint64_t calls;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    fail_work_create_for(b.key, true);
    r = tph_register(b.key);
    TPH_CHECK(r.entry == NULL);
    /* The retry fails too: untracked, reported with the pool's key, and the
     * pool is left unmarked (there is no entry to mark). */
    TPH_CHECK(!tph_owe_repair(&r));
    TPH_CHECK_EQ(tph_test_event_count("cancel-untracked", b.key), 1);
    TPH_CHECK_EQ(tph_test_event_count("register-failed", b.key), 2);
    TPH_CHECK(!entry_of(b.key, &info));
    TPH_CHECK(!tph_heal_healer_running());
    /* The claimed form never retries, even once creation would work again:
     * a claim that pinned nothing may name a freed pool. */
    sim_fault_disarm_all();
    calls = sim_fault_calls(SIM_FAULT_WORK_CREATE);
    TPH_CHECK(!tph_owe_repair_claimed(&r));
    TPH_CHECK_EQ(sim_fault_calls(SIM_FAULT_WORK_CREATE), calls);
    TPH_CHECK_EQ(tph_test_event_count("cancel-untracked", b.key), 2);
    TPH_CHECK(!entry_of(b.key, &info));
    tph_test_blocker_finish(&b);
}

static void test_untracked_cancel(void **state) {
    (void)state;
    tph_test_run_both(body_untracked, NULL, NULL, 2);
}

/* The same through the public objects: the repair work for a pool fails at
 * the wait's creation (the wait itself is still made), and the wait's
 * cancellation registers the pool after all -- or, when that fails too,
 * reports it untracked and leaves nothing marked. */
static void wait_noop(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w;
    (void)ctx;
    (void)r;
}

typedef struct object_retry_case {
    bool retry_fails;
} object_retry_case;

static void body_object_retry(void *ctx) {
    object_retry_case *oc = (object_retry_case *)ctx;
    tph_pool *pool = NULL;
    tph_handle *ev = NULL;
    tph_wait *w = NULL;
    tph_env env;
    tph_heal_entry_info info;
    uintptr_t key;
    TPH_CHECK(tph_pool_create(&pool) == TPH_OK);
    key = tph_pool_key(pool);
    fail_work_create_for(key, oc->retry_fails);
    TPH_CHECK(tph_event_create(&ev, true, false) == TPH_OK);
    tph_env_init(&env);
    TPH_CHECK(tph_env_set_pool(&env, pool) == TPH_OK);
    TPH_CHECK(tph_wait_create(&w, ev, wait_noop, NULL, &env) == TPH_OK);
    TPH_CHECK_EQ(tph_test_event_count("register-failed", key), 1);
    TPH_CHECK(!entry_of(key, &info));
    TPH_CHECK(tph_wait_arm(w, TPH_WAIT_FOREVER) == TPH_OK);
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_wait_try_cancel_pending(w) == TPH_OK);
    if (oc->retry_fails) {
        TPH_CHECK_EQ(tph_test_event_count("cancel-untracked", key), 1);
        TPH_CHECK(!entry_of(key, &info));
        TPH_CHECK_EQ(tph_test_event_count("cancelled", key), 0);
    } else {
        TPH_CHECK_EQ(tph_test_event_count("cancel-untracked", key), 0);
        TPH_CHECK(entry_of(key, &info));
        TPH_CHECK(info.last_cancelled != 0);
    }
    TPH_CHECK(tph_wait_close(w) == TPH_OK);
    tph_handle_close(ev);
    tph_pool_close(pool);
}

static void test_object_reregisters_at_cancel(void **state) {
    object_retry_case oc = {false};
    (void)state;
    tph_test_run_both(body_object_retry, &oc, NULL, 2);
}

static void test_object_untracked_when_retry_fails(void **state) {
    object_retry_case oc = {true};
    (void)state;
    tph_test_run_both(body_object_retry, &oc, NULL, 2);
}

/* A claim that holds an entry marks it without any retry. */
static void body_claimed_marks(void *ctx) {
    tph_test_blocker b;
    tph_registration r, claim;
    tph_heal_entry_info info;
    (void)ctx;
    TPH_CHECK(tph_test_blocker_start(&b));
    tph_test_blocker_open(&b);
    r = tph_register(b.key);
    claim = tph_registration_reclaim(&r);
    TPH_CHECK(claim.entry == r.entry);
    TPH_CHECK(entry_of(b.key, &info));
    TPH_CHECK_EQ(info.objects, 2);
    tph_registration_release(&r);
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_owe_repair_claimed(&claim));
    TPH_CHECK(entry_of(b.key, &info));
    TPH_CHECK(info.unhealed);
    tph_registration_release(&claim);
    TPH_CHECK(entry_of(b.key, &info)); /* owed, so kept */
    tph_test_blocker_finish(&b);
}

static void test_claimed_marks(void **state) {
    (void)state;
    tph_test_run_controlled(body_claimed_marks, NULL, NULL, 1);
}

/* ---- which public calls mark a pool ------------------------------------------ */

typedef struct group_case {
    bool cancelling;
} group_case;

static void body_group_release(void *ctx) {
    group_case *gc = (group_case *)ctx;
    tph_pool *pool = NULL;
    tph_group *group = NULL;
    tph_handle *ev = NULL;
    tph_wait *w = NULL;
    tph_env env;
    tph_heal_entry_info info;
    uintptr_t key;
    TPH_CHECK(tph_pool_create(&pool) == TPH_OK);
    TPH_CHECK(tph_group_create(&group, NULL) == TPH_OK);
    TPH_CHECK(tph_event_create(&ev, true, false) == TPH_OK);
    tph_env_init(&env);
    TPH_CHECK(tph_env_set_pool(&env, pool) == TPH_OK);
    TPH_CHECK(tph_env_set_group(&env, group) == TPH_OK);
    TPH_CHECK(tph_wait_create(&w, ev, wait_noop, NULL, &env) == TPH_OK);
    key = tph_pool_key(pool);
    TPH_CHECK(entry_of(key, &info));
    TPH_CHECK_EQ(info.last_cancelled, 0);
    tph_test_sleep(TPH_TEST_TICK);
    if (gc->cancelling)
        TPH_CHECK(tph_group_close_members_cancelling(group, NULL) == TPH_OK);
    else
        TPH_CHECK(tph_group_close_members_draining(group) == TPH_OK);
    if (gc->cancelling) {
        /* Marked, and kept past its last member for the repair. */
        TPH_CHECK(entry_of(key, &info));
        TPH_CHECK(info.last_cancelled != 0);
        TPH_CHECK(info.unhealed || info.repairs_run > 0);
    } else {
        /* Draining removes nothing queued: no mark, and with its only member
         * gone the entry retired. */
        TPH_CHECK(!entry_of(key, &info) || info.last_cancelled == 0);
        TPH_CHECK_EQ(tph_test_event_count("cancelled", key), 0);
    }
    tph_group_close(group);
    tph_handle_close(ev);
    tph_pool_close(pool);
}

static void test_group_cancelling_release_marks(void **state) {
    group_case gc = {true};
    (void)state;
    tph_test_run_both(body_group_release, &gc, NULL, 2);
}

static void test_group_draining_release_does_not_mark(void **state) {
    group_case gc = {false};
    (void)state;
    tph_test_run_both(body_group_release, &gc, NULL, 2);
}

typedef struct cancel_case {
    bool tracked;
} cancel_case;

static void body_wait_cancel(void *ctx) {
    cancel_case *cc = (cancel_case *)ctx;
    tph_pool *pool = NULL;
    tph_handle *ev = NULL;
    tph_wait *w = NULL;
    tph_env env;
    tph_heal_entry_info info;
    uintptr_t key;
    TPH_CHECK(tph_pool_create(&pool) == TPH_OK);
    TPH_CHECK(tph_event_create(&ev, true, false) == TPH_OK);
    tph_env_init(&env);
    TPH_CHECK(tph_env_set_pool(&env, pool) == TPH_OK);
    TPH_CHECK(tph_wait_create(&w, ev, wait_noop, NULL, &env) == TPH_OK);
    key = tph_pool_key(pool);
    TPH_CHECK(tph_wait_arm(w, TPH_WAIT_FOREVER) == TPH_OK);
    tph_test_sleep(TPH_TEST_TICK);
    if (cc->tracked)
        TPH_CHECK(tph_wait_try_cancel_pending(w) == TPH_OK);
    else
        TPH_CHECK(tph_wait_try_cancel_pending_no_heal_tracking(w) == TPH_OK);
    TPH_CHECK(entry_of(key, &info));
    if (cc->tracked) {
        TPH_CHECK(info.last_cancelled != 0);
        TPH_CHECK_EQ(tph_test_event_count("cancelled", key), 1);
    } else {
        /* The caller took the risk: nothing marked, no healer started. */
        TPH_CHECK_EQ(info.last_cancelled, 0);
        TPH_CHECK_EQ(tph_test_event_count("cancelled", key), 0);
        TPH_CHECK(!tph_heal_healer_running());
    }
    TPH_CHECK(tph_wait_close(w) == TPH_OK);
    tph_handle_close(ev);
    tph_pool_close(pool);
}

static void test_wait_cancel_marks(void **state) {
    cancel_case cc = {true};
    (void)state;
    tph_test_run_both(body_wait_cancel, &cc, NULL, 2);
}

static void test_wait_cancel_no_tracking_leaves_unmarked(void **state) {
    cancel_case cc = {false};
    (void)state;
    tph_test_run_both(body_wait_cancel, &cc, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_of_env),
        cmocka_unit_test(test_sharing_and_retirement),
        cmocka_unit_test(test_owing_entry_outlives_last_object),
        cmocka_unit_test(test_outstanding_keeps_entry_at_release),
        cmocka_unit_test(test_reregister_at_cancel),
        cmocka_unit_test(test_untracked_cancel),
        cmocka_unit_test(test_object_reregisters_at_cancel),
        cmocka_unit_test(test_object_untracked_when_retry_fails),
        cmocka_unit_test(test_claimed_marks),
        cmocka_unit_test(test_group_cancelling_release_marks),
        cmocka_unit_test(test_group_draining_release_does_not_mark),
        cmocka_unit_test(test_wait_cancel_marks),
        cmocka_unit_test(test_wait_cancel_no_tracking_leaves_unmarked),
        cmocka_unit_test(test_one_pass_retires_every_idle_entry),
        cmocka_unit_test(test_tail_unlink_keeps_the_list_whole),
        cmocka_unit_test(test_release_counts_what_is_left),
        cmocka_unit_test(test_cancel_at_clock_zero_still_marks),
        cmocka_unit_test(test_reset_forgets_a_held_creation_lock),
        cmocka_unit_test(test_entries_view_is_bounded),
        cmocka_unit_test(test_racing_first_objects_share_one_entry),
        cmocka_unit_test(test_records_come_after_the_creation_lock),
        cmocka_unit_test(test_repair_work_is_an_ordinary_work_item),
        cmocka_unit_test(test_clock_read_records_precede_the_publish),
        cmocka_unit_test(test_inline_record_precedes_the_submission),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TPHEAL_SELF_HEAL */

/* Without the registry, heal.h reports an empty one, and no healer pool or
 * thread is ever made -- not even after a cancellation. */
static void wait_noop_off(tph_wait *w, void *ctx, tph_wait_result r) {
    (void)w;
    (void)ctx;
    (void)r;
}

static void body_off(void *ctx) {
    tph_handle *ev = NULL;
    tph_wait *w = NULL;
    tph_heal_entry_info info;
    (void)ctx;
    TPH_CHECK(tph_event_create(&ev, true, true) == TPH_OK);
    TPH_CHECK(tph_wait_create(&w, ev, wait_noop_off, NULL, NULL) == TPH_OK);
    TPH_CHECK(tph_wait_arm(w, TPH_WAIT_FOREVER) == TPH_OK);
    TPH_CHECK(tph_wait_try_cancel_pending_no_heal_tracking(w) == TPH_OK);
    TPH_CHECK_EQ(tph_heal_entry_count(), 0);
    TPH_CHECK_EQ(tph_heal_entries(&info, 1), 0);
    TPH_CHECK(!tph_heal_entry_get(0, &info));
    tph_heal_tick();
    tph_heal_retire_idle();
    tph_test_sleep(TPH_TEST_SECOND);
    TPH_CHECK(!tph_heal_healer_running());
    TPH_CHECK_EQ(sim_pool_count(), 1);
    TPH_CHECK_EQ(tph_test_event_count("healer-tick", TPH_TEST_ANY), 0);
    TPH_CHECK(tph_wait_close(w) == TPH_OK);
    tph_handle_close(ev);
}

static void test_off_build_has_no_registry(void **state) {
    (void)state;
    tph_test_run_both(body_off, NULL, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_build_has_no_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
