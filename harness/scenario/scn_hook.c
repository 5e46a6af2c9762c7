/* The run's trace hook (scn_run_internal.h): every trace record of the run
 * passes here, on the recording thread.  It counts the record per trace point
 * and pool (count_slot), keeps the tail the reports print, notes what the
 * oracles need in trace order (the last cancellation and repair start per
 * pool, the healer's pool, ticks the core swallowed), checks the scenario's
 * `before` orders, wakes `await`s and parks the threads a hold catches.
 * And the read-outs `require` asks at quiescence and at the end (scn_reach.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "scn_run_internal.h"

/* What the hook needs to know about an event name: its trace point index
 * (-1 when the scenario language has none) and whether it is one of the
 * events the hook treats specially. */
typedef enum ev_special { EV_PLAIN, EV_STALE_TICK, EV_CANCELLED, EV_REPAIR_STARTED, EV_HEALER_STARTED } ev_special;
typedef struct ev_info {
    const char *ev;
    int point;
    ev_special special;
} ev_info;

/* Event names are string literals in the core, so a name's pointer is
 * stable for the whole process and the cache lives across runs.  It was in
 * the per-run state, cleared by every run: callgrind counted 509 linear
 * name lookups (20 strcmp each) and 4 more strcmp per record, 14% of a
 * passing run's instructions.  The cache maps a pointer to what its string
 * says, so no address reaches a run's behaviour or output.  Open addressing;
 * a full table (more distinct names than slots) falls back to the lookup.
 * One of the two file-scope mutable states of harness/scenario, on purpose
 * (the other: the real pool's healer key, scn_run.c). */
#define EV_CACHE 256
static ev_info ev_cache[EV_CACHE];

static ev_info classify(const char *ev) {
    ev_info i;
    i.ev = ev;
    i.point = scn_trace_point_find(ev);
    i.special = strcmp(ev, "stale-tick-dropped") == 0 ? EV_STALE_TICK
                : strcmp(ev, "cancelled") == 0        ? EV_CANCELLED
                : strcmp(ev, "repair-started") == 0   ? EV_REPAIR_STARTED
                : strcmp(ev, "healer-started") == 0   ? EV_HEALER_STARTED
                                                      : EV_PLAIN;
    return i;
}

static ev_info event_info(const char *ev) {
    unsigned h = (unsigned)(((uintptr_t)ev >> 3) * 2654435761u) % EV_CACHE, n;
    for (n = 0; n < EV_CACHE; n++, h = (h + 1) % EV_CACHE) {
        if (ev_cache[h].ev == ev) return ev_cache[h];
        if (!ev_cache[h].ev) {
            ev_cache[h] = classify(ev);
            return ev_cache[h];
        }
    }
    return classify(ev);
}

static bool hold_matches_pool(int want, int pool) { return want < 0 || want == pool; }

static void watch_slot(run_state *run, int point, int pool) {
    if (point >= 0 && (size_t)point < run->npoints) run->watched[count_slot(run, point, pool)] = true;
}

static void watch_expr(run_state *run, const scn_expr *e) {
    if (e->lhs.kind == SCN_TERM_COUNT) watch_slot(run, e->lhs.event, e->lhs.pool);
    if (e->rhs.kind == SCN_TERM_COUNT) watch_slot(run, e->rhs.event, e->rhs.pool);
}

static void watch_block(run_state *run, const scn_block *b) {
    size_t i;
    for (i = 0; i < b->n; i++) {
        const scn_op *op = &b->ops[i];
        if (op->kind == SCN_OP_AWAIT) watch_slot(run, op->point, op->pool);
        if (op->kind == SCN_OP_ASSERT && op->expr) watch_expr(run, op->expr);
        if (op->kind == SCN_OP_REPEAT && op->body) watch_block(run, op->body);
    }
}

static void hold_point(run_state *run, int point) {
    if (point >= 0 && (size_t)point < run->npoints) run->held[point] = true;
}

/* Only what is read while the run goes on: `expect`s and `require`s are read
 * after a settle, which the bounded search orders after every step before
 * it (rt_settle_until wakes at a time jump), and counting is commutative,
 * so the order of two records nobody reads in between changes no verdict. */
void scn_hook_observe(run_state *run) {
    const scn_scenario *s = run->s;
    size_t i;
    for (i = 0; i < s->norders; i++) {
        watch_slot(run, s->orders[i].first, s->orders[i].pool);
        watch_slot(run, s->orders[i].then, s->orders[i].pool);
    }
    for (i = 0; i < s->nholds; i++) {
        hold_point(run, s->holds[i].point);
        if (s->holds[i].release == SCN_HOLD_UNTIL) hold_point(run, s->holds[i].until_point);
    }
    for (i = 0; i < s->nthreads; i++) watch_block(run, &s->threads[i].body);
    for (i = 0; i < s->ncallbacks; i++) watch_block(run, &s->callbacks[i].body);
}

