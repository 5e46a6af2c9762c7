/* The scenario runner (scn_run.h): the driver of one run, and the run's
 * state.  One run, on the pool backend linked in (scn_pool.h: the model, or
 * the real Windows pool):
 *   main rt thread: process begin, hook, pools, faults, objects,
 *   spawn + join the scenario threads, settle, oracles,
 *   close what is left, settle again, the registry oracle;
 * the driver then ends the run's process (the model's: and resets the core).
 * Each stage is a file (scn_run_internal.h names them); the state they share
 * is the one run_state made here, handed to each.
 * Everything a report prints is names and counts -- no address, no real time
 * -- so the same seed prints the same bytes. */
#include "scn_run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tpheal/tpheal.h>

#include "rt.h"
#include "rt_native.h"
#include "rt_sched.h"
#include "scn_features.h"
#include "scn_pool.h"
#include "scn_reach.h"
#include "scn_run_internal.h"
#include "scn_text.h"

/* The healer's pool key outlives the run where the process does (the real
 * pool): a later run must still tell the healer's registry entry from a
 * leaked one.  One of the two file-scope mutable states of harness/scenario,
 * on purpose (the other: the event-name cache, scn_hook.c). */
static uintptr_t kept_healer_key;
static bool kept_healer_key_known;

/* ---- the run's state: failures, pools ------------------------------------ */

/* `line` is the scenario line a check judged (0: none, an oracle's), which
 * the report's consumers get as data (run --json's `line`: the gate
 * annotates the scenario file there). */
void scn_run_fail(run_state *run, scn_failure_kind kind, int line, int subject, const char *fmt, ...) {
    char buf[514];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, 512, fmt, ap);
    va_end(ap);
    strcat(buf, "\n");
    rt_lock_acquire(&run->lock);
    if (run->nfail == 0) {
        run->fail_line = line;
        run->fail_seen = true;
        run->fail_rec = run->tail_n;
        run->fail_time = rt_now();
        scn_tracefmt_tail_into(run, &run->fail_tail);
    }
    if (run->nfail < MAX_FAILURES) scn_failures_add(&run->fail, kind, line, subject, buf);
    else run->fail.unshown++;
    run->nfail++;
    rt_lock_release(&run->lock);
}

int scn_run_pool_index(run_state *run, uintptr_t key) {
    size_t i;
    for (i = 0; i < run->s->npools; i++)
        if (run->keys[i] == key && (i == 0 || run->pools[i])) return (int)i;
    return -1;
}

const void *scn_run_pool_native(run_state *run, int pool) {
    return pool == SCN_DEFAULT_POOL ? NULL : (const void *)tph_pool_key(run->pools[pool]);
}

/* ---- setup and the main thread ---------------------------------------------- */

static bool setup(run_state *run) {
    const scn_scenario *s = run->s;
    size_t i;
    for (i = 0; i < s->npools; i++) {
        const scn_pool *p = &s->pools[i];
        if (p->is_default) {
            run->keys[i] = 0;
            if (p->stall != SCN_STALL_UNSET) scn_pool_set_stall(NULL, p);
            if (p->start_delay) scn_pool_set_start_delay(NULL, p->start_delay);
            continue;
        }
        if (tph_pool_create(&run->pools[i]) != TPH_OK) {
            scn_run_fail(run, SCN_FAILURE_SETUP_FAILED, p->line, (int)i, "line %d: pool %s could not be created",
                         p->line, p->name);
            return false;
        }
        run->keys[i] = tph_pool_key(run->pools[i]);
        if (p->has_min || p->has_max) {
            uint32_t mx = p->has_max ? p->max : 512, mn = p->has_min ? p->min : 0;
            if (tph_pool_set_thread_limits(run->pools[i], mn, mx) != TPH_OK)
                scn_run_fail(run, SCN_FAILURE_SETUP_FAILED, p->line, (int)i,
                             "line %d: pool %s: thread limits %u..%u refused", p->line, p->name, mn, mx);
        }
        if (p->stall != SCN_STALL_UNSET) scn_pool_set_stall(scn_run_pool_native(run, (int)i), p);
        if (p->start_delay) scn_pool_set_start_delay(scn_run_pool_native(run, (int)i), p->start_delay);
    }
    for (i = 0; i < s->nfaults; i++) {
        const scn_fault *f = &s->faults[i];
        scn_pool_arm_fault(f, f->pool >= 0,
                           f->pool >= 0 ? scn_run_pool_native(run, f->pool) : NULL);
    }
    for (i = 0; i < s->nobjs; i++) {
        tph_err e;
        if (s->objs[i].created_by_thread) continue;
        e = scn_exec_create(run, (int)i);
        if (e != TPH_OK) {
            scn_run_fail(run, SCN_FAILURE_SETUP_FAILED, s->objs[i].line, (int)i,
                         "line %d: %s %s could not be created (%s)", s->objs[i].line,
                         scn_obj_kind_name(s->objs[i].kind), s->objs[i].name, scn_result_name((int)e));
            return false;
        }
    }
    return true;
}

