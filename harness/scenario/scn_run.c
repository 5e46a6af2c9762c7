/* The scenario runner (scn_run.h).  One run, on the pool backend linked in
 * (scn_pool.h: the model, or the real Windows pool):
 *   main rt thread: process begin, hook, pools, faults, objects,
 *   spawn + join the scenario threads, settle, oracles,
 *   close what is left, settle again, the registry oracle;
 * the driver then ends the run's process (the model's: and resets the core).
 * Everything a report prints is names and counts -- no address, no real time
 * -- so the same seed prints the same bytes. */
#include "scn_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tpheal/tpheal.h>

#include "rt.h"
#include "rt_native.h"
#include "rt_sched.h"
#include "scn_features.h"
#include "scn_pool.h"
#include "scn_reach.h"
#include "scn_text.h"

#define TRACE_TAIL 40
#define MAX_FAILURES 20

typedef struct obj_state {
    struct run_state *run; /* the run it belongs to, and its index there: */
    int index;             /* what its callbacks' ctx tells them */
    void *h;              /* tph_work*, tph_wait*, ... (NULL until created) */
    void *file;           /* io: the backend's file (scn_pool_file_create) */
    bool created, dead;   /* dead: closed, or released by its group */
    const void *os;       /* the object's id for the pool's counts (kept after death) */
    uint64_t calls;       /* callbacks run (counted on entry) */
    uint64_t swallowed;   /* native ticks the core's trampoline dropped after a disarm */
    uint32_t running, max_running;
    uint64_t arms;        /* successful submits / arms / starts */
    uint64_t io_cancels;
    uint64_t group_cancels;
} obj_state;

typedef struct hold_state {
    uint32_t matched;
    bool done;            /* a non-`every` hold parks once */
    uint64_t parks;
    rt_waitq q;
} hold_state;

typedef struct tail_rec {
    uint32_t thread;
    char who[24];         /* the recording thread's name (a copy: it may end) */
    uint64_t time;        /* rt_now(): virtual time since the run began */
    const char *target, *event;
    int pool;             /* index, or -1 */
    uint64_t a, b;
} tail_rec;

typedef struct run_state {
    const scn_scenario *s;
    rt_lock lock;                 /* guards everything below touched by >1 thread */
    tph_pool **pools;             /* [npools]; [0] = NULL (default) */
    uintptr_t *keys;              /* pool keys */
    obj_state *objs;
    hold_state *holds;
    uint64_t *label_time;
    uint64_t *counts;             /* [npoints * (npools + 1)]: slot npools = any */
    uint64_t *order_broken;       /* [norders]: times B came before enough A */
    rt_waitq await_q;             /* threads in an `await` op */
    uint32_t awaiting;
    bool free_running;            /* native runtime: the start gate below is used */
    bool gate_open;
    rt_waitq gate_q;              /* scenario threads waiting for the start gate */
    size_t npoints;
    uintptr_t healer_key;
    bool healer_key_known;
    /* per pool (first 64): position in the trace stream of the last
     * cancellation and the last repair start -- the true order, which the
     * stamps cannot give within one clock tick */
    uint64_t last_cancel_at[64], last_start_at[64];
    uint64_t tolerated_unhealed;  /* pools whose entry may outlive their objects */
    /* trace tail ring */
    tail_rec tail[TRACE_TAIL];
    uint64_t tail_n;
    /* failures */
    scn_text fail;
    int nfail;
    /* the trace as it was at the first failing check (a report showing the
     * end-of-run tail showed the runner's closes, not what the check saw) */
    scn_text fail_tail;
    uint64_t fail_rec, fail_time;
    bool fail_seen;
    bool full_trace;              /* --trace: every record, formatted */
    scn_text trace_all;
    scn_text misuse;
    scn_text faults;
    scn_reach reach;              /* which `require` lines this run reached */
} run_state;


/* The healer's pool key outlives the run where the process does (the real
 * pool): a later run must still tell the healer's registry entry from a
 * leaked one. */
static uintptr_t kept_healer_key;
static bool kept_healer_key_known;

/* ---- failures ------------------------------------------------------------ */

static void failf(run_state *run, const char *fmt, ...) SCN_PRINTF(2, 3);
static void format_tail_into(run_state *run, scn_text *t);
static void format_rec(run_state *run, scn_text *t, uint64_t n, const tail_rec *r);

#include <stdarg.h>
static void failf(run_state *run, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rt_lock_acquire(&run->lock);
    if (run->nfail == 0) {
        run->fail_seen = true;
        run->fail_rec = run->tail_n;
        run->fail_time = rt_now();
        format_tail_into(run, &run->fail_tail);
    }
    if (run->nfail < MAX_FAILURES) scn_text_printf(&run->fail, "%s\n", buf);
    else if (run->nfail == MAX_FAILURES) scn_text_printf(&run->fail, "(more failures not shown)\n");
    run->nfail++;
    rt_lock_release(&run->lock);
}


/* ---- trace hook: counts, the tail, holds ---------------------------------- */

static int pool_index_of_key(run_state *run, uintptr_t key) {
    size_t i;
    for (i = 0; i < run->s->npools; i++)
        if (run->keys[i] == key && (i == 0 || run->pools[i])) return (int)i;
    return -1;
}

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
 * a full table (more distinct names than slots) falls back to the lookup. */
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

static void hook(const tph_trace_record *rec, void *ctx) {
    run_state *run = (run_state *)ctx;
    int pt, pool = -1;
    size_t i;
    ev_info ei;
    scn_pool_announce_note(rec->target, rec->event, rec->a, rec->b);
    rt_lock_acquire(&run->lock);
    ei = event_info(rec->event);
    pt = ei.point;
    if (pt >= 0 && scn_trace_point_has_pool(pt)) pool = pool_index_of_key(run, (uintptr_t)rec->a);
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
        t->a = (pt >= 0 && scn_trace_point_has_pool(pt)) ? 0 : rec->a;
        t->b = rec->b;
        run->tail_n++;
        if (run->full_trace) format_rec(run, &run->trace_all, run->tail_n, t);
    }
    if (ei.special == EV_STALE_TICK) {
        /* The native pool ran the callback; the core kept it from the user
         * (core/src/timer.c).  Counted so the callback-count oracle can tell
         * the two apart. */
        for (i = 0; i < run->s->nobjs; i++)
            if (run->objs[i].os && (uintptr_t)run->objs[i].os == (uintptr_t)rec->a) run->objs[i].swallowed++;
    }
    if (pt < 0) {
        rt_lock_release(&run->lock);
        return;
    }
    if (pool >= 0 && pool < 64) {
        if (ei.special == EV_CANCELLED) run->last_cancel_at[pool] = run->tail_n;
        else if (ei.special == EV_REPAIR_STARTED) run->last_start_at[pool] = run->tail_n;
    }
    if (ei.special == EV_HEALER_STARTED) {
        run->healer_key = (uintptr_t)rec->a;
        run->healer_key_known = true;
    }
    run->counts[(size_t)pt * (run->s->npools + 1) + run->s->npools]++;
    if (pool >= 0) run->counts[(size_t)pt * (run->s->npools + 1) + (size_t)pool]++;
    if (run->awaiting) rt_wake_all(&run->await_q);
    for (i = 0; i < run->s->norders; i++) {
        const scn_order *o = &run->s->orders[i];
        size_t col = o->pool < 0 ? run->s->npools : (size_t)o->pool;
        if (o->then != pt || !hold_matches_pool(o->pool, pool)) continue;
        if (run->counts[(size_t)o->first * (run->s->npools + 1) + col] < run->counts[(size_t)pt * (run->s->npools + 1) + col])
            run->order_broken[i]++;
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
        if (h->release == SCN_HOLD_FOR) {
            uint64_t deadline = rt_now() + h->duration;
            while (rt_now() < deadline) rt_wait(&hs->q, &run->lock, deadline, "scenario hold (for)");
        } else {
            /* Released once the until-event has been recorded at all: if it
             * came first, the order the hold exists to force already holds. */
            size_t slot = (size_t)h->until_point * (run->s->npools + 1) +
                          (h->until_pool < 0 ? run->s->npools : (size_t)h->until_pool);
            while (run->counts[slot] < h->until_count) rt_wait(&hs->q, &run->lock, RT_FOREVER, "scenario hold (until)");
        }
    }
    rt_lock_release(&run->lock);
}

