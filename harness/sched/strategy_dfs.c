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

/* The partial-order reduction's most threads and keys a step may carry:
 * thread ids index 64-bit masks and vector clocks; a step touching more
 * objects than POR_MAXK is taken to touch everything. */
#define POR_MAXT 64u
#define POR_MAXK 8u
#define POR_ALL 0u /* object 0: virtual time; every step reads it, a clock read writes it */

/* A step's footprint: a thread asleep at a node, or one explored there. */
typedef struct por_entry {
    uint32_t thread;
    uint32_t fresh; /* keys >= fresh: objects first touched after the node (another run may number them otherwise) */
    uint8_t nkeys, wmask;
    uint32_t key[POR_MAXK];
    /* The bound: the branch that explored this thread first paid for it
     * and for the switch away from it after its step; `slack` is what it
     * had left for the rest.  Asleep in a later branch only while that
     * branch has spent (since `base`, its preemptions at the node) no more
     * than `slack`: past it, the explored branch could not have covered
     * the same trace within the bound. */
    int32_t slack;
    uint32_t base;
} por_entry;

typedef struct dfs_node {
    uint32_t n;              /* options */
    uint32_t chosen;         /* index taken in the current prefix */
    uint32_t preempt_before; /* preemptions on the path above this node */
    uint8_t kind;            /* SCHED_ITEM_PICK or SCHED_ITEM_CHOOSE */
    uint8_t cur_runnable;    /* pick: option 0 continues the current thread */
    /* partial-order reduction, picks only (thread-id bit masks) */
    uint64_t opts, bt, done; /* the options; the backtrack set; explored */
    uint32_t cur;            /* the current thread when it is an option, else 0 */
    uint32_t pick;           /* the thread taken in the current prefix */
    uint32_t fresh;          /* objects numbered when the node was made */
    por_entry *ent;          /* [0, nsleep): asleep on arrival; then one per explored thread */
    uint16_t nsleep, nent, capent;
} dfs_node;

typedef struct por_ev {
    uint32_t thread;
    uint32_t node;  /* the pick node of the point before it, + 1; 0 = none (forced) */
    uint32_t block; /* the first step of this thread's run of steps */
    uint8_t nkeys, wmask, overflow;
    uint32_t key[POR_MAXK];
} por_ev;

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
    bool run_was_demoted, oom, too_many;
    /* partial-order reduction (sleep sets + DPOR, see below) */
    bool por;
    por_ev *ev;            /* this run's steps */
    uint32_t *evclock;     /* POR_MAXT per step: its vector clock */
    size_t nev, evcap;
    bool open, pending_clock;
    uint32_t pick_node;    /* the pick node of the point being made, + 1 */
    uint32_t tclock[POR_MAXT][POR_MAXT];
    uintptr_t *hkey;       /* object address -> number (first-touch order) */
    uint32_t *hval;
    size_t hcap;
    uint32_t nobj, objcap;
    uint32_t *obj_w;       /* per object: last writing step + 1 */
    uint32_t *obj_r;       /* per object x POR_MAXT: last reading step + 1 since that write */
    por_entry *sleep;      /* the sleep set of the running run */
    size_t nsl, slcap;
    bool run_blocked;
    uint64_t blocked_runs, races, pruned;
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
const char *sched_dfs_error(const sched_dfs *d) { return d->error[0] ? d->error : NULL; }

void sched_dfs_set_por(sched_dfs *d, bool on) { d->por = on; }
bool sched_dfs_por(const sched_dfs *d) { return d->por; }
uint64_t sched_dfs_traces(const sched_dfs *d) { return d->runs - d->blocked_runs; }
uint64_t sched_dfs_blocked_runs(const sched_dfs *d) { return d->blocked_runs; }
uint64_t sched_dfs_pruned(const sched_dfs *d) { return d->pruned; }
uint64_t sched_dfs_races(const sched_dfs *d) { return d->races; }

static unsigned popcount64(uint64_t m) {
    unsigned n = 0;
    for (; m; m &= m - 1) n++;
    return n;
}
static uint64_t tbit(uint32_t id) { return (uint64_t)1 << (id - 1); }
static uint32_t lowest_id(uint64_t m) {
    uint32_t id = 1;
    while (!(m & 1u)) {
        m >>= 1;
        id++;
    }
    return id;
}

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

