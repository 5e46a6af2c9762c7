/* The healer end to end on the simulated stall, its lazy start, and the
 * inline repair when it cannot be started. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"

#if TPHEAL_SELF_HEAL
#include "healer.h"
#include "registry.h"

typedef struct counter {
    rt_lock lock;
    uint64_t n;
} counter;

static void count_wait(tph_wait *w, void *ctx, tph_wait_result r) {
    counter *c = (counter *)ctx;
    (void)w;
    (void)r;
    rt_lock_acquire(&c->lock);
    c->n++;
    rt_lock_release(&c->lock);
}

static uint64_t count_of(counter *c) {
    uint64_t n;
    rt_lock_acquire(&c->lock);
    n = c->n;
    rt_lock_release(&c->lock);
    return n;
}

static bool default_pool_severed(void) {
    sim_pool_stats s;
    memset(&s, 0, sizeof s);
    return sim_pool_stats_get(NULL, &s) && s.severed;
}

/* Queue a wait callback on the cold default pool and cancel it while the
 * worker factory is held (the sim's model of the microseconds before the
 * pool's first thread exists): the simulated stall.  `tracked` picks the
 * public cancellation.  A second callback, `old`, stays queued across it. */
static bool sever_default_pool(bool tracked, tph_handle *set_event, counter *c, tph_wait **old) {
    tph_wait *w = NULL;
    sim_pool_hold_factory(NULL, true);
    if (tph_wait_create(&w, set_event, count_wait, c, NULL) != TPH_OK) return false;
    if (tph_wait_create(old, set_event, count_wait, c, NULL) != TPH_OK) return false;
    tph_wait_arm(w, TPH_WAIT_FOREVER); /* the event is set: queued at once */
    tph_wait_arm(*old, TPH_WAIT_FOREVER);
    if (tracked)
        tph_wait_try_cancel_pending(w);
    else
        tph_wait_try_cancel_pending_no_heal_tracking(w);
    tph_wait_close(w);
    sim_pool_hold_factory(NULL, false);
    /* Severed at some point (an inline repair may have released it already). */
    {
        sim_pool_stats st;
        memset(&st, 0, sizeof st);
        return sim_pool_stats_get(NULL, &st) && st.stalls == 1;
    }
}

static void noop_work(tph_work *w, void *ctx) {
    (void)w;
    (void)ctx;
}

typedef struct e2e_case {
    bool tracked;
    bool healer_unavailable;
} e2e_case;

