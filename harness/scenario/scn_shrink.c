/* The schedule shrinker (scn_shrink.h): the bounded search at each bound in
 * turn, then a shorter prefix at the bound that failed. */
#include "scn_shrink.h"

#include <string.h>

#include "sched_dfs.h"
#include "scn_clock.h"
#include "scn_json.h"
#include "scn_report.h"

bool scn_shrink_same_check(void *original, const scn_run_out *r) {
    const scn_run_out *o = (const scn_run_out *)original;
    if (r->passed || r->status != o->status || r->failure_list.n == 0 || o->failure_list.n == 0)
        return !r->passed && r->status == o->status && r->failure_list.n == 0 && o->failure_list.n == 0;
    return scn_failure_same(&r->failure_list.v[0], &o->failure_list.v[0]);
}

/* Whether the next run would end past the budget, if it takes as long as
 * the last one: a livelocked run is a million steps (2.5 s each, measured on
 * group-release-stops-rearms.scn with its sabotage), and checking only
 * before a run overran a 10 s budget by half a run. */
static bool out_of_time(const scn_shrink_budget *b, double t0, double last_run) {
    return b->max_seconds > 0 && scn_wall_seconds() - t0 + last_run >= b->max_seconds;
}

/* The search at one bound.  True when it found a failing run (out->hit, the
 * shortest prefix of those it met); *complete when its tree ran out. */
static bool search_bound(const scn_scenario *s, const scn_shrink_budget *b, unsigned bound, scn_shrink_same_fn same,
                         void *ctx, double t0, double *last_run, scn_shrink_result *out, bool *complete, int *rc) {
    sched_dfs *d = sched_dfs_new(bound);
    bool hit = false;
    uint64_t past_hit = 0;
    *complete = false;
    if (!d) {
        *rc = -1;
        return false;
    }
    sched_dfs_set_por(d, true);
    while (sched_dfs_runs(d) < b->runs_per_bound) {
        scn_run_opts ro;
        scn_run_out r;
        double started;
        if (out_of_time(b, t0, *last_run)) {
            out->cut = SCN_SHRINK_CUT_TIME;
            break;
        }
        memset(&ro, 0, sizeof ro);
        ro.strategy = SCHED_STRATEGY_DFS;
        ro.dfs = d;
        ro.seed = sched_dfs_runs(d) + 1;
        ro.tail_on_failure = true;
        out->runs++;
        started = scn_wall_seconds();
        if (scn_run(s, &ro, &r) != 0 || r.declined) {
            scn_run_out_free(&r);
            break;
        }
        if (!r.passed && same(ctx, &r) && (!hit || sched_dfs_run_prefix(d) < out->prefix)) {
            scn_run_out_free(&out->hit);
            out->hit = r; /* owned now */
            out->preemptions = sched_dfs_run_preemptions(d);
            out->prefix = sched_dfs_run_prefix(d);
            hit = true;
        } else {
            scn_run_out_free(&r);
        }
        *last_run = scn_wall_seconds() - started;
        /* a prefix of 0 is the default extension itself: none is shorter */
        if (hit && (out->prefix == 0 || past_hit++ >= b->prefix_runs)) break;
        if (!sched_dfs_advance(d)) {
            *complete = sched_dfs_complete(d);
            break;
        }
    }
    if (!hit && !*complete && out->cut == SCN_SHRINK_CUT_NONE) out->cut = SCN_SHRINK_CUT_RUNS;
    sched_dfs_free(d);
    return hit;
}

int scn_shrink(const scn_scenario *s, const scn_shrink_budget *b, scn_shrink_same_fn same, void *ctx,
               scn_shrink_result *out) {
    double t0 = scn_wall_seconds(), last_run = 0;
    bool lower_complete = true;
    unsigned bound;
    int rc = 0;
    memset(out, 0, sizeof *out);
    out->max_bound = b->max_preemptions;
    for (bound = 0; bound <= b->max_preemptions && rc == 0; bound++) {
        bool complete;
        if (search_bound(s, b, bound, same, ctx, t0, &last_run, out, &complete, &rc)) {
            out->found = true;
            out->fewest_proven = lower_complete;
            break;
        }
        lower_complete = lower_complete && complete;
        if (out->cut == SCN_SHRINK_CUT_TIME) break;
    }
    out->seconds = scn_wall_seconds() - t0;
    return rc;
}