/* The next thread a POR node explores: from its backtrack set, neither
 * explored nor asleep on arrival, within the preemption bound; the current
 * thread first (free), then by id.  0: none. */
static uint32_t por_next(const sched_dfs *d, const dfs_node *x) {
    uint64_t asleep = 0, cand;
    unsigned i;
    for (i = 0; i < x->nsleep; i++) asleep |= tbit(x->ent[i].thread);
    cand = x->bt & ~x->done & ~asleep & x->opts;
    if (!cand) return 0;
    if (x->cur && (cand & tbit(x->cur))) return x->cur;
    if (x->cur && x->preempt_before + 1 > d->bound) return 0;
    return lowest_id(cand);
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
        if (d->por && x->kind == SCHED_ITEM_PICK) {
            uint32_t t = por_next(d, x);
            if (t) {
                x->done |= tbit(t);
                x->pick = t;
                d->len = k + 1;
                return true;
            }
        } else {
            unsigned cost = x->kind == SCHED_ITEM_PICK && x->cur_runnable ? 1u : 0u;
            if (x->chosen + 1 < x->n && x->preempt_before + cost <= d->bound) {
                x->chosen++;
                d->len = k + 1;
                return true;
            }
        }
        node_leave(d, x);
    }
    d->len = 0;
    d->done = true;
    return false;
}

/* ---- partial-order reduction ---------------------------------------------
 *
 * Classic DPOR (Flanagan & Godefroid, POPL 2005) with sleep sets (Godefroid
 * 1996), over the steps of a run: a step is what one thread does from a
 * scheduling point to its next, and its footprint is the objects it
 * touched -- rt_lock, rt_waitq, a thread (its exit, a join of it),
 * an address announced with rt_access -- each read or written, plus object
 * POR_ALL, virtual time, read by every step and written by a step that
 * read the clock (rt_now, a sleep, a timed wait, a wake on a queue with a
 * timed waiter, a deadline firing).  Two steps are dependent when they
 * touch one object and one of them writes it (the table is in
 * harness/sched/README.md, "Dependency").  Happens-before is kept with
 * vector clocks; when a step races with an earlier step of another thread
 * (dependent, not ordered), the racing thread goes into the backtrack set
 * of the pick node before the earlier step -- or, when it was not an
 * option there, every option does (FG'05).  With a preemption bound that
 * alone can miss a bug (the reversal may cost a preemption the bound does
 * not allow there), so the thread is also added at the node where the
 * earlier step's run of steps began, as in Coons, Musuvathi & McKinley,
 * "Bounded partial-order reduction" (OOPSLA 2013).  A thread explored at a
 * node sleeps in the branches explored after it until a step dependent
 * with its own runs; a run whose every option is asleep is redundant
 * (counted, not a trace).
 *
 * Objects are numbered per run in first-touch order; a replayed prefix
 * touches the same objects in the same order, so numbers below a node's
 * `fresh` mean the same object in every run through that node.  A sleeping
 * step's keys at or above it are objects first touched after the node,
 * which another run may number otherwise: they are taken to meet every
 * such object (conservative). */

static void por_fail(sched *s, const char *what) { sched_end(s, SCHED_MISUSE, "dfs --por: %s", what); }

static void obj_table_reset(sched *s, sched_dfs *d) {
    if (!d->hkey) {
        d->hcap = 1024;
        d->hkey = calloc(d->hcap, sizeof *d->hkey);
        d->hval = calloc(d->hcap, sizeof *d->hval);
        if (!d->hkey || !d->hval) por_fail(s, "out of memory");
    } else {
        memset(d->hkey, 0, d->hcap * sizeof *d->hkey);
    }
    d->nobj = 1; /* POR_ALL */
    if (!d->objcap) {
        d->objcap = 256;
        d->obj_w = calloc(d->objcap, sizeof *d->obj_w);
        d->obj_r = calloc((size_t)d->objcap * POR_MAXT, sizeof *d->obj_r);
        if (!d->obj_w || !d->obj_r) por_fail(s, "out of memory");
    }
    d->obj_w[POR_ALL] = 0;
    memset(d->obj_r, 0, POR_MAXT * sizeof *d->obj_r);
}