/* A record that parks its thread (a hold) or wakes another (a hold's
 * until-event, an await of its slot) must be an ordinary section: its
 * step orders with every other section on the run's lock. */
static bool parks_or_wakes(const run_state *run, int pt, int pool) {
    return run->held[pt] || run->awaiting[count_slot(run, pt, -1)] ||
           (pool >= 0 && run->awaiting[count_slot(run, pt, pool)]);
}

/* Counts a record in one slot.  A slot read while the run goes on is
 * announced (its readers announce their reads: scn_exec.c's await,
 * scn_expr.c); any other is read after a settle, and increments commute. */
static void count_up(run_state *run, int pt, int pool) {
    size_t slot = count_slot(run, pt, pool);
    if (run->watched[slot]) rt_access(&run->counts[slot], RT_WRITE);
    run->counts[slot]++;
}

void scn_hook_record(const tph_trace_record *rec, void *ctx) {
    run_state *run = (run_state *)ctx;
    int pt, pool = -1;
    size_t i;
    ev_info ei;
    scn_pool_announce_note(rec->target, rec->event, rec->a, rec->b);
    /* Most records only feed the tail a report prints and counts: a
     * diagnostic section, which the bounded search orders only by what it
     * announces where it writes what a verdict can tell apart by order (the
     * watched counts, a `before` order's reads and tally, the built-in
     * oracles' notes), on either path. */
    rt_lock_acquire_diagnostic(&run->lock);
    ei = event_info(rec->event);
    pt = ei.point;
    if (pt >= 0 && scn_trace_point_has_pool(pt)) pool = scn_run_pool_index(run, (uintptr_t)rec->a);
    if (pt >= 0 && parks_or_wakes(run, pt, pool)) rt_lock_observed(&run->lock);
    {
        tail_rec *t = &run->tail[run->tail_n % TRACE_TAIL];
        const char *who = rt_thread_name();
        size_t n = 0;
        t->thread = rec->thread;
        for (; who && who[n] && n + 1 < sizeof t->who; n++) t->who[n] = who[n];
        t->who[n] = '\0';
        t->time = rt_now(); /* the run's time, precise (rec->time is the tick-rounded stamp) */
        t->target = rec->target;
        t->event = rec->event;
        t->pool = pool;
        t->key = (pt >= 0 && scn_trace_point_has_pool(pt)) ? (uintptr_t)rec->a : 0;
        if (pool < 0 && t->key) scn_poolname_note(run, t->key, rec->thread, t->who);
        t->a = (pt >= 0 && scn_trace_point_has_pool(pt)) ? 0 : rec->a;
        t->b = rec->b;
        run->tail_n++;
        if (run->full_trace) scn_tracefmt_rec(run, &run->trace_all, run->tail_n, t);
        if (run->tl) scn_tl_record(run, run->tail_n, t);
    }
    if (ei.special == EV_STALE_TICK) {
        /* The native pool ran the callback; the core kept it from the user
         * (core/src/timer.c).  Counted so the callback-count oracle can tell
         * the two apart. */
        for (i = 0; i < run->s->nobjs; i++)
            if (run->objs[i].os && (uintptr_t)run->objs[i].os == (uintptr_t)rec->a) {
                rt_access(&run->objs[i], RT_WRITE); /* the object's bookkeeping (scn_exec.c) */
                run->objs[i].swallowed++;
            }
    }
    if (pt < 0) {
        rt_lock_release(&run->lock);
        return;
    }
    if (pool >= 0 && pool < 64 && (ei.special == EV_CANCELLED || ei.special == EV_REPAIR_STARTED)) {
        /* one key for the pair: the oracle compares their order */
        rt_access(&run->last_cancel_at[pool], RT_WRITE);
        if (ei.special == EV_CANCELLED) run->last_cancel_at[pool] = run->tail_n;
        else run->last_start_at[pool] = run->tail_n;
    }
    if (ei.special == EV_HEALER_STARTED) {
        rt_access(&run->healer_key, RT_WRITE);
        run->healer_key = (uintptr_t)rec->a;
        run->healer_key_known = true;
    }
    count_up(run, pt, -1);
    if (pool >= 0) count_up(run, pt, pool);
    if (run->awaiting[count_slot(run, pt, -1)] || (pool >= 0 && run->awaiting[count_slot(run, pt, pool)]))
        rt_wake_all(&run->await_q);
    for (i = 0; i < run->s->norders; i++) {
        const scn_order *o = &run->s->orders[i];
        if (o->then != pt || !hold_matches_pool(o->pool, pool)) continue;
        rt_access(&run->counts[count_slot(run, o->first, o->pool)], RT_READ);
        rt_access(&run->orders[i], RT_WRITE);
        {
            uint64_t firsts = run->counts[count_slot(run, o->first, o->pool)];
            uint64_t thens = run->counts[count_slot(run, pt, o->pool)];
            order_tally *ot = &run->orders[i];
            if (firsts < thens && ot->broken++ == 0) {
                ot->first_record = run->tail_n;
                ot->first_nth = thens;
                ot->firsts_seen = firsts;
            }
        }
    }
    /* releases first: an until-event wakes the holds waiting for it */
    for (i = 0; i < run->s->nholds; i++) {
        const scn_hold *h = &run->s->holds[i];
        if (h->release == SCN_HOLD_UNTIL && h->until_point == pt && hold_matches_pool(h->until_pool, pool))
            rt_wake_all(&run->holds[i].q);
    }
    for (i = 0; i < run->s->nholds; i++) {
        const scn_hold *h = &run->s->holds[i];
        hold_state *hs = &run->holds[i];
        if (h->point != pt || !hold_matches_pool(h->pool, pool) || hs->done) continue;
        hs->matched++;
        if (hs->matched < h->nth) continue;
        if (!h->every) hs->done = true;
        hs->parks++;
        uint64_t parked_at = rt_now();
        run->script_waiters++;
        if (h->release == SCN_HOLD_FOR) {
            uint64_t deadline = rt_now() + h->duration;
            while (rt_now() < deadline) rt_wait(&hs->q, &run->lock, deadline, "scenario hold (for)");
        } else {
            /* Released once the until-event has been recorded at all: if it
             * came first, the order the hold exists to force already holds. */
            size_t slot = count_slot(run, h->until_point, h->until_pool);
            while (run->counts[slot] < h->until_count) rt_wait(&hs->q, &run->lock, RT_FOREVER, "scenario hold (until)");
        }
        if (run->tl) {
            char what[96];
            snprintf(what, sizeof what, "hold at %s (line %d)", scn_trace_point_name(pt), h->line);
            scn_tl_span(run, parked_at, "hold", what);
        }
        run->script_waiters--;
    }
    rt_lock_release(&run->lock);
}