static void body_heal_end_to_end(void *ctx) {
    e2e_case *ec = (e2e_case *)ctx;
    tph_handle *ev = NULL;
    tph_wait *later = NULL;
    tph_wait *old = NULL;
    counter dropped, after;
    tph_heal_entry_info info;
    sim_pool_stats s;
    memset(&dropped, 0, sizeof dropped);
    memset(&after, 0, sizeof after);
    if (ec->healer_unavailable) {
        tph_test_fail_call(SIM_FAULT_POOL_CREATE, 1, true);
    }
    TPH_CHECK(tph_event_create(&ev, true, true) == TPH_OK);
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(sever_default_pool(ec->tracked, ev, &dropped, &old));
    /* A callback armed during the stall. */
    TPH_CHECK(tph_wait_create(&later, ev, count_wait, &after, NULL) == TPH_OK);
    TPH_CHECK(tph_wait_arm(later, TPH_WAIT_FOREVER) == TPH_OK);
    if (!ec->tracked) {
        /* Nothing repairs it: three seconds and still nothing. */
        tph_test_sleep(3 * TPH_TEST_SECOND);
        TPH_CHECK_EQ(count_of(&after), 0);
        TPH_CHECK_EQ(count_of(&dropped), 0);
        TPH_CHECK(default_pool_severed());
        TPH_CHECK(!tph_heal_healer_running());
        /* Release it by hand so the process can wind down like any other. */
        {
            tph_work *kick = NULL;
            TPH_CHECK(tph_work_create(&kick, noop_work, NULL, NULL) == TPH_OK);
            TPH_CHECK(tph_work_submit(kick) == TPH_OK);
            TPH_CHECK(tph_work_close(kick) == TPH_OK);
            TPH_CHECK(!default_pool_severed());
        }
    } else {
        uint64_t waited = 0;
        /* Three seconds of virtual time bound the repair's latency (a 250 ms
         * healer period plus its 250 ms window, then the dispatch); on real
         * threads the wait is only for it to happen, not a bound a loaded
         * machine's lagging healer and workers could miss. */
        const uint64_t bound = tph_test_latency_bound(3 * TPH_TEST_SECOND);
        /* All three: on real threads the two callbacks and the repair run on
         * whichever workers the released pool has, in any order -- the
         * repair's callback, queued last, can still be running when both
         * have ended (seen once, in the ASan build's native run during a
         * fresh-clone `make test` on a 2-core machine). */
        while ((count_of(&after) == 0 || count_of(&dropped) == 0 ||
                !tph_heal_entry_get(0, &info) || info.repairs_run == 0) &&
               waited < bound) {
            tph_test_sleep(10 * TPH_TEST_MS);
            waited += 10 * TPH_TEST_MS;
        }
        TPH_CHECK_EQ(count_of(&after), 1);
        /* The callback queued before the stall ran too; the cancelled one
         * never does. */
        TPH_CHECK_EQ(count_of(&dropped), 1);
        TPH_CHECK(!default_pool_severed());
        memset(&s, 0, sizeof s);
        TPH_CHECK(sim_pool_stats_get(NULL, &s));
        TPH_CHECK(s.releases >= 1);
        /* Released by the entry's own pre-created repair work. */
        TPH_CHECK(tph_heal_entry_get(0, &info));
        TPH_CHECK(info.repairs_run >= 1);
        if (ec->healer_unavailable) {
            TPH_CHECK(!tph_heal_healer_running());
            TPH_CHECK(tph_test_event_count("healer-start-failed", TPH_TEST_ANY) >= 1);
            TPH_CHECK(tph_test_event_count("repair-submitted-inline", 0) >= 1);
        } else {
            TPH_CHECK(tph_heal_healer_running());
            TPH_CHECK_EQ(tph_test_event_count("repair-submitted-inline", TPH_TEST_ANY), 0);
            TPH_CHECK(tph_test_event_count("healer-tick", TPH_TEST_ANY) >= 1);
        }
    }
    TPH_CHECK(tph_wait_close(later) == TPH_OK);
    TPH_CHECK(tph_wait_close(old) == TPH_OK);
    tph_handle_close(ev);
}

static void test_healer_repairs_severed_pool(void **state) {
    e2e_case ec = {true, false};
    (void)state;
    tph_test_run_both(body_heal_end_to_end, &ec, NULL, 4);
}

static void test_inline_repair_when_healer_cannot_start(void **state) {
    e2e_case ec = {true, true};
    (void)state;
    tph_test_run_both(body_heal_end_to_end, &ec, NULL, 4);
}

static void test_untracked_cancel_stays_severed(void **state) {
    e2e_case ec = {false, false};
    (void)state;
    tph_test_run_controlled(body_heal_end_to_end, &ec, NULL, 1);
    tph_test_run_controlled(body_heal_end_to_end, &ec, NULL, 2);
}

/* ---- lazy start, its shape, and only success remembered --------------------------- */

