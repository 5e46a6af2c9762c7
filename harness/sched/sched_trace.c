/* The behaviour class of a controlled run: a hash of its Mazurkiewicz trace
 * under the dependency relation the partial-order reduction uses
 * (harness/sched/README.md, "Dependency"), taken in every controlled run.
 *
 * Two runs that differ only in the order of independent steps are one
 * trace.  Its canonical form here is the Foata normal form: a step's level
 * is one more than the highest level of an earlier step it depends on
 * (its thread's previous step, a step writing an object it touches, a step
 * reading an object it writes, everything before a step that writes the
 * time or before an idle-time jump), and the steps of each level form a
 * set.  The hash is the sum of one mixed word per step -- its thread, its
 * index in that thread, its level, the size of its footprint and the
 * values rt_choose returned in it -- so it does not depend on the order the
 * run took the steps of one level in.  Object addresses stay out: equivalent
 * runs allocate in different orders, so an address names nothing across
 * runs.  What it cannot see makes it count more classes, never fewer: thread
 * ids are numbered by spawn order, so two threads spawned by independent
 * steps swap numbers between equivalent runs.
 *
 * The footprints are fed by the same calls that feed the reduction
 * (sched_fp_*, below, dispatching to both), so the relation cannot drift
 * from the one the reduction prunes by. */
#include <stdlib.h>
#include <string.h>

#include "sched_dfs_internal.h"
#include "sched_internal.h"

#define TR_EMPTY 0u /* key of a free slot: no object lives at address 0 */

static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Fibonacci hashing: the high bits of a multiply (a full mix here was a
 * third of the class's cost) */
static size_t slot_of(const sched_trace *tr, uintptr_t key) {
    return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 20) & (tr->cap - 1);
}

/* Out of memory: the run goes on, its class is no longer computed (0). */
static void give_up(sched_trace *tr) {
    tr->failed = true;
}

static bool grow_objects(sched_trace *tr) {
    size_t oc = tr->cap, cap = oc ? oc * 2 : 256, i, j;
    sched_trace_obj *old = tr->obj, *n = calloc(cap, sizeof *n);
    if (!n) return false;
    tr->obj = n;
    tr->cap = cap;
    for (i = 0; i < oc; i++)
        if (old[i].key != TR_EMPTY) {
            for (j = slot_of(tr, old[i].key); n[j].key != TR_EMPTY; j = (j + 1) & (cap - 1)) {
            }
            n[j] = old[i];
        }
    free(old);
    return true;
}

/* Room for `extra` new objects without a rehash (pointers into the table
 * stay valid while a step's objects are looked up). */
static bool reserve(sched_trace *tr, size_t extra) {
    while ((tr->n + extra + 1) * 2 > tr->cap)
        if (!grow_objects(tr)) return false;
    return true;
}

