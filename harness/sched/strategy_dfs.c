/* The DFS strategy (sched_dfs.h): the search's state outlives the runs,
 * each run replays the current prefix of choices and extends it without
 * preempting; sched_dfs_advance then bumps the deepest choice that still
 * has an untried option within the preemption bound.
 *
 * Options at a pick, in exploration order: the thread at the point when it
 * can continue (no preemption), then the other runnable threads by
 * ascending id.  Ids, not the runnable array's order: that array is
 * reordered by removals, and the same prefix must name the same options.
 *
 * Fairness is strategy_dfs_fair.c, the partial-order reduction
 * strategy_dfs_por.c; the state they share is sched_dfs_internal.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_dfs_internal.h"

sched_dfs *sched_dfs_new(unsigned max_preemptions) {
    sched_dfs *d = calloc(1, sizeof *d);
    if (d) {
        d->bound = max_preemptions;
        d->fair_bound = SCHED_DFS_FAIR_BOUND;
    }
    return d;
}

static void node_drop(dfs_node *x) {
    free(x->ent);
    x->ent = NULL;
    x->nsleep = x->nent = x->capent = 0;
}

void sched_dfs_free(sched_dfs *d) {
    size_t i;
    if (!d) return;
    for (i = 0; i < d->len; i++) node_drop(&d->nodes[i]);
    free(d->ev);
    free(d->evclock);
    free(d->hkey);
    free(d->hval);
    free(d->skey);
    free(d->obj_w);
    free(d->obj_r);
    free(d->sleep);
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
unsigned sched_dfs_run_preemptions(const sched_dfs *d) { return d->preempt; }
uint64_t sched_dfs_run_prefix(const sched_dfs *d) { return d->last_spend; }
const char *sched_dfs_error(const sched_dfs *d) { return d->error[0] ? d->error : NULL; }

/* A POR pick node is left for good: the options the bound allowed and the
 * reduction never took are what it pruned (each at least one run of the
 * unreduced search). */
static void node_leave(sched_dfs *d, dfs_node *x) {
    if (d->por && x->kind == SCHED_ITEM_PICK) {
        uint64_t allowed = x->cur && x->preempt_before + 1 > d->bound ? tbit(x->cur) : x->opts;
        unsigned a = popcount64(allowed), e = popcount64(x->done & allowed);
        if (a > e) d->pruned += a - e;
    }
    node_drop(x);
}

/* The node's next option within the bound, taken for the next run: the
 * reduction's next thread at a POR pick, else the next index.  False: none. */
static bool take_next_option(sched_dfs *d, dfs_node *x) {
    if (d->por && x->kind == SCHED_ITEM_PICK) {
        uint32_t t = sched_dfs_por_next(d, x);
        if (!t) return false;
        x->done |= tbit(t);
        x->pick = t;
        return true;
    }
    if (x->chosen + 1 >= x->n || x->preempt_before + (x->costly ? 1u : 0u) > d->bound) return false;
    x->chosen++;
    return true;
}

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
    if (d->run_blocked) d->blocked_runs++;
    for (k = d->len; k-- > 0;) {
        dfs_node *x = &d->nodes[k];
        /* below a redundant run's first sleeping step every option is covered */
        bool covered = d->por && k >= d->cut;
        if (!covered && take_next_option(d, x)) {
            d->len = k + 1;
            return true;
        }
        node_leave(d, x);
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
    d->last_spend = 0;
    d->runs++;
    d->seq = d->streak = 0;
    d->ndemoted = 0;
    d->run_was_demoted = false;
    d->too_many = false;
    s->por = d->por && !s->replay;
    if (s->por) sched_dfs_por_run_start(s, d);
}

static void dfs_thread_spawned(sched *s, rt_thread *t) {
    sched_dfs *d = dfs_of(s);
    if (!d) return;
    if (!sched_dfs_fair_spawned(d, t)) return;
    if (d->por && t->id > POR_MAXT) d->too_many = true; /* the masks and clocks hold 64 */
}

SCHED_NORETURN void sched_dfs_diverged(sched *s, sched_dfs *d, const char *what) {
    snprintf(d->error, sizeof d->error, "run %llu, choice %llu: %s", (unsigned long long)d->runs,
             (unsigned long long)d->pos + 1, what);
    sched_end(s, SCHED_REPLAY_DIVERGED, "dfs: %s", d->error);
}

/* A zeroed node at the end of the tree, which grows by doubling: the one place
 * both the plain search and the reduction add a choice. */
dfs_node *sched_dfs_new_node(sched *s, sched_dfs *d) {
    dfs_node *x;
    if (d->len == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        dfs_node *nn = realloc(d->nodes, cap * sizeof *nn);
        if (!nn) sched_end(s, SCHED_MISUSE, "out of memory (dfs tree)");
        d->nodes = nn;
        d->cap = cap;
    }
    x = &d->nodes[d->len++];
    memset(x, 0, sizeof *x);
    return x;
}

/* The node for the next choice: replayed from the prefix, or a new one
 * (option 0, the one that spends none of the bound). */
