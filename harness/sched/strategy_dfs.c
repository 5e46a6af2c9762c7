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
    dfs_node *nodes;
    size_t len, cap;
    size_t pos;         /* the running run's next node */
    unsigned preempt;   /* the running run's preemptions */
    uint64_t runs, max_depth;
    unsigned max_used;
    bool done;
    uint32_t *scratch;  /* sorted runnable ids */
    size_t scratch_cap;
    char error[160];
};

sched_dfs *sched_dfs_new(unsigned max_preemptions) {
    sched_dfs *d = calloc(1, sizeof *d);
    if (d) d->bound = max_preemptions;
    return d;
}

void sched_dfs_free(sched_dfs *d) {
    if (!d) return;
    free(d->nodes);
    free(d->scratch);
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
}

static void dfs_thread_spawned(sched *s, rt_thread *t) { (void)s; (void)t; }

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

static rt_thread *dfs_pick(sched *s) {
    sched_dfs *d = dfs_of(s);
    rt_thread *cur = s->current;
    bool cur_runnable = cur && cur->runnable_at != SCHED_NONE;
    uint32_t idx = next_choice(s, SCHED_ITEM_PICK, s->nrunnable, cur_runnable), i, m = 0;
    if (cur_runnable && idx == 0) return cur;
    if (d->scratch_cap < s->nrunnable) {
        uint32_t *b = realloc(d->scratch, s->nrunnable * sizeof *b);
        if (!b) sched_end(s, SCHED_MISUSE, "out of memory (dfs)");
        d->scratch = b;
        d->scratch_cap = s->nrunnable;
    }
    for (i = 0; i < s->nrunnable; i++)
        if (!cur_runnable || s->runnable[i] != cur) d->scratch[m++] = s->runnable[i]->id;
    qsort(d->scratch, m, sizeof *d->scratch, cmp_u32);
    return s->threads[d->scratch[cur_runnable ? idx - 1 : idx] - 1];
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

const sched_strategy sched_strategy_dfs = {"dfs", dfs_run_start, dfs_thread_spawned, dfs_pick, dfs_choose};
