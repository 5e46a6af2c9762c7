/* Periodic timers.  Ticks may overlap one another (a tick is dispatched at its
 * due time whether or not the previous one has returned), so unlike the
 * one-shot timer nothing is deferred here. */
#include <tpheal/periodic.h>

#include "object.h"
#include "trace_point.h"

struct tph_periodic {
    tph_object base; /* first: the block is freed as a tph_object by a group */
    tph_os_timer *os;
    tph_periodic_fn fn;
    uint32_t period_ms;
};

#define TPH_100NS_PER_MS 10000

static void TPH_OS_CALLBACK periodic_trampoline(tph_os_instance *inst, void *ctx,
                                                tph_os_timer *os) {
    tph_periodic *p = (tph_periodic *)ctx;
    (void)inst;
    (void)os;
    p->fn(p, p->base.user_ctx);
}

tph_err tph_periodic_create(tph_periodic **out, uint64_t period_ms, tph_periodic_fn fn, void *ctx,
                            const tph_env *env) {
    tph_periodic *p;
    tph_os_env oe;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    /* The native period is a DWORD of milliseconds, and 0 means one-shot:
     * both ends are rejected here rather than silently truncated. */
    if (fn == NULL || period_ms == 0 || period_ms > UINT32_MAX) return TPH_EINVAL;
    p = (tph_periodic *)tph_os_alloc(sizeof *p);
    if (p == NULL) return TPH_ENOMEM;
    tph_object_init(&p->base, "periodic", ctx);
    p->fn = fn;
    p->period_ms = (uint32_t)period_ms;
    tph_env_to_os(env, &oe);
    TPH_TRACE("api", "CreateThreadpoolTimer", tph_key_of_env(env), 0);
    p->os = tph_os_timer_create(periodic_trampoline, p, &oe);
    if (p->os == NULL) {
        tph_os_free(p);
        return TPH_ENOMEM;
    }
    tph_object_created(&p->base, (uintptr_t)p->os, env);
    *out = p;
    return TPH_OK;
}

tph_err tph_periodic_start_with_window(tph_periodic *p, uint64_t due_ms, uint32_t window_ms) {
    int64_t due;
    if (p == NULL || due_ms > (uint64_t)INT64_MAX / TPH_100NS_PER_MS) return TPH_EINVAL;
    due = -(int64_t)(due_ms * TPH_100NS_PER_MS);
    if (!tph_object_arm_begin(&p->base)) return TPH_EBUSY;
    tph_object_owe_drain(&p->base);
    TPH_TRACE("api", "SetThreadpoolTimer", (uintptr_t)p->os, (uint64_t)due);
    tph_os_timer_set(p->os, &due, p->period_ms, window_ms);
    tph_object_arm_end(&p->base);
    return TPH_OK;
}

tph_err tph_periodic_start(tph_periodic *p) {
    if (p == NULL) return TPH_EINVAL;
    return tph_periodic_start_with_window(p, p->period_ms, 0);
}

tph_err tph_periodic_start_after(tph_periodic *p, uint64_t due_ms) {
    return tph_periodic_start_with_window(p, due_ms, 0);
}

tph_err tph_periodic_stop(tph_periodic *p) {
    if (p == NULL) return TPH_EINVAL;
    TPH_TRACE("api", "SetThreadpoolTimer", (uintptr_t)p->os, 0);
    tph_os_timer_set(p->os, NULL, 0, 0);
    return TPH_OK;
}

bool tph_periodic_is_running(tph_periodic *p) {
    if (p == NULL) return false;
    TPH_TRACE("api", "IsThreadpoolTimerSet", (uintptr_t)p->os, 0);
    return tph_os_timer_is_set(p->os);
}

static void drain(tph_periodic *p) {
    TPH_TRACE("api", "WaitForThreadpoolTimerCallbacks", (uintptr_t)p->os, 0);
    tph_os_timer_wait(p->os, false);
}

tph_err tph_periodic_wait(tph_periodic *p) {
    if (p == NULL) return TPH_EINVAL;
    tph_object_drained(&p->base);
    drain(p);
    return TPH_OK;
}

tph_err tph_periodic_stop_and_drain(tph_periodic *p) {
    if (p == NULL) return TPH_EINVAL;
    tph_object_stop_begin(&p->base);
    tph_periodic_stop(p);
    tph_object_drained(&p->base);
    drain(p);
    tph_object_stop_end(&p->base);
    return TPH_OK;
}

tph_err tph_periodic_close(tph_periodic *p) {
    if (p == NULL) return TPH_EINVAL;
    tph_object_close_begin(&p->base);
    tph_periodic_stop(p);
    drain(p);
    TPH_TRACE("api", "CloseThreadpoolTimer", (uintptr_t)p->os, 0);
    tph_os_timer_close(p->os);
    tph_object_close_finish(&p->base);
    return TPH_OK;
}
