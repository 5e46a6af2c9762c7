/* One-shot timers.
 *
 * A one-shot timer re-armed from its own callback must not overlap itself:
 * armed natively from inside the callback, the next tick can be dispatched on
 * another thread while this one is still running.  So an arm requested while
 * a callback is running is kept, and the trampoline applies the latest one
 * after the user function returns.  (Periodic timers are the other file:
 * their ticks may overlap by contract.)
 *
 * A disarm must also keep a tick that is already queued from reaching the
 * user.  The native disarm does not: SetThreadpoolTimer(t, NULL, ...) only
 * stops *new* ticks, and one already queued still runs -- Microsoft documents
 * it and Wine 8.0 does it (conformance case timer.disarm_keeps_queued_tick).
 * Cancelling it natively would mean WaitForThreadpoolTimerCallbacks(TRUE),
 * which also waits for a running callback and so deadlocks when the disarm
 * comes from that callback.  Instead the timer remembers whether it is armed,
 * and the trampoline swallows a tick that arrives while it is not. */
#include <tpheal/timer.h>

#include "object.h"
#include "trace_point.h"

struct tph_timer {
    tph_object base; /* first: the block is freed as a tph_object by a group */
    tph_os_timer *os;
    tph_timer_fn fn;
    /* Under base.lock. */
    uint32_t running;     /* callbacks inside the user function */
    bool armed;           /* an arming not yet consumed by a tick or a disarm */
    bool pending;         /* an arm requested while one was running */
    int64_t pending_due;  /* FILETIME convention of tph_os_timer_set */
    uint32_t pending_window;
};

#define TPH_100NS_PER_MS 10000

static void native_set(tph_timer *t, const int64_t *due, uint32_t window_ms) {
    TPH_TRACE("api", "SetThreadpoolTimer", (uintptr_t)t->os, due ? (uint64_t)*due : 0);
    tph_os_timer_set(t->os, due, 0, window_ms);
}

static void TPH_OS_CALLBACK timer_trampoline(tph_os_instance *inst, void *ctx, tph_os_timer *os) {
    tph_timer *t = (tph_timer *)ctx;
    (void)inst;
    (void)os;
    tph_os_mutex_lock(&t->base.lock);
    if (!t->armed) {
        /* Queued before a disarm: the disarm's promise is that it never runs. */
        TPH_TRACE("timer", "stale-tick-dropped", (uintptr_t)t->os, 0);
        tph_os_mutex_unlock(&t->base.lock);
        return;
    }
    t->armed = false; /* one-shot: this tick consumes the arming */
    t->running++;
    tph_os_mutex_unlock(&t->base.lock);

    t->fn(t, t->base.user_ctx);

    tph_os_mutex_lock(&t->base.lock);
    t->running--;
    if (t->running == 0 && t->pending) {
        t->pending = false;
        /* A stop or close that began meanwhile wins over a re-arm. */
        if (t->base.stopping == 0) {
            t->armed = true;
            native_set(t, &t->pending_due, t->pending_window);
        }
    }
    tph_os_mutex_unlock(&t->base.lock);
}

tph_err tph_timer_create(tph_timer **out, tph_timer_fn fn, void *ctx, const tph_env *env) {
    tph_timer *t;
    tph_os_env oe;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    if (fn == NULL) return TPH_EINVAL;
    t = (tph_timer *)tph_os_alloc(sizeof *t);
    if (t == NULL) return TPH_ENOMEM;
    tph_object_init(&t->base, "timer", ctx);
    t->fn = fn;
    t->running = 0;
    t->armed = false;
    t->pending = false;
    t->pending_due = 0;
    t->pending_window = 0;
    tph_env_to_os(env, &oe);
    TPH_TRACE("api", "CreateThreadpoolTimer", tph_key_of_env(env), 0);
    t->os = tph_os_timer_create(timer_trampoline, t, &oe);
    if (t->os == NULL) {
        tph_os_free(t);
        return TPH_ENOMEM;
    }
    tph_object_created(&t->base, (uintptr_t)t->os, env);
    *out = t;
    return TPH_OK;
}