static size_t hslot(const sched_dfs *d, uintptr_t key) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (d->hcap - 1);
}

static uint32_t obj_number(sched *s, sched_dfs *d, uintptr_t key) {
    size_t i;
    if (key == 0) key = 1; /* 0 marks a free slot */
    for (i = hslot(d, key); d->hkey[i]; i = (i + 1) & (d->hcap - 1))
        if (d->hkey[i] == key) return d->hval[i];
    if ((size_t)d->nobj * 2 >= d->hcap) {
        /* grow: rehash every live key */
        size_t oc = d->hcap, j;
        uintptr_t *ok = d->hkey;
        uint32_t *ov = d->hval;
        d->hcap = oc * 2;
        d->hkey = calloc(d->hcap, sizeof *d->hkey);
        d->hval = calloc(d->hcap, sizeof *d->hval);
        if (!d->hkey || !d->hval) por_fail(s, "out of memory");
        for (j = 0; j < oc; j++)
            if (ok[j]) {
                for (i = hslot(d, ok[j]); d->hkey[i]; i = (i + 1) & (d->hcap - 1)) {
                }
                d->hkey[i] = ok[j];
                d->hval[i] = ov[j];
            }
        free(ok);
        free(ov);
        for (i = hslot(d, key); d->hkey[i]; i = (i + 1) & (d->hcap - 1)) {
        }
    }
    if (d->nobj == d->objcap) {
        uint32_t cap = d->objcap * 2;
        uint32_t *w = realloc(d->obj_w, cap * sizeof *w), *r;
        if (w) d->obj_w = w;
        r = w ? realloc(d->obj_r, (size_t)cap * POR_MAXT * sizeof *r) : NULL;
        if (!r) por_fail(s, "out of memory");
        d->obj_r = r;
        d->objcap = cap;
    }
    d->hkey[i] = key;
    d->hval[i] = d->nobj;
    d->obj_w[d->nobj] = 0;
    memset(d->obj_r + (size_t)d->nobj * POR_MAXT, 0, POR_MAXT * sizeof *d->obj_r);
    return d->nobj++;
}

static void por_run_start(sched *s, sched_dfs *d) {
    d->nev = 0;
    d->open = d->pending_clock = false;
    d->pick_node = 0;
    d->nsl = 0;
    d->run_blocked = false;
    memset(d->tclock, 0, sizeof d->tclock);
    obj_table_reset(s, d);
}

static void ev_add_key(por_ev *e, uint32_t k, bool write) {
    unsigned i;
    for (i = 0; i < e->nkeys; i++)
        if (e->key[i] == k) {
            if (write) e->wmask |= (uint8_t)(1u << i);
            return;
        }
    if (e->nkeys == POR_MAXK) {
        e->overflow = 1;
        return;
    }
    e->key[e->nkeys] = k;
    if (write) e->wmask |= (uint8_t)(1u << e->nkeys);
    e->nkeys++;
}

static por_ev *por_open(sched *s, sched_dfs *d) {
    por_ev *e;
    uint32_t id = s->current->id;
    if (d->nev == d->evcap) {
        size_t cap = d->evcap ? d->evcap * 2 : 1024;
        por_ev *ne = realloc(d->ev, cap * sizeof *ne);
        uint32_t *nc;
        if (ne) d->ev = ne;
        nc = ne ? realloc(d->evclock, cap * POR_MAXT * sizeof *nc) : NULL;
        if (!nc) por_fail(s, "out of memory");
        d->evclock = nc;
        d->evcap = cap;
    }
    e = &d->ev[d->nev];
    memset(e, 0, sizeof *e);
    e->thread = id;
    e->node = d->pick_node;
    e->block = d->nev > 0 && d->ev[d->nev - 1].thread == id ? d->ev[d->nev - 1].block : (uint32_t)d->nev;
    d->open = true;
    if (d->pending_clock) {
        ev_add_key(e, POR_ALL, true);
        d->pending_clock = false;
    }
    return e;
}

