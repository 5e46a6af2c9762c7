/* Wait objects (one-shot): a signal or the timeout queues exactly one
 * callback and unarms the wait.  A disarm (event NULL) leaves an already
 * queued callback; WaitForThreadpoolWaitCallbacks(TRUE) and Close drop it --
 * the cancellations that can stall a cold pool.  On an armed, unsignalled
 * wait a cancelling wait does NOT unregister it: a later signal still fires
 * (Wine 8.0 measurement, docs/pool-facts.md). */
#include "sim_model.h"

void sim_wait_unarm(sim_obj *w) {
    sim_touch_obj(w);
    if (w->event) sim_event_unregister(w->event, w);
    if (w->timed) sim_timed_remove(w);
    w->armed = false;
    w->deadline = RT_FOREVER;
}

/* Nothing to free here, closed or not: the packet queued keeps the wait
 * (sim_enqueue counts it queued) until its callback has run, and the
 * worker frees it then. */
void sim_wait_fire(sim_obj *w, uint32_t result, sim_obj *signal) {
    sim_wait_unarm(w);
    sim_packet pk = {0};
    pk.wait_result = result;
    pk.signal_event = signal;
    sim_enqueue(w, &pk);
}

/* The stall rule's trigger: a cancellation removing queued wait packets. */
static void cancel_queued(sim_obj *w) {
    uint32_t n = sim_drop_packets(w);
    sim_stall_check(w->pool, n);
}

tph_os_wait *tph_os_wait_create(tph_os_wait_cb cb, void *ctx, const tph_os_env *env) {
    sim_need_process("CreateThreadpoolWait");
    sim_lock_scoped();
    sim_expect_announced("CreateThreadpoolWait", env && env->pool ? (uintptr_t)env->pool : 0, env && env->pool ? (uintptr_t)env->pool : 0, 0);
    sim_obj *o = sim_bound_new(SIM_OBJ_WAIT, SIM_FAULT_WAIT_CREATE, env, ctx, "CreateThreadpoolWait");
    if (o) o->cb.wait = cb;
    tph_os_wait *h = o ? (tph_os_wait *)sim_handle_of(o) : NULL;
    sim_unlock();
    return h;
}

void tph_os_wait_set(tph_os_wait *wh, tph_os_event *eh, uint32_t timeout_ms) {
    sim_need_process("SetThreadpoolWait");
    sim_lock_scoped();
    sim_expect_announced("SetThreadpoolWait", (uintptr_t)wh, sim_pool_key_of(sim_announced_pool(wh, SIM_OBJ_WAIT)), eh ? timeout_ms : 0);
    sim_obj *w = sim_use(wh, SIM_OBJ_WAIT, "SetThreadpoolWait", false);
    sim_obj *ev = NULL;
    if (w && eh) ev = sim_use(eh, SIM_OBJ_EVENT, "SetThreadpoolWait", false);
    if (w && (!eh || ev)) {
        sim_hb_release(SIM_HB_SUBMIT, &w->hb[SIM_HB_SUBMIT]);
        sim_wait_unarm(w); /* re-arming replaces the registration */
        if (ev) {
            w->armed = true;
            if (ev->set) {
                if (!ev->manual_reset) ev->set = false;
                sim_wait_fire(w, TPH_OS_WAIT_SIGNALED, ev);
            } else if (timeout_ms == 0) {
                sim_wait_fire(w, TPH_OS_WAIT_TIMEOUT, NULL);
            } else {
                sim_event_register(ev, w);
                if (timeout_ms != TPH_OS_INFINITE) {
                    w->deadline = rt_now() + (uint64_t)timeout_ms * SIM_MS;
                    sim_timed_add(w);
                }
            }
        }
    }
    sim_unlock();
}

void tph_os_wait_wait(tph_os_wait *wh, bool cancel_pending) {
    sim_need_process("WaitForThreadpoolWaitCallbacks");
    sim_lock_scoped();
    sim_expect_announced("WaitForThreadpoolWaitCallbacks", (uintptr_t)wh, sim_pool_key_of(sim_announced_pool(wh, SIM_OBJ_WAIT)), cancel_pending);
    sim_obj *w = sim_use(wh, SIM_OBJ_WAIT, "WaitForThreadpoolWaitCallbacks", false);
    if (w) {
        if (cancel_pending) cancel_queued(w);
        sim_wait_callbacks(w, true, "WaitForThreadpoolWaitCallbacks", SIM_HB_CALLBACK_RETURN);
    }
    sim_unlock();
}

/* Returns at once: unregisters, drops a queued callback (a stall trigger),
 * frees once a running callback has returned. */
void tph_os_wait_close(tph_os_wait *wh) {
    sim_need_process("CloseThreadpoolWait");
    sim_lock_scoped();
    sim_expect_announced("CloseThreadpoolWait", (uintptr_t)wh, sim_pool_key_of(sim_announced_pool(wh, SIM_OBJ_WAIT)), 0);
    sim_obj *w = sim_use(wh, SIM_OBJ_WAIT, "CloseThreadpoolWait", false);
    if (w) {
        sim_close_common(w);
        sim_wait_unarm(w);
        cancel_queued(w);
        sim_maybe_free(w);
    }
    sim_unlock();
}

/* Used by cleanup-group release. */
void sim_wait_cancel_queued(sim_obj *w);
void sim_wait_cancel_queued(sim_obj *w) { cancel_queued(w); }