/* First index of the sorted keys whose address is >= key. */
static size_t sorted_lower(const sched_trace *tr, uintptr_t key) {
    size_t lo = 0, hi = tr->nsorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->sorted[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The object of `key`, made when new; reserve() first.  NULL: no memory
 * for the sorted list (the caller gives up). */
static sched_trace_obj *object(sched_trace *tr, uintptr_t key) {
    size_t i, at, k;
    if (key == TR_EMPTY) key = 1;
    for (i = slot_of(tr, key); tr->obj[i].key != TR_EMPTY; i = (i + 1) & (tr->cap - 1))
        if (tr->obj[i].key == key) return &tr->obj[i];
    /* new: into the sorted list too, which forget() searches (shifted by
     * hand, as the reduction's: the race build intercepts memmove) */
    if (tr->nsorted == tr->sortcap) {
        size_t cap = tr->sortcap ? tr->sortcap * 2 : 256;
        uintptr_t *n = realloc(tr->sorted, cap * sizeof *n);
        if (!n) return NULL;
        tr->sorted = n;
        tr->sortcap = cap;
    }
    at = sorted_lower(tr, key);
    for (k = tr->nsorted; k > at; k--) tr->sorted[k] = tr->sorted[k - 1];
    tr->sorted[at] = key;
    tr->nsorted++;
    tr->obj[i].key = key;
    tr->obj[i].wl = tr->obj[i].rl = 0;
    tr->n++;
    return &tr->obj[i];
}

static bool grow_threads(sched_trace *tr, uint32_t id);
static inline bool thread_slots(sched_trace *tr, uint32_t id) {
    return id <= tr->tcap || grow_threads(tr, id);
}

static bool grow_threads(sched_trace *tr, uint32_t id) {
    {
        uint32_t cap = tr->tcap ? tr->tcap : 16, *lev, *idx;
        while (cap < id) cap *= 2;
        lev = realloc(tr->tlev, cap * sizeof *lev);
        if (lev) tr->tlev = lev;
        idx = lev ? realloc(tr->tidx, cap * sizeof *idx) : NULL;
        if (!idx) return false;
        tr->tidx = idx;
        memset(tr->tlev + tr->tcap, 0, (cap - tr->tcap) * sizeof *lev);
        memset(tr->tidx + tr->tcap, 0, (cap - tr->tcap) * sizeof *idx);
        tr->tcap = cap;
    }
    return true;
}

static void open_step(sched *s, sched_trace *tr) {
    tr->open = true;
    tr->thread = s->current->id;
    tr->nkeys = 0;
    tr->nwrites = 0;
    tr->content = 0;
    tr->writes_all = tr->pending_all;
    tr->pending_all = false;
}

void sched_trace_touch(sched *s, uintptr_t key, bool write) {
    sched_trace *tr = &s->tr;
    unsigned i;
    if (tr->failed) return;
    if (!tr->open) open_step(s, tr);
    for (i = 0; i < tr->nkeys && i < POR_MAXK; i++)
        if (tr->key[i] == key) {
            if (write && !tr->write[i]) {
                tr->write[i] = true;
                tr->nwrites++;
            }
            return;
        }
    if (tr->nkeys >= POR_MAXK) {
        /* the reduction's rule for a full footprint: it writes the time */
        tr->nkeys = POR_MAXK + 1;
        tr->writes_all = true;
        return;
    }
    tr->key[tr->nkeys] = key;
    tr->write[tr->nkeys] = write;
    tr->nwrites += write ? 1u : 0u;
    tr->nkeys++;
}

void sched_trace_all(sched *s) {
    sched_trace *tr = &s->tr;
    if (tr->open) tr->writes_all = true;
    else tr->pending_all = true; /* a time jump between steps: the next one */
}

void sched_trace_clock(sched *s) {
    if (s->step_time) sched_trace_all(s);
}

/* An idle-time jump orders every step before it before every step after. */
void sched_trace_time_jump(sched *s) {
    s->tr.floor = s->tr.maxlev;
}

void sched_trace_spawned(sched *s, rt_thread *t) {
    sched_trace *tr = &s->tr;
    if (tr->failed) return;
    if (!tr->open) open_step(s, tr);
    if (tr->nspawned < SCHED_TRACE_SPAWNS) tr->spawned[tr->nspawned++] = t->id;
    else tr->writes_all = true; /* more children than slots: order them after everything */
}

void sched_trace_choose(sched *s, uint32_t v) {
    sched_trace *tr = &s->tr;
    if (tr->failed) return;
    if (!tr->open) open_step(s, tr);
    tr->content = mix64(tr->content ^ ((uint64_t)v + 1u));
}

/* The running step ends: its level, the objects' levels, its word. */
void sched_trace_point(sched *s) {
    sched_trace *tr = &s->tr;
    uint32_t level, dep, id;
    unsigned i, nk;
    sched_trace_obj *o[POR_MAXK];
    if (tr->failed) return;
    if (!tr->open) open_step(s, tr);
    tr->open = false;
    id = tr->thread;
    if (!thread_slots(tr, id)) {
        give_up(tr);
        return;
    }
    nk = tr->nkeys > POR_MAXK ? 0u : tr->nkeys;
    if (!reserve(tr, nk)) {
        give_up(tr);
        return;
    }
    dep = tr->floor > tr->tlev[id - 1] ? tr->floor : tr->tlev[id - 1];
    if (tr->writes_all) {
        dep = tr->maxlev; /* after every step so far */
    } else {
        if (tr->time_wl > dep) dep = tr->time_wl; /* every step reads the time */
        for (i = 0; i < nk; i++) {
            o[i] = object(tr, tr->key[i]);
            if (!o[i]) {
                give_up(tr);
                return;
            }
            if (o[i]->wl > dep) dep = o[i]->wl;
            if (tr->write[i] && o[i]->rl > dep) dep = o[i]->rl;
        }
    }
    level = dep + 1;
    if (tr->writes_all) {
        tr->time_wl = level;
        for (i = 0; i < nk; i++)
            if (!(o[i] = object(tr, tr->key[i]))) {
                give_up(tr);
                return;
            }
    }
    for (i = 0; i < nk; i++) {
        if (tr->write[i]) o[i]->wl = level;
        else if (o[i]->rl < level) o[i]->rl = level;
    }
    if (level > tr->maxlev) tr->maxlev = level;
    tr->tlev[id - 1] = level;
    for (i = 0; i < tr->nspawned; i++) {
        if (!thread_slots(tr, tr->spawned[i])) {
            give_up(tr);
            return;
        }
        tr->tlev[tr->spawned[i] - 1] = level; /* its steps come after this one */
    }
    tr->nspawned = 0;
    /* one mix a step: (thread, index) spread by a multiply, the rest in
     * the low bits, the chooses' values already mixed */
    tr->hash += mix64(((((uint64_t)id << 40) ^ tr->tidx[id - 1]) * 0x9E3779B97F4A7C15ull) ^
                      ((uint64_t)level << 16) ^ ((uint64_t)tr->nkeys << 8) ^ ((uint64_t)tr->nwrites << 4) ^
                      (tr->writes_all ? 1u : 0u) ^ tr->content);
    tr->tidx[id - 1]++;
}

/* Takes key out of the open-addressed table, shifting back the entries
 * its slot's occupancy kept in a later slot (linear probing's deletion). */
static void delete_key(sched_trace *tr, uintptr_t key) {
    size_t mask = tr->cap - 1, i, j, h;
    for (i = slot_of(tr, key); tr->obj[i].key != key; i = (i + 1) & mask)
        if (tr->obj[i].key == TR_EMPTY) return;
    tr->obj[i].key = TR_EMPTY;
    tr->n--;
    for (j = (i + 1) & mask; tr->obj[j].key != TR_EMPTY; j = (j + 1) & mask) {
        h = slot_of(tr, tr->obj[j].key);
        /* j's entry stays when its home is cyclically in (i, j] */
        if (i <= j ? (i < h && h <= j) : (i < h || h <= j)) continue;
        tr->obj[i] = tr->obj[j];
        tr->obj[j].key = TR_EMPTY;
        i = j;
    }
}

/* Memory the sim freed is forgotten, as the reduction forgets it: an
 * address handed out again is a new object.  (A scan of the table at every
 * free was 18% of many-pools-churn's CPU time; the sorted keys find the
 * block's objects in a binary search.) */
void sched_trace_forget(sched *s, uintptr_t p, size_t n) {
    sched_trace *tr = &s->tr;
    size_t a, b, k;
    if (tr->failed || !tr->nsorted || n == 0) return;
    a = sorted_lower(tr, p);
    for (b = a; b < tr->nsorted && tr->sorted[b] - p < n; b++) delete_key(tr, tr->sorted[b]);
    if (b == a) return;
    for (k = b; k < tr->nsorted; k++) tr->sorted[a + k - b] = tr->sorted[k];
    tr->nsorted -= b - a;
}

void sched_trace_end(sched *s) {
    sched_trace_point(s);
}

uint64_t sched_trace_hash(const sched *s) {
    return s->tr.failed ? 0 : mix64(s->tr.hash ^ 0x7472616365ull);
}

void sched_trace_free(sched *s) {
    free(s->tr.obj);
    free(s->tr.sorted);
    free(s->tr.tlev);
    free(s->tr.tidx);
    memset(&s->tr, 0, sizeof s->tr);
}

/* The dispatch: one set of calls feeds the reduction (dfs --por only) and
 * the class (every controlled run). */
void sched_fp_touch(sched *s, uintptr_t key, bool write) {
    if (s->por) sched_por_touch(s, key, write);
    sched_trace_touch(s, key, write);
}

void sched_fp_clock(sched *s) {
    if (s->por) sched_por_clock(s);
    sched_trace_clock(s);
}

void sched_fp_all(sched *s) {
    if (s->por) sched_por_all(s);
    sched_trace_all(s);
}

void sched_fp_time_jump(sched *s) {
    if (s->por) sched_por_time_jump(s);
    sched_trace_time_jump(s);
}

void sched_fp_point(sched *s) {
    if (s->por) sched_por_point(s);
    sched_trace_point(s);
}

void sched_fp_spawned(sched *s, rt_thread *t) {
    if (s->por) sched_por_spawned(s, t);
    sched_trace_spawned(s, t);
}

void sched_fp_forget(sched *s, uintptr_t p, size_t n) {
    if (s->por) sched_por_forget(s, p, n);
    sched_trace_forget(s, p, n);
}
