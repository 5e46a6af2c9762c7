/* One run of a user's check (check_internal.h): a simulated process under
 * the controlled scheduler whose main thread runs the check, then settles,
 * then asks the oracles; the run's failures come back as text.  Everything
 * a failure prints is the model's names and counts -- pool#2, work#3 --
 * never an address, so a seed prints the same bytes every time. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tpheal/check.h>
#include <tpheal/tpheal.h>

#include "check_internal.h"
#include "process_state.h"
#include "rt.h"
#include "sim.h"

/* A run's failures: grown as they are found. */
typedef struct check_text {
    char *s;
    size_t n, cap;
    bool oom;
} check_text;

static void text_printf(check_text *t, const char *fmt, ...) {
    va_list ap, again;
    int need;
    va_start(ap, fmt);
    va_copy(again, ap);
    need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need > 0 && t->n + (size_t)need + 1 > t->cap) {
        size_t cap = (t->n + (size_t)need + 1) * 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->oom = true;
            va_end(again);
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    if (need > 0) {
        vsnprintf(t->s + t->n, t->cap - t->n, fmt, again);
        t->n += (size_t)need;
    }
    va_end(again);
}

typedef struct check_run {
    const check_run_spec *spec;
    bool asserted;       /* a TPH_CHECK failed: `assertion` says where */
    char assertion[640];
    uintptr_t healer_key; /* the healer's own pool, registered like any other */
    bool healer_known;
    bool reached_end;    /* the oracles ran: the check returned and the process settled */
    check_text found;    /* what the oracles and the misuse reports found */
} check_run;

/* The run whose fibers are running.  TPH_CHECK has no handle to pass, so
 * the one file-scope state of the checker is this pointer: set for the
 * length of a sched_run, which is never nested nor concurrent. */
static check_run *current;

bool tph_check_active(void) { return current != NULL; }

void tph_check_fail_at(const char *file, int line, const char *what) {
    if (!current) {
        fprintf(stderr, "%s:%d: TPH_CHECK(%s) called outside tph_check_run\n", file, line, what);
        exit(TPH_CHECK_BAD_INPUT);
    }
    if (!current->asserted) {
        current->asserted = true;
        snprintf(current->assertion, sizeof current->assertion, "%s:%d: TPH_CHECK(%s) failed", file, line, what);
    }
    rt_end_process("TPH_CHECK failed");
}

/* Every record: the model's announcement rule reads the core's `api`
 * records, and the healer's start names the healer's pool. */
static void hook(const tph_trace_record *rec, void *ctx) {
    check_run *run = (check_run *)ctx;
    sim_announce_note(rec->target, rec->event, rec->a, rec->b);
    if (!strcmp(rec->target, "heal") && !strcmp(rec->event, "healer-started")) {
        run->healer_key = (uintptr_t)rec->a;
        run->healer_known = true;
    }
}

static const char *pool_name(uintptr_t key, char *buf, size_t n) {
    if (key == 0) return "the default pool";
    snprintf(buf, n, "pool#%u", (unsigned)sim_object_id((const void *)key));
    return buf;
}

/* The library's rules on the settled process (docs/check.md, "What fails a
 * run"): a severed pool strands its queue until a submit; a cancellation
 * owes its pool a repair that starts after it; the check closes what it
 * made, so no registry entry keeps objects and no pool stays open. */
static void oracles(check_run *run) {
    tph_heal_entry_info info[64];
    size_t n, i;
    uint32_t p, npools;
    char buf[48];
    if (sim_any_pool_severed_with_queued())
        text_printf(&run->found, "oracle: a pool is severed with callbacks queued after the check settled "
                                 "(they never run)\n");
    n = tph_heal_entries(info, 64);
    if (n > 64) n = 64;
    for (i = 0; i < n; i++) {
        const char *name = pool_name(info[i].key, buf, sizeof buf);
        if (run->healer_known && info[i].key == run->healer_key) continue;
        if (info[i].unhealed)
            text_printf(&run->found, "oracle: %s was cancelled and no repair started after its last cancellation\n",
                        name);
        if (info[i].outstanding)
            text_printf(&run->found, "oracle: %s has %u repairs outstanding after the check settled\n", name,
                        info[i].outstanding);
        if (info[i].objects)
            text_printf(&run->found, "oracle: %s: %llu tpheal objects still open after the check returned "
                                     "(a check closes what it creates)\n",
                        name, (unsigned long long)info[i].objects);
    }
    /* The settle ends when nothing can run and nothing is due: a callback
     * still running then waits for what never comes -- on a real pool a
     * worker stuck for good (a drain of its own object, an event nobody
     * sets). */
    npools = sim_pool_count();
    for (p = 0; p < npools; p++) {
        tph_os_pool *h = sim_pool_at(p);
        sim_pool_stats ps;
        if (run->healer_known && (uintptr_t)h == run->healer_key) continue;
        if (!sim_pool_stats_get(h, &ps)) continue;
        if (ps.running)
            text_printf(&run->found, "oracle: %s: %u callbacks still running after the check settled "
                                     "(each waits for what never comes)\n",
                        pool_name((uintptr_t)h, buf, sizeof buf), ps.running);
        if (p > 0 && !ps.closed) text_printf(&run->found, "oracle: pool#%u was never closed\n", (unsigned)ps.id);
    }
}

static void collect_misuse(check_run *run) {
    size_t n = sim_misuse_count(), i;
    for (i = 0; i < n && i < 10; i++) {
        sim_misuse m;
        char line[256];
        if (!sim_misuse_get(i, &m)) break;
        sim_misuse_format(&m, line, sizeof line);
        text_printf(&run->found, "misuse: %s\n", line);
    }
    if (n > 10) text_printf(&run->found, "misuse: ... and %llu more\n", (unsigned long long)(n - 10));
}

