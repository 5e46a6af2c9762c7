/* Events (waitable handles): manual/auto reset.  An armed pool wait is
 * registered on its event in arming order; an auto-reset event is consumed
 * by the first registered wait (or thread) that sees it set. */
#include "sim_model.h"

void sim_event_register(sim_obj *ev, sim_obj *w) {
    sim_touch_obj(ev);
    sim_touch_obj(w);
    w->ev_next = NULL;
    if (ev->ev_tail) ev->ev_tail->ev_next = w;
    else ev->ev_head = w;
    ev->ev_tail = w;
    w->event = ev;
}

void sim_event_unregister(sim_obj *ev, sim_obj *w) {
    sim_touch_obj(ev);
    sim_touch_obj(w);
    sim_obj *prev = NULL;
    for (sim_obj *x = ev->ev_head; x; prev = x, x = x->ev_next) {
        if (x != w) continue;
        if (prev) prev->ev_next = x->ev_next;
        else ev->ev_head = x->ev_next;
        if (ev->ev_tail == x) ev->ev_tail = prev;
        break;
    }
    w->ev_next = NULL;
    w->event = NULL;
}

/* Delivers a set event to the registered waits: all of them (manual reset,
 * the event stays set) or the first (auto reset, which consumes it). */
static void deliver(sim_obj *ev) {
    while (ev->set && ev->ev_head) {
        sim_obj *w = ev->ev_head;
        if (!ev->manual_reset) ev->set = false;
        sim_wait_fire(w, TPH_OS_WAIT_SIGNALED, ev);
    }
}

tph_os_event *tph_os_event_create(bool manual_reset, bool initially_set) {
    sim_need_process("CreateEvent");
    sim_lock_scoped();
    tph_os_event *h = NULL;
    if (!sim_fault_hit(SIM_FAULT_EVENT_CREATE, 0)) {
        sim_obj *ev = sim_obj_new(SIM_OBJ_EVENT);
        ev->manual_reset = manual_reset;
        ev->set = initially_set;
        h = (tph_os_event *)sim_handle_of(ev);
    }
    sim_unlock();
    return h;
}

void tph_os_event_set(tph_os_event *eh) {
    sim_need_process("SetEvent");
    sim_lock_scoped();
    sim_obj *ev = sim_use(eh, SIM_OBJ_EVENT, "SetEvent", false);
    if (ev) {
        sim_hb_release(SIM_HB_EVENT_SET, &ev->hb[SIM_HB_EVENT_SET]);
        ev->set = true;
        deliver(ev);
        if (ev->set) rt_wake_all(&ev->ev_q);
    }
    sim_unlock();
}

void tph_os_event_reset(tph_os_event *eh) {
    sim_need_process("ResetEvent");
    sim_lock_scoped();
    sim_obj *ev = sim_use(eh, SIM_OBJ_EVENT, "ResetEvent", false);
    if (ev) ev->set = false;
    sim_unlock();
}

uint32_t tph_os_event_wait(tph_os_event *eh, uint32_t timeout_ms) {
    sim_need_process("WaitForSingleObject");
    sim_lock_scoped();
    uint32_t r = TPH_OS_WAIT_TIMEOUT;
    sim_obj *ev = sim_use(eh, SIM_OBJ_EVENT, "WaitForSingleObject", false);
    if (ev) {
        uint64_t deadline = timeout_ms == TPH_OS_INFINITE ? RT_FOREVER : rt_now() + (uint64_t)timeout_ms * SIM_MS;
        for (;;) {
            if (ev->set) {
                if (!ev->manual_reset) ev->set = false;
                r = TPH_OS_WAIT_SIGNALED;
                sim_hb_acquire(SIM_HB_EVENT_SET, &ev->hb[SIM_HB_EVENT_SET]);
                break;
            }
            if (P->shutdown || ev->closed) break;
            if (deadline != RT_FOREVER && rt_now() >= deadline) break;
            sim_wait_about(&ev->ev_q, deadline, "WaitForSingleObject", ev);
        }
    }
    sim_unlock();
    return r;
}

/* CloseHandle: waits still registered on it never fire (nothing can set it). */
void tph_os_event_close(tph_os_event *eh) {
    sim_need_process("CloseHandle");
    sim_lock_scoped();
    sim_obj *ev = sim_use(eh, SIM_OBJ_EVENT, "CloseHandle", false);
    if (ev) {
        ev->closed = true;
        ev->freed = true;
        rt_wake_all(&ev->ev_q);
    }
    sim_unlock();
}

bool sim_event_is_set(tph_os_event *eh) {
    sim_need_process("sim_event_is_set");
    sim_lock();
    sim_obj *ev = sim_obj_from_handle(eh, SIM_OBJ_EVENT);
    bool set = ev && ev->set;
    sim_unlock();
    return set;
}
