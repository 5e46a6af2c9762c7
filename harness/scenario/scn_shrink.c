/* The schedule shrinker (scn_shrink.h): the bounded search at each bound in
 * turn, then a shorter prefix at the bound that failed. */
#include "scn_shrink.h"

#include <stdlib.h>
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

/* ---- the origin: the failing schedule, cut and smoothed -------------------------- */

/* A schedule's items, one choice each ("<id>*<n>" expanded): a pick's
 * thread id, or an rt_choose value (choose set). */
typedef struct item {
    uint64_t v;
    bool choose;
} item;

typedef struct items {
    char header[16]; /* "T1:" or "T1/idle:" */
    item *v;
    size_t n;
} items;

static bool parse_b32(const char **p, uint64_t *out) {
    uint64_t v = 0;
    const char *q = *p;
    for (; (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'v'); q++)
        v = v * 32 + (uint64_t)(*q <= '9' ? *q - '0' : *q - 'a' + 10);
    if (q == *p) return false;
    *p = q;
    *out = v;
    return true;
}

/* False on a string it does not read (then the origin is not used). */
static bool items_parse(const char *sched, items *it) {
    const char *p = strchr(sched, ':');
    size_t cap = 0;
    memset(it, 0, sizeof *it);
    if (!p || (size_t)(p - sched) + 1 >= sizeof it->header) return false;
    memcpy(it->header, sched, (size_t)(p - sched) + 1);
    for (p++; *p;) {
        item x = {0, false};
        uint64_t count = 1;
        if (*p == '=') {
            p++;
            x.choose = true;
        }
        if (!parse_b32(&p, &x.v)) return false;
        if (*p == '*' && !(p++, parse_b32(&p, &count))) return false;
        if (count > 1u << 24) return false;
        while (count--) {
            if (it->n == cap) {
                item *v = realloc(it->v, (cap = cap ? cap * 2 : 256) * sizeof *v);
                if (!v) return false;
                it->v = v;
            }
            it->v[it->n++] = x;
        }
        if (*p == '.') p++;
        else if (*p) return false;
    }
    return true;
}

static void put_b32(scn_text *t, uint64_t v) {
    char buf[16];
    int n = 0;
    do buf[n++] = "0123456789abcdefghijklmnopqrstuv"[v % 32]; while ((v /= 32) != 0);
    while (n--) scn_text_printf(t, "%c", buf[n]);
}

/* The first k items as a schedule string (malloc'd). */
static char *items_string(const items *it, size_t k) {
    scn_text t = {0};
    size_t i;
    scn_text_printf(&t, "%s", it->header);
    for (i = 0; i < k; i++) {
        if (i) scn_text_printf(&t, ".");
        if (it->v[i].choose) scn_text_printf(&t, "=");
        put_b32(&t, it->v[i].v);
    }
    return scn_text_take(&t);
}

/* One run of the first k items, then the non-preemptive default (a fresh
 * bounded search at 0 preemptions picks it); true when it fails the same
 * way, and then *hit holds it (the run's own schedule replays it whole). */
static bool try_prefix(const scn_scenario *s, const items *it, size_t k, scn_shrink_same_fn same, void *ctx,
                       double *last_run, scn_shrink_result *out, scn_run_out *hit) {
    char *str = items_string(it, k);
    sched_dfs *d = sched_dfs_new(0);
    scn_run_opts ro;
    scn_run_out r;
    double started = scn_wall_seconds();
    bool ok = false;
    if (str && d) {
        memset(&ro, 0, sizeof ro);
        ro.strategy = SCHED_STRATEGY_DFS;
        ro.dfs = d;
        ro.schedule = str;
        ro.replay_continue = true;
        ro.tail_on_failure = true;
        out->runs++;
        if (scn_run(s, &ro, &r) == 0 && !r.declined && !r.passed && same(ctx, &r)) {
            /* the default extension's fairness demotions (a thread that kept
             * the CPU 1,024 choice points) are free, as the bounded search
             * counts them: they are no preemption the schedule makes */
            uint64_t fair = sched_dfs_fair_switches(d);
            r.preemptions -= fair < r.preemptions ? fair : r.preemptions;
            scn_run_out_free(hit);
            *hit = r;
            ok = true;
        } else {
            scn_run_out_free(&r);
        }
    }
    *last_run = scn_wall_seconds() - started;
    if (d) sched_dfs_free(d);
    free(str);
    return ok;
}

/* One pass over the first *hi items: each choice dropped, last first, while
 * the failure stays, then each switch of thread left made a non-switch (the
 * previous pick again) while it stays.  True when something changed. */