static void body_lazy_healer(void *ctx) {
    tph_work *w = NULL;
    tph_registration r;
    tph_heal_entry_info all[8];
    sim_pool_stats s;
    size_t n, i;
    bool healer_entry = false;
    /* Objects alone start nothing. */
    TPH_CHECK(tph_work_create(&w, noop_work, NULL, NULL) == TPH_OK);
    TPH_CHECK(tph_work_submit(w) == TPH_OK);
    TPH_CHECK(tph_work_wait(w) == TPH_OK);
    tph_test_quiet(TPH_TEST_SECOND);
    TPH_CHECK(!tph_heal_healer_running());
    TPH_CHECK_EQ(sim_pool_count(), 1);
    TPH_CHECK_EQ(tph_test_event_count("healer-tick", TPH_TEST_ANY), 0);
    /* The first cancellation starts it: a private pool of one thread, with
     * its own registered entry (its timer is an object on it). */
    r = tph_register(0);
    TPH_CHECK(r.entry != NULL);
    TPH_CHECK(tph_owe_repair(&r));
    TPH_CHECK(tph_heal_healer_running());
    TPH_CHECK_EQ(tph_test_event_count("healer-started", TPH_TEST_ANY), 1);
    TPH_CHECK_EQ(sim_pool_count(), 2);
    memset(&s, 0, sizeof s);
    TPH_CHECK(sim_pool_stats_get(sim_pool_at(1), &s));
    TPH_CHECK_EQ(s.max_threads, 1);
    /* ...and at least one: a healer pool that may go cold could stall like
     * any other, with nothing left to repair it. */
    TPH_CHECK_EQ(s.min_threads, 1);
    n = tph_heal_entries(all, 8);
    for (i = 0; i < n && i < 8; i++)
        if (all[i].key == (uintptr_t)sim_pool_at(1) && all[i].objects >= 1) healer_entry = true;
    TPH_CHECK(healer_entry);
    /* Its timer -- the only one here -- runs on that pool, armed with a
     * 250 ms period and a 250 ms coalescing window: their sum bounds how long
     * a pool owed a repair waits for it, and the tick count below cannot tell
     * a 500 ms period with no window from the real shape. */
    {
        sim_object_stats ts;
        memset(&ts, 0, sizeof ts);
        TPH_CHECK(sim_object_stats_get(sim_object_handle(SIM_OBJ_TIMER, 1), &ts));
        TPH_CHECK(ts.armed);
        TPH_CHECK_EQ(ts.pool_id, s.id);
        TPH_CHECK_EQ(ts.period_ms, 250);
        TPH_CHECK_EQ(ts.window_ms, 250);
        TPH_CHECK(sim_object_handle(SIM_OBJ_TIMER, 2) == NULL);
    }
    /* It ticks every 250 ms (plus up to a 250 ms window).  The rate is only
     * asserted on virtual time: on a loaded machine real threads may lag. */
    if (*(const bool *)ctx) {
        tph_test_sleep(5 * TPH_TEST_SECOND);
        n = tph_test_event_count("healer-tick", TPH_TEST_ANY);
        TPH_CHECK(n >= 10 && n <= 21);
    } else {
        TPH_CHECK(tph_test_wait_event("healer-tick", TPH_TEST_ANY, 1, TPH_TEST_PATIENCE));
    }
    /* Started once: later cancellations take the fast path. */
    TPH_CHECK(tph_owe_repair(&r));
    TPH_CHECK_EQ(tph_test_event_count("healer-started", TPH_TEST_ANY), 1);
    TPH_CHECK_EQ(sim_pool_count(), 2);
    tph_registration_release(&r);
    TPH_CHECK(tph_work_close(w) == TPH_OK);
}

static void test_healer_is_lazy_and_shaped(void **state) {
    bool virtual_time = true, real_time = false;
    (void)state;
    tph_test_run_controlled(body_lazy_healer, &virtual_time, NULL, 1);
    tph_test_run_controlled(body_lazy_healer, &virtual_time, NULL, 2);
    tph_test_run_native(body_lazy_healer, &real_time, NULL);
}

/* A healer that fails after its pool was made gives the pool back: the
 * failed start leaves no pool open and no core memory behind (the pool is
 * made first, its timer second; here the timer's creation fails). */
static void body_failed_build_closes_its_pool(void *ctx) {
    tph_registration r;
    sim_pool_stats s;
    uint64_t blocks;
    (void)ctx;
    r = tph_register(0);
    TPH_CHECK(r.entry != NULL);
    blocks = sim_core_blocks_live();
    tph_test_fail_call(SIM_FAULT_TIMER_CREATE, 1, false);
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_owe_repair(&r)); /* repaired inline */
    TPH_CHECK(!tph_heal_healer_running());
    TPH_CHECK_EQ(tph_test_event_count("healer-start-failed", TPH_TEST_ANY), 1);
    TPH_CHECK_EQ(sim_pool_count(), 2);
    memset(&s, 0, sizeof s);
    TPH_CHECK(sim_pool_stats_get(sim_pool_at(1), &s));
    TPH_CHECK(s.closed);
    TPH_CHECK_EQ(sim_core_blocks_live(), blocks);
    tph_registration_release(&r);
}

