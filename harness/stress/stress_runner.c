/* stress_runner.h over the scenario engine's scn_run (harness/scenario/
 * scn_run.h): the one place that knows the engine's option and result
 * structures. */
#include "stress_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_sched.h"

static void copy_text(char *dst, size_t cap, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The first line of a multi-line report: the failure files keep the whole
 * story (the replay prints it), the batch summary only needs the headline. */
static void first_line(char *dst, size_t cap, const char *src) {
    copy_text(dst, cap, src);
    char *nl = strchr(dst, '\n');
    if (nl) *nl = '\0';
}

void stress_run_opts(const stress_run_cfg *cfg, scn_run_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = cfg->seed;
    o->strategy = cfg->pct ? SCHED_STRATEGY_PCT : SCHED_STRATEGY_RANDOM;
    o->depth = cfg->depth;
    o->pct_steps = cfg->pct_steps;
    o->native = cfg->mode == STRESS_NATIVE;
}

bool stress_run_one(const scn_scenario *scn, const stress_run_cfg *cfg, stress_run_out *out) {
    memset(out, 0, sizeof *out);
    scn_run_opts o;
    stress_run_opts(cfg, &o);
    o.tail_on_failure = !cfg->want_report; /* the tail is copied out below only then */
    scn_run_out r;
    memset(&r, 0, sizeof r);
    scn_run(scn, &o, &r);
    if (r.bad_options) {
        copy_text(out->status, sizeof out->status, "bad-options");
        first_line(out->reason, sizeof out->reason, r.failures);
        scn_run_out_free(&r);
        return false;
    }
    out->passed = r.passed;
    out->steps = r.steps;
    out->choice_points = r.choice_points;
    out->interleaving_hash = r.interleaving_hash;
    out->trace_hash = r.trace_hash;
    out->reached = r.reached;
    if (r.passed)
        copy_text(out->status, sizeof out->status, "ok");
    else if (r.status > 0)
        copy_text(out->status, sizeof out->status, sched_status_name((sched_status)r.status));
    else
        copy_text(out->status, sizeof out->status, "oracle");
    out->deadlock_in_scenario_wait =
        !r.passed && r.status == SCHED_DEADLOCK && r.blocked_report &&
        (strstr(r.blocked_report, "scenario await") || strstr(r.blocked_report, "scenario hold")) &&
        !strstr(r.blocked_report, "wants lock");
    if (!r.passed) {
        first_line(out->reason, sizeof out->reason, r.failures);
        if (cfg->want_schedule && r.schedule) {
            out->schedule = r.schedule;
            r.schedule = NULL;
        }
        if (cfg->want_report) {
            out->report = r.failures;
            r.failures = NULL;
        }
    }
    if (cfg->want_report) {
        out->trace_tail = r.trace_tail;
        r.trace_tail = NULL;
    }
    scn_run_out_free(&r);
    return true;
}

void stress_run_out_free(stress_run_out *out) {
    free(out->schedule);
    free(out->report);
    free(out->trace_tail);
    out->schedule = out->report = out->trace_tail = NULL;
}