void sched_por_touch(sched *s, uintptr_t key, bool write) {
    sched_dfs *d = s->opt.dfs;
    por_ev *e = d->open ? &d->ev[d->nev] : por_open(s, d);
    ev_add_key(e, obj_number(s, d, key), write);
}

/* A new thread's steps all come after the step that spawned it: its clock
 * starts as the spawner's, with that step counted. */
void sched_por_spawned(sched *s, rt_thread *t) {
    sched_dfs *d = s->opt.dfs;
    uint32_t p = s->current->id;
    if (t->id > POR_MAXT) return; /* the next pick ends the run */
    if (!d->open) por_open(s, d);
    memcpy(d->tclock[t->id - 1], d->tclock[p - 1], sizeof d->tclock[0]);
    d->tclock[t->id - 1][p - 1] = (uint32_t)d->nev + 1;
}

void sched_por_clock(sched *s) {
    sched_dfs *d = s->opt.dfs;
    if (d->open) ev_add_key(&d->ev[d->nev], POR_ALL, true);
    else d->pending_clock = true; /* a time jump between steps: the next one */
}

static bool entry_dependent(const por_entry *a, const por_ev *e) {
    unsigned i, j;
    for (i = 0; i < a->nkeys; i++)
        for (j = 0; j < e->nkeys; j++) {
            bool w = (a->wmask >> i & 1u) || (e->wmask >> j & 1u);
            if (w && (a->key[i] == e->key[j] || (a->key[i] >= a->fresh && e->key[j] >= a->fresh))) return true;
        }
    return false;
}

static void add_backtrack(sched_dfs *d, uint32_t node, uint32_t p) {
    dfs_node *x;
    if (!node) return; /* a forced point: nobody else could have run */
    x = &d->nodes[node - 1];
    if (x->opts & tbit(p)) x->bt |= tbit(p);
    else x->bt |= x->opts;
}

static int cmp_desc_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void node_record(sched *s, dfs_node *x, const por_entry *en) {
    unsigned i;
    for (i = x->nsleep; i < x->nent; i++)
        if (x->ent[i].thread == en->thread) {
            x->ent[i] = *en;
            return;
        }
    if (x->nent == x->capent) {
        uint16_t cap = x->capent ? (uint16_t)(x->capent * 2) : 4;
        por_entry *ne = realloc(x->ent, cap * sizeof *ne);
        if (!ne) por_fail(s, "out of memory");
        x->ent = ne;
        x->capent = cap;
    }
    x->ent[x->nent++] = *en;
}

/* The running step ends: its races, its clock, the objects' last
 * accesses, the sleep set, and its footprint at the node it was picked at. */