static bool reduce_pass(const scn_scenario *s, const scn_shrink_budget *b, scn_shrink_same_fn same, void *ctx,
                        double t0, double *last_run, scn_shrink_result *out, items *it, size_t *hi, scn_run_out *hit) {
    bool changed = false;
    size_t i;
    for (i = *hi; i-- > 0;) {
        item was = it->v[i];
        if (out_of_time(b, t0, *last_run)) {
            out->cut = SCN_SHRINK_CUT_TIME;
            return changed;
        }
        memmove(it->v + i, it->v + i + 1, (*hi - i - 1) * sizeof *it->v);
        if (try_prefix(s, it, *hi - 1, same, ctx, last_run, out, hit)) {
            (*hi)--;
            changed = true;
            continue;
        }
        memmove(it->v + i + 1, it->v + i, (*hi - i - 1) * sizeof *it->v);
        it->v[i] = was;
    }
    for (i = *hi; i-- > 1;) {
        item was = it->v[i];
        if (it->v[i].choose || it->v[i - 1].choose || it->v[i].v == it->v[i - 1].v) continue;
        if (out_of_time(b, t0, *last_run)) {
            out->cut = SCN_SHRINK_CUT_TIME;
            return changed;
        }
        it->v[i].v = it->v[i - 1].v;
        if (try_prefix(s, it, *hi, same, ctx, last_run, out, hit)) changed = true;
        else it->v[i] = was;
    }
    return changed;
}

/* From the failing schedule `origin`: the shortest prefix that, followed by
 * the non-preemptive default, still fails (bisection: a failure needs its
 * race's choices and rarely what comes after), then each of the prefix's
 * choices, last first, dropped while the failure stays, then each switch
 * of thread left made a non-switch (the previous pick again) while the
 * failure stays.  Found: out->hit, preemptions, prefix. */
static bool shrink_origin(const scn_scenario *s, const scn_shrink_budget *b, scn_shrink_same_fn same, void *ctx,
                          const char *origin, double t0, double *last_run, scn_shrink_result *out) {
    items it;
    scn_run_out hit;
    size_t lo = 0, hi;
    bool found = false;
    memset(&hit, 0, sizeof hit);
    if (!items_parse(origin, &it)) {
        free(it.v);
        return false;
    }
    hi = 0;
    /* no prefix at all: the non-preemptive default run itself (a livelock's
     * run is ~2.5 s: bisecting it first spent a 10 s budget on a failure
     * this one run shows) */
    if (try_prefix(s, &it, 0, same, ctx, last_run, out, &hit)) {
        found = true;
        goto done;
    }
    hi = it.n;
    /* invariant: hi items fail (the whole schedule replays the failure) */
    if (!try_prefix(s, &it, hi, same, ctx, last_run, out, &hit)) goto done;
    found = true;
    while (lo < hi && !out_of_time(b, t0, *last_run)) {
        size_t mid = lo + (hi - lo) / 2;
        if (try_prefix(s, &it, mid, same, ctx, last_run, out, &hit)) hi = mid;
        else lo = mid + 1;
    }
    if (lo < hi) out->cut = SCN_SHRINK_CUT_TIME;
    /* hit is always the last run that failed: the candidate as it stands (a
     * try that passed put the candidate back) */
    /* again while a pass changed something: a switch made a non-switch can
     * let a choice before it go */
    while (reduce_pass(s, b, same, ctx, t0, last_run, out, &it, &hi, &hit) && out->cut != SCN_SHRINK_CUT_TIME) {
    }
done:
    if (found) {
        out->hit = hit;
        out->preemptions = (unsigned)(hit.preemptions < 1000000u ? hit.preemptions : 1000000u);
        out->prefix = hi;
    } else {
        scn_run_out_free(&hit);
    }
    free(it.v);
    return found;
}

int scn_shrink(const scn_scenario *s, const scn_shrink_budget *b, scn_shrink_same_fn same, void *ctx,
               const char *origin, scn_shrink_result *out) {
    double t0 = scn_wall_seconds(), last_run = 0;
    bool lower_complete = true;
    unsigned bound, top = b->max_preemptions;
    int rc = 0;
    memset(out, 0, sizeof *out);
    out->max_bound = b->max_preemptions;
    /* The failing schedule itself first: cheap (tens of runs), and what a
     * large scenario needs, whose bounded search at 0 or 1 preemptions does
     * not reach the race in thousands of runs (scn_shrink.h, step 0). */
    if (origin && shrink_origin(s, b, same, ctx, origin, t0, &last_run, out)) {
        out->found = true;
        if (out->preemptions == 0) {
            out->fewest_proven = true;
            out->seconds = scn_wall_seconds() - t0;
            return 0;
        }
        if (out->preemptions <= top) top = out->preemptions - 1; /* the search looks for fewer only */
    }
    for (bound = 0; bound <= top && rc == 0; bound++) {
        bool complete;
        scn_shrink_result lower;
        if (out->found) {
            /* a fewer-preemption schedule replaces the one from the origin */
            memset(&lower, 0, sizeof lower);
            lower.cut = out->cut;
            if (search_bound(s, b, bound, same, ctx, t0, &last_run, &lower, &complete, &rc)) {
                out->runs += lower.runs;
                scn_run_out_free(&out->hit);
                out->hit = lower.hit;
                out->preemptions = lower.preemptions;
                out->prefix = lower.prefix;
                out->fewest_proven = lower_complete;
                out->cut = lower.cut;
                break;
            }
            out->runs += lower.runs;
            if (lower.cut == SCN_SHRINK_CUT_TIME || out->cut == SCN_SHRINK_CUT_NONE) out->cut = lower.cut;
            lower_complete = lower_complete && complete;
            if (bound == top) out->fewest_proven = lower_complete;
            if (out->cut == SCN_SHRINK_CUT_TIME) break;
            continue;
        }
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
    scn_shrink(s, b, scn_shrink_same_check, (void *)r, r->schedule, &c->v[c->n].res);
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
