/* Cleanup groups.  CloseThreadpoolCleanupGroupMembers(g, TRUE, ctx) drops
 * pending callbacks of every member, calls the group's cancel callback once
 * per member (member ctx, cleanup ctx), waits for running callbacks and
 * closes the members; with FALSE it lets pending callbacks run first
 * (docs/pool-facts.md, Wine 8.0 measurements).  Armed waits and timers are
 * unregistered either way: the members are closed. */
#include "sim_model.h"

void sim_wait_cancel_queued(sim_obj *w);
void sim_timer_disarm(sim_obj *t);

tph_os_group *tph_os_group_create(void) {
    sim_need_process("CreateThreadpoolCleanupGroup");
    sim_lock_scoped();
    sim_expect_announced("CreateThreadpoolCleanupGroup", 0, 0, 0);
    tph_os_group *h = NULL;
    if (!sim_fault_hit(SIM_FAULT_GROUP_CREATE, 0)) h = (tph_os_group *)sim_handle_of(sim_obj_new(SIM_OBJ_GROUP));
    sim_unlock();
    return h;
}

void tph_os_group_close_members(tph_os_group *gh, bool cancel_pending, void *cleanup_ctx) {
    sim_need_process("CloseThreadpoolCleanupGroupMembers");
    sim_lock();
    sim_expect_announced("CloseThreadpoolCleanupGroupMembers", (uintptr_t)gh, sim_pool_key_of(sim_announced_pool(gh, SIM_OBJ_GROUP)), cancel_pending);
    sim_obj *g = sim_use(gh, SIM_OBJ_GROUP, "CloseThreadpoolCleanupGroupMembers", false);
    if (!g) {
        sim_unlock();
        return;
    }
    /* Members in creation order; taken out of the group now so a second
     * release (or a member's own close) does not see them again. */
    uint32_t n = 0;
    for (uint32_t i = 0; i < P->nobjs; i++)
        if (P->objs[i]->group == g) n++;
    sim_obj **m = (sim_obj **)sim_zalloc((n ? n : 1) * sizeof *m);
    n = 0;
    for (uint32_t i = 0; i < P->nobjs; i++) {
        sim_obj *o = P->objs[i];
        if (o->group != g) continue;
        m[n++] = o;
        o->group = NULL;
        if (o->kind == SIM_OBJ_WAIT) sim_wait_unarm(o);
        if (o->kind == SIM_OBJ_TIMER) sim_timer_disarm(o);
        if (cancel_pending) {
            if (o->kind == SIM_OBJ_WAIT) sim_wait_cancel_queued(o); /* a wait packet removal */
            else sim_drop_packets(o);
        }
    }
    if (cancel_pending) {
        for (uint32_t i = 0; i < n; i++) {
            sim_obj *o = m[i];
            if (!o->group_cancel) continue;
            o->group_cancel_calls++;
            tph_os_group_cancel_cb cb = o->group_cancel;
            void *ctx = o->ctx;
            sim_unlock();
            cb(ctx, cleanup_ctx);
            sim_lock();
        }
    }
    for (uint32_t i = 0; i < n; i++) sim_wait_callbacks(m[i], !cancel_pending, "CloseThreadpoolCleanupGroupMembers", SIM_HB_GROUP_RELEASE);
    for (uint32_t i = 0; i < n; i++) {
        m[i]->closed = true;
        sim_maybe_free(m[i]);
    }
    sim_free(m);
    sim_unlock();
}

void tph_os_group_close(tph_os_group *gh) {
    sim_need_process("CloseThreadpoolCleanupGroup");
    sim_lock();
    sim_expect_announced("CloseThreadpoolCleanupGroup", (uintptr_t)gh, sim_pool_key_of(sim_announced_pool(gh, SIM_OBJ_GROUP)), 0);
    sim_obj *g = sim_use(gh, SIM_OBJ_GROUP, "CloseThreadpoolCleanupGroup", false);
    if (g) {
        for (uint32_t i = 0; i < P->nobjs; i++) {
            if (P->objs[i]->group != g) continue;
            sim_report_misuse("CloseThreadpoolCleanupGroup", g, SIM_OBJ_GROUP, "group still has members");
            break;
        }
        g->closed = true;
        g->freed = true;
    }
    sim_unlock();
}