/* ---- objects ---------------------------------------------------------------- */

typedef struct exec_ctx {
    struct run_state *run;
    const char *who; /* thread name or "callback X" */
    int actor;       /* the thread's index (scn_reach_enter), -1 in a callback */
} exec_ctx;

static void exec_block(exec_ctx *, const scn_block *);

/* `replay --trace`: a line where a scenario callback starts and where it
 * returns, between the trace records (numbered "#-": not records, so the
 * numbering of the records stays the stream's).  What calls(X) and
 * overlap(X) count, made visible.  rt_now and rt_thread_name are no
 * scheduling points, so tracing leaves the schedule as it is. */
static void note_callback_locked(run_state *run, int obj, const char *what) {
    uint64_t now;
    const char *who;
    if (!run->full_trace) return;
    now = rt_now();
    who = rt_thread_name();
    scn_text_printf(&run->trace_all, "#- t=%llu.%04llums %s scenario/callback-%s obj=%s calls=%llu running=%u\n",
                    (unsigned long long)(now / SCN_MS), (unsigned long long)(now % SCN_MS), who ? who : "?",
                    what, run->s->objs[obj].name, (unsigned long long)run->objs[obj].calls, run->objs[obj].running);
}

static void run_callback(run_state *run, int obj) {
    const scn_obj *o = &run->s->objs[obj];
    scn_reach_enter(&run->reach, SCN_REQ_OBJ_BASE + obj);
    rt_lock_acquire(&run->lock);
    run->objs[obj].calls++;
    if (++run->objs[obj].running > run->objs[obj].max_running) run->objs[obj].max_running = run->objs[obj].running;
    note_callback_locked(run, obj, "start");
    rt_lock_release(&run->lock);
    if (o->callback >= 0) {
        char who[SCN_NAME_MAX + 16];
        exec_ctx c;
        snprintf(who, sizeof who, "callback %s", o->name);
        c.run = run;
        c.who = who;
        c.actor = -1;
        exec_block(&c, &run->s->callbacks[o->callback].body);
    }
    rt_lock_acquire(&run->lock);
    run->objs[obj].running--;
    note_callback_locked(run, obj, "return");
    rt_lock_release(&run->lock);
    scn_reach_leave(&run->reach, SCN_REQ_OBJ_BASE + obj);
}

/* A callback's ctx is its object's state, which knows its run and its
 * index (no address reaches a report: the index names the object). */
#define ON_CALLBACK(ctx) run_callback(((obj_state *)(ctx))->run, ((obj_state *)(ctx))->index)
static void work_cb(tph_work *w, void *ctx) { (void)w; ON_CALLBACK(ctx); }
static void wait_cb(tph_wait *w, void *ctx, tph_wait_result r) { (void)w; (void)r; ON_CALLBACK(ctx); }
static void timer_cb(tph_timer *t, void *ctx) { (void)t; ON_CALLBACK(ctx); }
static void periodic_cb(tph_periodic *p, void *ctx) { (void)p; ON_CALLBACK(ctx); }
static void io_cb(tph_io *io, void *ctx, void *ov, uint32_t res, uintptr_t bytes) {
    (void)io; (void)ov; (void)res; (void)bytes;
    ON_CALLBACK(ctx);
}
static void group_cancel_cb(void *object_ctx, void *cleanup_ctx) {
    obj_state *st = (obj_state *)object_ctx;
    (void)cleanup_ctx;
    rt_lock_acquire(&st->run->lock);
    st->group_cancels++;
    rt_lock_release(&st->run->lock);
}

static void env_of(run_state *run, int obj, tph_env *env) {
    const scn_obj *o = &run->s->objs[obj];
    tph_env_init(env);
    if (o->pool != SCN_DEFAULT_POOL) tph_env_set_pool(env, run->pools[o->pool]);
    if (o->group >= 0) tph_env_set_group(env, (tph_group *)run->objs[o->group].h);
}

/* The native pool of scenario pool `pool` (NULL: the default pool), as the
 * pool backend's knobs and read-outs name it. */
static const void *pool_native(run_state *run, int pool) {
    return pool == SCN_DEFAULT_POOL ? NULL : (const void *)tph_pool_key(run->pools[pool]);
}

static const void *os_of(run_state *run, int obj) {
    const scn_obj *o = &run->s->objs[obj];
    void *h = run->objs[obj].h;
    if (!h) return NULL;
    switch (o->kind) {
    case SCN_OBJ_EVENT: return (const void *)tph_handle_native((tph_handle *)h);
    case SCN_OBJ_GROUP: return (const void *)tph_group_native((tph_group *)h);
    case SCN_OBJ_WORK: return (const void *)tph_work_native((tph_work *)h);
    case SCN_OBJ_WAIT: return (const void *)tph_wait_native((tph_wait *)h);
    case SCN_OBJ_TIMER: return (const void *)tph_timer_native((tph_timer *)h);
    case SCN_OBJ_PERIODIC: return (const void *)tph_periodic_native((tph_periodic *)h);
    case SCN_OBJ_IO: return (const void *)tph_io_native((tph_io *)h);
    default: return NULL;
    }
}

