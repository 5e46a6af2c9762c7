/* Timers and the timer service.  One daemon rt thread per process sleeps
 * until the earliest deadline (timer fire points, wait timeouts) and queues
 * what is due: under the controlled scheduler that is how virtual time jumps
 * to the next deadline.  A timer's fire point is a seeded point inside
 * [due, due + window]; a periodic timer queues a tick at every period even
 * when the previous one still runs (ticks may overlap); after a disarm a
 * queued tick still runs (Microsoft's documentation of pftDueTime and the
 * Wine 8.0 measurement; sim_config.timer_disarm_drops_queued flips it). */
#include <stdlib.h>

#include "sim_model.h"

/* FILETIME epoch of the simulated process: tph_os_system_time() = this +
 * rt_now() (absolute due times are on that clock).  2023-01-01 00:00 UTC. */
#define SIM_SYSTEM_EPOCH 133170048000000000ull

uint64_t sim_system_epoch(void);
uint64_t sim_system_epoch(void) { return SIM_SYSTEM_EPOCH; }

static uint64_t next_deadline(void) {
    uint64_t next = RT_FOREVER;
    for (uint32_t i = 0; i < P->ntimed; i++)
        if (P->timed[i]->deadline < next) next = P->timed[i]->deadline;
    return next;
}

static void fire_timer(sim_obj *t, uint64_t now);

/* A pass reads every timed object's deadline: each one's unit, and the
 * service's own. */
static void touch_timed(void) {
    sim_touch(&P->timed);
    for (uint32_t i = 0; i < P->ntimed; i++) sim_touch_obj(P->timed[i]);
}

static void service_main(void *arg) {
    (void)arg;
    sim_lock_scoped();
    while (!P->shutdown) {
        touch_timed(); /* every pass: the first, and each after an rt_wait */
        uint64_t now = rt_now();
        /* Fire what is due, in table order (deterministic), then sleep. */
        for (uint32_t i = 0; i < P->ntimed;) {
            sim_obj *o = P->timed[i];
            if (o->deadline > now) {
                i++;
                continue;
            }
            if (o->kind == SIM_OBJ_TIMER) fire_timer(o, now);
            else sim_wait_fire(o, TPH_OS_WAIT_TIMEOUT, NULL);
            i = 0; /* the table changed */
        }
        P->service_sleep_until = next_deadline();
        rt_wait(&P->service_q, &P->lock, P->service_sleep_until, "timer service");
    }
    sim_unlock();
}

void sim_timed_add(sim_obj *o) {
    sim_touch(&P->timed);
    sim_touch_obj(o);
    if (!o->timed) {
        if (P->ntimed == P->captimed) {
            uint32_t cap = P->captimed ? P->captimed * 2 : 16;
            sim_obj **n = (sim_obj **)realloc(P->timed, cap * sizeof *n);
            if (!n) abort();
            P->timed = n;
            P->captimed = cap;
        }
        P->timed[P->ntimed++] = o;
        o->timed = true;
    }
    if (!P->service) {
        sim_touch(&P->all_workers); /* thread creation */
        P->service = rt_spawn("timer service", service_main, NULL, true);
    } else if (o->deadline < P->service_sleep_until) {
        P->service_sleep_until = o->deadline;
        rt_wake_one(&P->service_q);
    }
}

/* Order-preserving removal: firing order among equal deadlines is the
 * arming order, whatever was removed in between. */
void sim_timed_remove(sim_obj *o) {
    sim_touch_obj(o);
    if (!o->timed) return;
    sim_touch(&P->timed);
    for (uint32_t i = 0; i < P->ntimed; i++) {
        if (P->timed[i] != o) continue;
        for (uint32_t j = i + 1; j < P->ntimed; j++) P->timed[j - 1] = P->timed[j];
        P->ntimed--;
        break;
    }
    o->timed = false;
}

/* A seeded point in [due, due + window]. */
static uint64_t fire_point(uint64_t due, uint32_t window_ms) {
    if (window_ms == 0) return due;
    uint64_t units = (uint64_t)window_ms * SIM_MS;
    if (units < UINT32_MAX) return due + rt_choose_delay((uint32_t)units + 1u);
    return due + (uint64_t)rt_choose_delay(window_ms + 1u) * SIM_MS;
}

static void fire_timer(sim_obj *t, uint64_t now) {
    sim_timed_remove(t);
    if (t->period_ms) {
        /* Next tick on the nominal period grid; a late service skips missed
         * periods instead of queueing a burst. */
        uint64_t period = (uint64_t)t->period_ms * SIM_MS;
        do t->due += period;
        while (t->due + period <= now);
        t->deadline = fire_point(t->due, t->window_ms);
        sim_timed_add(t);
    } else {
        t->armed = false;
    }
    sim_packet pk = {0};
    sim_enqueue(t, &pk);
}