static tph_err arm(tph_timer *t, int64_t due, uint32_t window_ms) {
    if (!tph_object_arm_begin(&t->base)) return TPH_EBUSY;
    tph_object_owe_drain(&t->base);
    if (t->running > 0) {
        t->pending = true;
        t->pending_due = due;
        t->pending_window = window_ms;
    } else {
        t->armed = true;
        native_set(t, &due, window_ms);
    }
    tph_object_arm_end(&t->base);
    return TPH_OK;
}

tph_err tph_timer_set_after(tph_timer *t, uint64_t delay_ms, uint32_t window_ms) {
    if (t == NULL || delay_ms > (uint64_t)INT64_MAX / TPH_100NS_PER_MS) return TPH_EINVAL;
    /* Negative = relative (FILETIME convention). */
    return arm(t, -(int64_t)(delay_ms * TPH_100NS_PER_MS), window_ms);
}

tph_err tph_timer_set_at(tph_timer *t, uint64_t at_filetime, uint32_t window_ms) {
    if (t == NULL || at_filetime > (uint64_t)INT64_MAX) return TPH_EINVAL;
    return arm(t, (int64_t)at_filetime, window_ms);
}

static void disarm_locked(tph_timer *t) {
    t->pending = false;
    t->armed = false; /* a tick already queued is swallowed by the trampoline */
    native_set(t, NULL, 0);
}

tph_err tph_timer_disarm(tph_timer *t) {
    if (t == NULL) return TPH_EINVAL;
    tph_os_mutex_lock(&t->base.lock);
    disarm_locked(t);
    tph_os_mutex_unlock(&t->base.lock);
    return TPH_OK;
}

bool tph_timer_is_set(tph_timer *t) {
    bool set;
    if (t == NULL) return false;
    tph_os_mutex_lock(&t->base.lock);
    /* A deferred arming answers without asking the pool, and then no
     * IsThreadpoolTimerSet is recorded: the record announces a call made
     * (the sim's announcement rule found the record once written for a
     * call the short-circuit skipped). */
    set = t->pending;
    if (!set) {
        TPH_TRACE("api", "IsThreadpoolTimerSet", (uintptr_t)t->os, 0);
        set = tph_os_timer_is_set(t->os);
    }
    tph_os_mutex_unlock(&t->base.lock);
    return set;
}

static void drain(tph_timer *t, bool cancel_pending) {
    TPH_TRACE("api", "WaitForThreadpoolTimerCallbacks", (uintptr_t)t->os, cancel_pending);
    tph_os_timer_wait(t->os, cancel_pending);
}

tph_err tph_timer_wait(tph_timer *t) {
    if (t == NULL) return TPH_EINVAL;
    tph_object_drained(&t->base);
    drain(t, false);
    return TPH_OK;
}

tph_err tph_timer_stop_and_drain(tph_timer *t) {
    if (t == NULL) return TPH_EINVAL;
    tph_object_stop_begin(&t->base);
    tph_timer_disarm(t);
    tph_object_drained(&t->base);
    drain(t, false);
    tph_object_stop_end(&t->base);
    return TPH_OK;
}

tph_err tph_timer_cancel_pending(tph_timer *t) {
    if (t == NULL) return TPH_EINVAL;
    tph_object_drained(&t->base);
    drain(t, true);
    return TPH_OK;
}

tph_err tph_timer_close(tph_timer *t) {
    if (t == NULL) return TPH_EINVAL;
    tph_object_close_begin(&t->base);
    tph_timer_disarm(t);
    drain(t, false);
    TPH_TRACE("api", "CloseThreadpoolTimer", (uintptr_t)t->os, 0);
    tph_os_timer_close(t->os);
    tph_object_close_finish(&t->base);
    return TPH_OK;
}
