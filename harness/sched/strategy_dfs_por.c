/* The DFS search's partial-order reduction (sched_dfs_set_por): the
 * dependency of two steps, the sleep sets, the backtrack points, and the
 * POR pick nodes of the tree strategy_dfs.c explores.
 *
 * Classic DPOR (Flanagan & Godefroid, POPL 2005) with sleep sets (Godefroid
 * 1996), over the steps of a run: a step is what one thread does from a
 * scheduling point to its next, and its footprint is the objects it
 * touched -- rt_lock, rt_waitq, a thread (its exit, a join of it),
 * an address announced with rt_access -- each read or written, plus object
 * POR_ALL, virtual time, read by every step and, on step time, written by
 * a step that read the clock (rt_now, a sleep, a timed wait, a wake on a
 * queue with a timed waiter, a deadline firing); on idle time the clock
 * changes only at a jump, which orders every step before it before every
 * step after (sched_por_time_jump).  Two steps are dependent when they
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
 * such object (conservative).  Memory freed during the run is forgotten
 * (rt_forget): an address the allocator hands out again is a new object,
 * whatever the build's allocator reuses. */
#include <stdlib.h>
#include <string.h>

#include "sched_dfs_internal.h"

void sched_dfs_set_por(sched_dfs *d, bool on) { d->por = on; }
bool sched_dfs_por(const sched_dfs *d) { return d->por; }
uint64_t sched_dfs_traces(const sched_dfs *d) { return d->runs - d->blocked_runs; }
uint64_t sched_dfs_blocked_runs(const sched_dfs *d) { return d->blocked_runs; }
uint64_t sched_dfs_pruned(const sched_dfs *d) { return d->pruned; }
uint64_t sched_dfs_races(const sched_dfs *d) { return d->races; }

/* The next thread a POR node explores: from its backtrack set, neither
 * explored nor asleep on arrival, within the preemption bound; the current
 * thread first (free), then by id.  0: none. */
uint32_t sched_dfs_por_next(const sched_dfs *d, const dfs_node *x) {
    uint64_t asleep = 0, cand;
    unsigned i;
    for (i = 0; i < x->nsleep; i++) asleep |= tbit(x->ent[i].thread);
    cand = x->bt & ~x->done & ~asleep & x->opts;
    if (!cand) return 0;
    if (x->cur && (cand & tbit(x->cur))) return x->cur;
    if (x->cur && x->preempt_before + 1 > d->bound) return 0;
    return lowest_id(cand);
}

void sched_dfs_por_fail(sched *s, const char *what) { sched_end(s, SCHED_MISUSE, "dfs --por: %s", what); }

/* The object tables, allocated at the first run's start, before any thread
 * exists: a failure there cannot end the run (sched_end needs a running
 * thread), so it sets d->oom, the run goes on unrecorded (s->por off) until
 * its first pick reports it, as the fairness tables' failure is, and the
 * search records nothing more.  What was allocated, sched_dfs_free frees. */
static bool obj_tables_alloc(sched_dfs *d) {
    d->hcap = 1024;
    d->hkey = calloc(d->hcap, sizeof *d->hkey);
    d->hval = calloc(d->hcap, sizeof *d->hval);
    d->objcap = 256;
    d->obj_w = calloc(d->objcap, sizeof *d->obj_w);
    d->obj_r = calloc((size_t)d->objcap * POR_MAXT, sizeof *d->obj_r);
    return d->hkey && d->hval && d->obj_w && d->obj_r;
}

static void obj_table_reset(sched_dfs *d) {
    if (d->oom) return;
    if (!d->hkey) {
        if (!obj_tables_alloc(d)) {
            d->oom = true;
            return;
        }
    } else {
        memset(d->hkey, 0, d->hcap * sizeof *d->hkey);
    }
    d->nobj = 1; /* POR_ALL */
    d->nskey = 0;
    d->obj_w[POR_ALL] = 0;
    memset(d->obj_r, 0, POR_MAXT * sizeof *d->obj_r);
}

static size_t hslot(const sched_dfs *d, uintptr_t key) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (d->hcap - 1);
}

