/* stress_runner.h over the scenario engine's scn_run (harness/scenario/
 * scn_run.h): the one place that knows the engine's option and result
 * structures. */
#include "stress_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_sched.h"
#include "scn_text.h"

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

void stress_run_read(const scn_run_out *r, const stress_run_cfg *cfg, stress_run_out *out) {
    memset(out, 0, sizeof *out);
    out->passed = r->passed;
    out->line = !r->passed && r->failed_check ? r->fail_line : 0;
    out->steps = r->steps;
    out->choice_points = r->choice_points;
    out->interleaving_hash = r->interleaving_hash;
    out->trace_hash = r->trace_hash;
    out->reached = r->reached;
    if (r->passed)
        copy_text(out->status, sizeof out->status, "ok");
    else if (r->status > 0)
        copy_text(out->status, sizeof out->status, sched_status_name((sched_status)r->status));
    else
        copy_text(out->status, sizeof out->status, "oracle");
    out->kind = r->kind;
    for (size_t i = 0; i < r->failure_list.n; i++)
        if (r->failure_list.v[i].kind == SCN_FAILURE_SCRIPT_WAIT_DEADLOCK) out->deadlock_in_scenario_wait = true;
    if (!r->passed) {
        first_line(out->reason, sizeof out->reason, r->failures);
        if (cfg->want_schedule) out->schedule = scn_strdup(r->schedule);
        if (cfg->want_report) {
            out->report = scn_strdup(r->failures);
            scn_failures_copy(&out->failure_list, &r->failure_list);
        }
    }
    if (cfg->want_report) out->trace_tail = scn_strdup(r->trace_tail);
    out->trace_full = scn_strdup(r->trace_full);
}

bool stress_run_one(const scn_scenario *scn, const stress_run_cfg *cfg, stress_run_out *out) {
    memset(out, 0, sizeof *out);
    scn_run_opts o;
    stress_run_opts(cfg, &o);
    o.tail_on_failure = !cfg->want_report; /* the tail is copied out below only then */
    o.full_trace = cfg->full_trace;
    scn_run_out r;
    memset(&r, 0, sizeof r);
    scn_run(scn, &o, &r);
    if (r.bad_options) {
        copy_text(out->status, sizeof out->status, "bad-options");
        first_line(out->reason, sizeof out->reason, r.failures);
        scn_run_out_free(&r);
        return false;
    }
    stress_run_read(&r, cfg, out);
    scn_run_out_free(&r);
    return true;
}

void stress_run_out_free(stress_run_out *out) {
    free(out->schedule);
    free(out->report);
    free(out->trace_tail);
    free(out->trace_full);
    out->schedule = out->report = out->trace_tail = out->trace_full = NULL;
    scn_failures_free(&out->failure_list);
}
