/* The campaign loop (scn_campaign.h): one loop for every strategy, the next
 * run's options from the strategy, each run told to the observer. */
#include "scn_campaign.h"

#include <stdlib.h>
#include <string.h>

#include "sched_dfs.h"
#include "scn_text.h"

uint64_t scn_campaign_pct_steps(const scn_scenario *s) {
    scn_run_opts ro;
    scn_run_out r;
    uint64_t k = 0;
    memset(&ro, 0, sizeof ro);
    ro.tail_on_failure = true;
    if (scn_run(s, &ro, &r) == 0) k = r.choice_points;
    scn_run_out_free(&r);
    return k > 0 ? k : 1;
}

/* The loop's state: what stops it, and the result it fills. */
typedef struct campaign {
    const scn_scenario *s;
    const scn_campaign_opts *o;
    const scn_campaign_observer *obs;
    scn_campaign_result *res;
} campaign;

/* Makes one run; false when the campaign ends with it (res->end says why). */
static bool one_run(campaign *c, uint64_t j, const scn_run_opts *ro) {
    scn_campaign_result *res = c->res;
    scn_run_out r;
    bool go = true;
    if (c->obs && c->obs->before) c->obs->before(c->obs->ctx, j, ro);
    if (scn_run(c->s, ro, &r) != 0) {
        if (c->obs && c->obs->refused && c->obs->refused(c->obs->ctx, j, ro, &r)) {
            scn_run_out_free(&r);
            return true;
        }
        res->end = SCN_CAMPAIGN_BAD_RUN;
        res->reason = scn_strdup(r.failures ? r.failures : "run could not start");
        scn_run_out_free(&r);
        return false;
    }
    if (r.declined) {
        res->end = SCN_CAMPAIGN_DECLINED;
        res->declined_seed = ro->seed;
        scn_run_out_free(&r);
        return false;
    }
    res->runs++;
    if (!r.passed) res->failures++;
    if (c->obs && c->obs->after) go = c->obs->after(c->obs->ctx, j, ro, &r);
    scn_run_out_free(&r);
    if (!go || (c->o->max_failures && res->failures >= c->o->max_failures)) {
        res->end = SCN_CAMPAIGN_STOPPED;
        return false;
    }
    return true;
}

static void base_opts(const scn_campaign_opts *o, scn_run_opts *ro) {
    memset(ro, 0, sizeof *ro);
    ro->depth = o->depth;
    ro->pct_steps = o->pct_steps;
    ro->native = o->native;
    ro->schedule = o->schedule;
    ro->tail_on_failure = o->tail_on_failure;
}

/* The bounded-exhaustive search: run j is its next leaf, numbered from 1. */
static void search(campaign *c) {
    const scn_campaign_opts *o = c->o;
    scn_run_opts ro;
    uint64_t j;
    c->res->dfs = sched_dfs_new(o->preemptions);
    if (!c->res->dfs) {
        c->res->end = SCN_CAMPAIGN_NO_MEMORY;
        return;
    }
    sched_dfs_set_por(c->res->dfs, o->por);
    base_opts(o, &ro);
    ro.strategy = SCHED_STRATEGY_DFS;
    ro.dfs = c->res->dfs;
    for (j = 0;; j++) {
        ro.seed = j + 1;
        if (!one_run(c, j, &ro)) return;
        if (!sched_dfs_advance(c->res->dfs) || sched_dfs_runs(c->res->dfs) >= o->runs) return;
    }
}

/* The seeded strategies, random first, each over its seeds. */
static void seeded(campaign *c) {
    const scn_campaign_opts *o = c->o;
    int st;
    for (st = 0; st < SCHED_STRATEGY_DFS; st++) {
        scn_run_opts ro;
        uint64_t j;
        if (!(o->strategies & SCN_CAMPAIGN_BIT(st))) continue;
        base_opts(o, &ro);
        ro.strategy = (sched_strategy_kind)st;
        if (st == SCHED_STRATEGY_PCT) {
            if (!ro.pct_steps && !o->native) ro.pct_steps = scn_campaign_pct_steps(c->s);
            c->res->pct_steps = ro.pct_steps;
        }
        for (j = 0; j < o->runs; j++) {
            ro.seed = o->seed_at ? o->seed_at(o->seed_ctx, (sched_strategy_kind)st, j) : o->first_seed + j;
            if (!one_run(c, j, &ro)) return;
        }
    }
}

scn_campaign_end scn_campaign_run(const scn_scenario *s, const scn_campaign_opts *o, const scn_campaign_observer *obs,
                                  scn_campaign_result *res) {
    campaign c;
    memset(res, 0, sizeof *res);
    c.s = s;
    c.o = o;
    c.obs = obs;
    c.res = res;
    res->end = SCN_CAMPAIGN_DONE;
    if (o->strategies == SCN_CAMPAIGN_BIT(SCHED_STRATEGY_DFS) && !o->native) search(&c);
    else seeded(&c);
    return res->end;
}

void scn_campaign_result_free(scn_campaign_result *res) {
    free(res->reason);
    if (res->dfs) sched_dfs_free(res->dfs);
    memset(res, 0, sizeof *res);
}
