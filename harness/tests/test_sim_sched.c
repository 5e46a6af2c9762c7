/* The sim under the controlled scheduler: the stall happens or not
 * depending on the interleaving (the cold-pool window is a spawned worker
 * that has not run yet), a seed replays its outcome exactly, a severed pool
 * is released by a submit, and virtual time runs the 67 s idle timeout
 * without real waiting. */
#include "rt_sched.h"
#include "sched_dfs.h"
#include "test_sim_util.h"

typedef struct stall_outcome {
    bool stalled;
    uint64_t wait_runs, work_runs;
    uint64_t fired_after_release;
    bool ok;
} stall_outcome;

static stall_outcome g_out;

static void TPH_OS_CALLBACK nop_wait(tph_os_instance *i, void *c, tph_os_wait *w, uint32_t r) {
    (void)i, (void)c, (void)w, (void)r;
}
static void TPH_OS_CALLBACK nop_work(tph_os_instance *i, void *c, tph_os_work *w) { (void)i, (void)c, (void)w; }

/* Cold default pool: signal a wait, cancel it at once, then check whether the
 * pool severed; if so a later wait stays queued until a submit. */
static void stall_main(void *arg) {
    (void)arg;
    memset(&g_out, 0, sizeof g_out);
    sim_process_begin(NULL);
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w = tph_os_wait_create(nop_wait, NULL, NULL);
    tph_os_wait_set(w, ev, TPH_OS_INFINITE);
    tph_os_event_set(ev);
    tph_os_wait_wait(w, true);
    sim_pool_stats ps;
    sim_pool_stats_get(NULL, &ps);
    g_out.stalled = ps.severed;
    /* A later wait: fires only if the pool is not severed, or after the submit. */
    tph_os_wait *w2 = tph_os_wait_create(nop_wait, NULL, NULL);
    tph_os_event *ev2 = tph_os_event_create(false, true);
    tph_os_wait_set(w2, ev2, TPH_OS_INFINITE);
    tph_os_work *k = tph_os_work_create(nop_work, NULL, NULL);
    if (g_out.stalled) {
        rt_sleep_until(rt_now() + 2 * SIM_SECOND); /* virtual: nothing is delivered */
        sim_object_stats s;
        sim_object_stats_get(w2, &s);
        g_out.ok = s.queued == 1 && s.callbacks_run == 0;
    } else {
        g_out.ok = true;
    }
    tph_os_work_submit(k);
    tph_os_work_wait(k, false);
    tph_os_wait_wait(w2, false);
    sim_object_stats s2;
    sim_object_stats_get(w2, &s2);
    g_out.wait_runs = s2.callbacks_run;
    sim_object_stats_get(k, &s2);
    g_out.work_runs = s2.callbacks_run;
    sim_pool_stats_get(NULL, &ps);
    g_out.ok = g_out.ok && !ps.severed && ps.releases == (g_out.stalled ? 1u : 0u);
    sim_process_end();
}

static stall_outcome run_seed(uint64_t seed, uint64_t *hash, sched_status *status) {
    sched_options o;
    sched_options_default(&o);
    o.seed = seed;
    sched_result r;
    int rc = sched_run(&o, stall_main, NULL, &r);
    assert_int_equal(rc, 0);
    *hash = r.interleaving_hash;
    *status = r.status;
    if (r.status != SCHED_OK) fprintf(stderr, "seed %llu: %s %s\n%s\n", (unsigned long long)seed,
                                      sched_status_name(r.status), r.reason, r.blocked_report ? r.blocked_report : "");
    sched_result_free(&r);
    if (sim_process_active()) sim_process_end();
    return g_out;
}

/* Some seeds stall, some do not; every run completes and is released. */
static void test_sched_stall_depends_on_interleaving(void **st) {
    (void)st;
    int stalled = 0, healthy = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t h;
        sched_status status;
        stall_outcome out = run_seed(seed, &h, &status);
        assert_int_equal(status, SCHED_OK);
        assert_true(out.ok);
        assert_int_equal(out.wait_runs, 1);
        assert_int_equal(out.work_runs, 1);
        if (out.stalled) stalled++;
        else healthy++;
    }
    print_message("stalled %d / healthy %d of 200 seeds\n", stalled, healthy);
    assert_true(stalled > 0);
    assert_true(healthy > 0);
}

/* Same seed, same interleaving, same outcome. */
static void test_sched_seed_replays(void **st) {
    (void)st;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        uint64_t h1, h2;
        sched_status s1, s2;
        stall_outcome a = run_seed(seed, &h1, &s1);
        stall_outcome b = run_seed(seed, &h2, &s2);
        assert_int_equal(h1, h2);
        assert_int_equal(a.stalled, b.stalled);
    }
}

