/* The per-object-kind operations table (scn_run_internal.h, scn_kind_ops):
 * everything the runner does that depends on an object's kind, one row a
 * kind, libuv / SQLite VFS style.  The op interpreter (scn_exec.c), the
 * teardown (scn_teardown.c) and the oracles (scn_oracle.c) call a kind's
 * row and never switch on the kind, so adding a kind is its row here (and
 * the small adapters above it: the core's calls take typed handles). */
#include <stdint.h>

#include "scn_run_internal.h"

/* ---- callbacks: a callback's ctx is its object's state, which knows its
 * run and its index (no address reaches a report: the index names it) ---- */

#define ON_CALLBACK(ctx) scn_exec_callback(((obj_state *)(ctx))->run, ((obj_state *)(ctx))->index)
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

/* ---- event ------------------------------------------------------------------ */

static tph_err event_create(run_state *run, int obj, void *ctx, tph_env *env, void **h) {
    const scn_obj *o = &run->s->objs[obj];
    (void)ctx;
    (void)env;
    return tph_event_create((tph_handle **)h, o->manual_reset, o->initially_set);
}
static const void *event_native(void *h) { return (const void *)tph_handle_native((tph_handle *)h); }
static tph_err event_close(void *h) { return tph_handle_close((tph_handle *)h); }

/* ---- work ------------------------------------------------------------------- */

static tph_err work_create(run_state *run, int obj, void *ctx, tph_env *env, void **h) {
    (void)run;
    (void)obj;
    return tph_work_create((tph_work **)h, work_cb, ctx, env);
}
static const void *work_native(void *h) { return (const void *)tph_work_native((tph_work *)h); }
static tph_err work_wait(void *h) { return tph_work_wait((tph_work *)h); }
static tph_err work_stop_and_drain(void *h) { return tph_work_stop_and_drain((tph_work *)h); }
static tph_err work_cancel_pending(void *h) { return tph_work_cancel_pending((tph_work *)h); }
static tph_err work_close(void *h) { return tph_work_close((tph_work *)h); }
static void work_quiesce(obj_state *st) { tph_work_wait((tph_work *)st->h); }

/* ---- wait ------------------------------------------------------------------- */

static tph_err wait_create(run_state *run, int obj, void *ctx, tph_env *env, void **h) {
    const scn_obj *o = &run->s->objs[obj];
    if (!run->objs[o->event].created || run->objs[o->event].dead) {
        scn_run_fail(run, SCN_FAILURE_EVENT_NOT_OPEN, o->line, obj, "line %d: wait %s: its event %s is not open",
                     o->line, o->name, run->s->objs[o->event].name);
        return TPH_EINVAL;
    }
    return tph_wait_create((tph_wait **)h, (tph_handle *)run->objs[o->event].h, wait_cb, ctx, env);
}
static const void *wait_native(void *h) { return (const void *)tph_wait_native((tph_wait *)h); }
static tph_err wait_arm(run_state *run, const scn_op *op, void *h) {
    (void)run;
    return tph_wait_arm((tph_wait *)h, op->forever ? TPH_WAIT_FOREVER : (uint32_t)(op->time / SCN_MS));
}
static tph_err wait_disarm(void *h) { return tph_wait_disarm((tph_wait *)h); }
static tph_err wait_wait(void *h) { return tph_wait_wait((tph_wait *)h); }
static tph_err wait_stop_and_drain(void *h) { return tph_wait_stop_and_drain((tph_wait *)h); }
static tph_err wait_close(void *h) { return tph_wait_close((tph_wait *)h); }
static void wait_quiesce(obj_state *st) { tph_wait_stop_and_drain((tph_wait *)st->h); }

/* ---- timer ------------------------------------------------------------------ */

static tph_err timer_create(run_state *run, int obj, void *ctx, tph_env *env, void **h) {
    (void)run;
    (void)obj;
    return tph_timer_create((tph_timer **)h, timer_cb, ctx, env);
}
static const void *timer_native(void *h) { return (const void *)tph_timer_native((tph_timer *)h); }
static tph_err timer_arm(run_state *run, const scn_op *op, void *h) {
    (void)run;
    return tph_timer_set_after((tph_timer *)h, op->time / SCN_MS, (uint32_t)(op->window / SCN_MS));
}
static tph_err timer_disarm(void *h) { return tph_timer_disarm((tph_timer *)h); }
static tph_err timer_wait(void *h) { return tph_timer_wait((tph_timer *)h); }
static tph_err timer_stop_and_drain(void *h) { return tph_timer_stop_and_drain((tph_timer *)h); }
static tph_err timer_cancel_pending(void *h) { return tph_timer_cancel_pending((tph_timer *)h); }
static tph_err timer_close(void *h) { return tph_timer_close((tph_timer *)h); }
static void timer_quiesce(obj_state *st) { tph_timer_stop_and_drain((tph_timer *)st->h); }

/* ---- periodic --------------------------------------------------------------- */