/* The oracles read a settled process: the settle ends once the process is
 * quiet at or after d (rt_settle_until), never at the same instant as a
 * callback or the healer's tick still to run. */
static void settle(uint64_t d) { rt_settle_until(rt_now() + d); }

/* Which of the scenario's faults fired, and how often: part of the report. */
static void collect_faults(run_state *run) {
    size_t i;
    for (i = 0; i < run->s->nfaults; i++) {
        const scn_fault *f = &run->s->faults[i];
        scn_text_printf(&run->faults, "fault %s (line %d): fired %llu time(s)\n", scn_fault_name(f->kind), f->line,
                        (unsigned long long)scn_pool_fault_fired(f->kind));
    }
}

static void collect_misuse(run_state *run) { scn_pool_misuse_text(&run->misuse, 20); }

/* arg: the run.  The simulated process's main thread. */
static void scenario_main(void *arg) {
    run_state *run = (run_state *)arg;
    const scn_scenario *s = run->s;
    rt_thread *th[64];
    exec_ctx tc[64]; /* the threads' contexts: they are joined before this returns */
    size_t i;
    uint64_t settle_for = s->settle > SCN_SETTLE_DEFAULT ? s->settle : SCN_SETTLE_DEFAULT;
    scn_pool_process_begin();
    /* Armed for every target, whatever TPHEAL_TRACE says: an armed filter
     * narrows what the hook sees, and a hold or a count on a point the
     * filter dropped would silently never match. */
    tph_trace_arm("*");
    tph_trace_set_hook(scn_hook_record, run);
    scn_pool_watch_severing(scn_hook_severing, run);
    scn_pool_announce_check(true);
    if (setup(run)) {
        for (i = 0; i < s->nthreads && i < 64; i++) {
            tc[i].run = run;
            tc[i].who = s->threads[i].name;
            tc[i].actor = (int)i;
            tc[i].cb_obj = -1;
            th[i] = rt_spawn(s->threads[i].name, scn_exec_thread_main, &tc[i], false);
        }
        scn_exec_open_start_gate(run);
        for (i = 0; i < s->nthreads && i < 64; i++) rt_join(th[i]);
        settle(settle_for);
        scn_oracle_at_quiescence(run);
        scn_teardown(run);
        settle(SCN_SETTLE_DEFAULT);
        scn_oracle_after_teardown(run);
    }
    scn_pool_announce_check(false);
    collect_misuse(run);
    collect_faults(run);
    scn_pool_watch_severing(NULL, NULL);
    tph_trace_set_hook(NULL, NULL);
}

/* ---- the driver ------------------------------------------------------------------ */

