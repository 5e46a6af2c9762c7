/* Work objects: every submit queues one callback; WaitForThreadpoolWork-
 * Callbacks(TRUE) drops the queued ones, (FALSE) waits for all of them; a
 * submit is the one call that releases a severed pool. */
#include "sim_model.h"

tph_os_work *tph_os_work_create(tph_os_work_cb cb, void *ctx, const tph_os_env *env) {
    sim_need_process("CreateThreadpoolWork");
    sim_lock_scoped();
    sim_expect_announced("CreateThreadpoolWork", env && env->pool ? (uintptr_t)env->pool : 0, env && env->pool ? (uintptr_t)env->pool : 0, 0);
    sim_obj *o = sim_bound_new(SIM_OBJ_WORK, SIM_FAULT_WORK_CREATE, env, ctx, "CreateThreadpoolWork");
    if (o) o->cb.work = cb;
    tph_os_work *h = o ? (tph_os_work *)sim_handle_of(o) : NULL;
    sim_unlock();
    return h;
}

void tph_os_work_submit(tph_os_work *wh) {
    sim_need_process("SubmitThreadpoolWork");
    sim_lock_scoped();
    sim_expect_announced("SubmitThreadpoolWork", (uintptr_t)wh, sim_pool_key_of(sim_announced_pool(wh, SIM_OBJ_WORK)), 0);
    sim_obj *o = sim_use(wh, SIM_OBJ_WORK, "SubmitThreadpoolWork", false);
    if (o) {
        sim_packet pk = {0};
        sim_hb_release(SIM_HB_SUBMIT, &o->hb[SIM_HB_SUBMIT]);
        sim_pool_release(o->pool);
        sim_enqueue(o, &pk);
    }
    sim_unlock();
}

void tph_os_work_wait(tph_os_work *wh, bool cancel_pending) {
    sim_need_process("WaitForThreadpoolWorkCallbacks");
    sim_lock_scoped();
    sim_expect_announced("WaitForThreadpoolWorkCallbacks", (uintptr_t)wh, sim_pool_key_of(sim_announced_pool(wh, SIM_OBJ_WORK)), cancel_pending);
    sim_obj *o = sim_use(wh, SIM_OBJ_WORK, "WaitForThreadpoolWorkCallbacks", false);
    if (o) {
        if (cancel_pending) sim_drop_packets(o); /* work: never a stall trigger */
        sim_wait_callbacks(o, true, "WaitForThreadpoolWorkCallbacks", SIM_HB_CALLBACK_RETURN);
    }
    sim_unlock();
}

/* Returns at once; queued submissions still run, then the object is freed. */
void tph_os_work_close(tph_os_work *wh) {
    sim_need_process("CloseThreadpoolWork");
    sim_lock_scoped();
    sim_expect_announced("CloseThreadpoolWork", (uintptr_t)wh, sim_pool_key_of(sim_announced_pool(wh, SIM_OBJ_WORK)), 0);
    sim_obj *o = sim_use(wh, SIM_OBJ_WORK, "CloseThreadpoolWork", false);
    if (o) {
        sim_close_common(o);
        sim_maybe_free(o);
    }
    sim_unlock();
}