void sched_por_point(sched *s) {
    sched_dfs *d = s->opt.dfs;
    por_ev *e;
    uint32_t j, p, C[POR_MAXT], cand[POR_MAXK * (POR_MAXT + 1)];
    size_t nc = 0, i, k;
    unsigned q, nt = s->nthreads < POR_MAXT ? s->nthreads : POR_MAXT; /* ids above are unused */
    e = d->open ? &d->ev[d->nev] : por_open(s, d);
    d->pick_node = 0;
    if (e->overflow) {
        e->nkeys = 1;
        e->key[0] = POR_ALL;
        e->wmask = 1;
    } else {
        ev_add_key(e, POR_ALL, false);
    }
    j = (uint32_t)d->nev;
    p = e->thread;
    memcpy(C, d->tclock[p - 1], sizeof C);
    for (i = 0; i < e->nkeys; i++) {
        uint32_t o = e->key[i];
        bool w = e->wmask >> i & 1u;
        if (d->obj_w[o]) cand[nc++] = d->obj_w[o] - 1;
        if (w)
            for (q = 0; q < nt; q++) {
                uint32_t r = d->obj_r[(size_t)o * POR_MAXT + q];
                if (r) cand[nc++] = r - 1;
            }
    }
    /* latest first: an earlier step ordered before a later racing one is
     * covered by that one's clock */
    qsort(cand, nc, sizeof *cand, cmp_desc_u32);
    for (i = 0; i < nc; i++) {
        uint32_t c = cand[i], tq = d->ev[c].thread;
        const uint32_t *cc;
        if (i > 0 && cand[i - 1] == c) continue;
        if (tq == p || C[tq - 1] >= c + 1) continue; /* ordered already */
        d->races++;
        add_backtrack(d, d->ev[c].node, p);
        if (d->ev[c].block != c) add_backtrack(d, d->ev[d->ev[c].block].node, p);
        cc = d->evclock + (size_t)c * POR_MAXT;
        for (q = 0; q < nt; q++)
            if (cc[q] > C[q]) C[q] = cc[q];
    }
    C[p - 1] = j + 1;
    memcpy(d->evclock + (size_t)j * POR_MAXT, C, sizeof C);
    memcpy(d->tclock[p - 1], C, sizeof C);
    for (i = 0; i < e->nkeys; i++) {
        uint32_t o = e->key[i];
        if (e->wmask >> i & 1u) {
            d->obj_w[o] = j + 1;
            memset(d->obj_r + (size_t)o * POR_MAXT, 0, nt * sizeof *d->obj_r);
        } else {
            d->obj_r[(size_t)o * POR_MAXT + p - 1] = j + 1;
        }
    }
    /* sleep set: the thread that ran wakes (if it was asleep, everything
     * from here was explored before: the run is redundant), and so does
     * every sleeper this step depends on */
    for (i = k = 0; i < d->nsl; i++) {
        if (d->sleep[i].thread == p) {
            d->run_blocked = true;
            continue;
        }
        if (entry_dependent(&d->sleep[i], e)) continue;
        if ((int64_t)d->preempt - (int64_t)d->sleep[i].base > (int64_t)d->sleep[i].slack) continue;
        d->sleep[k++] = d->sleep[i];
    }
    d->nsl = k;
    if (e->node) {
        dfs_node *x = &d->nodes[e->node - 1];
        por_entry en;
        memset(&en, 0, sizeof en);
        en.thread = p;
        en.fresh = x->fresh;
        en.slack = (int32_t)d->bound - (int32_t)(x->preempt_before + (x->cur && p != x->cur ? 1u : 0u) + 1u);
        en.nkeys = e->nkeys;
        en.wmask = e->wmask;
        memcpy(en.key, e->key, sizeof en.key);
        node_record(s, x, &en);
    }
    d->nev++;
    d->open = false;
}

/* The run ends.  A thread still runnable never took its next step, so no
 * race of that step was seen: FG'05 looks at the next step of every
 * enabled thread, this search only at steps that ran.  Its step is taken
 * to depend on everything (it is unknown): it races with the last step of
 * every other thread that its clock does not already order before it (a
 * fail-fast scenario whose cancelling thread ends the process before the
 * pool worker ever runs went from 59 runs to 2 without this). */
void sched_por_end(sched *s) {
    sched_dfs *d = s->opt.dfs;
    uint32_t q, u;
    sched_por_point(s);
    for (q = 1; q <= s->nthreads && q <= POR_MAXT; q++) {
        rt_thread *t = s->threads[q - 1];
        if (t == s->current || t->runnable_at == SCHED_NONE) continue;
        for (u = 1; u <= s->nthreads && u <= POR_MAXT; u++) {
            uint32_t last = d->tclock[u - 1][u - 1]; /* u's last step + 1 */
            if (u == q || !last || d->tclock[q - 1][u - 1] >= last) continue;
            d->races++;
            add_backtrack(d, d->ev[last - 1].node, q);
            if (d->ev[last - 1].block != last - 1) add_backtrack(d, d->ev[d->ev[last - 1].block].node, q);
        }
    }
}