/* First index of skey whose address is >= key. */
static size_t skey_lower(const sched_dfs *d, uintptr_t key) {
    size_t lo = 0, hi = d->nskey;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->skey[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The array is shifted by hand, not with memmove: the race build
 * intercepts memmove, and every fiber of a run shifts this one array (a
 * data race TSan would pin on the thread that happened to number an
 * object). */
static void skey_insert(sched *s, sched_dfs *d, uintptr_t key) {
    size_t at, k;
    if (d->nskey == d->skcap) {
        size_t cap = d->skcap ? d->skcap * 2 : 256;
        uintptr_t *n = realloc(d->skey, cap * sizeof *n);
        if (!n) sched_dfs_por_fail(s, "out of memory");
        d->skey = n;
        d->skcap = cap;
    }
    at = skey_lower(d, key);
    for (k = d->nskey; k > at; k--) d->skey[k] = d->skey[k - 1];
    d->skey[at] = key;
    d->nskey++;
}

/* Takes key out of the open-addressed table, shifting back the entries
 * its slot's occupancy kept in a later slot (linear probing's deletion). */
static void hash_delete(sched_dfs *d, uintptr_t key) {
    size_t mask = d->hcap - 1, i, j, h;
    for (i = hslot(d, key); d->hkey[i] != key; i = (i + 1) & mask)
        if (!d->hkey[i]) return;
    d->hkey[i] = 0;
    for (j = (i + 1) & mask; d->hkey[j]; j = (j + 1) & mask) {
        h = hslot(d, d->hkey[j]);
        /* j's entry stays when its home is cyclically in (i, j] */
        if (i <= j ? (i < h && h <= j) : (i < h || h <= j)) continue;
        d->hkey[i] = d->hkey[j];
        d->hval[i] = d->hval[j];
        d->hkey[j] = 0;
        i = j;
    }
}

/* The numbers stay taken (a step already recorded keeps its meaning); the
 * addresses go, so the next touch of one numbers a new object. */
void sched_por_forget(sched *s, uintptr_t p, size_t n) {
    sched_dfs *d = s->opt.dfs;
    size_t a, b, k;
    if (d->oom || !d->hkey || n == 0) return;
    a = skey_lower(d, p);
    for (b = a; b < d->nskey && d->skey[b] - p < n; b++) hash_delete(d, d->skey[b]);
    if (b == a) return;
    for (k = b; k < d->nskey; k++) d->skey[a + k - b] = d->skey[k];
    d->nskey -= b - a;
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
        if (!d->hkey || !d->hval) sched_dfs_por_fail(s, "out of memory");
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
        if (!r) sched_dfs_por_fail(s, "out of memory");
        d->obj_r = r;
        d->objcap = cap;
    }
    skey_insert(s, d, key);
    d->hkey[i] = key;
    d->hval[i] = d->nobj;
    d->obj_w[d->nobj] = 0;
    memset(d->obj_r + (size_t)d->nobj * POR_MAXT, 0, POR_MAXT * sizeof *d->obj_r);
    return d->nobj++;
}

void sched_dfs_por_run_start(sched *s, sched_dfs *d) {
    d->nev = 0;
    d->open = d->pending_clock = false;
    d->pick_node = 0;
    d->nsl = 0;
    d->run_blocked = false;
    d->step_nodes = 0;
    d->cut = UINT32_MAX;
    memset(d->tclock, 0, sizeof d->tclock);
    obj_table_reset(d);
    if (d->oom) s->por = false; /* no tables to record into: the first pick ends the run */
}

static void ev_add_key(por_ev *e, uint32_t k, bool write) {
    unsigned i;
    for (i = 0; i < e->nkeys; i++)
        if (e->key[i] == k) {
            if (write) e->wmask |= (uint16_t)(1u << i);
            return;
        }
    if (e->nkeys == POR_KEYS) {
        e->overflow = 1;
        return;
    }
    e->key[e->nkeys] = k;
    if (write) e->wmask |= (uint16_t)(1u << e->nkeys);
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
        if (!nc) sched_dfs_por_fail(s, "out of memory");
        d->evclock = nc;
        d->evcap = cap;
    }
    e = &d->ev[d->nev];
    memset(e, 0, sizeof *e);
    e->thread = id;
    e->node = d->pick_node;
    e->block = d->nev > 0 && d->ev[d->nev - 1].thread == id ? d->ev[d->nev - 1].block : (uint32_t)d->nev;
    e->nodes = d->step_nodes;
    d->open = true;
    e->key[0] = POR_ALL; /* every step reads the time */
    e->nkeys = 1;
    if (d->pending_clock) {
        e->wmask = 1;
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

void sched_por_all(sched *s) {
    sched_dfs *d = s->opt.dfs;
    if (d->open) ev_add_key(&d->ev[d->nev], POR_ALL, true);
    else d->pending_clock = true; /* a time jump between steps: the next one */
}

/* On idle time the clock stands still between jumps, so a clock read
 * commutes with every step around it: nothing to record. */
void sched_por_clock(sched *s) {
    if (s->step_time) sched_por_all(s);
}

/* An idle-time jump comes only when no thread can run (or after a busy
 * stretch of fixed length): every step before it is ordered before every
 * step after, in every run through here, so it joins every thread's clock.
 * The sleep set empties (conservative): the threads the jump wakes take
 * steps no sleeper's record describes. */
void sched_por_time_jump(sched *s) {
    sched_dfs *d = s->opt.dfs;
    uint32_t J[POR_MAXT], t, q, nt = s->nthreads < POR_MAXT ? s->nthreads : POR_MAXT;
    memset(J, 0, sizeof J);
    for (t = 0; t < nt; t++)
        for (q = 0; q < nt; q++)
            if (d->tclock[t][q] > J[q]) J[q] = d->tclock[t][q];
    for (t = 0; t < nt; t++) memcpy(d->tclock[t], J, sizeof J);
    d->nsl = 0;
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
    if (node > d->cut) return; /* below the redundant step's pick: nothing new there */
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
        if (!ne) sched_dfs_por_fail(s, "out of memory");
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
    uint32_t j, p, C[POR_MAXT], cand[POR_KEYS * (POR_MAXT + 1)];
    size_t nc = 0, i, k;
    unsigned q, nt = s->nthreads < POR_MAXT ? s->nthreads : POR_MAXT; /* ids above are unused */
    e = d->open ? &d->ev[d->nev] : por_open(s, d);
    d->pick_node = 0;
    d->step_nodes = (uint32_t)d->pos; /* a forced pick adds none; sched_dfs_por_choice counts its node */
    if (e->overflow) {
        e->nkeys = 1;
        e->wmask = 1;
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
            if (e->nodes < d->cut) d->cut = e->nodes;
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
        if (!ns) sched_dfs_por_fail(s, "out of memory");
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

/* A POR pick node: replayed (its sleep set restored), or new (asleep on
 * arrival: the run's sleep set; taken: the current thread unless asleep,
 * else the lowest awake id the bound allows; all asleep: the run is
 * redundant and goes on with option 0). */
uint32_t sched_dfs_por_choice(sched *s, sched_dfs *d, uint64_t opts, uint32_t cur) {
    dfs_node *x;
    uint32_t pick;
    if (d->pos < d->len) {
        x = &d->nodes[d->pos];
        if (x->kind != SCHED_ITEM_PICK || x->opts != opts || x->cur != cur)
            sched_dfs_diverged(s, d, "the options differ from the previous run's at this choice (nondeterministic program)");
        sleep_set_from(s, d, x);
        pick = x->pick;
    } else {
        uint64_t awake = opts & ~sleep_mask(d);
        x = sched_dfs_new_node(s, d);
        x->kind = SCHED_ITEM_PICK;
        x->n = popcount64(opts);
        x->costly = cur != 0;
        x->opts = opts;
        x->cur = cur;
        x->fresh = d->nobj;
        x->preempt_before = d->preempt;
        if (d->nsl) {
            x->ent = malloc(d->nsl * sizeof *x->ent);
            if (!x->ent) sched_dfs_por_fail(s, "out of memory");
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
    d->step_nodes = (uint32_t)d->pos;
    /* the default: the current thread while it can go on, else the lowest id */
    if (pick != (cur && (opts & tbit(cur)) ? cur : lowest_id(opts))) d->last_spend = d->pos;
    if (cur && pick != cur) {
        d->preempt++;
        if (d->preempt > d->max_used) d->max_used = d->preempt;
    }
    return pick;
}

