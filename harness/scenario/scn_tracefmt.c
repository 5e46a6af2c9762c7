/* Trace records as the reports print them (scn_run_internal.h): a record
 * names the pool or object it concerns by its scenario name and times in
 * virtual ms, never an address or a real time, so a seed prints the same
 * bytes on every run.  The tail of the last TRACE_TAIL records (failure
 * reports) and every record (`replay --trace`). */
#include <stdint.h>
#include <string.h>

#include "scn_run_internal.h"

/* `replay --trace`: a line where a scenario callback starts and where it
 * returns, between the trace records (numbered "#-": not records, so the
 * numbering of the records stays the stream's).  What calls(X) and
 * overlap(X) count, made visible.  rt_now and rt_thread_name are no
 * scheduling points, so tracing leaves the schedule as it is. */
void scn_tracefmt_callback_locked(run_state *run, int obj, const char *what) {
    uint64_t now;
    const char *who;
    if (!run->full_trace) return;
    now = rt_now();
    who = rt_thread_name();
    scn_text_printf(&run->trace_all, "#- t=%llu.%04llums %s scenario/callback-%s obj=%s calls=%llu running=%u\n",
                    (unsigned long long)(now / SCN_MS), (unsigned long long)(now % SCN_MS), who ? who : "?",
                    what, run->s->objs[obj].name, (unsigned long long)run->objs[obj].calls, run->objs[obj].running);
}

/* One record as the reports print it: its number in the run's trace, the
 * virtual time in ms, the thread's name, the event, the scenario's name for
 * the pool or object it concerns, and b -- in ms where it is a time. */
static int b_unit(const char *ev) { return scn_trace_point_b_unit(scn_trace_point_find(ev)); }

void scn_tracefmt_rec(run_state *run, scn_text *t, uint64_t n, const tail_rec *r) {
    size_t i;
    const char *obj = NULL;
    scn_text_printf(t, "#%llu t=%llu.%04llums %s %s/%s", (unsigned long long)n,
                    (unsigned long long)(r->time / SCN_MS), (unsigned long long)(r->time % SCN_MS),
                    r->who[0] ? r->who : "?", r->target, r->event);
    for (i = 0; r->pool < 0 && r->a && i < run->s->nobjs; i++)
        if ((uintptr_t)run->objs[i].os == r->a) obj = run->s->objs[i].name;
    if (r->pool >= 0) scn_text_printf(t, " pool=%s", run->s->pools[r->pool].name);
    else if (r->key) {
        char buf[96];
        scn_text_printf(t, " pool='%s'", scn_poolname(run, r->key, buf, sizeof buf));
    } else if (r->a && strcmp(r->event, "healer-started") == 0) {
        scn_text_printf(t, " pool='healer pool'"); /* formatted before the hook notes the key */
    } else if (r->a && scn_poolname_known(run, (uintptr_t)r->a)) {
        char buf[96];
        scn_text_printf(t, " pool='%s'", scn_poolname(run, (uintptr_t)r->a, buf, sizeof buf));
    } else if (obj) scn_text_printf(t, " obj=%s", obj);
    else if (r->a) scn_text_printf(t, " a=%llu", (unsigned long long)r->a);
    int unit = b_unit(r->event);
    if (unit == SCN_B_DUE && r->b) {
        /* a FILETIME due time: negative = relative */
        int64_t d = (int64_t)r->b;
        uint64_t m = d < 0 ? (uint64_t)0 - r->b : r->b;
        scn_text_printf(t, " due=%s%llu.%04llums%s", d < 0 ? "+" : "", (unsigned long long)(m / SCN_MS),
                        (unsigned long long)(m % SCN_MS), d < 0 ? " (relative)" : " (absolute)");
    } else if (unit == SCN_B_TIME) {
        scn_text_printf(t, " b=%llu.%04llums", (unsigned long long)(r->b / SCN_MS),
                        (unsigned long long)(r->b % SCN_MS));
    } else if (r->b) {
        scn_text_printf(t, " b=%llu", (unsigned long long)r->b);
    }
    scn_text_printf(t, "\n");
}

void scn_tracefmt_tail_into(run_state *run, scn_text *t) {
    uint64_t first = run->tail_n > TRACE_TAIL ? run->tail_n - TRACE_TAIL : 0, i;
    for (i = first; i < run->tail_n; i++) scn_tracefmt_rec(run, t, i + 1, &run->tail[i % TRACE_TAIL]);
}

char *scn_tracefmt_tail(run_state *run) {
    scn_text t = {0};
    scn_tracefmt_tail_into(run, &t);
    return scn_text_take(&t);
}