static bool alloc_state(run_state *run, const scn_scenario *s) {
    size_t i;
    memset(run, 0, sizeof *run);
    /* Holds, awaits and the start gate order the scenario's threads as its
     * script says; that is scaffolding, not the core's synchronisation, so
     * the race build must not see it (rt.h). */
    rt_lock_harness_only(&run->lock);
    run->s = s;
    run->npoints = scn_trace_point_count();
    run->pools = calloc(s->npools, sizeof *run->pools);
    run->keys = calloc(s->npools, sizeof *run->keys);
    run->objs = calloc(s->nobjs ? s->nobjs : 1, sizeof *run->objs);
    for (i = 0; run->objs && i < s->nobjs; i++) {
        run->objs[i].run = run;
        run->objs[i].index = (int)i;
    }
    run->holds = calloc(s->nholds ? s->nholds : 1, sizeof *run->holds);
    run->label_time = calloc(s->nlabels ? s->nlabels : 1, sizeof *run->label_time);
    run->counts = calloc(run->npoints * (s->npools + 1), sizeof *run->counts);
    run->awaiting = calloc(run->npoints * (s->npools + 1), sizeof *run->awaiting);
    run->orders = calloc(s->norders ? s->norders : 1, sizeof *run->orders);
    run->healer_key = kept_healer_key;
    run->healer_key_known = kept_healer_key_known;
    scn_reach_begin(&run->reach, s);
    run->watched = calloc(run->npoints * (s->npools + 1), sizeof *run->watched);
    run->held = calloc(run->npoints ? run->npoints : 1, sizeof *run->held);
    if (run->watched && run->held) scn_hook_observe(run);
    return run->orders && run->pools && run->keys && run->objs && run->holds && run->label_time && run->counts &&
           run->awaiting && run->watched && run->held;
}

/* Frees what alloc_state made, and the run itself. */
static void free_state(run_state *run) {
    size_t i;
    for (i = 0; run->objs && i < run->s->nobjs; i++) scn_pool_file_close(run->objs[i].file);
    free(run->pools);
    free(run->keys);
    free(run->objs);
    free(run->holds);
    free(run->label_time);
    free(run->counts);
    free(run->awaiting);
    free(run->orders);
    scn_tl_free(run->tl);
    scn_failures_free(&run->fail);
    scn_text_free(&run->fail_tail);
    scn_text_free(&run->trace_all);
    scn_text_free(&run->misuse);
    scn_text_free(&run->faults);
    free(run->watched);
    free(run->held);
    free(run);
}

const char *scn_run_unsupported(const scn_scenario *s, bool native, char *buf, size_t n) {
    if (scn_pool_unsupported(s, buf, n)) return buf;
    /* `expect unhealed` holds when the repair starts in its cancellation's
     * 15.625 ms clock tick: certain in virtual time, a coincidence of real
     * time in free-running mode on any pool (healer-never-starts-same-tick
     * failed 1 replay in 6 of one seed under ASan there: issue 11).  And a
     * deadlock on OS threads is a hang nothing but a kill ends (a 60 s stress
     * budget overran by 60 s; `run --mode native` never returned): only the
     * controlled scheduler sees every thread blocked and reports it.  Such
     * scenarios run controlled only. */
    if (native)
        return scn_features_first(s, SCN_FEATURE_BIT(SCN_FEATURE_DEADLOCK) | SCN_FEATURE_BIT(SCN_FEATURE_SAME_TICK),
                                  buf, n);
    return NULL;
}

/* A failure of the run's outcome (no scenario line: the run's own). */
static void outcome_fail(scn_failures *f, scn_failure_kind kind, const char *fmt, ...) SCN_PRINTF(3, 4);
static void outcome_fail(scn_failures *f, scn_failure_kind kind, const char *fmt, ...) {
    va_list ap, again;
    int n;
    char *m;
    va_start(ap, fmt);
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    m = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (m) vsnprintf(m, (size_t)n + 1, fmt, again);
    va_end(again);
    scn_failures_add(f, kind, 0, -1, m ? m : "out of memory\n");
    free(m);
}

/* The kind of a run the scheduler stopped with `status`. */
static scn_failure_kind status_kind(sched_status status) {
    switch (status) {
    case SCHED_LIVELOCK: return SCN_FAILURE_LIVELOCK;
    case SCHED_REPLAY_DIVERGED: return SCN_FAILURE_REPLAY_DIVERGED;
    default: return SCN_FAILURE_RT_MISUSE;
    }
}