static uint32_t next_choice(sched *s, uint8_t kind, uint32_t n, bool costly) {
    sched_dfs *d = dfs_of(s);
    dfs_node *x;
    if (!d) sched_end(s, SCHED_MISUSE, "misuse: SCHED_STRATEGY_DFS without sched_options.dfs");
    if (d->pos < d->len) {
        x = &d->nodes[d->pos];
        if (x->kind != kind || x->n != n || x->costly != (uint8_t)costly)
            sched_dfs_diverged(s, d, "the options differ from the previous run's at this choice (nondeterministic program)");
    } else {
        x = sched_dfs_new_node(s, d);
        x->n = n;
        x->chosen = 0;
        x->preempt_before = d->preempt;
        x->kind = kind;
        x->costly = (uint8_t)costly;
    }
    d->pos++;
    if (d->pos > d->max_depth) d->max_depth = d->pos;
    if (x->chosen > 0) d->last_spend = d->pos;
    if (costly && x->chosen > 0) {
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
    rt_thread *cur = s->current, *t;
    bool cur_runnable = cur && cur->runnable_at != SCHED_NONE, cur_option;
    uint32_t idx, i, m = 0;
    if (!d) sched_end(s, SCHED_MISUSE, "misuse: SCHED_STRATEGY_DFS without sched_options.dfs");
    if (d->oom) sched_end(s, SCHED_MISUSE, "out of memory (dfs)");
    if (d->too_many) sched_dfs_por_fail(s, "more than 64 threads (the reduction's masks and clocks hold 64)");
    d->seq++;
    if (d->scratch_cap < s->nrunnable) {
        uint32_t *b = realloc(d->scratch, s->nrunnable * sizeof *b);
        if (!b) sched_end(s, SCHED_MISUSE, "out of memory (dfs)");
        d->scratch = b;
        d->scratch_cap = s->nrunnable;
    }
    /* fairness (strategy_dfs_fair.c): a thread that kept the CPU too long
     * is no option until the others have run, at no preemption cost */
    if (cur_runnable) sched_dfs_fair_demote(d, cur);
    cur_option = cur_runnable && (!d->ndemoted || sched_dfs_fair_eligible(d, s, cur));
    for (i = 0; i < s->nrunnable; i++) {
        t = s->runnable[i];
        if (t != cur && (!d->ndemoted || sched_dfs_fair_eligible(d, s, t))) d->scratch[m++] = t->id;
    }
    if (!cur_option && m == 0) {
        sched_dfs_fair_lapse(d, s);
        for (i = 0; i < s->nrunnable; i++) {
            t = s->runnable[i];
            if (t != cur) d->scratch[m++] = t->id;
        }
        cur_option = cur_runnable;
    }
    qsort(d->scratch, m, sizeof *d->scratch, cmp_u32);
    if (s->por && m + (cur_option ? 1u : 0u) > 1) {
        uint64_t opts = cur_option ? tbit(cur->id) : 0;
        for (i = 0; i < m; i++) opts |= tbit(d->scratch[i]);
        t = s->threads[sched_dfs_por_choice(s, d, opts, cur_option ? cur->id : 0) - 1];
    } else if (m + (cur_option ? 1u : 0u) == 1) {
        /* one option: a forced step of the fair schedule, no node */
        t = cur_option ? cur : s->threads[d->scratch[0] - 1];
    } else {
        idx = next_choice(s, SCHED_ITEM_PICK, m + (cur_option ? 1u : 0u), cur_option);
        t = cur_option && idx == 0 ? cur : s->threads[d->scratch[cur_option ? idx - 1 : idx] - 1];
    }
    sched_dfs_fair_picked(d, t, t == cur && cur_runnable);
    return t;
}

/* A data choice is explored at its extremes only: the sim's rt_choose(n)
 * picks a timer's firing point inside its window (n up to 2.5 M for the
 * healer's 250 ms) and a stall's N% draw; every value in between would make
 * one tick a tree of millions of leaves.  0 and n-1 are the earliest and
 * latest firing points and, for any N in 1..99, one draw that severs and
 * one that does not.  A count "with <= P preemptions" is over this tree.
 *
 * A delay (rt_choose_delay) is no free datum: its late extreme spends one
 * of the bound, as a preemption does (delay bounding, Emmi, Qadeer &
 * Rakamaric, POPL 2011).  Free, the healer's window alone made every tick
 * of the corpus a fork: try-cancel-disarms-unsignalled-wait took 768 runs
 * at P = 0 where its on-time tree has 2, and 22,144 at P = 1 against 60. */
static uint32_t dfs_choose(sched *s, uint32_t n, bool delay) {
    uint32_t i = next_choice(s, SCHED_ITEM_CHOOSE, n > 2 ? 2 : n, delay);
    return i == 0 ? 0 : n - 1;
}

#define DFS_STR2(x) #x
#define DFS_STR(x) DFS_STR2(x)
const sched_strategy sched_strategy_dfs = {
    "dfs", dfs_run_start, dfs_thread_spawned, dfs_pick, dfs_choose,
    "the livelock persists under a fair schedule (dfs demotes a thread that holds the CPU for "
    DFS_STR(SCHED_DFS_FAIR_BOUND) " choice points while another is runnable, at no preemption cost)"};