void scn_shrink_result_free(scn_shrink_result *r) {
    scn_run_out_free(&r->hit);
    memset(r, 0, sizeof *r);
}

const char *scn_shrink_cut_name(scn_shrink_cut c) {
    return c == SCN_SHRINK_CUT_RUNS ? "runs" : c == SCN_SHRINK_CUT_TIME ? "time" : "";
}

void scn_shrink_describe(scn_text *t, const scn_shrink_result *r, bool runs) {
    if (r->found)
        scn_text_printf(t, "%u preemption%s, choice prefix %llu of %llu choices%s", r->preemptions,
                        r->preemptions == 1 ? "" : "s", (unsigned long long)r->prefix,
                        (unsigned long long)r->hit.choice_points,
                        r->fewest_proven ? " (fewest: every lower bound searched to its end)"
                                         : " (fewer preemptions not ruled out: a lower bound's search was cut)");
    else
        scn_text_printf(t, "no schedule with at most %u preemptions fails the same way", r->max_bound);
    if (runs) scn_text_printf(t, "; %llu run%s", (unsigned long long)r->runs, r->runs == 1 ? "" : "s");
    if (r->cut == SCN_SHRINK_CUT_TIME) scn_text_printf(t, "; STOPPED EARLY at the time budget");
    else if (r->cut == SCN_SHRINK_CUT_RUNS) scn_text_printf(t, "; a bound's search STOPPED EARLY at its run budget");
}

/* ---- a campaign's shrinks ------------------------------------------------------- */

static scn_failure identity(const scn_run_out *r) {
    scn_failure f;
    memset(&f, 0, sizeof f);
    if (r->failure_list.n) f = r->failure_list.v[0];
    else f.kind = SCN_FAILURE_NONE;
    f.message = NULL;
    return f;
}

const scn_shrink_result *scn_shrinks_for(scn_shrinks *c, const scn_scenario *s, const scn_shrink_budget *b,
                                         const scn_run_out *r) {
    scn_failure id = identity(r);
    size_t i;
    if (b->max_seconds <= 0 || r->passed) return NULL;
    for (i = 0; i < c->n; i++)
        if (c->v[i].status == r->status && scn_failure_same(&c->v[i].first, &id)) return &c->v[i].res;
    if (c->n == SCN_SHRINKS_KEPT) return NULL;
    c->v[c->n].status = r->status;
    c->v[c->n].first = id;
    scn_shrink(s, b, scn_shrink_same_check, (void *)r, &c->v[c->n].res);
    return &c->v[c->n++].res;
}

void scn_shrinks_free(scn_shrinks *c) {
    size_t i;
    for (i = 0; i < c->n; i++) scn_shrink_result_free(&c->v[i].res);
    c->n = 0;
}

void scn_shrink_json(struct scn_json *j, const scn_shrink_result *r, const char *exe, const char *path) {
    scn_text cmd = {0};
    if (r->found) {
        scn_json_str(j, "shrunk_schedule", r->hit.schedule);
        scn_json_u64(j, "shrunk_preemptions", r->preemptions);
        scn_json_u64(j, "shrunk_prefix", r->prefix);
        scn_json_u64(j, "shrunk_choices", r->hit.choice_points);
        scn_json_bool(j, "shrunk_fewest_proven", r->fewest_proven);
        scn_replay_by_schedule(&cmd, exe, r->hit.schedule, NULL, path);
        scn_json_str(j, "shrunk_replay", cmd.s);
        scn_text_free(&cmd);
    }
    scn_json_u64(j, "shrunk_runs", r->runs);
    scn_json_fixed(j, "shrunk_seconds", 3, r->seconds);
    scn_json_str(j, "shrunk_cut", scn_shrink_cut_name(r->cut));
}
