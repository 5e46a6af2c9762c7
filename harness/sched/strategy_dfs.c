/* The DFS strategy (sched_dfs.h): the search's state outlives the runs,
 * each run replays the current prefix of choices and extends it without
 * preempting; sched_dfs_advance then bumps the deepest choice that still
 * has an untried option within the preemption bound.
 *
 * Options at a pick, in exploration order: the thread at the point when it
 * can continue (no preemption), then the other runnable threads by
 * ascending id.  Ids, not the runnable array's order: that array is
 * reordered by removals, and the same prefix must name the same options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_dfs.h"
#include "sched_internal.h"

typedef struct dfs_node {
    uint32_t n;              /* options */
    uint32_t chosen;         /* index taken in the current prefix */
    uint32_t preempt_before; /* preemptions on the path above this node */
    uint8_t kind;            /* SCHED_ITEM_PICK or SCHED_ITEM_CHOOSE */
    uint8_t cur_runnable;    /* pick: option 0 continues the current thread */
} dfs_node;

struct sched_dfs {
    unsigned bound;
    uint64_t fair_bound;  /* 0 = no fairness (tests show what it prevents) */
    dfs_node *nodes;
    size_t len, cap;
    size_t pos;         /* the running run's next node */
    unsigned preempt;   /* the running run's preemptions */
    uint64_t runs, max_depth;
    unsigned max_used;
    bool done;
    uint32_t *scratch;  /* sorted runnable ids */
    size_t scratch_cap;
    /* Fairness (per run): picks so far, how many in a row the current
     * thread kept the CPU while another was runnable, and per thread id the
     * pick at which it was demoted (0 = not demoted) and last picked. */
    uint64_t seq, streak;
    uint64_t *demoted_at, *last_pick;
    size_t tcap;
    unsigned ndemoted;
    uint64_t fair_switches, fair_runs; /* over the search */
    uint64_t max_streak;               /* longest streak any run had */
    bool run_was_demoted, oom;
    char error[160];
};

sched_dfs *sched_dfs_new(unsigned max_preemptions) {
    sched_dfs *d = calloc(1, sizeof *d);
    if (d) {
        d->bound = max_preemptions;
        d->fair_bound = SCHED_DFS_FAIR_BOUND;
    }
    return d;
}

void sched_dfs_set_fair_bound(sched_dfs *d, uint64_t picks) { d->fair_bound = picks; }
uint64_t sched_dfs_fair_switches(const sched_dfs *d) { return d->fair_switches; }
uint64_t sched_dfs_fair_runs(const sched_dfs *d) { return d->fair_runs; }
uint64_t sched_dfs_max_streak(const sched_dfs *d) { return d->max_streak; }

void sched_dfs_free(sched_dfs *d) {
    if (!d) return;
    free(d->nodes);
    free(d->scratch);
    free(d->demoted_at);
    free(d->last_pick);
    free(d);
}

bool sched_dfs_complete(const sched_dfs *d) { return d->done && !d->error[0]; }
uint64_t sched_dfs_runs(const sched_dfs *d) { return d->runs; }
uint64_t sched_dfs_max_depth(const sched_dfs *d) { return d->max_depth; }
unsigned sched_dfs_max_used(const sched_dfs *d) { return d->max_used; }
const char *sched_dfs_error(const sched_dfs *d) { return d->error[0] ? d->error : NULL; }

bool sched_dfs_advance(sched_dfs *d) {
    size_t k;
    if (d->error[0]) return false;
    if (d->pos < d->len) {
        /* The run ended inside its own prefix: the program is not a
         * function of its choices, and the tree cannot be trusted. */
        snprintf(d->error, sizeof d->error,
                 "run %llu ended after %llu of its %llu prefix choices: the program is not deterministic",
                 (unsigned long long)d->runs, (unsigned long long)d->pos, (unsigned long long)d->len);
        return false;
    }
    for (k = d->len; k-- > 0;) {
        dfs_node *x = &d->nodes[k];
        unsigned cost = x->kind == SCHED_ITEM_PICK && x->cur_runnable ? 1u : 0u;
        if (x->chosen + 1 < x->n && x->preempt_before + cost <= d->bound) {
            x->chosen++;
            d->len = k + 1;
            return true;
        }
    }
    d->len = 0;
    d->done = true;
    return false;
}

static sched_dfs *dfs_of(sched *s) { return s->opt.dfs; }

