/* Wait objects: one callback per arm, on a signal or a timeout.
 *
 * The stall (docs/architecture.md, docs/pool-facts.md) is triggered by
 * REMOVING a wait packet already queued on a cold pool.  A disarm never
 * removes one and a draining wait never reaches the removal, so every path
 * here that is not an explicit cancellation drains with FALSE -- including
 * close, where a cancelling drain would be the stall trigger on every
 * teardown. */
#include <tpheal/wait.h>

#include "healer.h"
#include "object.h"
#include "obligation.h"
#include "trace_point.h"

struct tph_wait {
    tph_object base; /* first: the block is freed as a tph_object by a group */
    tph_os_wait *os;
    tph_handle *handle;
    tph_wait_fn fn;
};

static void TPH_OS_CALLBACK wait_trampoline(tph_os_instance *inst, void *ctx, tph_os_wait *os,
                                            uint32_t result) {
    tph_wait *w = (tph_wait *)ctx;
    (void)inst;
    (void)os;
    w->fn(w, w->base.user_ctx,
          result == TPH_OS_WAIT_TIMEOUT ? TPH_WAIT_TIMED_OUT : TPH_WAIT_SIGNALED);
}

tph_err tph_wait_create(tph_wait **out, tph_handle *h, tph_wait_fn fn, void *ctx,
                        const tph_env *env) {
    tph_wait *w;
    tph_os_env oe;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    if (h == NULL || fn == NULL) return TPH_EINVAL;
    w = (tph_wait *)tph_os_alloc(sizeof *w);
    if (w == NULL) return TPH_ENOMEM;
    tph_object_init(&w->base, "wait", ctx);
    w->handle = h;
    w->fn = fn;
    tph_env_to_os(env, &oe);
    TPH_TRACE("api", "CreateThreadpoolWait", tph_key_of_env(env), 0);
    w->os = tph_os_wait_create(wait_trampoline, w, &oe);
    if (w->os == NULL) {
        tph_os_free(w);
        return TPH_ENOMEM;
    }
    tph_object_created(&w->base, (uintptr_t)w->os, env);
    *out = w;
    return TPH_OK;
}

tph_err tph_wait_arm(tph_wait *w, uint32_t timeout_ms) {
    if (w == NULL) return TPH_EINVAL;
    if (!tph_object_arm_begin(&w->base)) return TPH_EBUSY;
    tph_object_owe_drain(&w->base);
    TPH_TRACE("api", "SetThreadpoolWait", (uintptr_t)w->os, timeout_ms);
    tph_os_wait_set(w->os, tph_handle_os(w->handle),
                    timeout_ms == TPH_WAIT_FOREVER ? TPH_OS_INFINITE : timeout_ms);
    tph_object_arm_end(&w->base);
    return TPH_OK;
}

static void disarm(tph_wait *w) {
    TPH_TRACE("api", "SetThreadpoolWait", (uintptr_t)w->os, 0);
    tph_os_wait_set(w->os, NULL, 0);
}

static void drain(tph_wait *w, bool cancel_pending) {
    TPH_TRACE("api", "WaitForThreadpoolWaitCallbacks", (uintptr_t)w->os, cancel_pending);
    tph_os_wait_wait(w->os, cancel_pending);
}

tph_err tph_wait_disarm(tph_wait *w) {
    if (w == NULL) return TPH_EINVAL;
    disarm(w);
    return TPH_OK;
}

tph_err tph_wait_wait(tph_wait *w) {
    if (w == NULL) return TPH_EINVAL;
    tph_object_drained(&w->base);
    drain(w, false);
    return TPH_OK;
}

tph_err tph_wait_stop_and_drain(tph_wait *w) {
    if (w == NULL) return TPH_EINVAL;
    tph_object_stop_begin(&w->base);
    disarm(w);
    tph_object_drained(&w->base);
    drain(w, false);
    tph_object_stop_end(&w->base);
    return TPH_OK;
}

/* The native cancellation both public forms share. */
static void cancel_pending(tph_wait *w) {
    tph_object_stop_begin(&w->base);
    disarm(w);
    tph_object_drained(&w->base);
    /* TRUE: drops a queued callback.  This is the removal that can sever a
     * cold pool. */
    drain(w, true);
    tph_object_stop_end(&w->base);
}

#if TPHEAL_SELF_HEAL
tph_err tph_wait_try_cancel_pending(tph_wait *w) {
    if (w == NULL) return TPH_EINVAL;
    cancel_pending(w);
    /* Marked after the cancelling call has returned: the question the healer
     * asks is whether the pool dispatched after the removal, and a dispatch
     * seen while the removal was still in progress says nothing about that. */
    if (!tph_owe_repair(&w->base.registration))
        tph_obligation_untracked(w->base.registration.key);
    return TPH_OK;
}
#endif

tph_err tph_wait_try_cancel_pending_no_heal_tracking(tph_wait *w) {
    if (w == NULL) return TPH_EINVAL;
    cancel_pending(w);
    return TPH_OK;
}

tph_err tph_wait_close(tph_wait *w) {
    if (w == NULL) return TPH_EINVAL;
    tph_object_close_begin(&w->base);
    disarm(w);
    drain(w, false); /* never TRUE: see the top of this file */
    TPH_TRACE("api", "CloseThreadpoolWait", (uintptr_t)w->os, 0);
    tph_os_wait_close(w->os);
    tph_object_close_finish(&w->base);
    return TPH_OK;
}