static tph_err create_obj(run_state *run, int obj) {
    const scn_obj *o = &run->s->objs[obj];
    obj_state *st = &run->objs[obj];
    void *ctx = &run->objs[obj];
    tph_env env;
    tph_err e = TPH_EINVAL;
    void *h = NULL;
    if (st->created) return TPH_EBUSY;
    env_of(run, obj, &env);
    switch (o->kind) {
    case SCN_OBJ_EVENT: e = tph_event_create((tph_handle **)&h, o->manual_reset, o->initially_set); break;
    case SCN_OBJ_WORK: e = tph_work_create((tph_work **)&h, work_cb, ctx, &env); break;
    case SCN_OBJ_WAIT:
        if (!run->objs[o->event].created || run->objs[o->event].dead) {
            failf(run, "line %d: wait %s: its event %s is not open", o->line, o->name, run->s->objs[o->event].name);
            return TPH_EINVAL;
        }
        e = tph_wait_create((tph_wait **)&h, (tph_handle *)run->objs[o->event].h, wait_cb, ctx, &env);
        break;
    case SCN_OBJ_TIMER: e = tph_timer_create((tph_timer **)&h, timer_cb, ctx, &env); break;
    case SCN_OBJ_PERIODIC:
        e = tph_periodic_create((tph_periodic **)&h, o->period / SCN_MS, periodic_cb, ctx, &env);
        break;
    case SCN_OBJ_IO:
        if (!st->file) st->file = scn_pool_file_create();
        e = st->file ? tph_io_create((tph_io **)&h, scn_pool_file_handle(st->file), io_cb, ctx, &env) : TPH_ENOMEM;
        break;
    case SCN_OBJ_GROUP:
        /* a group has no pool of its own: its members carry G's pool in their env */
        e = tph_group_create((tph_group **)&h, o->cancel_callback ? group_cancel_cb : NULL);
        break;
    default: break;
    }
    if (e == TPH_OK) {
        st->h = h;
        st->created = true;
        st->os = os_of(run, obj);
    }
    return e;
}

/* An operation on an object that is not open would hand the core a dead
 * pointer: that is a mistake in the scenario, reported, never performed. */
static bool live(const scn_op *op, exec_ctx *c) {
    run_state *run = c->run;
    const obj_state *st = &run->objs[op->obj];
    if (st->created && !st->dead) return true;
    failf(run, "line %d: %s: `%s %s` on an object that is %s", op->line, c->who, scn_op_name(op->kind),
          run->s->objs[op->obj].name, st->created ? "closed" : "not created");
    return false;
}

static void mark_group_released(run_state *run, int g) {
    size_t i;
    for (i = 0; i < run->s->nobjs; i++)
        if (run->s->objs[i].group == g && run->objs[i].created) run->objs[i].dead = true;
}

/* ---- expressions ----------------------------------------------------------- */

static uint64_t term_value(run_state *run, const scn_term *t, bool *ok) {
    tph_heal_entry_info info;
    switch (t->kind) {
    case SCN_TERM_NUMBER: return t->number;
    case SCN_TERM_FIELD: {
        bool exists = (t->pool == SCN_DEFAULT_POOL || run->pools[t->pool]) &&
                      tph_heal_entry_get(run->keys[t->pool], &info);
        if (!exists) memset(&info, 0, sizeof info);
        switch (t->field) {
        case SCN_FIELD_EXISTS: return exists;
        case SCN_FIELD_OBJECTS: return info.objects;
        case SCN_FIELD_LAST_CANCELLED: return info.last_cancelled;
        case SCN_FIELD_LAST_STARTED: return info.last_started;
        case SCN_FIELD_LAST_SUBMITTED: return info.last_submitted;
        case SCN_FIELD_OUTSTANDING: return info.outstanding;
        case SCN_FIELD_OVERDUE_EPISODES: return info.overdue_episodes;
        case SCN_FIELD_REPAIRS_RUN: return info.repairs_run;
        case SCN_FIELD_UNHEALED: return info.unhealed;
        default: *ok = false; return 0;
        }
    }
    case SCN_TERM_COUNT: {
        uint64_t v;
        rt_lock_acquire(&run->lock);
        v = run->counts[(size_t)t->event * (run->s->npools + 1) + (t->pool < 0 ? run->s->npools : (size_t)t->pool)];
        rt_lock_release(&run->lock);
        return v;
    }
    case SCN_TERM_CALLS: {
        uint64_t v;
        rt_lock_acquire(&run->lock);
        v = run->objs[t->obj].calls;
        rt_lock_release(&run->lock);
        return v;
    }
    case SCN_TERM_OVERLAP: {
        uint64_t v;
        rt_lock_acquire(&run->lock);
        v = run->objs[t->obj].max_running;
        rt_lock_release(&run->lock);
        return v;
    }
    case SCN_TERM_BLOCKED: return run->label_time[t->label];
    case SCN_TERM_SEVERED:
        return scn_pool_severed(pool_native(run, t->pool));
    case SCN_TERM_ENTRIES: return tph_heal_entry_count();
    case SCN_TERM_HEALER: return tph_heal_healer_running();
    case SCN_TERM_NOW: return rt_now();
    }
    *ok = false;
    return 0;
}

static bool eval(run_state *run, const scn_expr *e, uint64_t *l, uint64_t *r) {
    bool ok = true;
    *l = term_value(run, &e->lhs, &ok);
    *r = term_value(run, &e->rhs, &ok);
    switch (e->cmp) {
    case SCN_EQ: return *l == *r;
    case SCN_NE: return *l != *r;
    case SCN_LT: return *l < *r;
    case SCN_LE: return *l <= *r;
    case SCN_GT: return *l > *r;
    case SCN_GE: return *l >= *r;
    }
    return false;
}

static void check_expr(run_state *run, const scn_expr *e, const char *where) {
    uint64_t l, r;
    if (!eval(run, e, &l, &r))
        failf(run, "line %d: %s `%s` failed (left %llu, right %llu)", e->line, where, e->text,
              (unsigned long long)l, (unsigned long long)r);
}

/* ---- operations ---------------------------------------------------------------- */

static tph_err do_arm(run_state *run, const scn_op *op) {
    const scn_obj *o = &run->s->objs[op->obj];
    void *h = run->objs[op->obj].h;
    switch (o->kind) {
    case SCN_OBJ_WAIT:
        return tph_wait_arm((tph_wait *)h, op->forever ? TPH_WAIT_FOREVER : (uint32_t)(op->time / SCN_MS));
    case SCN_OBJ_TIMER:
        return tph_timer_set_after((tph_timer *)h, op->time / SCN_MS, (uint32_t)(op->window / SCN_MS));
    case SCN_OBJ_PERIODIC:
        if (!op->has_time && op->window == 0) return tph_periodic_start((tph_periodic *)h);
        if (op->window == 0)
            return tph_periodic_start_after((tph_periodic *)h, op->time / SCN_MS);
        return tph_periodic_start_with_window((tph_periodic *)h,
                                              op->has_time ? op->time / SCN_MS : o->period / SCN_MS,
                                              (uint32_t)(op->window / SCN_MS));
    case SCN_OBJ_IO: return tph_io_start((tph_io *)h);
    default: return TPH_EINVAL;
    }
}