static tph_err periodic_create(run_state *run, int obj, void *ctx, tph_env *env, void **h) {
    const scn_obj *o = &run->s->objs[obj];
    return tph_periodic_create((tph_periodic **)h, o->period / SCN_MS, periodic_cb, ctx, env);
}
static const void *periodic_native(void *h) { return (const void *)tph_periodic_native((tph_periodic *)h); }
/* `arm P`, `arm P after T`, `arm P [after T] window W` (no T: the period). */
static tph_err periodic_arm(run_state *run, const scn_op *op, void *h) {
    const scn_obj *o = &run->s->objs[op->obj];
    if (!op->has_time && op->window == 0) return tph_periodic_start((tph_periodic *)h);
    if (op->window == 0)
        return tph_periodic_start_after((tph_periodic *)h, op->time / SCN_MS);
    return tph_periodic_start_with_window((tph_periodic *)h,
                                          op->has_time ? op->time / SCN_MS : o->period / SCN_MS,
                                          (uint32_t)(op->window / SCN_MS));
}
static tph_err periodic_stop(void *h) { return tph_periodic_stop((tph_periodic *)h); }
static tph_err periodic_wait(void *h) { return tph_periodic_wait((tph_periodic *)h); }
static tph_err periodic_stop_and_drain(void *h) { return tph_periodic_stop_and_drain((tph_periodic *)h); }
static tph_err periodic_close(void *h) { return tph_periodic_close((tph_periodic *)h); }
static void periodic_quiesce(obj_state *st) { tph_periodic_stop_and_drain((tph_periodic *)st->h); }

/* ---- io --------------------------------------------------------------------- */

static tph_err io_create(run_state *run, int obj, void *ctx, tph_env *env, void **h) {
    obj_state *st = &run->objs[obj];
    if (!st->file) st->file = scn_pool_file_create();
    return st->file ? tph_io_create((tph_io **)h, scn_pool_file_handle(st->file), io_cb, ctx, env) : TPH_ENOMEM;
}
static const void *io_native(void *h) { return (const void *)tph_io_native((tph_io *)h); }
static tph_err io_arm(run_state *run, const scn_op *op, void *h) {
    (void)run;
    (void)op;
    return tph_io_start((tph_io *)h);
}
static tph_err io_close(void *h) { return tph_io_close((tph_io *)h); }
/* Cancels every start still open, then runs the object down. */
static void io_quiesce(obj_state *st) {
    uint64_t k = tph_io_outstanding((tph_io *)st->h);
    while (k-- > 0)
        if (tph_io_cancel((tph_io *)st->h) == TPH_OK) st->io_cancels++;
    tph_io_run_down((tph_io *)st->h);
}

/* ---- group ------------------------------------------------------------------ */

static tph_err group_create(run_state *run, int obj, void *ctx, tph_env *env, void **h) {
    const scn_obj *o = &run->s->objs[obj];
    (void)ctx;
    (void)env;
    /* a group has no pool of its own: its members carry G's pool in their env */
    return tph_group_create((tph_group **)h, o->cancel_callback ? group_cancel_cb : NULL);
}
static const void *group_native(void *h) { return (const void *)tph_group_native((tph_group *)h); }
static tph_err group_close(void *h) { return tph_group_close((tph_group *)h); }
static tph_err group_release_members(void *h) { return tph_group_close_members_draining((tph_group *)h); }

/* ---- the table ----------------------------------------------------------------- */

static const scn_kind_ops kinds[] = {
    [SCN_OBJ_EVENT] = {.create = event_create, .native = event_native, .close = event_close,
                       .close_pass = 1, .lent_to_waits = true},
    [SCN_OBJ_WORK] = {.create = work_create, .native = work_native, .wait = work_wait,
                      .stop_and_drain = work_stop_and_drain, .cancel_pending = work_cancel_pending,
                      .close = work_close, .quiesce = work_quiesce, .has_callbacks = true,
                      .check_arms = scn_oracle_work_arms},
    [SCN_OBJ_WAIT] = {.create = wait_create, .native = wait_native, .arm = wait_arm, .disarm = wait_disarm,
                      .wait = wait_wait, .stop_and_drain = wait_stop_and_drain, .close = wait_close,
                      .quiesce = wait_quiesce, .borrows_event = true, .has_callbacks = true,
                      .check_arms = scn_oracle_bounded_arms},
    [SCN_OBJ_TIMER] = {.create = timer_create, .native = timer_native, .arm = timer_arm,
                       .disarm = timer_disarm, .wait = timer_wait, .stop_and_drain = timer_stop_and_drain,
                       .cancel_pending = timer_cancel_pending, .close = timer_close,
                       .quiesce = timer_quiesce, .has_callbacks = true, .check_arms = scn_oracle_bounded_arms},
    [SCN_OBJ_PERIODIC] = {.create = periodic_create, .native = periodic_native, .arm = periodic_arm,
                          .disarm = periodic_stop, .wait = periodic_wait,
                          .stop_and_drain = periodic_stop_and_drain, .close = periodic_close,
                          .quiesce = periodic_quiesce, .has_callbacks = true},
    [SCN_OBJ_IO] = {.create = io_create, .native = io_native, .arm = io_arm, .close = io_close,
                    .quiesce = io_quiesce, .has_callbacks = true, .check_arms = scn_oracle_io_arms},
    [SCN_OBJ_GROUP] = {.create = group_create, .native = group_native, .close = group_close,
                       .release_members = group_release_members, .close_pass = 2},
};
_Static_assert(sizeof kinds / sizeof kinds[0] == SCN_OBJ_KIND_COUNT, "one row per object kind");

const scn_kind_ops *scn_kind(scn_obj_kind kind) { return &kinds[kind]; }