static void sleep_set_from(sched *s, sched_dfs *d, const dfs_node *x) {
    unsigned i;
    if (d->slcap < x->nent) {
        por_entry *ns = realloc(d->sleep, x->nent * sizeof *ns);
        if (!ns) por_fail(s, "out of memory");
        d->sleep = ns;
        d->slcap = x->nent;
    }
    d->nsl = 0;
    for (i = 0; i < x->nent; i++) {
        if (i < x->nsleep) {
            d->sleep[d->nsl++] = x->ent[i];
        } else if (x->ent[i].thread != x->pick && x->ent[i].slack >= 0) {
            por_entry *en = &d->sleep[d->nsl++];
            *en = x->ent[i];
            en->base = x->preempt_before + (x->cur && x->pick != x->cur ? 1u : 0u);
        }
    }
}

static uint64_t sleep_mask(const sched_dfs *d) {
    uint64_t m = 0;
    size_t i;
    for (i = 0; i < d->nsl; i++) m |= tbit(d->sleep[i].thread);
    return m;
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
    d->too_many = false;
    s->por = d->por && !s->replay;
    if (s->por) por_run_start(s, d);
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
    if (d->por && t->id > POR_MAXT) d->too_many = true; /* the masks and clocks hold 64 */
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
        memset(x, 0, sizeof *x);
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

/* A POR pick node: replayed (its sleep set restored), or new (asleep on
 * arrival: the run's sleep set; taken: the current thread unless asleep,
 * else the lowest awake id the bound allows; all asleep: the run is
 * redundant and goes on with option 0). */
static uint32_t por_choice(sched *s, sched_dfs *d, uint64_t opts, uint32_t cur) {
    dfs_node *x;
    uint32_t pick;
    if (d->pos < d->len) {
        x = &d->nodes[d->pos];
        if (x->kind != SCHED_ITEM_PICK || x->opts != opts || x->cur != cur)
            diverged(s, d, "the options differ from the previous run's at this choice (nondeterministic program)");
        sleep_set_from(s, d, x);
        pick = x->pick;
    } else {
        uint64_t awake = opts & ~sleep_mask(d);
        if (d->len == d->cap) {
            size_t cap = d->cap ? d->cap * 2 : 256;
            dfs_node *nn = realloc(d->nodes, cap * sizeof *nn);
            if (!nn) sched_end(s, SCHED_MISUSE, "out of memory (dfs tree)");
            d->nodes = nn;
            d->cap = cap;
        }
        x = &d->nodes[d->len++];
        memset(x, 0, sizeof *x);
        x->kind = SCHED_ITEM_PICK;
        x->n = popcount64(opts);
        x->cur_runnable = cur != 0;
        x->opts = opts;
        x->cur = cur;
        x->fresh = d->nobj;
        x->preempt_before = d->preempt;
        if (d->nsl) {
            x->ent = malloc(d->nsl * sizeof *x->ent);
            if (!x->ent) por_fail(s, "out of memory");
            memcpy(x->ent, d->sleep, d->nsl * sizeof *x->ent);
            x->nsleep = x->nent = x->capent = (uint16_t)d->nsl;
        }
        if (cur && (awake & tbit(cur))) pick = cur;
        else if (awake && (!cur || d->preempt + 1 <= d->bound)) pick = lowest_id(awake);
        else {
            pick = cur ? cur : lowest_id(opts);
            d->run_blocked = true;
        }
        x->pick = pick;
        x->bt = x->done = tbit(pick);
    }
    d->pos++;
    if (d->pos > d->max_depth) d->max_depth = d->pos;
    d->pick_node = (uint32_t)d->pos; /* index + 1 */
    if (cur && pick != cur) {
        d->preempt++;
        if (d->preempt > d->max_used) d->max_used = d->preempt;
    }
    return pick;
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
    if (d->too_many) por_fail(s, "more than 64 threads (the reduction's masks and clocks hold 64)");
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
    if (s->por && m + (cur_option ? 1u : 0u) > 1) {
        uint64_t opts = cur_option ? tbit(cur->id) : 0;
        for (i = 0; i < m; i++) opts |= tbit(d->scratch[i]);
        t = s->threads[por_choice(s, d, opts, cur_option ? cur->id : 0) - 1];
    } else if (m + (cur_option ? 1u : 0u) == 1) {
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
    "the livelock persists under a fair schedule (dfs demotes a thread that holds the CPU for "
    DFS_STR(SCHED_DFS_FAIR_BOUND) " choice points while another is runnable, at no preemption cost)"};