static tph_err do_disarm(run_state *run, const scn_op *op) {
    void *h = run->objs[op->obj].h;
    switch (run->s->objs[op->obj].kind) {
    case SCN_OBJ_WAIT: return tph_wait_disarm((tph_wait *)h);
    case SCN_OBJ_TIMER: return tph_timer_disarm((tph_timer *)h);
    case SCN_OBJ_PERIODIC: return tph_periodic_stop((tph_periodic *)h);
    default: return TPH_EINVAL;
    }
}

static tph_err do_wait(run_state *run, const scn_op *op, bool stop) {
    void *h = run->objs[op->obj].h;
    switch (run->s->objs[op->obj].kind) {
    case SCN_OBJ_WORK: return stop ? tph_work_stop_and_drain((tph_work *)h) : tph_work_wait((tph_work *)h);
    case SCN_OBJ_WAIT: return stop ? tph_wait_stop_and_drain((tph_wait *)h) : tph_wait_wait((tph_wait *)h);
    case SCN_OBJ_TIMER: return stop ? tph_timer_stop_and_drain((tph_timer *)h) : tph_timer_wait((tph_timer *)h);
    case SCN_OBJ_PERIODIC:
        return stop ? tph_periodic_stop_and_drain((tph_periodic *)h) : tph_periodic_wait((tph_periodic *)h);
    default: return TPH_EINVAL;
    }
}

static tph_err do_close(run_state *run, int obj) {
    void *h = run->objs[obj].h;
    tph_err e;
    switch (run->s->objs[obj].kind) {
    case SCN_OBJ_EVENT: e = tph_handle_close((tph_handle *)h); break;
    case SCN_OBJ_WORK: e = tph_work_close((tph_work *)h); break;
    case SCN_OBJ_WAIT: e = tph_wait_close((tph_wait *)h); break;
    case SCN_OBJ_TIMER: e = tph_timer_close((tph_timer *)h); break;
    case SCN_OBJ_PERIODIC: e = tph_periodic_close((tph_periodic *)h); break;
    case SCN_OBJ_IO: e = tph_io_close((tph_io *)h); break;
    case SCN_OBJ_GROUP: e = tph_group_close((tph_group *)h); break;
    default: e = TPH_EINVAL; break;
    }
    if (e == TPH_OK) run->objs[obj].dead = true;
    return e;
}

static bool event_in_use(run_state *run, int ev) {
    size_t i;
    for (i = 0; i < run->s->nobjs; i++)
        if (run->s->objs[i].kind == SCN_OBJ_WAIT && run->s->objs[i].event == ev && run->objs[i].created && !run->objs[i].dead)
            return true;
    return false;
}

static int exec_op(exec_ctx *c, const scn_op *op) {
    run_state *run = c->run;
    void *h = NULL;
    tph_err e = TPH_OK;
    uint64_t t0 = rt_now();
    bool has_result = true;
    bool in_flight = c->actor >= 0 && scn_reach_op_in_flight(op->kind);
    if (scn_op_operand_kinds(op->kind) && op->kind != SCN_OP_CREATE) {
        if (!live(op, c)) return -1;
        h = run->objs[op->obj].h;
    }
    if (in_flight) scn_reach_enter(&run->reach, c->actor);
    switch (op->kind) {
    case SCN_OP_CREATE: e = create_obj(run, op->obj); break;
    case SCN_OP_SUBMIT: e = tph_work_submit((tph_work *)h); break;
    case SCN_OP_ARM: e = do_arm(run, op); break;
    case SCN_OP_SIGNAL: e = tph_event_set((tph_handle *)h); break;
    case SCN_OP_RESET: e = tph_event_reset((tph_handle *)h); break;
    case SCN_OP_DISARM: e = do_disarm(run, op); break;
    case SCN_OP_TRY_CANCEL: e = tph_wait_try_cancel_pending((tph_wait *)h); break;
    case SCN_OP_CANCEL_UNTRACKED: e = tph_wait_try_cancel_pending_no_heal_tracking((tph_wait *)h); break;
    case SCN_OP_CANCEL_PENDING:
        e = run->s->objs[op->obj].kind == SCN_OBJ_WORK ? tph_work_cancel_pending((tph_work *)h)
                                                    : tph_timer_cancel_pending((tph_timer *)h);
        break;
    case SCN_OP_WAIT: e = do_wait(run, op, false); break;
    case SCN_OP_STOP_AND_DRAIN: e = do_wait(run, op, true); break;
    case SCN_OP_CLOSE:
        if (run->s->objs[op->obj].kind == SCN_OBJ_EVENT && event_in_use(run, op->obj)) {
            /* tph_wait borrows its handle: closing it under an open wait
             * would hand the core a dead handle at the next arm. */
            failf(run, "line %d: %s: `close %s` while a wait on it is still open", op->line, c->who,
                  run->s->objs[op->obj].name);
            if (in_flight) scn_reach_leave(&run->reach, c->actor);
            return -1;
        }
        e = do_close(run, op->obj);
        break;
    case SCN_OP_RELEASE:
        if (op->release == SCN_RELEASE_DRAINING) e = tph_group_close_members_draining((tph_group *)h);
        else if (op->release == SCN_RELEASE_CANCELLING) e = tph_group_close_members_cancelling((tph_group *)h, NULL);
        else e = tph_group_close_members_cancelling_no_heal_tracking((tph_group *)h, NULL);
        if (e == TPH_OK) mark_group_released(run, op->obj);
        break;
    case SCN_OP_COMPLETE:
        e = scn_pool_io_complete(run->objs[op->obj].file, op->count) ? TPH_OK : TPH_EINVAL;
        break;
    case SCN_OP_IO_CANCEL:
        e = tph_io_cancel((tph_io *)h);
        if (e == TPH_OK) {
            rt_lock_acquire(&run->lock);
            run->objs[op->obj].io_cancels++;
            rt_lock_release(&run->lock);
        }
        break;
    case SCN_OP_RUN_DOWN: e = tph_io_run_down((tph_io *)h); break;
    case SCN_OP_TICK: tph_heal_tick(); has_result = false; break;
    case SCN_OP_RETIRE_IDLE: tph_heal_retire_idle(); has_result = false; break;
    case SCN_OP_RETIRE_WORKERS:
        scn_pool_retire_idle_workers(pool_native(run, op->obj));
        has_result = false;
        break;
    case SCN_OP_SLEEP: rt_sleep_until(rt_now() + op->time); has_result = false; break;
    case SCN_OP_YIELD: rt_yield(); has_result = false; break;
    case SCN_OP_REPEAT: {
        uint64_t i;
        for (i = 0; i < op->count; i++) {
            exec_block(c, op->body);
            if (run->nfail > MAX_FAILURES) break;
        }
        has_result = false;
        break;
    }
    case SCN_OP_ASSERT: check_expr(run, op->expr, "assert"); has_result = false; break;
    case SCN_OP_AWAIT: {
        size_t slot = (size_t)op->point * (run->s->npools + 1) + (op->pool < 0 ? run->s->npools : (size_t)op->pool);
        rt_lock_acquire(&run->lock);
        run->awaiting++;
        while (run->counts[slot] < op->count) rt_wait(&run->await_q, &run->lock, RT_FOREVER, "scenario await");
        run->awaiting--;
        rt_lock_release(&run->lock);
        has_result = false;
        break;
    }
    default: has_result = false; break;
    }
    if (in_flight) scn_reach_leave(&run->reach, c->actor);
    if (op->label >= 0 && rt_now() - t0 >= run->label_time[op->label]) run->label_time[op->label] = rt_now() - t0;
    if (has_result && e == TPH_OK && (op->kind == SCN_OP_SUBMIT || op->kind == SCN_OP_ARM)) {
        rt_lock_acquire(&run->lock);
        run->objs[op->obj].arms++;
        rt_lock_release(&run->lock);
    }
    if (has_result && op->expect != SCN_RESULT_ANY && (int)e != op->expect)
        failf(run, "line %d: %s: `%s%s%s` returned %s, expected %s", op->line, c->who, scn_op_name(op->kind),
              op->obj >= 0 ? " " : "", op->obj >= 0 ? run->s->objs[op->obj].name : "", scn_result_name((int)e),
              scn_result_name(op->expect));
    return 0;
}