tph_os_timer *tph_os_timer_create(tph_os_timer_cb cb, void *ctx, const tph_os_env *env) {
    sim_need_process("CreateThreadpoolTimer");
    sim_lock_scoped();
    sim_expect_announced("CreateThreadpoolTimer", env && env->pool ? (uintptr_t)env->pool : 0, env && env->pool ? (uintptr_t)env->pool : 0, 0);
    sim_obj *o = sim_bound_new(SIM_OBJ_TIMER, SIM_FAULT_TIMER_CREATE, env, ctx, "CreateThreadpoolTimer");
    if (o) o->cb.timer = cb;
    tph_os_timer *h = o ? (tph_os_timer *)sim_handle_of(o) : NULL;
    sim_unlock();
    return h;
}

static void disarm(sim_obj *t) {
    sim_timed_remove(t);
    t->armed = false;
    t->deadline = RT_FOREVER;
}

void tph_os_timer_set(tph_os_timer *th, const int64_t *due, uint32_t period_ms, uint32_t window_ms) {
    sim_need_process("SetThreadpoolTimer");
    sim_lock_scoped();
    sim_expect_announced("SetThreadpoolTimer", (uintptr_t)th, sim_pool_key_of(sim_announced_pool(th, SIM_OBJ_TIMER)), due ? (uint64_t)*due : 0);
    sim_obj *t = sim_use(th, SIM_OBJ_TIMER, "SetThreadpoolTimer", false);
    if (t) {
        sim_hb_release(SIM_HB_TIMER_SET, &t->hb[SIM_HB_TIMER_SET]);
        disarm(t);
        if (!due) {
            /* Never a stall trigger either way (only wait packets are). */
            if (P->cfg.timer_disarm_drops_queued) sim_drop_packets(t);
        } else {
            uint64_t now = rt_now();
            uint64_t at;
            if (*due < 0) at = now + (uint64_t)(-*due);
            else if (*due == 0) at = now;
            else at = (uint64_t)*due > SIM_SYSTEM_EPOCH + now ? (uint64_t)*due - SIM_SYSTEM_EPOCH : now;
            t->armed = true;
            t->due = at;
            t->period_ms = period_ms;
            t->window_ms = window_ms;
            t->deadline = fire_point(at, window_ms);
            sim_timed_add(t);
        }
    }
    sim_unlock();
}

bool tph_os_timer_is_set(tph_os_timer *th) {
    sim_need_process("IsThreadpoolTimerSet");
    sim_lock_scoped();
    sim_expect_announced("IsThreadpoolTimerSet", (uintptr_t)th, sim_pool_key_of(sim_announced_pool(th, SIM_OBJ_TIMER)), 0);
    sim_obj *t = sim_use(th, SIM_OBJ_TIMER, "IsThreadpoolTimerSet", false);
    bool set = t && t->armed;
    sim_unlock();
    return set;
}

void tph_os_timer_wait(tph_os_timer *th, bool cancel_pending) {
    sim_need_process("WaitForThreadpoolTimerCallbacks");
    sim_lock_scoped();
    sim_expect_announced("WaitForThreadpoolTimerCallbacks", (uintptr_t)th, sim_pool_key_of(sim_announced_pool(th, SIM_OBJ_TIMER)), cancel_pending);
    sim_obj *t = sim_use(th, SIM_OBJ_TIMER, "WaitForThreadpoolTimerCallbacks", false);
    if (t) {
        if (cancel_pending) sim_drop_packets(t);
        sim_wait_callbacks(t, true, "WaitForThreadpoolTimerCallbacks", SIM_HB_CALLBACK_RETURN);
    }
    sim_unlock();
}

/* Returns at once: the timer stops; a queued tick still runs, then it is freed. */
void tph_os_timer_close(tph_os_timer *th) {
    sim_need_process("CloseThreadpoolTimer");
    sim_lock_scoped();
    sim_expect_announced("CloseThreadpoolTimer", (uintptr_t)th, sim_pool_key_of(sim_announced_pool(th, SIM_OBJ_TIMER)), 0);
    sim_obj *t = sim_use(th, SIM_OBJ_TIMER, "CloseThreadpoolTimer", false);
    if (t) {
        sim_close_common(t);
        disarm(t);
        sim_maybe_free(t);
    }
    sim_unlock();
}

/* Used by cleanup-group release. */
void sim_timer_disarm(sim_obj *t);
void sim_timer_disarm(sim_obj *t) { disarm(t); }