/* The model severed a pool, or a submit released it: a record in the run's
 * trace, `sim/pool-severed` (b: the callbacks it strands) or
 * `sim/pool-healed` (b: the callbacks the released worker now serves), so
 * a report shows where a pool stopped and started serving.  Called under
 * the model's lock: in a controlled run one fiber runs at a time and this
 * takes no scheduling point, so the schedule and the core's records are
 * as they were; a free-running run takes the run's lock (the model's lock
 * is taken first, and nothing holding the run's lock calls the model). */
void scn_hook_severing(void *ctx, const void *pool_os, bool severed, uint32_t queued) {
    run_state *run = (run_state *)ctx;
    uintptr_t key = (uintptr_t)pool_os;
    tail_rec *t;
    const char *who = rt_thread_name();
    size_t n = 0;
    if (run->free_running) rt_lock_acquire_diagnostic(&run->lock);
    t = &run->tail[run->tail_n % TRACE_TAIL];
    t->thread = rt_thread_id();
    for (; who && who[n] && n + 1 < sizeof t->who; n++) t->who[n] = who[n];
    t->who[n] = '\0';
    t->time = rt_now();
    t->target = "sim";
    t->event = severed ? "pool-severed" : "pool-healed";
    t->pool = scn_run_pool_index(run, key);
    t->key = key;
    t->a = 0;
    t->b = queued;
    if (t->pool < 0 && key) scn_poolname_note(run, key, t->thread, t->who);
    run->tail_n++;
    if (run->full_trace) scn_tracefmt_rec(run, &run->trace_all, run->tail_n, t);
    if (run->tl) scn_tl_record(run, run->tail_n, t);
    if (run->free_running) rt_lock_release(&run->lock);
}

/* ---- what `require` asks (scn_reach.h) ---------------------------------------- */

static uint64_t probe_trace_count(void *ctx, int point, int pool) {
    const run_state *run = (const run_state *)ctx;
    return run->counts[count_slot(run, point, pool)];
}

static uint64_t probe_hold_parks(void *ctx, int point) {
    const run_state *run = (const run_state *)ctx;
    uint64_t n = 0;
    size_t i;
    for (i = 0; i < run->s->nholds; i++)
        if (run->s->holds[i].point == point) n += run->holds[i].parks;
    return n;
}

static uint64_t probe_pool_stalls(void *ctx, int pool) {
    run_state *run = (run_state *)ctx;
    if (pool != SCN_DEFAULT_POOL && !run->pools[pool]) return 0;
    return scn_pool_stalls(scn_run_pool_native(run, pool));
}

static bool probe_expr_holds(void *ctx, const scn_expr *e) {
    run_state *run = (run_state *)ctx;
    uint64_t l, r;
    return scn_expr_eval(run, e, &l, &r);
}

scn_reach_probe scn_hook_reach_probe(run_state *run) {
    scn_reach_probe p;
    p.trace_count = probe_trace_count;
    p.hold_parks = probe_hold_parks;
    p.pool_stalls = probe_pool_stalls;
    p.expr_holds = probe_expr_holds;
    p.ctx = run;
    return p;
}