static void exec_block(exec_ctx *c, const scn_block *b) {
    size_t i;
    for (i = 0; i < b->n; i++) exec_op(c, &b->ops[i]);
}

/* On OS threads the scenario's threads start together: each one's `sleep`s
 * count from its own start, and a late start skews them against the other
 * threads' (under Wine with 4-8 runs at once, one thread's `sleep 20ms` once
 * ended after another's `sleep 35ms`: 5 runs in 114 of a real-pool stress
 * pass).  Virtual time needs no gate: it does not move while any thread can
 * run. */
static void start_gate(run_state *run) {
    if (!run->free_running) return;
    rt_lock_acquire(&run->lock);
    while (!run->gate_open) rt_wait(&run->gate_q, &run->lock, RT_FOREVER, "scenario start gate");
    rt_lock_release(&run->lock);
}

static void open_start_gate(run_state *run) {
    if (!run->free_running) return;
    rt_lock_acquire(&run->lock);
    run->gate_open = true;
    rt_wake_all(&run->gate_q);
    rt_lock_release(&run->lock);
}

/* arg: the thread's exec_ctx, on scenario_main's stack (it joins them all). */
static void thread_main(void *arg) {
    exec_ctx *c = (exec_ctx *)arg;
    start_gate(c->run);
    exec_block(c, &c->run->s->threads[c->actor].body);
}

/* ---- setup, oracles, teardown ---------------------------------------------- */

static bool setup(run_state *run) {
    const scn_scenario *s = run->s;
    size_t i;
    for (i = 0; i < s->npools; i++) {
        const scn_pool *p = &s->pools[i];
        if (p->is_default) {
            run->keys[i] = 0;
            if (p->stall != SCN_STALL_UNSET) scn_pool_set_stall(NULL, p);
            if (p->start_delay) scn_pool_set_start_delay(NULL, p->start_delay);
            continue;
        }
        if (tph_pool_create(&run->pools[i]) != TPH_OK) {
            failf(run, "line %d: pool %s could not be created", p->line, p->name);
            return false;
        }
        run->keys[i] = tph_pool_key(run->pools[i]);
        if (p->has_min || p->has_max) {
            uint32_t mx = p->has_max ? p->max : 512, mn = p->has_min ? p->min : 0;
            if (tph_pool_set_thread_limits(run->pools[i], mn, mx) != TPH_OK)
                failf(run, "line %d: pool %s: thread limits %u..%u refused", p->line, p->name, mn, mx);
        }
        if (p->stall != SCN_STALL_UNSET) scn_pool_set_stall(pool_native(run, (int)i), p);
        if (p->start_delay) scn_pool_set_start_delay(pool_native(run, (int)i), p->start_delay);
    }
    for (i = 0; i < s->nfaults; i++) {
        const scn_fault *f = &s->faults[i];
        scn_pool_arm_fault(f, f->pool >= 0,
                           f->pool >= 0 ? pool_native(run, f->pool) : NULL);
    }
    for (i = 0; i < s->nobjs; i++) {
        tph_err e;
        if (s->objs[i].created_by_thread) continue;
        e = create_obj(run, (int)i);
        if (e != TPH_OK) {
            failf(run, "line %d: %s %s could not be created (%s)", s->objs[i].line,
                  scn_obj_kind_name(s->objs[i].kind), s->objs[i].name, scn_result_name((int)e));
            return false;
        }
    }
    return true;
}

static void settle(uint64_t d) { rt_sleep_until(rt_now() + d); }

/* The one unhealed state the library leaves behind by design.  When the healer
 * cannot start, the cancelling thread submits the repair itself; if that
 * repair starts in the cancellation's own 15.625 ms clock tick the stamps are
 * equal, which reads as unhealed (a dispatch in the same tick might have come
 * first), and with no healer nothing looks again until the next cancellation
 * retries the start (docs/architecture.md, "same-tick inline repair").  The
 * pool *was* repaired: the trace shows the repair starting after the
 * cancellation.  Anything else unhealed is a failure. */
static bool same_tick_inline_repair(run_state *run, int p, const tph_heal_entry_info *e) {
    return p >= 0 && p < 64 && !tph_heal_healer_running() && e->last_started == e->last_cancelled &&
           e->outstanding == 0 && run->last_start_at[p] > run->last_cancel_at[p];
}

/* ---- what `require` asks (scn_reach.h) ---------------------------------------- */

static uint64_t probe_trace_count(void *ctx, int point, int pool) {
    const run_state *run = (const run_state *)ctx;
    return run->counts[(size_t)point * (run->s->npools + 1) + (pool < 0 ? run->s->npools : (size_t)pool)];
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
    return scn_pool_stalls(pool_native(run, pool));
}

static bool probe_expr_holds(void *ctx, const scn_expr *e) {
    run_state *run = (run_state *)ctx;
    uint64_t l, r;
    return eval(run, e, &l, &r);
}

static scn_reach_probe reach_probe(run_state *run) {
    scn_reach_probe p;
    p.trace_count = probe_trace_count;
    p.hold_parks = probe_hold_parks;
    p.pool_stalls = probe_pool_stalls;
    p.expr_holds = probe_expr_holds;
    p.ctx = run;
    return p;
}