static void test_failed_healer_start_closes_its_pool(void **state) {
    (void)state;
    tph_test_run_both(body_failed_build_closes_its_pool, NULL, NULL, 2);
}

/* The healer counts as running from the moment it says it started: a
 * cancellation arriving while a hook is parked on "healer-started" takes
 * the fast path instead of waiting for the starter. */
static void owe_one(void *arg) { (void)tph_owe_repair((tph_registration *)arg); }

static void body_running_before_announced(void *ctx) {
    tph_registration r1, r2;
    rt_thread *t;
    (void)ctx;
    r1 = tph_register(0);
    r2 = tph_register(0);
    TPH_CHECK(r1.entry != NULL && r2.entry != NULL);
    tph_test_hold("healer-started", TPH_TEST_ANY);
    t = tph_test_spawn("starter", owe_one, &r1);
    TPH_CHECK(tph_test_wait_held(1, TPH_TEST_PATIENCE));
    TPH_CHECK(tph_heal_healer_running());
    TPH_CHECK(tph_owe_repair(&r2)); /* does not wait for the parked starter */
    TPH_CHECK_EQ(tph_test_held_now(), 1);
    tph_test_release_hold();
    rt_join(t);
    TPH_CHECK_EQ(tph_test_event_count("healer-started", TPH_TEST_ANY), 1);
    tph_registration_release(&r1);
    tph_registration_release(&r2);
}

static void test_healer_running_before_it_is_announced(void **state) {
    (void)state;
    tph_test_run_both(body_running_before_announced, NULL, NULL, 3);
}

static void body_failure_not_cached(void *ctx) {
    tph_registration r;
    tph_heal_entry_info info;
    (void)ctx;
    r = tph_register(0);
    TPH_CHECK(r.entry != NULL);
    tph_test_fail_call(SIM_FAULT_POOL_CREATE, 1, false); /* only the first pool creation fails */
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_owe_repair(&r)); /* still tracked: repaired inline */
    TPH_CHECK(!tph_heal_healer_running());
    TPH_CHECK_EQ(tph_test_event_count("healer-start-failed", TPH_TEST_ANY), 1);
    TPH_CHECK_EQ(tph_test_event_count("repair-submitted-inline", 0), 1);
    TPH_CHECK(tph_heal_entry_get(0, &info));
    TPH_CHECK(info.last_submitted != 0);
    /* The next cancellation tries again, and this time it starts. */
    tph_test_sleep(TPH_TEST_TICK);
    TPH_CHECK(tph_owe_repair(&r));
    TPH_CHECK(tph_heal_healer_running());
    TPH_CHECK_EQ(tph_test_event_count("healer-started", TPH_TEST_ANY), 1);
    TPH_CHECK_EQ(tph_test_event_count("repair-submitted-inline", 0), 1);
    tph_registration_release(&r);
}

static void test_healer_start_failure_not_cached(void **state) {
    (void)state;
    tph_test_run_both(body_failure_not_cached, NULL, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healer_repairs_severed_pool),
        cmocka_unit_test(test_inline_repair_when_healer_cannot_start),
        cmocka_unit_test(test_untracked_cancel_stays_severed),
        cmocka_unit_test(test_healer_is_lazy_and_shaped),
        cmocka_unit_test(test_healer_start_failure_not_cached),
        cmocka_unit_test(test_failed_healer_start_closes_its_pool),
        cmocka_unit_test(test_healer_running_before_it_is_announced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TPHEAL_SELF_HEAL */

/* Built without the registry: nothing here applies (test_heal_registry.c
 * checks what the off build does promise). */
TPH_TEST_MAIN_WITHOUT_SELF_HEAL()

#endif
