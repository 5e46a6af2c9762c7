/* The name a report gives each pool a run meets (scn_run_internal.h): the
 * scenario's name for a pool it declares, "default", "healer pool" for the
 * pool the healer started on, and for any other pool the core made -- a
 * second healer start's, a failed start's -- who made it: the scenario
 * object named last on the making thread before the pool's first record,
 * and that thread.  "(unnamed)" told a user nothing about a healer started
 * twice; "pool made by Y on thread B" points at the cancellation that did.
 * Pure bookkeeping under the run's lock: no scheduling point. */
#include <stdio.h>
#include <string.h>

#include "scn_run_internal.h"

static other_pool *find_other(run_state *run, uintptr_t key) {
    size_t i;
    for (i = 0; i < run->nothers; i++)
        if (run->others[i].key == key) return &run->others[i];
    return NULL;
}

/* The last record of `thread` in the tail ring that names a scenario
 * object, as its name, or NULL. */
static const char *last_object_of(run_state *run, uint32_t thread) {
    uint64_t back = run->tail_n < TRACE_TAIL ? run->tail_n : TRACE_TAIL, k;
    size_t i;
    for (k = 1; k <= back; k++) {
        const tail_rec *r = &run->tail[(run->tail_n - k) % TRACE_TAIL];
        if (r->thread != thread || r->pool >= 0 || !r->a) continue;
        for (i = 0; i < run->s->nobjs; i++)
            if (run->objs[i].os && (uintptr_t)run->objs[i].os == r->a) return run->s->objs[i].name;
    }
    return NULL;
}

void scn_poolname_note(run_state *run, uintptr_t key, uint32_t thread, const char *who) {
    other_pool *o;
    const char *obj;
    if (!key || scn_run_pool_index(run, key) >= 0 || find_other(run, key) || run->nothers >= MAX_OTHER_POOLS) return;
    o = &run->others[run->nothers++];
    o->key = key;
    obj = last_object_of(run, thread);
    if (obj) snprintf(o->made_by, sizeof o->made_by, "%s on thread %s", obj, who && *who ? who : "?");
    else snprintf(o->made_by, sizeof o->made_by, "thread %s", who && *who ? who : "?");
}

const char *scn_poolname(run_state *run, uintptr_t key, char *buf, size_t n) {
    int p = scn_run_pool_index(run, key);
    const other_pool *o;
    if (p >= 0) return run->s->pools[p].name;
    if (run->healer_key_known && key == run->healer_key) return "healer pool";
    o = find_other(run, key);
    if (o) snprintf(buf, n, "pool made by %s", o->made_by);
    else snprintf(buf, n, "pool %llu (made outside the trace)", (unsigned long long)key);
    return buf;
}

const char *scn_poolname_at(run_state *run, int pool, uintptr_t key, char *buf, size_t n) {
    if (pool >= 0) return run->s->pools[pool].name;
    return scn_poolname(run, key, buf, n);
}

bool scn_poolname_known(run_state *run, uintptr_t key) {
    return key && ((run->healer_key_known && key == run->healer_key) || find_other(run, key));
}

/* For a sentence: "pool P1" for a declared pool (the reports' wording since
 * the first), else the made-up name, which says "pool" itself. */
const char *scn_pool_phrase(run_state *run, uintptr_t key, char *buf, size_t n) {
    char name[96];
    int p = scn_run_pool_index(run, key);
    if (p >= 0) snprintf(buf, n, "pool %s", run->s->pools[p].name);
    else snprintf(buf, n, "%s", scn_poolname(run, key, name, sizeof name));
    return buf;
}