static void oracles_at_quiescence(run_state *run) {
    const scn_scenario *s = run->s;
    tph_heal_entry_info info[64];
    size_t n, i;
    for (i = 0; i < s->nexpects; i++) check_expr(run, &s->expects[i], "expect");
    {
        scn_reach_probe probe = reach_probe(run);
        scn_reach_at_quiescence(&run->reach, &probe);
    }
    n = tph_heal_entries(info, 64);
    if (n > 64) n = 64;
    for (i = 0; i < n; i++) {
        int p = pool_index_of_key(run, info[i].key);
        const char *name = p >= 0 ? s->pools[p].name : (run->healer_key_known && info[i].key == run->healer_key)
                                                         ? "(healer pool)" : "(unnamed pool)";
        if (info[i].unhealed && same_tick_inline_repair(run, p, &info[i])) {
            run->tolerated_unhealed |= 1ull << p;
            continue;
        }
        if (info[i].unhealed && !(p >= 0 && (s->allow_unhealed >> p) & 1))
            failf(run, "oracle: pool %s was cancelled and no repair started after its last cancellation", name);
        if (info[i].outstanding != 0 && s->outcome == SCN_OUTCOME_NORMAL)
            failf(run, "oracle: pool %s has %u repairs outstanding at quiescence", name, info[i].outstanding);
    }
    if (!s->allow_severed && scn_pool_any_severed_with_queued())
        failf(run, "oracle: a pool is severed with callbacks queued at quiescence");
}

/* Closes what the scenario left open, in an order that is always legal:
 * group members through their group, then callback objects, events, groups. */
static void close_leftovers(run_state *run) {
    const scn_scenario *s = run->s;
    size_t i;
    int pass;
    for (i = 0; i < s->nobjs; i++) {
        const scn_obj *o = &s->objs[i];
        bool members = false;
        size_t j;
        if (o->kind != SCN_OBJ_GROUP || !run->objs[i].created || run->objs[i].dead) continue;
        for (j = 0; j < s->nobjs; j++)
            if (s->objs[j].group == (int)i && run->objs[j].created && !run->objs[j].dead) members = true;
        if (members && tph_group_close_members_draining((tph_group *)run->objs[i].h) == TPH_OK)
            mark_group_released(run, (int)i);
    }
    for (pass = 0; pass < 3; pass++) {
        for (i = s->nobjs; i-- > 0;) {
            const scn_obj *o = &s->objs[i];
            obj_state *st = &run->objs[i];
            bool mine = pass == 0 ? (o->kind != SCN_OBJ_EVENT && o->kind != SCN_OBJ_GROUP)
                                  : pass == 1 ? o->kind == SCN_OBJ_EVENT : o->kind == SCN_OBJ_GROUP;
            if (!mine || !st->created || st->dead) continue;
            switch (o->kind) {
            case SCN_OBJ_WAIT: tph_wait_stop_and_drain((tph_wait *)st->h); break;
            case SCN_OBJ_TIMER: tph_timer_stop_and_drain((tph_timer *)st->h); break;
            case SCN_OBJ_PERIODIC: tph_periodic_stop_and_drain((tph_periodic *)st->h); break;
            case SCN_OBJ_WORK: tph_work_wait((tph_work *)st->h); break;
            case SCN_OBJ_IO: {
                uint64_t k = tph_io_outstanding((tph_io *)st->h);
                while (k-- > 0)
                    if (tph_io_cancel((tph_io *)st->h) == TPH_OK) st->io_cancels++;
                tph_io_run_down((tph_io *)st->h);
                break;
            }
            default: break;
            }
            if (do_close(run, (int)i) != TPH_OK)
                failf(run, "teardown: closing %s %s failed", scn_obj_kind_name(o->kind), o->name);
        }
    }
    for (i = 1; i < s->npools; i++)
        if (run->pools[i]) tph_pool_close(run->pools[i]);
}

static void oracles_after_teardown(run_state *run) {
    const scn_scenario *s = run->s;
    tph_heal_entry_info info[64];
    size_t n, i;
    for (i = 0; i < s->norders; i++)
        if (run->order_broken[i])
            failf(run, "line %d: expect `%s before %s`: %s was recorded %llu time(s) without a %s before it", s->orders[i].line,
                  scn_trace_point_name(s->orders[i].first), scn_trace_point_name(s->orders[i].then),
                  scn_trace_point_name(s->orders[i].then), (unsigned long long)run->order_broken[i],
                  scn_trace_point_name(s->orders[i].first));
    n = tph_heal_entries(info, 64);
    if (n > 64) n = 64;
    for (i = 0; i < n; i++) {
        int p;
        if (run->healer_key_known && info[i].key == run->healer_key) continue;
        p = pool_index_of_key(run, info[i].key);
        if (p >= 0 && (((s->allow_unhealed | run->tolerated_unhealed) >> p) & 1)) continue;
        failf(run, "oracle: registry entry for pool %s remains after every object was closed "
              "(objects %llu, outstanding %u, unhealed %d)",
              p >= 0 ? s->pools[p].name : "(unnamed)", (unsigned long long)info[i].objects,
              info[i].outstanding, (int)info[i].unhealed);
    }
    for (i = 0; i < s->nobjs; i++) {
        const scn_obj *o = &s->objs[i];
        const obj_state *st = &run->objs[i];
        scn_pool_object_counts os;
        bool counted;
        if (!st->created || o->kind == SCN_OBJ_EVENT || o->kind == SCN_OBJ_GROUP) continue;
        /* The model counts what it ran and dropped; the real pool does not
         * say, and there the work oracle falls back to its bound. */
        counted = scn_pool_object_counts_get(st->os, &os);
        if (counted && os.callbacks_run != st->calls + st->swallowed)
            failf(run, "oracle: %s %s: the pool ran %llu callbacks, the scenario saw %llu (+%llu swallowed after a disarm)",
                  scn_obj_kind_name(o->kind), o->name, (unsigned long long)os.callbacks_run,
                  (unsigned long long)st->calls, (unsigned long long)st->swallowed);
        switch (o->kind) {
        case SCN_OBJ_WORK:
            if (counted && st->calls + os.cancelled != st->arms)
                failf(run, "oracle: work %s: %llu submits, %llu callbacks, %llu dropped", o->name,
                      (unsigned long long)st->arms, (unsigned long long)st->calls,
                      (unsigned long long)os.cancelled);
            else if (!counted && st->calls > st->arms)
                failf(run, "oracle: work %s: %llu callbacks for %llu submits", o->name,
                      (unsigned long long)st->calls, (unsigned long long)st->arms);
            break;
        case SCN_OBJ_WAIT:
        case SCN_OBJ_TIMER:
            if (st->calls > st->arms)
                failf(run, "oracle: %s %s: %llu callbacks for %llu arms", scn_obj_kind_name(o->kind), o->name,
                      (unsigned long long)st->calls, (unsigned long long)st->arms);
            break;
        case SCN_OBJ_IO:
            if (st->calls + st->io_cancels != st->arms)
                failf(run, "oracle: io %s: %llu starts, %llu callbacks, %llu cancels", o->name,
                      (unsigned long long)st->arms, (unsigned long long)st->calls,
                      (unsigned long long)st->io_cancels);
            break;
        default: break;
        }
    }
}