/* The simulated process's main thread. */
static void check_main(void *arg) {
    check_run *run = (check_run *)arg;
    sim_process_begin(NULL);
    /* Disarmed, the trace stores nothing and its hook sees every record,
     * whatever TPHEAL_TRACE says: the announcement rule needs all of them. */
    tph_trace_arm("");
    tph_trace_set_hook(hook, run);
    sim_announce_check(true);
    run->spec->test(run->spec->arg);
    rt_settle_until(rt_now() + CHECK_SETTLE);
    oracles(run);
    sim_announce_check(false);
    collect_misuse(run);
    tph_trace_set_hook(NULL, NULL);
    run->reached_end = true;
}

/* The run's verdict from the scheduler's status and what the run found. */
static void verdict(check_run *run, const sched_result *sr, check_text *t) {
    switch (sr->status) {
    case SCHED_OK: break;
    case SCHED_PROCESS_ENDED:
        if (run->asserted) text_printf(t, "%s\n", run->assertion);
        else text_printf(t, "the process was ended: %s\n", sr->reason);
        break;
    case SCHED_DEADLOCK:
    case SCHED_LIVELOCK:
        /* the reason names the status ("deadlock: no runnable thread ...") */
        text_printf(t, "%s\nblocked threads:\n%s", sr->reason[0] ? sr->reason : sched_status_name(sr->status),
                    sr->blocked_report ? sr->blocked_report : "(none reported)\n");
        break;
    default: text_printf(t, "%s\n", sr->reason[0] ? sr->reason : sched_status_name(sr->status)); break;
    }
    if (run->reached_end && run->found.n) text_printf(t, "%s", run->found.s);
}

/* What the watchdog prints for this run if it never ends: the failure line
 * of any other failing run, its cause, and its replay. */
static void arm_watchdog(const check_run_spec *spec) {
    char report[1024], run[160], replay[4200] = "";
    const char *words = spec->schedule;
    char seeded[64];
    if (!spec->watchdog) return;
    if (spec->schedule) snprintf(run, sizeof run, "replay");
    else if (spec->strategy == SCHED_STRATEGY_DFS)
        snprintf(run, sizeof run, "search run %llu", (unsigned long long)spec->seed);
    else snprintf(run, sizeof run, "seed %llu %s", (unsigned long long)spec->seed, sched_strategy_name(spec->strategy));
    if (!words && spec->strategy != SCHED_STRATEGY_DFS) {
        if (spec->strategy == SCHED_STRATEGY_PCT)
            snprintf(seeded, sizeof seeded, "%llu pct %llu", (unsigned long long)spec->seed,
                     (unsigned long long)spec->pct_steps);
        else snprintf(seeded, sizeof seeded, "%llu random", (unsigned long long)spec->seed);
        words = seeded;
    }
    if (words) snprintf(replay, sizeof replay, "  replay: TPHEAL_CHECK_REPLAY=\"%s\" %s\n", words, spec->command);
    snprintf(report, sizeof report,
             "check %s: FAILED %s\n  the run did not end within %u s of real time: a thread blocks or spins "
             "where the scheduler cannot see it (a raw mutex, a blocking system call, a loop on plain memory); "
             "only tpheal's calls are scheduling points\n%s",
             spec->name, run, spec->timeout, replay);
    check_watchdog_arm(spec->watchdog, report);
}

bool check_run_one(const check_run_spec *spec, check_outcome *out) {
    check_run run;
    sched_options so;
    sched_result sr;
    check_text t = {0};
    memset(out, 0, sizeof *out);
    memset(&run, 0, sizeof run);
    run.spec = spec;
    sched_options_default(&so);
    so.seed = spec->seed;
    so.strategy = spec->strategy;
    if (spec->pct_depth) so.pct_depth = spec->pct_depth;
    so.pct_steps = spec->pct_steps;
    so.dfs = spec->dfs;
    so.schedule = spec->schedule;
    /* The bounded search explores idle time, as the scenario runner's does
     * (harness/sched/README.md, "Virtual time"); a schedule string carries
     * its own time model. */
    if (spec->strategy == SCHED_STRATEGY_DFS) so.time = SCHED_TIME_IDLE;
    current = &run;
    arm_watchdog(spec);
    if (sched_run(&so, check_main, &run, &sr) != 0) {
        current = NULL;
        out->bad_schedule = spec->schedule != NULL;
        text_printf(&t, "%s\n", sr.reason);
    } else {
        current = NULL;
        verdict(&run, &sr, &t);
        out->choice_points = sr.choice_points;
        if (sr.schedule && !(out->schedule = malloc(strlen(sr.schedule) + 1))) t.oom = true;
        else if (sr.schedule) strcpy(out->schedule, sr.schedule);
    }
    check_watchdog_disarm(spec->watchdog);
    sched_result_free(&sr);
    tph_trace_set_hook(NULL, NULL);
    if (sim_process_active()) sim_process_end();
    /* the core's statics described the process that just ended */
    tph_process_state_reset();
    free(run.found.s);
    if (t.oom || run.found.oom) {
        free(t.s);
        check_outcome_free(out);
        return false;
    }
    out->passed = t.n == 0;
    out->failure = t.s;
    if (out->passed) {
        free(t.s);
        out->failure = NULL;
    }
    return true;
}

void check_outcome_free(check_outcome *o) {
    free(o->failure);
    free(o->schedule);
    memset(o, 0, sizeof *o);
}
