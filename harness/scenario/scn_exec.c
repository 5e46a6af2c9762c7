/* The op interpreter (scn_run_internal.h): a scenario thread's body, a
 * callback's body, one op after another, each calling the core as the
 * language says (docs/scenarios.md).  What differs by object kind is the
 * kind's row (scn_kinds.c); the order of the calls the core makes is the
 * scenario's, so the model's announcement check (sim_announce.c) sees
 * exactly the calls the script names. */
#include <stdio.h>
#include <stdint.h>

#include "scn_atomic.h"
#include "scn_run_internal.h"

static void exec_block(exec_ctx *, const scn_block *);

/* ---- the stop oracle ------------------------------------------------------------- */

/* A stop_and_drain promises that nothing of the object runs once it has
 * returned, until it is armed again: the stop refuses arms and disarms, the
 * drain waits for what is queued or running.  So a callback that starts
 * while the word's QUIET bit is set is a failure of the core.  Any arm
 * begun clears it, before the core is called: an arm racing the stop may
 * land after the stop's end and legitimately run, and so may one still in
 * flight when the stop returns (the stop then leaves the bit clear).  The
 * stop sets STOPPING when it begins and any arm begun clears it, so the stop
 * sets QUIET only when no arm began while it ran: an arm made whole between
 * the core's stop ending and the runner noting the return (generate seed 1,
 * program 1588: the core's stop had let go, another thread's arm went
 * through, and only then did the runner mark the stop) may run.
 * Only kinds whose stop refuses arms (scn_kind_ops.stop_refuses_arms): a
 * work object's stop is its drain.
 * Kept in the runner's atomics, not under the run's lock: a lock is a
 * scheduling point, and the oracle must change no schedule.  Announced to
 * the bounded search (rt_access), which must order the word's accesses: a
 * callback's read against the stop that set the bit is the race the oracle
 * exists to judge. */
#define STOP_QUIET 1u
#define STOP_STOPPING 2u
#define STOP_ARM 4u

static bool is_arm(scn_op_kind kind) { return kind == SCN_OP_SUBMIT || kind == SCN_OP_ARM; }

/* An arm from the object's own callback keeps STOPPING: the stop drains
 * that callback, so its re-arm is made before the core's stop lets go, and
 * the stop must refuse or cancel it -- only another thread's arm can land
 * after the stop let go and legitimately run.  (Clearing STOPPING for it
 * too let a stop that disarms before it refuses arms pass: the re-arm taken
 * in the gap survived the stop and its tick ran after the stop returned.) */
static void stop_oracle_arm(run_state *run, int obj, bool begin, bool own_callback) {
    volatile uint32_t *w = &run->objs[obj].stop_word;
    uint32_t old = SCN_ATOMIC_LOAD(w);
    uint32_t keep = own_callback ? ~STOP_QUIET : ~(STOP_QUIET | STOP_STOPPING);
    rt_access(w, RT_WRITE);
    if (begin) {
        while (!scn_atomic_cas(w, &old, (old + STOP_ARM) & keep)) {
        }
    } else {
        SCN_ATOMIC_ADD(w, (uint32_t)0 - STOP_ARM);
    }
}

static void stop_oracle_stop_begin(run_state *run, int obj) {
    volatile uint32_t *w = &run->objs[obj].stop_word;
    uint32_t old;
    if (!scn_kind(run->s->objs[obj].kind)->stop_refuses_arms) return;
    old = SCN_ATOMIC_LOAD(w);
    rt_access(w, RT_WRITE);
    while (!scn_atomic_cas(w, &old, old | STOP_STOPPING)) {
    }
}

static void stop_oracle_stopped(run_state *run, int obj) {
    volatile uint32_t *w = &run->objs[obj].stop_word;
    uint32_t old = SCN_ATOMIC_LOAD(w);
    if (!scn_kind(run->s->objs[obj].kind)->stop_refuses_arms) return;
    rt_access(w, RT_WRITE);
    while (old < STOP_ARM && (old & STOP_STOPPING) && !scn_atomic_cas(w, &old, old | STOP_QUIET)) {
    }
}