/* Which of the scenario's faults fired, and how often: part of the report. */
static void collect_faults(run_state *run) {
    size_t i;
    for (i = 0; i < run->s->nfaults; i++) {
        const scn_fault *f = &run->s->faults[i];
        scn_text_printf(&run->faults, "fault %s (line %d): fired %llu time(s)\n", scn_fault_name(f->kind), f->line,
                        (unsigned long long)scn_pool_fault_fired(f->kind));
    }
}

static void collect_misuse(run_state *run) { scn_pool_misuse_text(&run->misuse, 20); }

/* arg: the run.  The simulated process's main thread. */
static void scenario_main(void *arg) {
    run_state *run = (run_state *)arg;
    const scn_scenario *s = run->s;
    rt_thread *th[64];
    exec_ctx tc[64]; /* the threads' contexts: they are joined before this returns */
    size_t i;
    uint64_t settle_for = s->settle > SCN_SETTLE_DEFAULT ? s->settle : SCN_SETTLE_DEFAULT;
    scn_pool_process_begin();
    /* Armed for every target, whatever TPHEAL_TRACE says: an armed filter
     * narrows what the hook sees, and a hold or a count on a point the
     * filter dropped would silently never match. */
    tph_trace_arm("*");
    tph_trace_set_hook(hook, run);
    scn_pool_announce_check(true);
    if (setup(run)) {
        for (i = 0; i < s->nthreads && i < 64; i++) {
            tc[i].run = run;
            tc[i].who = s->threads[i].name;
            tc[i].actor = (int)i;
            th[i] = rt_spawn(s->threads[i].name, thread_main, &tc[i], false);
        }
        open_start_gate(run);
        for (i = 0; i < s->nthreads && i < 64; i++) rt_join(th[i]);
        settle(settle_for);
        oracles_at_quiescence(run);
        close_leftovers(run);
        settle(SCN_SETTLE_DEFAULT);
        oracles_after_teardown(run);
    }
    scn_pool_announce_check(false);
    collect_misuse(run);
    collect_faults(run);
    tph_trace_set_hook(NULL, NULL);
}

/* ---- the trace tail as text ---------------------------------------------------- */

/* One record as the reports print it: its number in the run's trace, the
 * virtual time in ms, the thread's name, the event, the scenario's name for
 * the pool or object it concerns, and b -- in ms where it is a time. */
static int b_unit(const char *ev) { return scn_trace_point_b_unit(scn_trace_point_find(ev)); }

static void format_rec(run_state *run, scn_text *t, uint64_t n, const tail_rec *r) {
    size_t i;
    const char *obj = NULL;
    scn_text_printf(t, "#%llu t=%llu.%04llums %s %s/%s", (unsigned long long)n,
                    (unsigned long long)(r->time / SCN_MS), (unsigned long long)(r->time % SCN_MS),
                    r->who[0] ? r->who : "?", r->target, r->event);
    for (i = 0; r->pool < 0 && r->a && i < run->s->nobjs; i++)
        if ((uintptr_t)run->objs[i].os == r->a) obj = run->s->objs[i].name;
    if (r->pool >= 0) scn_text_printf(t, " pool=%s", run->s->pools[r->pool].name);
    else if (obj) scn_text_printf(t, " obj=%s", obj);
    else if (r->a) scn_text_printf(t, " a=%llu", (unsigned long long)r->a);
    int unit = b_unit(r->event);
    if (unit == SCN_B_DUE && r->b) {
        /* a FILETIME due time: negative = relative */
        int64_t d = (int64_t)r->b;
        uint64_t m = d < 0 ? (uint64_t)0 - r->b : r->b;
        scn_text_printf(t, " due=%s%llu.%04llums%s", d < 0 ? "+" : "", (unsigned long long)(m / SCN_MS),
                        (unsigned long long)(m % SCN_MS), d < 0 ? " (relative)" : " (absolute)");
    } else if (unit == SCN_B_TIME) {
        scn_text_printf(t, " b=%llu.%04llums", (unsigned long long)(r->b / SCN_MS),
                        (unsigned long long)(r->b % SCN_MS));
    } else if (r->b) {
        scn_text_printf(t, " b=%llu", (unsigned long long)r->b);
    }
    scn_text_printf(t, "\n");
}

static void format_tail_into(run_state *run, scn_text *t) {
    uint64_t first = run->tail_n > TRACE_TAIL ? run->tail_n - TRACE_TAIL : 0, i;
    for (i = first; i < run->tail_n; i++) format_rec(run, t, i + 1, &run->tail[i % TRACE_TAIL]);
}

static char *format_tail(run_state *run) {
    scn_text t = {0};
    format_tail_into(run, &t);
    return scn_text_take(&t);
}

/* ---- the driver ------------------------------------------------------------------ */

static bool alloc_state(run_state *run, const scn_scenario *s) {
    size_t i;
    memset(run, 0, sizeof *run);
    /* Holds, awaits and the start gate order the scenario's threads as its
     * script says; that is scaffolding, not the core's synchronisation, so
     * the race build must not see it (rt.h). */
    rt_lock_harness_only(&run->lock);
    run->s = s;
    run->npoints = scn_trace_point_count();
    run->pools = calloc(s->npools, sizeof *run->pools);
    run->keys = calloc(s->npools, sizeof *run->keys);
    run->objs = calloc(s->nobjs ? s->nobjs : 1, sizeof *run->objs);
    for (i = 0; run->objs && i < s->nobjs; i++) {
        run->objs[i].run = run;
        run->objs[i].index = (int)i;
    }
    run->holds = calloc(s->nholds ? s->nholds : 1, sizeof *run->holds);
    run->label_time = calloc(s->nlabels ? s->nlabels : 1, sizeof *run->label_time);
    run->counts = calloc(run->npoints * (s->npools + 1), sizeof *run->counts);
    run->order_broken = calloc(s->norders ? s->norders : 1, sizeof *run->order_broken);
    run->healer_key = kept_healer_key;
    run->healer_key_known = kept_healer_key_known;
    scn_reach_begin(&run->reach, s);
    return run->order_broken && run->pools && run->keys && run->objs && run->holds && run->label_time && run->counts;
}

/* Frees what alloc_state made, and the run itself. */
static void free_state(run_state *run) {
    size_t i;
    for (i = 0; run->objs && i < run->s->nobjs; i++) scn_pool_file_close(run->objs[i].file);
    free(run->pools);
    free(run->keys);
    free(run->objs);
    free(run->holds);
    free(run->label_time);
    free(run->counts);
    free(run->order_broken);
    scn_text_free(&run->fail);
    scn_text_free(&run->fail_tail);
    scn_text_free(&run->trace_all);
    scn_text_free(&run->misuse);
    scn_text_free(&run->faults);
    free(run);
}