int scn_run(const scn_scenario *s, const scn_run_opts *o, scn_run_out *out) {
    scn_failures f = {0};
    int status;
    bool ended = false, deadlocked = false;
    uint32_t lock_waiters = 0;
    char reason[256] = "";
    memset(out, 0, sizeof *out);
    if (!o->native && !scn_pool_is_model()) {
        out->bad_options = true;
        out->failures = scn_strdup("controlled mode schedules the model's threads; the real pool's are the OS's: "
                                   "use --mode native here, or tpheal-harness for controlled runs");
        return -1;
    }
    if (scn_run_unsupported(s, o->native, reason, sizeof reason)) {
        out->declined = scn_strdup(reason);
        return 0;
    }
    /* The run's whole state: handed to the trace hook, the callbacks (through
     * their objects' state), the threads and the reach probes; never global. */
    run_state *run = malloc(sizeof *run);
    if (!run) {
        out->failures = scn_strdup("out of memory");
        return -1;
    }
    if (!alloc_state(run, s)) {
        free_state(run);
        out->failures = scn_strdup("out of memory");
        return -1;
    }
    run->free_running = o->native;
    run->full_trace = o->full_trace;
    if (o->timeline && !(run->tl = scn_tl_new())) {
        free_state(run);
        out->failures = scn_strdup("out of memory");
        return -1;
    }
    if (o->native) {
        rt_native_options no;
        rt_native_result nr;
        rt_native_options_default(&no);
        no.seed = o->seed;
        /* Free-running mode shakes the OS schedule with seeded noise at every
         * rt_ call, rr-chaos / BUGGIFY style (docs/stress.md): 2% yields, 1%
         * spins, 0.2% sleeps of up to 200 us. */
        no.yield_ppm = 20000;
        no.spin_ppm = 10000;
        no.sleep_ppm = 2000;
        rt_native_run(scenario_main, run, &no);
        rt_native_last_result(&nr);
        ended = nr.ended;
        snprintf(reason, sizeof reason, "%s", nr.reason);
        status = -1;
    } else {
        sched_options so;
        sched_result sr;
        sched_options_default(&so);
        so.seed = o->seed;
        so.strategy = o->strategy;
        so.dfs = o->dfs;
        /* The bounded search explores idle time: its clock reads commute
         * with the steps around them, so the reduction can prune them
         * (harness/sched/README.md, "Virtual time"). */
        if (o->strategy == SCHED_STRATEGY_DFS) so.time = SCHED_TIME_IDLE;
        if (o->depth) so.pct_depth = o->depth;
        so.pct_steps = o->pct_steps;
        so.schedule = o->schedule;
        so.replay_continue = o->schedule && o->replay_continue;
        if (sched_run(&so, scenario_main, run, &sr) != 0) {
            out->bad_options = true;
            out->failures = scn_strdup(sr.reason);
            sched_result_free(&sr);
            free_state(run);
            return -1;
        }
        status = (int)sr.status;
        ended = sr.status == SCHED_PROCESS_ENDED;
        deadlocked = sr.status == SCHED_DEADLOCK;
        lock_waiters = sr.lock_waiters;
        snprintf(reason, sizeof reason, "%s", sr.reason);
        out->schedule = sr.schedule ? scn_strdup(sr.schedule) : NULL;
        out->blocked_report = sr.blocked_report ? scn_strdup(sr.blocked_report) : NULL;
        out->fairness = sr.fairness;
        out->steps = sr.steps;
        out->choice_points = sr.choice_points;
        out->preemptions = sr.preemptions;
        out->interleaving_hash = sr.interleaving_hash;
        out->trace_hash = sr.trace_hash;
        out->fibers_peak = sr.fibers_peak;
        out->diverged_at = sr.diverged_at;
        out->diverged = sr.diverged_at ? scn_strdup(sr.diverged) : NULL;
        /* The race build's ThreadSanitizer report: a failure like any other. */
        if (sr.race) {
            outcome_fail(&f, SCN_FAILURE_DATA_RACE, "data race: %s", sr.race);
            out->race = scn_strdup(sr.race);
        }
        if (sr.status != SCHED_OK && sr.status != SCHED_PROCESS_ENDED && sr.status != SCHED_DEADLOCK)
            outcome_fail(&f, status_kind(sr.status), "run: %s: %s\n", sched_status_name(sr.status), sr.reason);

        sched_result_free(&sr);
    }
    out->status = status;
    /* the expected outcome */
    switch (s->outcome) {
    case SCN_OUTCOME_FAIL_FAST:
        if (!ended)
            outcome_fail(&f, SCN_FAILURE_EXPECTED_FAIL_FAST, "expected fail-fast: the run %s\n",
                         deadlocked ? "deadlocked" : "ended normally");
        else if (s->outcome_text[0] && !strstr(reason, s->outcome_text))
            outcome_fail(&f, SCN_FAILURE_EXPECTED_FAIL_FAST, "expected a fail-fast mentioning '%s', got: %s\n",
                         s->outcome_text, reason);
        break;
    case SCN_OUTCOME_DEADLOCK:
        if (!deadlocked)
            outcome_fail(&f, SCN_FAILURE_EXPECTED_DEADLOCK, "expected a deadlock: the run %s\n",
                         ended ? "was ended" : "finished");
        break;
    case SCN_OUTCOME_MISUSE:
        if (!run->misuse.s)
            outcome_fail(&f, SCN_FAILURE_EXPECTED_MISUSE, "expected a misuse report: the sim reported none\n");
        else if (s->outcome_text[0] && !strstr(run->misuse.s, s->outcome_text))
            outcome_fail(&f, SCN_FAILURE_EXPECTED_MISUSE, "expected a misuse report mentioning '%s'\n",
                         s->outcome_text);
        break;
    default:
        if (ended) outcome_fail(&f, SCN_FAILURE_FAIL_FAST, "the process was ended: %s\n", reason);
        /* A deadlock where the scenario's own await or hold is waiting and
         * no thread wants a lock: it waited for a record that never came
         * (an injected fault may remove one: stress-faultloop accepts it). */
        if (deadlocked)
            outcome_fail(&f, run->script_waiters && !lock_waiters ? SCN_FAILURE_SCRIPT_WAIT_DEADLOCK : SCN_FAILURE_DEADLOCK,
                         "%s\nblocked threads:\n%s", reason,
                         out->blocked_report ? out->blocked_report : "(none reported)\n");
        break;
    }
    if (s->outcome != SCN_OUTCOME_MISUSE && run->misuse.s)
        outcome_fail(&f, SCN_FAILURE_MISUSE, "the sim reported misuse:\n%s", run->misuse.s);
    /* oracle failures only count for runs that reached their end */
    if ((!ended && !deadlocked) || s->outcome == SCN_OUTCOME_NORMAL) scn_failures_append(&f, &run->fail);
    out->misuse = scn_text_take(&run->misuse);
    out->faults = scn_text_take(&run->faults);
    out->failures = scn_failures_text(&f);
    out->failure_list = f;
    out->kind = f.n ? f.v[0].kind : SCN_FAILURE_NONE;
    out->passed = f.n == 0;
    if (!out->passed || !o->tail_on_failure) {
        out->failed_check = run->fail_seen;
        out->fail_record = run->fail_rec;
        out->fail_time = run->fail_time;
        out->fail_line = run->fail_line;
        out->trace_tail = run->fail_seen ? scn_text_take(&run->fail_tail) : scn_tracefmt_tail(run);
    }
    if (o->full_trace) out->trace_full = scn_text_take(&run->trace_all);
    if (run->tl) {
        char title[300];
        snprintf(title, sizeof title, "%s: %s", s->path ? s->path : "scenario", out->passed ? "passed" : "failed");
        out->timeline_html = scn_tl_html(run, title, !out->passed, run->fail_seen ? run->fail_time : UINT64_MAX,
                                         out->failures ? out->failures : "");
    }
    {
        scn_reach_probe probe = scn_hook_reach_probe(run);
        out->reached = scn_reach_at_end(&run->reach, &probe);
    }
    scn_pool_process_end();
    if (!scn_pool_process_per_run() && run->healer_key_known) {
        kept_healer_key = run->healer_key;
        kept_healer_key_known = true;
    }
    free_state(run);
    return 0;
}

void scn_run_out_free(scn_run_out *o) {
    free(o->failures);
    scn_failures_free(&o->failure_list);
    free(o->schedule);
    free(o->blocked_report);
    free(o->race);
    free(o->trace_tail);
    free(o->trace_full);
    free(o->timeline_html);
    free(o->diverged);
    free(o->misuse);
    free(o->faults);
    free(o->declined);
    memset(o, 0, sizeof *o);
}