static void dfs_run_start(sched *s) {
    sched_dfs *d = dfs_of(s);
    if (!d) return; /* caught at the first choice */
    d->pos = 0;
    d->preempt = 0;
    d->runs++;
    d->seq = d->streak = 0;
    d->ndemoted = 0;
    d->run_was_demoted = false;
}

static void dfs_thread_spawned(sched *s, rt_thread *t) {
    sched_dfs *d = dfs_of(s);
    if (!d) return;
    if (t->id >= d->tcap) {
        size_t cap = d->tcap ? d->tcap * 2 : 32;
        uint64_t *a, *b;
        while (cap <= t->id) cap *= 2;
        a = realloc(d->demoted_at, cap * sizeof *a);
        if (a) d->demoted_at = a;
        b = a ? realloc(d->last_pick, cap * sizeof *b) : NULL;
        if (b) d->last_pick = b;
        if (!a || !b) {
            /* thread 1 is spawned before the run has a fiber to end:
             * the next pick ends it */
            d->oom = true;
            return;
        }
        d->tcap = cap;
    }
    d->demoted_at[t->id] = 0;
    d->last_pick[t->id] = 0;
}

SCHED_NORETURN static void diverged(sched *s, sched_dfs *d, const char *what) {
    snprintf(d->error, sizeof d->error, "run %llu, choice %llu: %s", (unsigned long long)d->runs,
             (unsigned long long)d->pos + 1, what);
    sched_end(s, SCHED_REPLAY_DIVERGED, "dfs: %s", d->error);
}

/* The node for the next choice: replayed from the prefix, or a new one
 * (option 0, the non-preempting choice). */