const char *scn_run_unsupported(const scn_scenario *s, bool native, char *buf, size_t n) {
    if (scn_pool_unsupported(s, buf, n)) return buf;
    /* `expect unhealed` holds when the repair starts in its cancellation's
     * 15.625 ms clock tick: certain in virtual time, a coincidence of real
     * time in free-running mode on any pool (healer-never-starts-same-tick
     * failed 1 replay in 6 of one seed under ASan there: issue 11).  Such a
     * scenario runs controlled only. */
    if (native) return scn_features_first(s, SCN_FEATURE_BIT(SCN_FEATURE_SAME_TICK), buf, n);
    return NULL;
}

int scn_run(const scn_scenario *s, const scn_run_opts *o, scn_run_out *out) {
    scn_text f = {0};
    int status;
    bool ended = false, deadlocked = false;
    char reason[256] = "";
    memset(out, 0, sizeof *out);
    if (!o->native && !scn_pool_is_model()) {
        out->bad_options = true;
        out->failures = scn_strdup("controlled mode schedules the model's threads; the real pool's are the OS's: "
                                   "use --mode native here, or tpheal-harness for controlled runs");
        return -1;
    }
    if (scn_run_unsupported(s, o->native, reason, sizeof reason)) {
        out->declined = scn_strdup(reason);
        return 0;
    }
    /* The run's whole state: handed to the trace hook, the callbacks (through
     * their objects' state), the threads and the reach probes; never global. */
    run_state *run = malloc(sizeof *run);
    if (!run) {
        out->failures = scn_strdup("out of memory");
        return -1;
    }
    if (!alloc_state(run, s)) {
        free_state(run);
        out->failures = scn_strdup("out of memory");
        return -1;
    }
    run->free_running = o->native;
    run->full_trace = o->full_trace;
    if (o->native) {
        rt_native_options no;
        rt_native_result nr;
        rt_native_options_default(&no);
        no.seed = o->seed;
        /* Free-running mode shakes the OS schedule with seeded noise at every
         * rt_ call, rr-chaos / BUGGIFY style (docs/stress.md): 2% yields, 1%
         * spins, 0.2% sleeps of up to 200 us. */
        no.yield_ppm = 20000;
        no.spin_ppm = 10000;
        no.sleep_ppm = 2000;
        rt_native_run(scenario_main, run, &no);
        rt_native_last_result(&nr);
        ended = nr.ended;
        snprintf(reason, sizeof reason, "%s", nr.reason);
        status = -1;
    } else {
        sched_options so;
        sched_result sr;
        sched_options_default(&so);
        so.seed = o->seed;
        so.strategy = o->strategy;
        so.dfs = o->dfs;
        if (o->depth) so.pct_depth = o->depth;
        so.pct_steps = o->pct_steps;
        so.schedule = o->schedule;
        if (sched_run(&so, scenario_main, run, &sr) != 0) {
            out->bad_options = true;
            out->failures = scn_strdup(sr.reason);
            sched_result_free(&sr);
            free_state(run);
            return -1;
        }
        status = (int)sr.status;
        ended = sr.status == SCHED_PROCESS_ENDED;
        deadlocked = sr.status == SCHED_DEADLOCK;
        snprintf(reason, sizeof reason, "%s", sr.reason);
        out->schedule = sr.schedule ? scn_strdup(sr.schedule) : NULL;
        out->blocked_report = sr.blocked_report ? scn_strdup(sr.blocked_report) : NULL;
        out->fairness = sr.fairness;
        out->steps = sr.steps;
        out->choice_points = sr.choice_points;
        out->interleaving_hash = sr.interleaving_hash;
        out->fibers_peak = sr.fibers_peak;
        /* The race build's ThreadSanitizer report: a failure like any other. */
        if (sr.race) {
            scn_text_printf(&f, "data race: %s", sr.race);
            out->race = scn_strdup(sr.race);
        }
        if (sr.status != SCHED_OK && sr.status != SCHED_PROCESS_ENDED && sr.status != SCHED_DEADLOCK)
            scn_text_printf(&f, "run: %s: %s\n", sched_status_name(sr.status), sr.reason);
        sched_result_free(&sr);
    }
    out->status = status;
    /* the expected outcome */
    switch (s->outcome) {
    case SCN_OUTCOME_FAIL_FAST:
        if (!ended) scn_text_printf(&f, "expected fail-fast: the run %s\n", deadlocked ? "deadlocked" : "ended normally");
        else if (s->outcome_text[0] && !strstr(reason, s->outcome_text))
            scn_text_printf(&f, "expected a fail-fast mentioning '%s', got: %s\n", s->outcome_text, reason);
        break;
    case SCN_OUTCOME_DEADLOCK:
        if (!deadlocked) scn_text_printf(&f, "expected a deadlock: the run %s\n", ended ? "was ended" : "finished");
        break;
    case SCN_OUTCOME_MISUSE:
        if (!run->misuse.s) scn_text_printf(&f, "expected a misuse report: the sim reported none\n");
        else if (s->outcome_text[0] && !strstr(run->misuse.s, s->outcome_text))
            scn_text_printf(&f, "expected a misuse report mentioning '%s'\n", s->outcome_text);
        break;
    default:
        if (ended) scn_text_printf(&f, "the process was ended: %s\n", reason);
        if (deadlocked)
            scn_text_printf(&f, "%s\nblocked threads:\n%s", reason,
                            out->blocked_report ? out->blocked_report : "(none reported)\n");
        break;
    }
    if (s->outcome != SCN_OUTCOME_MISUSE && run->misuse.s) scn_text_printf(&f, "the sim reported misuse:\n%s", run->misuse.s);
    /* oracle failures only count for runs that reached their end */
    if (run->fail.s && !ended && !deadlocked) scn_text_printf(&f, "%s", run->fail.s);
    if (run->fail.s && (ended || deadlocked) && s->outcome == SCN_OUTCOME_NORMAL) scn_text_printf(&f, "%s", run->fail.s);
    out->misuse = scn_text_take(&run->misuse);
    out->faults = scn_text_take(&run->faults);
    out->failures = scn_text_take(&f);
    out->passed = out->failures == NULL;
    if (!out->passed || !o->tail_on_failure) {
        out->failed_check = run->fail_seen;
        out->fail_record = run->fail_rec;
        out->fail_time = run->fail_time;
        out->trace_tail = run->fail_seen ? scn_text_take(&run->fail_tail) : format_tail(run);
    }
    if (o->full_trace) out->trace_full = scn_text_take(&run->trace_all);
    {
        scn_reach_probe probe = reach_probe(run);
        out->reached = scn_reach_at_end(&run->reach, &probe);
    }
    scn_pool_process_end();
    if (!scn_pool_process_per_run() && run->healer_key_known) {
        kept_healer_key = run->healer_key;
        kept_healer_key_known = true;
    }
    free_state(run);
    return 0;
}

void scn_run_out_free(scn_run_out *o) {
    free(o->failures);
    free(o->schedule);
    free(o->blocked_report);
    free(o->race);
    free(o->trace_tail);
    free(o->trace_full);
    free(o->misuse);
    free(o->faults);
    free(o->declined);
    memset(o, 0, sizeof *o);
}