/* Virtual time: the default pool's 67 s idle timeout passes without waiting. */
static volatile uint32_t g_idle_ok;
static void idle_main(void *arg) {
    (void)arg;
    sim_process_begin(NULL);
    tph_os_work *k = tph_os_work_create(nop_work, NULL, NULL);
    tph_os_work_submit(k);
    tph_os_work_wait(k, false);
    sim_pool_stats ps;
    sim_pool_stats_get(NULL, &ps);
    bool warm = ps.workers_created == 1;
    rt_sleep_until(rt_now() + 66 * SIM_SECOND);
    sim_pool_stats_get(NULL, &ps);
    bool still = ps.workers == 1;
    rt_sleep_until(rt_now() + 2 * SIM_SECOND);
    sim_pool_stats_get(NULL, &ps);
    g_idle_ok = warm && still && ps.workers == 0 && ps.workers_retired == 1;
    sim_process_end();
}
static void test_sched_idle_timeout_virtual(void **st) {
    (void)st;
    sched_options o;
    sched_options_default(&o);
    o.seed = 7;
    sched_result r;
    g_idle_ok = 0;
    assert_int_equal(sched_run(&o, idle_main, NULL, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    assert_true(r.virtual_time >= 68 * SIM_SECOND);
    sched_result_free(&r);
    assert_true(g_idle_ok);
}

/* The idle timeout is Windows' 67 s (harness/sim/README.md), on the default
 * pool and on a private one above its minimum: a worker idle 66.9 s is
 * still there, one idle 67.1 s has retired.  Virtual time does not move
 * while a thread runs, so the workers went idle at the instant the waits
 * returned; 0.1 s either side is exact, not a tolerance. */
static volatile uint32_t g_idle67;
enum { IDLE67_WARM = 1, IDLE67_KEPT = 2, IDLE67_RETIRED = 4 };
static bool idle67_workers(tph_os_pool *p, uint32_t workers, uint64_t retired) {
    sim_pool_stats ps;
    return sim_pool_stats_get(p, &ps) && ps.workers == workers && ps.workers_retired == retired;
}
static void idle67_main(void *arg) {
    (void)arg;
    uint32_t ok = 0;
    sim_process_begin(NULL);
    tph_os_pool *priv = tph_os_pool_create();
    tph_os_env env = {priv, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_work *kd = tph_os_work_create(nop_work, NULL, NULL);
    tph_os_work *kp = tph_os_work_create(nop_work, NULL, &env);
    tph_os_work_submit(kd);
    tph_os_work_submit(kp);
    tph_os_work_wait(kd, false);
    tph_os_work_wait(kp, false);
    uint64_t idle_from = rt_now();
    if (idle67_workers(NULL, 1, 0) && idle67_workers(priv, 1, 0)) ok |= IDLE67_WARM;
    rt_sleep_until(idle_from + 66 * SIM_SECOND + 900 * SIM_MS);
    if (idle67_workers(NULL, 1, 0) && idle67_workers(priv, 1, 0)) ok |= IDLE67_KEPT;
    rt_sleep_until(idle_from + 67 * SIM_SECOND + 100 * SIM_MS);
    if (idle67_workers(NULL, 0, 1) && idle67_workers(priv, 0, 1)) ok |= IDLE67_RETIRED;
    tph_os_gate_store32(&g_idle67, ok);
    tph_os_work_close(kd);
    tph_os_work_close(kp);
    tph_os_pool_close(priv);
    sim_process_end();
}
static void test_sched_idle_timeout_is_67_seconds(void **st) {
    (void)st;
    sched_options o;
    sched_options_default(&o);
    o.seed = 7;
    sched_result r;
    g_idle67 = 0;
    assert_int_equal(sched_run(&o, idle67_main, NULL, &r), 0);
    if (r.status != SCHED_OK) fail_msg("%s %s", sched_status_name(r.status), r.reason);
    sched_result_free(&r);
    assert_int_equal(g_idle67, IDLE67_WARM | IDLE67_KEPT | IDLE67_RETIRED);
}

/* A timer's fire point is drawn from the seed: same seed, same point. */
static volatile uint64_t g_fire;
static void TPH_OS_CALLBACK stamp_timer(tph_os_instance *i, void *c, tph_os_timer *t) {
    (void)i, (void)c, (void)t;
    g_fire = rt_now();
}
static void timer_main(void *arg) {
    (void)arg;
    sim_process_begin(NULL);
    tph_os_timer *t = tph_os_timer_create(stamp_timer, NULL, NULL);
    int64_t due = -(int64_t)(250 * SIM_MS);
    tph_os_timer_set(t, &due, 0, 250);
    rt_sleep_until(rt_now() + SIM_SECOND);
    tph_os_timer_wait(t, false);
    sim_process_end();
}
static uint64_t fire_for(uint64_t seed) {
    sched_options o;
    sched_options_default(&o);
    o.seed = seed;
    sched_result r;
    g_fire = 0;
    assert_int_equal(sched_run(&o, timer_main, NULL, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    sched_result_free(&r);
    return g_fire;
}
static void test_sched_timer_window_seeded(void **st) {
    (void)st;
    bool differs = false;
    uint64_t first = fire_for(1);
    for (uint64_t seed = 1; seed <= 10; seed++) {
        uint64_t a = fire_for(seed), b = fire_for(seed);
        assert_int_equal(a, b);
        assert_true(a >= 250 * SIM_MS && a <= 500 * SIM_MS + SIM_MS);
        if (a != first) differs = true;
    }
    assert_true(differs);
}

/* Re-arming a timer moves it behind the timers armed since: timers due at
 * the same instant fire in the order they were last set (sim_timer.c's
 * timed list), so a set disarms the old registration whole instead of
 * keeping its place.  Two timers on a one-thread private pool, due at the
 * same absolute instant; the first is set again to the same instant, so
 * only the re-arm can put it second.  Every seed: the order is the
 * model's, not the schedule's. */
static simt_log g_rearm_log;
static void TPH_OS_CALLBACK tag_timer(tph_os_instance *i, void *c, tph_os_timer *t) {
    (void)i, (void)t;
    simt_log_add(&g_rearm_log, (int)(intptr_t)c);
}
static void rearm_main(void *arg) {
    (void)arg;
    sim_process_begin(NULL);
    tph_os_pool *p = tph_os_pool_create();
    tph_os_pool_set_max(p, 1); /* one worker: callbacks run in queue order */
    tph_os_env env = {p, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_timer *a = tph_os_timer_create(tag_timer, (void *)(intptr_t)1, &env);
    tph_os_timer *b = tph_os_timer_create(tag_timer, (void *)(intptr_t)2, &env);
    int64_t due = (int64_t)(tph_os_system_time() + SIM_SECOND); /* absolute: one instant for all */
    tph_os_timer_set(a, &due, 0, 0);
    tph_os_timer_set(b, &due, 0, 0);
    tph_os_timer_set(a, &due, 0, 0);
    rt_sleep_until(rt_now() + 2 * SIM_SECOND);
    tph_os_timer_wait(a, false);
    tph_os_timer_wait(b, false);
    tph_os_timer_close(a);
    tph_os_timer_close(b);
    sim_process_end();
}
static void test_sched_rearmed_timer_fires_after_those_set_since(void **st) {
    (void)st;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        sched_options o;
        sched_options_default(&o);
        o.seed = seed;
        sched_result r;
        memset(&g_rearm_log, 0, sizeof g_rearm_log);
        assert_int_equal(sched_run(&o, rearm_main, NULL, &r), 0);
        assert_int_equal(r.status, SCHED_OK);
        sched_result_free(&r);
        assert_int_equal(g_rearm_log.n, 2);
        assert_int_equal(g_rearm_log.tags[0], 2);
        assert_int_equal(g_rearm_log.tags[1], 1);
    }
}

/* Every seam atomic is one scheduling point and the gate's loads and stores
 * none (os_sim_atomic.c, os.h): a call missing its point hides every
 * interleaving that would preempt the core just before it, and one the gate
 * gained would move every seed's schedule.  Counted as the run's points with
 * the call made once against a run without it. */
typedef enum atomic_call {
    AC_NONE, AC_LOAD32, AC_STORE32, AC_FETCH_ADD32, AC_FETCH_SUB32, AC_CAS32, AC_LOAD64, AC_STORE64,
    AC_FETCH_ADD64, AC_FETCH_SUB64, AC_CAS64, AC_FETCH_MAX64, AC_LOAD_PTR, AC_STORE_PTR, AC_CAS_PTR,
    AC_GATE_LOAD32, AC_GATE_STORE32, AC_COUNT
} atomic_call;

static volatile uint32_t g_a32;
static volatile uint64_t g_a64;
static void *volatile g_aptr;

static void one_atomic(void *arg) {
    uint32_t e32 = 0;
    uint64_t e64 = 0;
    void *ep = NULL;
    switch ((atomic_call)(uintptr_t)arg) {
    case AC_NONE: break;
    case AC_LOAD32: (void)tph_os_load32(&g_a32); break;
    case AC_STORE32: tph_os_store32(&g_a32, 1); break;
    case AC_FETCH_ADD32: (void)tph_os_fetch_add32(&g_a32, 1); break;
    case AC_FETCH_SUB32: (void)tph_os_fetch_sub32(&g_a32, 1); break;
    case AC_CAS32: (void)tph_os_cas32(&g_a32, &e32, 1); break;
    case AC_LOAD64: (void)tph_os_load64(&g_a64); break;
    case AC_STORE64: tph_os_store64(&g_a64, 1); break;
    case AC_FETCH_ADD64: (void)tph_os_fetch_add64(&g_a64, 1); break;
    case AC_FETCH_SUB64: (void)tph_os_fetch_sub64(&g_a64, 1); break;
    case AC_CAS64: (void)tph_os_cas64(&g_a64, &e64, 1); break;
    case AC_FETCH_MAX64: (void)tph_os_fetch_max64(&g_a64, 7); break;
    case AC_LOAD_PTR: (void)tph_os_load_ptr(&g_aptr); break;
    case AC_STORE_PTR: tph_os_store_ptr(&g_aptr, (void *)&g_a32); break;
    case AC_CAS_PTR: (void)tph_os_cas_ptr(&g_aptr, &ep, (void *)&g_a64); break;
    case AC_GATE_LOAD32: (void)tph_os_gate_load32(&g_a32); break;
    case AC_GATE_STORE32: tph_os_gate_store32(&g_a32, 1); break;
    case AC_COUNT: break;
    }
}

static uint64_t points_of(atomic_call c) {
    sched_options o;
    sched_options_default(&o);
    sched_result r;
    assert_int_equal(sched_run(&o, one_atomic, (void *)(uintptr_t)c, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    uint64_t n = r.steps;
    sched_result_free(&r);
    return n;
}

static void test_sched_every_seam_atomic_is_one_point(void **st) {
    (void)st;
    uint64_t base = points_of(AC_NONE);
    for (int c = AC_LOAD32; c < AC_COUNT; c++) {
        uint64_t want = c == AC_GATE_LOAD32 || c == AC_GATE_STORE32 ? 0u : 1u;
        if (points_of((atomic_call)c) - base != want) fail_msg("atomic call %d: %llu points, want %llu", c,
                                                               (unsigned long long)(points_of((atomic_call)c) - base),
                                                               (unsigned long long)want);
    }
}

/* Every seam atomic that writes tells the partial-order reduction so
 * (rt_access RT_WRITE): a thread that reads the same word then races with
 * it, and a DFS with POR still finds both outcomes, the read before the
 * write and after it.  A write hidden from the reduction makes the two look
 * independent, and the search runs one order only. */
static volatile uint32_t g_wr_saw_changed, g_wr_saw_unchanged;
static void wr_reader(void *arg) {
    bool changed;
    switch ((atomic_call)(uintptr_t)arg) {
    case AC_STORE32: case AC_FETCH_ADD32: case AC_FETCH_SUB32: case AC_CAS32:
        changed = tph_os_load32(&g_a32) != 0;
        break;
    case AC_STORE_PTR: case AC_CAS_PTR:
        changed = tph_os_load_ptr(&g_aptr) != NULL;
        break;
    default:
        changed = tph_os_load64(&g_a64) != 0;
        break;
    }
    if (changed) g_wr_saw_changed = 1;
    else g_wr_saw_unchanged = 1;
}
static void wr_main(void *arg) { /* nobody joins: a join would race with the exits and reorder them */
    (void)rt_spawn("writer", one_atomic, arg, false);
    (void)rt_spawn("reader", wr_reader, arg, false);
}
/* Every interleaving of main_fn at <= 2 preemptions (the reduction on or
 * off): `before` resets what a run writes, `outcome` reads what it saw; a
 * run ends its process if it began one. */
typedef void (*dfs_outcome_fn)(void);
/* The whole search at `bound` on `time`; returns its traces (its runs
 * without the reduction). */
static uint64_t dfs_search(rt_thread_fn main_fn, void *arg, unsigned bound, sched_time_model time, bool por,
                           dfs_outcome_fn before, dfs_outcome_fn outcome) {
    sched_dfs *d = sched_dfs_new(bound);
    uint64_t traces;
    assert_non_null(d);
    sched_dfs_set_por(d, por);
    do {
        sched_options o;
        sched_result r;
        if (before) before();
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_DFS;
        o.dfs = d;
        o.time = time;
        assert_int_equal(sched_run(&o, main_fn, arg, &r), 0);
        if (r.status != SCHED_OK) fail_msg("%s %s\n%s", sched_status_name(r.status), r.reason, r.schedule);
        sched_result_free(&r);
        if (sim_process_active()) sim_process_end();
        if (outcome) outcome();
    } while (sched_dfs_advance(d) && sched_dfs_runs(d) < 20000);
    assert_null(sched_dfs_error(d));
    assert_true(sched_dfs_complete(d));
    traces = por ? sched_dfs_traces(d) : sched_dfs_runs(d);
    sched_dfs_free(d);
    return traces;
}
static void dfs_every_interleaving(rt_thread_fn main_fn, void *arg, bool por, dfs_outcome_fn before,
                                   dfs_outcome_fn outcome) {
    (void)dfs_search(main_fn, arg, 2, SCHED_TIME_STEPS, por, before, outcome);
}

static void wr_reset(void) {
    g_a32 = 0;
    g_a64 = 0;
    g_aptr = NULL;
}
static void test_sched_every_seam_write_races_a_read(void **st) {
    (void)st;
    static const atomic_call writes[] = {AC_STORE32, AC_FETCH_ADD32, AC_FETCH_SUB32, AC_CAS32, AC_STORE64,
                                         AC_FETCH_ADD64, AC_FETCH_SUB64, AC_CAS64, AC_FETCH_MAX64, AC_STORE_PTR,
                                         AC_CAS_PTR};
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
        g_wr_saw_changed = g_wr_saw_unchanged = 0;
        dfs_every_interleaving(wr_main, (void *)(uintptr_t)writes[i], true, wr_reset, NULL);
        if (!g_wr_saw_changed || !g_wr_saw_unchanged)
            fail_msg("atomic call %d: the read saw %s only", (int)writes[i], g_wr_saw_changed ? "the write" : "no write");
    }
}

/* Scoped model sections (sim_model.h): a submit's section touches its
 * work's pool only.  Two threads each submit one work; with both pools'
 * factories held no worker runs, so the submits are all there is.  On two
 * pools the reduced search finds 1 trace, on one pool 2 (the queue's
 * order), at bounds 0-2 and on either time model. */
static tph_os_work *g_sub[2];
static void sub_thread(void *arg) { tph_os_work_submit(g_sub[(uintptr_t)arg]); }
static void sub_main(void *arg) {
    bool apart = arg != NULL;
    sim_process_begin(NULL);
    tph_os_pool *p = tph_os_pool_create(), *q = apart ? tph_os_pool_create() : p;
    sim_pool_hold_factory(p, true);
    sim_pool_hold_factory(q, true);
    tph_os_env ep = {p, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_env eq = {q, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    g_sub[0] = tph_os_work_create(nop_work, NULL, &ep);
    g_sub[1] = tph_os_work_create(nop_work, NULL, &eq);
    (void)rt_spawn("a", sub_thread, (void *)(uintptr_t)0, false);
    (void)rt_spawn("b", sub_thread, (void *)(uintptr_t)1, false);
}
static uint64_t submit_traces(bool apart, unsigned bound, sched_time_model time) {
    return dfs_search(sub_main, apart ? (void *)1 : NULL, bound, time, true, NULL, NULL);
}
static void test_sched_submits_on_two_pools_commute(void **st) {
    unsigned b;
    (void)st;
    for (b = 0; b <= 2; b++) {
        assert_int_equal(submit_traces(true, b, SCHED_TIME_IDLE), 1);
        assert_int_equal(submit_traces(false, b, SCHED_TIME_IDLE), 2);
        assert_int_equal(submit_traces(true, b, SCHED_TIME_STEPS), 1);
        assert_int_equal(submit_traces(false, b, SCHED_TIME_STEPS), 2);
    }
}

/* A model call is one atomic step of the model: what it records and what
 * it changes happen together, inside its critical section, so no other
 * thread sees one without the other, nor the call's effect while the caller
 * has not yet passed the call's lock.  Checked over every interleaving of
 * two threads (DFS, 2 preemptions), each run ending its process. */

/* An unannounced CreateThreadpoolWork is reported in the same step that
 * makes the work object: a reader that sees the report finds the object. */
static volatile uint32_t g_rep_seen, g_rep_work_found;
static uint64_t g_rep_runs_seen, g_rep_runs_torn;
static void report_reader(void *arg) {
    (void)arg;
    size_t n = sim_misuse_count();
    void *w = sim_object_handle(SIM_OBJ_WORK, 1);
    tph_os_gate_store32(&g_rep_seen, n == 1 ? 1u : 0u);
    tph_os_gate_store32(&g_rep_work_found, w != NULL ? 1u : 0u);
}
static void report_main(void *arg) {
    (void)arg;
    tph_os_gate_store32(&g_rep_seen, 0);
    tph_os_gate_store32(&g_rep_work_found, 0);
    sim_process_begin(NULL);
    sim_announce_check(true);
    rt_thread *reader = rt_spawn("reader", report_reader, NULL, false);
    tph_os_work *w = tph_os_work_create(nop_work, NULL, NULL); /* no api/ record */
    rt_join(reader);
    sim_announce_check(false);
    sim_misuse m;
    if (w == NULL || sim_misuse_count() != 1 || !sim_misuse_get(0, &m) || strcmp(m.call, "CreateThreadpoolWork") != 0)
        tph_os_gate_store32(&g_rep_seen, 2); /* not the one report expected */
    sim_process_end();
}
static void report_outcome(void) {
    uint32_t seen = tph_os_gate_load32(&g_rep_seen);
    if (seen == 2) fail_msg("the unannounced create was not reported once");
    if (seen) g_rep_runs_seen++;
    if (seen && !tph_os_gate_load32(&g_rep_work_found)) g_rep_runs_torn++;
}
static void test_sched_misuse_report_is_atomic_with_the_call(void **st) {
    (void)st;
    g_rep_runs_seen = g_rep_runs_torn = 0;
    dfs_every_interleaving(report_main, NULL, false, NULL, report_outcome);
    print_message("%llu of the runs saw the report\n", (unsigned long long)g_rep_runs_seen);
    assert_true(g_rep_runs_seen > 0);          /* the reader did see the report */
    assert_int_equal(g_rep_runs_torn, 0);      /* and never without the object */
}

/* An unannounced CloseThreadpoolCleanupGroupMembers is reported in the same
 * step that takes the members out of the group: a reader that sees the
 * report finds the member already released.  The report is checked under
 * the model lock, as every announced call's: one made before the caller
 * holds it is visible while the call has changed nothing yet. */
static volatile uint32_t g_gc_seen, g_gc_member_out;
static uint64_t g_gc_runs_seen, g_gc_runs_torn;
static tph_os_work *volatile g_gc_work;
static void gc_reader(void *arg) {
    (void)arg;
    size_t n = sim_misuse_count();
    sim_object_stats s;
    bool out = sim_object_stats_get(g_gc_work, &s) && s.group_id == 0;
    tph_os_gate_store32(&g_gc_seen, n == 1 ? 1u : 0u);
    tph_os_gate_store32(&g_gc_member_out, out ? 1u : 0u);
}
static void gc_main(void *arg) {
    (void)arg;
    tph_os_gate_store32(&g_gc_seen, 0);
    tph_os_gate_store32(&g_gc_member_out, 0);
    sim_process_begin(NULL);
    tph_os_group *g = tph_os_group_create(); /* checking is off: not reported */
    tph_os_env env = {NULL, g, NULL, TPH_OS_PRIORITY_NORMAL, false};
    g_gc_work = tph_os_work_create(nop_work, NULL, &env);
    sim_announce_check(true);
    rt_thread *reader = rt_spawn("reader", gc_reader, NULL, false);
    tph_os_group_close_members(g, false, NULL); /* no api/ record */
    rt_join(reader);
    sim_announce_check(false);
    sim_misuse m;
    if (sim_misuse_count() != 1 || !sim_misuse_get(0, &m) ||
        strcmp(m.call, "CloseThreadpoolCleanupGroupMembers") != 0)
        tph_os_gate_store32(&g_gc_seen, 2); /* not the one report expected */
    sim_process_end();
}
static void gc_outcome(void) {
    uint32_t seen = tph_os_gate_load32(&g_gc_seen);
    if (seen == 2) fail_msg("the unannounced group release was not reported once");
    if (seen) g_gc_runs_seen++;
    if (seen && !tph_os_gate_load32(&g_gc_member_out)) g_gc_runs_torn++;
}
static void test_sched_group_release_report_is_atomic_with_the_call(void **st) {
    (void)st;
    g_gc_runs_seen = g_gc_runs_torn = 0;
    dfs_every_interleaving(gc_main, NULL, false, NULL, gc_outcome);
    print_message("%llu of the runs saw the report\n", (unsigned long long)g_gc_runs_seen);
    assert_true(g_gc_runs_seen > 0);     /* the reader did see the report */
    assert_int_equal(g_gc_runs_torn, 0); /* and never with the member still in the group */
}

/* An unannounced SetThreadpoolThreadMinimum is reported in the step that
 * sets the minimum: the check runs under the model lock, so a reader that
 * sees the report sees the new minimum too.  A check made before the caller
 * takes the lock would show the report while the pool still has its old
 * minimum. */
static volatile uint32_t g_sm_seen, g_sm_min_set;
static uint64_t g_sm_runs_seen, g_sm_runs_torn;
static tph_os_pool *volatile g_sm_pool;
static void sm_reader(void *arg) {
    (void)arg;
    size_t n = sim_misuse_count();
    sim_pool_stats s;
    bool set = sim_pool_stats_get(g_sm_pool, &s) && s.min_threads == 1;
    tph_os_gate_store32(&g_sm_seen, n == 1 ? 1u : 0u);
    tph_os_gate_store32(&g_sm_min_set, set ? 1u : 0u);
}
static void sm_main(void *arg) {
    (void)arg;
    tph_os_gate_store32(&g_sm_seen, 0);
    tph_os_gate_store32(&g_sm_min_set, 0);
    sim_process_begin(NULL);
    g_sm_pool = tph_os_pool_create(); /* checking is off: not reported */
    sim_announce_check(true);
    rt_thread *reader = rt_spawn("reader", sm_reader, NULL, false);
    bool ok = tph_os_pool_set_min(g_sm_pool, 1); /* no api/ record */
    rt_join(reader);
    sim_announce_check(false);
    sim_misuse m;
    if (!ok || sim_misuse_count() != 1 || !sim_misuse_get(0, &m) || strcmp(m.call, "SetThreadpoolThreadMinimum") != 0)
        tph_os_gate_store32(&g_sm_seen, 2); /* not the one report expected */
    sim_process_end();
}
static void sm_outcome(void) {
    uint32_t seen = tph_os_gate_load32(&g_sm_seen);
    if (seen == 2) fail_msg("the unannounced set-minimum was not reported once");
    if (seen) g_sm_runs_seen++;
    if (seen && !tph_os_gate_load32(&g_sm_min_set)) g_sm_runs_torn++;
}
static void test_sched_set_min_report_is_atomic_with_the_call(void **st) {
    (void)st;
    g_sm_runs_seen = g_sm_runs_torn = 0;
    dfs_every_interleaving(sm_main, NULL, false, NULL, sm_outcome);
    print_message("%llu of the runs saw the report\n", (unsigned long long)g_sm_runs_seen);
    assert_true(g_sm_runs_seen > 0);     /* the reader did see the report */
    assert_int_equal(g_sm_runs_torn, 0); /* and never with the old minimum */
}

/* An announcement its call never followed is reported from the trace hook
 * (sim_announce_note), which runs outside the model lock: the report takes
 * the lock itself, so it is one step of the model like any other -- a
 * reader that sees it sees the whole record, and the hook gives back only
 * the lock it took (the scheduler ends a run whose thread releases a lock
 * it does not hold as misuse). */
static volatile uint32_t g_un_seen, g_un_whole;
static uint64_t g_un_runs_seen, g_un_runs_torn;
static void uncalled_reader(void *arg) {
    (void)arg;
    sim_misuse m;
    bool seen = sim_misuse_count() == 1 && sim_misuse_get(0, &m);
    bool whole = seen && m.call != NULL && strcmp(m.call, "CloseThreadpoolWork") == 0 && m.problem != NULL &&
                 strstr(m.problem, "never called") != NULL;
    tph_os_gate_store32(&g_un_seen, seen ? 1u : 0u);
    tph_os_gate_store32(&g_un_whole, whole ? 1u : 0u);
}
static void uncalled_main(void *arg) {
    (void)arg;
    tph_os_gate_store32(&g_un_seen, 0);
    tph_os_gate_store32(&g_un_whole, 0);
    sim_process_begin(NULL);
    tph_os_work *w = tph_os_work_create(nop_work, NULL, NULL); /* checking is off: not reported */
    sim_announce_check(true);
    rt_thread *reader = rt_spawn("reader", uncalled_reader, NULL, false);
    sim_announce_note("api", "CloseThreadpoolWork", (uintptr_t)w, 0);
    sim_announce_note("heal", "repair-closed", 0, 0); /* the announced close never came */
    rt_join(reader);
    sim_announce_check(false);
    sim_misuse m;
    if (sim_misuse_count() != 1 || !sim_misuse_get(0, &m) || strcmp(m.call, "CloseThreadpoolWork") != 0)
        tph_os_gate_store32(&g_un_seen, 2); /* not the one report expected */
    tph_os_work_close(w);
    sim_process_end();
}
static void uncalled_outcome(void) {
    uint32_t seen = tph_os_gate_load32(&g_un_seen);
    if (seen == 2) fail_msg("the uncalled announcement was not reported once");
    if (seen) g_un_runs_seen++;
    if (seen && !tph_os_gate_load32(&g_un_whole)) g_un_runs_torn++;
}
static void test_sched_uncalled_announcement_report_is_one_step(void **st) {
    (void)st;
    g_un_runs_seen = g_un_runs_torn = 0;
    dfs_every_interleaving(uncalled_main, NULL, false, NULL, uncalled_outcome);
    print_message("%llu of the runs saw the report\n", (unsigned long long)g_un_runs_seen);
    assert_true(g_un_runs_seen > 0);     /* the reader did see the report */
    assert_int_equal(g_un_runs_torn, 0); /* and always whole */
}

/* sim_set_private_stall takes effect inside its critical section: a pool
 * created by another thread right after the setter released the lock has
 * the new setting, before the setter's next statement runs.  The witness:
 * the setter, just after the call, sees the creator's mark while the
 * creator's pool severs (the setting was ALWAYS; the process's default for
 * private pools is NEVER). */
static volatile uint32_t g_ps_created, g_ps_setter_saw;
static tph_os_pool *volatile g_ps_pool;
typedef enum { PS_PROBE_BROKEN, PS_OLD, PS_NEW, PS_NEW_SEEN_BY_SETTER, PS_COUNT } ps_result;
static ps_result g_ps_result;
static uint64_t g_ps_runs[PS_COUNT];
static void ps_creator(void *arg) {
    (void)arg;
    tph_os_pool *p = tph_os_pool_create();
    tph_os_gate_store32(&g_ps_created, 1);
    g_ps_pool = p; /* read by main after the join */
}
static void ps_main(void *arg) {
    (void)arg;
    tph_os_gate_store32(&g_ps_created, 0);
    tph_os_gate_store32(&g_ps_setter_saw, 0);
    g_ps_result = PS_PROBE_BROKEN;
    sim_process_begin(NULL);
    rt_thread *creator = rt_spawn("creator", ps_creator, NULL, false);
    sim_stall always = {SIM_STALL_ALWAYS, 0, 0};
    sim_set_private_stall(always);
    tph_os_gate_store32(&g_ps_setter_saw, tph_os_gate_load32(&g_ps_created));
    rt_join(creator);
    /* Probe the pool's setting: a queued wait packet cancelled on the cold
     * pool severs it only when its stall setting is ALWAYS. */
    tph_os_pool *p = g_ps_pool;
    sim_pool_hold_factory(p, true);
    tph_os_env env = {p, NULL, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_event *ev = tph_os_event_create(false, true);
    tph_os_wait *w = tph_os_wait_create(nop_wait, NULL, &env);
    tph_os_wait_set(w, ev, TPH_OS_INFINITE);
    sim_object_stats os;
    bool queued = sim_object_stats_get(w, &os) && os.queued == 1;
    tph_os_wait_wait(w, true);
    sim_pool_stats ps;
    if (queued && sim_pool_stats_get(p, &ps))
        g_ps_result = !ps.severed                           ? PS_OLD
                      : tph_os_gate_load32(&g_ps_setter_saw) ? PS_NEW_SEEN_BY_SETTER
                                                             : PS_NEW;
    sim_process_end();
}
static void ps_outcome(void) { g_ps_runs[g_ps_result]++; }
static void test_sched_private_stall_set_inside_its_lock(void **st) {
    (void)st;
    memset(g_ps_runs, 0, sizeof g_ps_runs);
    dfs_every_interleaving(ps_main, NULL, false, NULL, ps_outcome);
    print_message("pool created before the set %llu, after it %llu, after it and seen by the setter %llu\n",
                  (unsigned long long)g_ps_runs[PS_OLD], (unsigned long long)g_ps_runs[PS_NEW],
                  (unsigned long long)g_ps_runs[PS_NEW_SEEN_BY_SETTER]);
    assert_int_equal(g_ps_runs[PS_PROBE_BROKEN], 0);
    assert_true(g_ps_runs[PS_OLD] > 0); /* created before the set */
    assert_true(g_ps_runs[PS_NEW] > 0); /* after it */
    /* after the set's lock, before the setter's next statement */
    assert_true(g_ps_runs[PS_NEW_SEEN_BY_SETTER] > 0);
}

/* The core's free records the block as freed in the same step that unlinks
 * it: once any thread has seen the free (the live-block count dropped), a
 * callback into that context submitted afterwards is reported and not run
 * (os_sim.c, the freed-context check) -- in every interleaving. */
typedef enum { FR_BROKEN, FR_NOT_SEEN, FR_SEEN_REPORTED, FR_SEEN_RAN, FR_COUNT } fr_result;
static fr_result g_fr_result;
static uint64_t g_fr_runs[FR_COUNT];
static volatile uint32_t g_fr_ran;
static void TPH_OS_CALLBACK fr_work(tph_os_instance *i, void *c, tph_os_work *w) {
    (void)i, (void)c, (void)w; /* never touches its context */
    tph_os_gate_store32(&g_fr_ran, 1);
}
static void fr_freer(void *ctx) { tph_os_free(ctx); }
static void fr_main(void *arg) {
    (void)arg;
    g_fr_result = FR_BROKEN;
    tph_os_gate_store32(&g_fr_ran, 0);
    sim_process_begin(NULL);
    void *ctx = tph_os_alloc(16);
    uint64_t before = sim_core_blocks_live();
    tph_os_work *w = tph_os_work_create(fr_work, ctx, NULL);
    rt_thread *freer = rt_spawn("freer", fr_freer, ctx, false);
    bool seen = sim_core_blocks_live() == before - 1;
    if (!seen) {
        g_fr_result = FR_NOT_SEEN;
    } else {
        tph_os_work_submit(w);
        tph_os_work_wait(w, false);
        sim_misuse m;
        bool reported = sim_misuse_count() == 1 && sim_misuse_get(0, &m) &&
                        strstr(m.problem, "freed by the core") != NULL;
        if (tph_os_gate_load32(&g_fr_ran)) g_fr_result = FR_SEEN_RAN;
        else if (reported) g_fr_result = FR_SEEN_REPORTED;
    }
    rt_join(freer);
    tph_os_work_close(w);
    sim_process_end();
}
static void fr_outcome(void) { g_fr_runs[g_fr_result]++; }
static void test_sched_free_recorded_in_its_step(void **st) {
    (void)st;
    memset(g_fr_runs, 0, sizeof g_fr_runs);
    dfs_every_interleaving(fr_main, NULL, false, NULL, fr_outcome);
    print_message("free not seen %llu, seen and the callback reported %llu\n",
                  (unsigned long long)g_fr_runs[FR_NOT_SEEN], (unsigned long long)g_fr_runs[FR_SEEN_REPORTED]);
    assert_int_equal(g_fr_runs[FR_BROKEN], 0);
    assert_true(g_fr_runs[FR_NOT_SEEN] > 0);
    assert_true(g_fr_runs[FR_SEEN_REPORTED] > 0);
    assert_int_equal(g_fr_runs[FR_SEEN_RAN], 0);
}

/* ---- the model's rarer paths, each under the scheduler (seed 1) ---- */
static void (*g_body)(void);
static void body_main(void *arg) {
    (void)arg;
    sim_process_begin(NULL);
    g_body();
    sim_process_end();
}
static void run_body(void (*fn)(void)) {
    sched_options o;
    sched_result r;
    simt_failure[0] = '\0';
    g_body = fn;
    sched_options_default(&o);
    o.seed = 1;
    assert_int_equal(sched_run(&o, body_main, NULL, &r), 0);
    if (r.status != SCHED_OK) fail_msg("%s: %s", sched_status_name(r.status), r.reason);
    sched_result_free(&r);
    if (sim_process_active()) sim_process_end();
    if (simt_failure[0]) fail_msg("%s", simt_failure);
}
static bool misuse_is(size_t i, const char *text) {
    sim_misuse m;
    char buf[160];
    if (!sim_misuse_get(i, &m)) return false;
    sim_misuse_format(&m, buf, sizeof buf);
    if (strcmp(buf, text) != 0) print_message("misuse %u: \"%s\"\n", (unsigned)i, buf);
    return strcmp(buf, text) == 0;
}
static volatile uint32_t g_runs, g_result;
static volatile uint64_t g_at;
static void TPH_OS_CALLBACK count_work(tph_os_instance *i, void *c, tph_os_work *w) {
    (void)i, (void)c, (void)w;
    g_runs++;
}
static void TPH_OS_CALLBACK result_wait(tph_os_instance *i, void *c, tph_os_wait *w, uint32_t r) {
    (void)i, (void)c, (void)w;
    g_runs++;
    g_result = r;
    g_at = rt_now();
}

/* Closing a group that still has members is misuse, reported once however
 * many members it has (two here); the group is gone, its members are not.
 * Releasing the members of that closed group is misuse too, and returns
 * with the model's lock free: the members are still there and the next
 * call (a member's submit) works. */
static void body_group_misuse(void) {
    g_runs = 0;
    tph_os_group *g = tph_os_group_create();
    tph_os_env env = {NULL, g, NULL, TPH_OS_PRIORITY_NORMAL, false};
    tph_os_work *a = tph_os_work_create(count_work, NULL, &env);
    tph_os_work *b = tph_os_work_create(count_work, NULL, &env);
    tph_os_group_close(g);
    CHECK(sim_misuse_count() == 1);
    CHECK(misuse_is(0, "CloseThreadpoolCleanupGroup(group#1): group still has members"));
    CHECK(simt_obj(g).freed);
    tph_os_group_close_members(g, true, NULL);
    CHECK(sim_misuse_count() == 2);
    CHECK(misuse_is(1, "CloseThreadpoolCleanupGroupMembers(group#1): object already freed"));
    CHECK(!simt_obj(a).closed && !simt_obj(b).closed);
    tph_os_work_submit(a);
    tph_os_work_wait(a, false);
    CHECK(g_runs == 1);
    CHECK(sim_misuse_count() == 2);
    tph_os_work_close(a);
    tph_os_work_close(b);
}
static void test_sched_group_misuse(void **st) {
    (void)st;
    run_body(body_group_misuse);
}

/* A callback priority outside high..low is misuse (Windows leaves it
 * undefined), and the object runs at normal priority. */
static void body_bad_priority(void) {
    g_runs = 0;
    tph_os_env over = {NULL, NULL, NULL, TPH_OS_PRIORITY_LOW + 1, false};
    tph_os_env under = {NULL, NULL, NULL, TPH_OS_PRIORITY_HIGH - 1, false};
    tph_os_work *a = tph_os_work_create(count_work, NULL, &over);
    CHECK(sim_misuse_count() == 1);
    CHECK(misuse_is(0, "CreateThreadpoolWork(work#1): callback priority out of range"));
    CHECK(simt_obj(a).priority == TPH_OS_PRIORITY_NORMAL);
    tph_os_work *b = tph_os_work_create(count_work, NULL, &under);
    CHECK(sim_misuse_count() == 2);
    CHECK(misuse_is(1, "CreateThreadpoolWork(work#2): callback priority out of range"));
    CHECK(simt_obj(b).priority == TPH_OS_PRIORITY_NORMAL);
    tph_os_work_submit(a);
    tph_os_work_submit(b);
    tph_os_work_wait(a, false);
    tph_os_work_wait(b, false);
    CHECK(g_runs == 2);
    tph_os_work_close(a);
    tph_os_work_close(b);
}
static void test_sched_priority_out_of_range(void **st) {
    (void)st;
    run_body(body_bad_priority);
}

/* A wait set with a zero timeout on an unset event times out at once: its
 * callback is queued by the set itself (WAIT_TIMEOUT, no timeout waited
 * for), and no registration is left for the event to fire later. */
static void body_wait_zero_timeout(void) {
    g_runs = 0;
    g_result = 0;
    tph_os_event *ev = tph_os_event_create(false, false);
    tph_os_wait *w = tph_os_wait_create(result_wait, NULL, NULL);
    uint64_t set_at = rt_now();
    tph_os_wait_set(w, ev, 0);
    CHECK(simt_obj(w).queued + simt_obj(w).running + simt_obj(w).callbacks_run == 1);
    CHECK(!simt_obj(w).armed);
    tph_os_wait_wait(w, false);
    CHECK(g_runs == 1);
    CHECK(g_result == TPH_OS_WAIT_TIMEOUT);
    CHECK(g_at >= set_at && g_at < set_at + SIM_MS); /* the delivery's own steps only */
    tph_os_event_set(ev);
    rt_sleep_until(rt_now() + SIM_SECOND);
    CHECK(g_runs == 1);
    CHECK(simt_obj(ev).event_set); /* nobody consumed it */
    CHECK(sim_misuse_count() == 0);
    tph_os_wait_close(w);
}
static void test_sched_wait_zero_timeout_times_out_at_once(void **st) {
    (void)st;
    run_body(body_wait_zero_timeout);
}

/* A work closed while its callback runs is closed, not yet freed: a submit
 * then is misuse ("closed", not "freed"), and queues nothing. */
static void body_closed_busy(void) {
    simt_blocker b;
    simt_block(&b, NULL, 1);
    tph_os_work_close(b.work);
    CHECK(simt_obj(b.work).closed && !simt_obj(b.work).freed);
    tph_os_work_submit(b.work);
    CHECK(sim_misuse_count() == 1);
    CHECK(misuse_is(0, "SubmitThreadpoolWork(work#1): object already closed"));
    CHECK(simt_obj(b.work).queued == 0);
    tph_os_event_set(b.gate);
    CHECK(simt_until(simt_obj_freed, b.work));
    CHECK(simt_obj(b.work).callbacks_run == 1);
    tph_os_event_close(b.gate);
}
static void test_sched_submit_on_closed_busy_work(void **st) {
    (void)st;
    run_body(body_closed_busy);
}

/* A window too wide to draw in 100 ns units (window_ms * SIM_MS past
 * 32 bits: 500,000 ms) is drawn in whole milliseconds, still from due to
 * due + window.  The search explores a draw at its extremes, 0 and n - 1,
 * so exactly two fire points are seen: due and due + 500 s. */
#define WIDE_WINDOW_MS 500000u
static uint64_t g_wide_fires[2];
static unsigned g_wide_nfires;
static bool g_wide_other;
static void wide_timer_main(void *arg) {
    (void)arg;
    sim_process_begin(NULL);
    g_fire = 0;
    tph_os_timer *t = tph_os_timer_create(stamp_timer, NULL, NULL);
    int64_t due = -(int64_t)(250 * SIM_MS);
    tph_os_timer_set(t, &due, 0, WIDE_WINDOW_MS);
    rt_sleep_until(rt_now() + (uint64_t)WIDE_WINDOW_MS * SIM_MS + SIM_SECOND);
    tph_os_timer_wait(t, false);
    tph_os_timer_close(t);
    sim_process_end();
}
static void wide_outcome(void) {
    unsigned i;
    for (i = 0; i < g_wide_nfires; i++)
        if (g_wide_fires[i] == g_fire) return;
    if (g_wide_nfires < 2) g_wide_fires[g_wide_nfires++] = g_fire;
    else g_wide_other = true;
}
static void test_sched_wide_timer_window_in_milliseconds(void **st) {
    (void)st;
    g_wide_nfires = 0;
    g_wide_other = false;
    dfs_every_interleaving(wide_timer_main, NULL, false, NULL, wide_outcome);
    assert_false(g_wide_other);
    assert_int_equal(g_wide_nfires, 2);
    if (g_wide_fires[0] > g_wide_fires[1]) {
        uint64_t x = g_wide_fires[0];
        g_wide_fires[0] = g_wide_fires[1];
        g_wide_fires[1] = x;
    }
    /* the callback stamps the time a few scheduling steps after the fire,
     * the same few at both extremes */
    assert_true(g_wide_fires[0] >= 250 * SIM_MS && g_wide_fires[0] < 251 * SIM_MS);
    assert_int_equal(g_wide_fires[1] - g_wide_fires[0], (uint64_t)WIDE_WINDOW_MS * SIM_MS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sched_stall_depends_on_interleaving),
        cmocka_unit_test(test_sched_seed_replays),
        cmocka_unit_test(test_sched_idle_timeout_virtual),
        cmocka_unit_test(test_sched_idle_timeout_is_67_seconds),
        cmocka_unit_test(test_sched_timer_window_seeded),
        cmocka_unit_test(test_sched_rearmed_timer_fires_after_those_set_since),
        cmocka_unit_test(test_sched_every_seam_atomic_is_one_point),
        cmocka_unit_test(test_sched_every_seam_write_races_a_read),
        cmocka_unit_test(test_sched_misuse_report_is_atomic_with_the_call),
        cmocka_unit_test(test_sched_set_min_report_is_atomic_with_the_call),
        cmocka_unit_test(test_sched_uncalled_announcement_report_is_one_step),
        cmocka_unit_test(test_sched_group_release_report_is_atomic_with_the_call),
        cmocka_unit_test(test_sched_private_stall_set_inside_its_lock),
        cmocka_unit_test(test_sched_free_recorded_in_its_step),
        cmocka_unit_test(test_sched_group_misuse),
        cmocka_unit_test(test_sched_priority_out_of_range),
        cmocka_unit_test(test_sched_wait_zero_timeout_times_out_at_once),
        cmocka_unit_test(test_sched_submit_on_closed_busy_work),
        cmocka_unit_test(test_sched_wide_timer_window_in_milliseconds),
        cmocka_unit_test(test_sched_submits_on_two_pools_commute),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return rc;
}