static uint32_t next_choice(sched *s, uint8_t kind, uint32_t n, bool cur_runnable) {
    sched_dfs *d = dfs_of(s);
    dfs_node *x;
    if (!d) sched_end(s, SCHED_MISUSE, "misuse: SCHED_STRATEGY_DFS without sched_options.dfs");
    if (d->pos < d->len) {
        x = &d->nodes[d->pos];
        if (x->kind != kind || x->n != n || x->cur_runnable != (uint8_t)cur_runnable)
            diverged(s, d, "the options differ from the previous run's at this choice (nondeterministic program)");
    } else {
        if (d->len == d->cap) {
            size_t cap = d->cap ? d->cap * 2 : 256;
            dfs_node *nn = realloc(d->nodes, cap * sizeof *nn);
            if (!nn) sched_end(s, SCHED_MISUSE, "out of memory (dfs tree)");
            d->nodes = nn;
            d->cap = cap;
        }
        x = &d->nodes[d->len++];
        x->n = n;
        x->chosen = 0;
        x->preempt_before = d->preempt;
        x->kind = kind;
        x->cur_runnable = (uint8_t)cur_runnable;
    }
    d->pos++;
    if (d->pos > d->max_depth) d->max_depth = d->pos;
    if (kind == SCHED_ITEM_PICK && cur_runnable && x->chosen > 0) {
        d->preempt++;
        if (d->preempt > d->max_used) d->max_used = d->preempt;
    }
    return x->chosen;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Fair stateless model checking (Musuvathi & Qadeer, PLDI 2008), in the
 * form this scheduler needs.  A search that never preempts never takes the
 * CPU from a thread that stays runnable: a pool worker whose callback
 * re-arms its own wait on a set event runs forever, the thread that would
 * release the group is never picked, and the run ends as a "livelock" a
 * real machine never shows (group-release-cancelling-stops-rearms.scn, from
 * the first DFS run).  So a thread that has kept the CPU for fair_bound
 * picks in a row while another was runnable is demoted -- CHESS's yield
 * with lowered priority: it is not an option again until every thread
 * runnable at that moment or since has been picked once (or is blocked).
 * The switch away from it is free: it does not count against the
 * preemption bound, because it is what any fair scheduler does, not a
 * preemption the search chose.  A livelock that survives this is reported
 * as one under fair scheduling (sched_core.c).
 *
 * fair_bound is 4,096 picks: above every streak of the corpus's correct
 * runs (longest measured at P = 1, 300 runs a scenario: 332 picks,
 * many-pools-churn.scn), so fairness leaves the tree of every scenario
 * that terminates as it was, and far below max_steps (1,000,000), so a
 * spinner is demoted ~240 times before a run is called a livelock. */
static bool dfs_eligible(sched_dfs *d, sched *s, rt_thread *t) {
    uint64_t at = d->demoted_at[t->id];
    uint32_t i;
    if (!at) return true;
    for (i = 0; i < s->nrunnable; i++) {
        rt_thread *u = s->runnable[i];
        if (u != t && d->last_pick[u->id] <= at) return false;
    }
    d->demoted_at[t->id] = 0; /* everyone else has had its turn */
    d->ndemoted--;
    return true;
}

static rt_thread *dfs_pick(sched *s) {
    sched_dfs *d = dfs_of(s);
    rt_thread *cur = s->current, *t;
    bool cur_runnable = cur && cur->runnable_at != SCHED_NONE, cur_option;
    uint32_t idx, i, m = 0;
    if (!d) sched_end(s, SCHED_MISUSE, "misuse: SCHED_STRATEGY_DFS without sched_options.dfs");
    if (d->oom) sched_end(s, SCHED_MISUSE, "out of memory (dfs)");
    d->seq++;
    if (d->scratch_cap < s->nrunnable) {
        uint32_t *b = realloc(d->scratch, s->nrunnable * sizeof *b);
        if (!b) sched_end(s, SCHED_MISUSE, "out of memory (dfs)");
        d->scratch = b;
        d->scratch_cap = s->nrunnable;
    }
    if (cur_runnable && d->fair_bound && d->streak >= d->fair_bound && !d->demoted_at[cur->id]) {
        d->demoted_at[cur->id] = d->seq;
        d->ndemoted++;
        d->fair_switches++;
        if (!d->run_was_demoted) d->fair_runs++;
        d->run_was_demoted = true;
    }
    cur_option = cur_runnable && (!d->ndemoted || dfs_eligible(d, s, cur));
    for (i = 0; i < s->nrunnable; i++) {
        t = s->runnable[i];
        if (t != cur && (!d->ndemoted || dfs_eligible(d, s, t))) d->scratch[m++] = t->id;
    }
    if (!cur_option && m == 0) {
        /* Every runnable thread waits for another (each was demoted while
         * the others ran): all demotions lapse, everyone is an option. */
        for (i = 0; i < s->nrunnable; i++) {
            t = s->runnable[i];
            if (d->demoted_at[t->id]) d->demoted_at[t->id] = 0;
            if (t != cur) d->scratch[m++] = t->id;
        }
        d->ndemoted = 0;
        cur_option = cur_runnable;
    }
    qsort(d->scratch, m, sizeof *d->scratch, cmp_u32);
    if (m + (cur_option ? 1u : 0u) == 1) {
        /* one option: a forced step of the fair schedule, no node */
        t = cur_option ? cur : s->threads[d->scratch[0] - 1];
    } else {
        idx = next_choice(s, SCHED_ITEM_PICK, m + (cur_option ? 1u : 0u), cur_option);
        t = cur_option && idx == 0 ? cur : s->threads[d->scratch[cur_option ? idx - 1 : idx] - 1];
    }
    d->last_pick[t->id] = d->seq;
    if (t == cur && cur_runnable) {
        if (++d->streak > d->max_streak) d->max_streak = d->streak;
    } else {
        d->streak = 0;
    }
    return t;
}

/* A data choice is explored at its extremes only: the sim's rt_choose(n)
 * picks a timer's firing point inside its window (n up to 2.5 M for the
 * healer's 250 ms) and a stall's N% draw; every value in between would make
 * one tick a tree of millions of leaves.  0 and n-1 are the earliest and
 * latest firing points and, for any N in 1..99, one draw that severs and
 * one that does not.  A count "with <= P preemptions" is over this tree. */
static uint32_t dfs_choose(sched *s, uint32_t n) {
    uint32_t i = next_choice(s, SCHED_ITEM_CHOOSE, n > 2 ? 2 : n, false);
    return i == 0 ? 0 : n - 1;
}

#define DFS_STR2(x) #x
#define DFS_STR(x) DFS_STR2(x)
const sched_strategy sched_strategy_dfs = {
    "dfs", dfs_run_start, dfs_thread_spawned, dfs_pick, dfs_choose,
    " under a fair schedule (dfs demotes a thread that holds the CPU for " DFS_STR(SCHED_DFS_FAIR_BOUND)
    " choice points while another is runnable, at no preemption cost)"};