/* ---- callbacks and objects ---------------------------------------------------- */

/* Takes the run's lock for object `obj`'s own bookkeeping (its calls,
 * overlap, arms), announced as that object: the bounded search orders two
 * such sections only when they are the same object's
 * (rt_lock_acquire_diagnostic).  Released with rt_lock_release. */
static void lock_object_bookkeeping(run_state *run, int obj) {
    rt_lock_acquire_diagnostic(&run->lock);
    rt_access(&run->objs[obj], RT_WRITE);
}

/* Every scenario callback comes here (the kinds' trampolines, scn_kinds.c):
 * counted, its overlap measured, its body run as "callback X". */
void scn_exec_callback(run_state *run, int obj) {
    const scn_obj *o = &run->s->objs[obj];
    bool after_stop;
    scn_reach_enter(&run->reach, SCN_REQ_OBJ_BASE + obj);
    lock_object_bookkeeping(run, obj);
    run->objs[obj].calls++;
    if (++run->objs[obj].running > run->objs[obj].max_running) run->objs[obj].max_running = run->objs[obj].running;
    rt_access(&run->objs[obj].stop_word, RT_READ);
    after_stop = (SCN_ATOMIC_LOAD(&run->objs[obj].stop_word) & STOP_QUIET) != 0;
    scn_tracefmt_callback_locked(run, obj, "start");
    scn_tl_callback(run, obj, true);
    rt_lock_release(&run->lock);
    if (after_stop)
        scn_run_fail(run, SCN_FAILURE_ORACLE_STOP_DRAIN, 0, obj,
                     "oracle: %s %s: a callback ran after stop_and_drain returned, with no arm since",
                     scn_obj_kind_name(o->kind), o->name);
    if (o->callback >= 0) {
        char who[SCN_NAME_MAX + 16];
        exec_ctx c;
        snprintf(who, sizeof who, "callback %s", o->name);
        c.run = run;
        c.who = who;
        c.actor = -1;
        c.cb_obj = obj;
        exec_block(&c, &run->s->callbacks[o->callback].body);
    }
    lock_object_bookkeeping(run, obj);
    run->objs[obj].running--;
    scn_tracefmt_callback_locked(run, obj, "return");
    scn_tl_callback(run, obj, false);
    rt_lock_release(&run->lock);
    scn_reach_leave(&run->reach, SCN_REQ_OBJ_BASE + obj);
}

/* The environment an object is created in: its pool, its group. */
static void env_of(run_state *run, int obj, tph_env *env) {
    const scn_obj *o = &run->s->objs[obj];
    tph_env_init(env);
    if (o->pool != SCN_DEFAULT_POOL) tph_env_set_pool(env, run->pools[o->pool]);
    if (o->group >= 0) tph_env_set_group(env, (tph_group *)run->objs[o->group].h);
}

/* The object's native id, which the pool's counts and the trace name it by. */
static const void *os_of(run_state *run, int obj) {
    const scn_kind_ops *k = scn_kind(run->s->objs[obj].kind);
    void *h = run->objs[obj].h;
    if (!h) return NULL;
    return k->native ? k->native(h) : NULL;
}

tph_err scn_exec_create(run_state *run, int obj) {
    const scn_kind_ops *k = scn_kind(run->s->objs[obj].kind);
    obj_state *st = &run->objs[obj];
    void *ctx = &run->objs[obj];
    tph_env env;
    tph_err e;
    void *h = NULL;
    if (st->created) return TPH_EBUSY;
    env_of(run, obj, &env);
    e = k->create(run, obj, ctx, &env, &h);
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
    scn_run_fail(run, st->created ? SCN_FAILURE_OBJECT_CLOSED : SCN_FAILURE_OBJECT_NOT_CREATED, op->line, op->obj,
                 "line %d: %s: `%s %s` on an object that is %s", op->line, c->who, scn_op_name(op->kind),
                 run->s->objs[op->obj].name, st->created ? "closed" : "not created");
    return false;
}

