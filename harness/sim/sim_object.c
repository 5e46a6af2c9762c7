/* What every pool-bound object shares: creation from an environment (pool,
 * cleanup group, priority), the close bookkeeping, and the per-object
 * queries the oracles read. */
#include "sim_model.h"

sim_obj *sim_bound_new(sim_object_kind kind, sim_fault_kind fk, const tph_os_env *env, void *ctx,
                       const char *call) {
    sim_obj *pool = sim_env_pool(env, call);
    if (!pool) return NULL;
    sim_obj *group = NULL;
    if (env && env->group) {
        group = sim_use(env->group, SIM_OBJ_GROUP, call, false);
        if (!group) return NULL;
    }
    uintptr_t key = env && env->pool ? (uintptr_t)env->pool : 0;
    if (sim_fault_hit(fk, key)) return NULL;
    sim_obj *o = sim_obj_new(kind);
    o->pool = pool;
    pool->bound++;
    o->group = group;
    o->group_cancel = group ? env->group_cancel : NULL;
    o->ctx = ctx;
    o->priority = env ? env->priority : TPH_OS_PRIORITY_NORMAL;
    o->runs_long = env ? env->runs_long : false;
    if (o->priority < TPH_OS_PRIORITY_HIGH || o->priority > TPH_OS_PRIORITY_LOW) {
        /* SetThreadpoolCallbackPriority takes one of three values; anything
         * else is undefined on Windows, so it is reported, then run as normal. */
        sim_report_misuse(call, o, kind, "callback priority out of range");
        o->priority = TPH_OS_PRIORITY_NORMAL;
    }
    o->deadline = RT_FOREVER;
    return o;
}

/* Closing a member on its own takes it out of its cleanup group (Windows
 * does the same: a later CloseThreadpoolCleanupGroupMembers skips it). */
void sim_close_common(sim_obj *o) {
    o->closed = true;
    o->group = NULL;
}

sim_object_kind sim_object_kind_of(const void *handle) {
    if (!P || !handle) return SIM_OBJ_NONE;
    sim_lock();
    sim_obj *o = sim_obj_from_handle(handle, SIM_OBJ_NONE);
    sim_object_kind k = o ? o->kind : SIM_OBJ_NONE;
    sim_unlock();
    return k;
}

uint32_t sim_object_id(const void *handle) {
    if (!P) return 0;
    sim_lock();
    sim_obj *o = handle ? sim_obj_from_handle(handle, SIM_OBJ_NONE) : P->default_pool;
    uint32_t id = o ? o->id : 0;
    sim_unlock();
    return id;
}

bool sim_object_stats_get(const void *handle, sim_object_stats *out) {
    sim_need_process("sim_object_stats_get");
    sim_lock();
    sim_obj *o = handle ? sim_obj_from_handle(handle, SIM_OBJ_NONE) : P->default_pool;
    if (o) {
        out->kind = o->kind;
        out->id = o->id;
        out->pool_id = o->pool ? o->pool->id : 0;
        out->group_id = o->group ? o->group->id : 0;
        out->closed = o->closed;
        out->freed = o->freed;
        out->armed = o->armed;
        out->runs_long = o->runs_long;
        out->priority = o->priority;
        out->period_ms = o->period_ms;
        out->window_ms = o->window_ms;
        out->queued = o->kind == SIM_OBJ_POOL ? o->nqueued : o->queued;
        out->running = o->kind == SIM_OBJ_POOL ? o->nrunning : o->running;
        out->callbacks_run = o->kind == SIM_OBJ_POOL ? o->callbacks_run : o->run_count;
        out->cancelled = o->cancelled;
        out->group_cancel_calls = o->group_cancel_calls;
        out->io_pending = o->io_pending;
        out->event_set = o->set;
    }
    sim_unlock();
    return o != NULL;
}

void *sim_object_handle(sim_object_kind kind, uint32_t id) {
    sim_need_process("sim_object_handle");
    sim_lock();
    void *h = NULL;
    for (uint32_t i = 0; i < P->nobjs; i++) {
        sim_obj *o = P->objs[i];
        if (o->kind == kind && o->id == id) {
            h = sim_handle_of(o);
            break;
        }
    }
    sim_unlock();
    return h;
}