void scn_exec_mark_group_released(run_state *run, int g) {
    size_t i;
    for (i = 0; i < run->s->nobjs; i++)
        if (run->s->objs[i].group == g && run->objs[i].created) run->objs[i].dead = true;
}

/* ---- operations ---------------------------------------------------------------- */

/* A kind's operation on handle h, or TPH_EINVAL when the kind has none. */
static tph_err call(tph_err (*op)(void *), void *h) { return op ? op(h) : TPH_EINVAL; }

tph_err scn_exec_close(run_state *run, int obj) {
    tph_err e = call(scn_kind(run->s->objs[obj].kind)->close, run->objs[obj].h);
    if (e == TPH_OK) run->objs[obj].dead = true;
    return e;
}

/* Whether an open object borrows event ev's handle (a wait on it). */
static bool event_in_use(run_state *run, int ev) {
    size_t i;
    for (i = 0; i < run->s->nobjs; i++)
        if (scn_kind(run->s->objs[i].kind)->borrows_event && run->s->objs[i].event == ev && run->objs[i].created &&
            !run->objs[i].dead)
            return true;
    return false;
}

static int exec_op(exec_ctx *c, const scn_op *op) {
    run_state *run = c->run;
    void *h = NULL;
    const scn_kind_ops *k = NULL; /* the operand's kind (ops on an object) */
    tph_err e = TPH_OK;
    uint64_t t0 = rt_now();
    bool has_result = true;
    bool in_flight = c->actor >= 0 && scn_reach_op_in_flight(op->kind);
    if (scn_op_operand_kinds(op->kind) && op->kind != SCN_OP_CREATE) {
        if (!live(op, c)) return -1;
        h = run->objs[op->obj].h;
        k = scn_kind(run->s->objs[op->obj].kind);
    }
    if (in_flight) scn_reach_enter(&run->reach, c->actor);
    if (is_arm(op->kind)) stop_oracle_arm(run, op->obj, true, c->cb_obj == op->obj);
    if (op->kind == SCN_OP_STOP_AND_DRAIN) stop_oracle_stop_begin(run, op->obj);
    switch (op->kind) {
    case SCN_OP_CREATE: e = scn_exec_create(run, op->obj); break;
    case SCN_OP_SUBMIT: e = tph_work_submit((tph_work *)h); break;
    case SCN_OP_ARM: e = k->arm ? k->arm(run, op, h) : TPH_EINVAL; break;
    case SCN_OP_SIGNAL: e = tph_event_set((tph_handle *)h); break;
    case SCN_OP_RESET: e = tph_event_reset((tph_handle *)h); break;
    case SCN_OP_DISARM: e = call(k->disarm, h); break;
    case SCN_OP_TRY_CANCEL: e = tph_wait_try_cancel_pending((tph_wait *)h); break;
    case SCN_OP_CANCEL_UNTRACKED: e = tph_wait_try_cancel_pending_no_heal_tracking((tph_wait *)h); break;
    case SCN_OP_CANCEL_PENDING: e = call(k->cancel_pending, h); break;
    case SCN_OP_WAIT: e = call(k->wait, h); break;
    case SCN_OP_STOP_AND_DRAIN: e = call(k->stop_and_drain, h); break;
    case SCN_OP_CLOSE:
        if (k->lent_to_waits && event_in_use(run, op->obj)) {
            /* tph_wait borrows its handle: closing it under an open wait
             * would hand the core a dead handle at the next arm. */
            scn_run_fail(run, SCN_FAILURE_CLOSE_LENT_EVENT, op->line, op->obj,
                         "line %d: %s: `close %s` while a wait on it is still open", op->line, c->who,
                         run->s->objs[op->obj].name);
            if (in_flight) scn_reach_leave(&run->reach, c->actor);
            return -1;
        }
        e = scn_exec_close(run, op->obj);
        break;
    case SCN_OP_RELEASE:
        if (op->release == SCN_RELEASE_DRAINING) e = tph_group_close_members_draining((tph_group *)h);
        else if (op->release == SCN_RELEASE_CANCELLING) e = tph_group_close_members_cancelling((tph_group *)h, NULL);
        else e = tph_group_close_members_cancelling_no_heal_tracking((tph_group *)h, NULL);
        if (e == TPH_OK) scn_exec_mark_group_released(run, op->obj);
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
        scn_pool_retire_idle_workers(scn_run_pool_native(run, op->obj));
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
    case SCN_OP_ASSERT: scn_expr_check(run, op->expr, SCN_FAILURE_ASSERT_FAILED, "assert"); has_result = false; break;
    case SCN_OP_AWAIT: {
        size_t slot = count_slot(run, op->point, op->pool);
        uint64_t await_from = rt_now();
        rt_lock_acquire(&run->lock);
        run->awaiting[slot]++;
        run->script_waiters++;
        for (;;) {
            rt_access(&run->counts[slot], RT_READ); /* written in diagnostic sections (scn_hook.c) */
            if (run->counts[slot] >= op->count) break;
            rt_wait(&run->await_q, &run->lock, RT_FOREVER, "scenario await");
        }
        run->awaiting[slot]--;
        if (run->tl) {
            char what[96];
            snprintf(what, sizeof what, "await %s (line %d)", scn_trace_point_name(op->point), op->line);
            scn_tl_span(run, await_from, "await", what);
        }
        run->script_waiters--;
        rt_lock_release(&run->lock);
        has_result = false;
        break;
    }
    default: has_result = false; break;
    }
    if (in_flight) scn_reach_leave(&run->reach, c->actor);
    if (is_arm(op->kind)) stop_oracle_arm(run, op->obj, false, c->cb_obj == op->obj);
    if (op->kind == SCN_OP_STOP_AND_DRAIN && e == TPH_OK) stop_oracle_stopped(run, op->obj);
    if (op->label >= 0 && rt_now() - t0 >= run->label_time[op->label]) run->label_time[op->label] = rt_now() - t0;
    if (op->label >= 0 && run->tl) {
        char what[128];
        snprintf(what, sizeof what, "`%s%s%s as %s` (line %d)", scn_op_name(op->kind), op->obj >= 0 ? " " : "",
                 op->obj >= 0 ? run->s->objs[op->obj].name : "", run->s->labels[op->label].name, op->line);
        scn_tl_span(run, t0, "labelled", what);
    }
    if (has_result && e == TPH_OK && (op->kind == SCN_OP_SUBMIT || op->kind == SCN_OP_ARM)) {
        lock_object_bookkeeping(run, op->obj);
        run->objs[op->obj].arms++;
        rt_lock_release(&run->lock);
    }
    if (has_result && op->expect != SCN_RESULT_ANY && (int)e != op->expect)
        scn_run_fail(run, SCN_FAILURE_OP_RESULT, op->line, op->obj,
                     "line %d: %s: `%s%s%s` returned %s, expected %s", op->line, c->who, scn_op_name(op->kind),
                     op->obj >= 0 ? " " : "", op->obj >= 0 ? run->s->objs[op->obj].name : "",
                     scn_result_name((int)e), scn_result_name(op->expect));
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

void scn_exec_open_start_gate(run_state *run) {
    if (!run->free_running) return;
    rt_lock_acquire(&run->lock);
    run->gate_open = true;
    rt_wake_all(&run->gate_q);
    rt_lock_release(&run->lock);
}

/* arg: the thread's exec_ctx, on scenario_main's stack (it joins them all). */
void scn_exec_thread_main(void *arg) {
    exec_ctx *c = (exec_ctx *)arg;
    start_gate(c->run);
    exec_block(c, &c->run->s->threads[c->actor].body);
}
