/* Work objects: each submit queues one callback. */
#include <tpheal/work.h>

#include "object.h"
#include "trace_point.h"

struct tph_work {
    tph_object base; /* first: the block is freed as a tph_object by a group */
    tph_os_work *os;
    tph_work_fn fn;
};

static void TPH_OS_CALLBACK work_trampoline(tph_os_instance *inst, void *ctx, tph_os_work *os) {
    tph_work *w = (tph_work *)ctx;
    (void)inst;
    (void)os;
    w->fn(w, w->base.user_ctx);
}

tph_err tph_work_create(tph_work **out, tph_work_fn fn, void *ctx, const tph_env *env) {
    tph_work *w;
    tph_os_env oe;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    if (fn == NULL) return TPH_EINVAL;
    w = (tph_work *)tph_os_alloc(sizeof *w);
    if (w == NULL) return TPH_ENOMEM;
    tph_object_init(&w->base, "work", ctx);
    w->fn = fn;
    tph_env_to_os(env, &oe);
    TPH_TRACE("api", "CreateThreadpoolWork", tph_key_of_env(env), 0);
    w->os = tph_os_work_create(work_trampoline, w, &oe);
    if (w->os == NULL) {
        tph_os_free(w);
        return TPH_ENOMEM;
    }
    tph_object_created(&w->base, (uintptr_t)w->os, env);
    *out = w;
    return TPH_OK;
}

tph_err tph_work_submit(tph_work *w) {
    if (w == NULL) return TPH_EINVAL;
    if (!tph_object_arm_begin(&w->base)) return TPH_EBUSY;
    tph_object_owe_drain(&w->base);
    TPH_TRACE("api", "SubmitThreadpoolWork", (uintptr_t)w->os, 0);
    tph_os_work_submit(w->os);
    tph_object_arm_end(&w->base);
    return TPH_OK;
}

static void drain(tph_work *w, bool cancel_pending) {
    TPH_TRACE("api", "WaitForThreadpoolWorkCallbacks", (uintptr_t)w->os, cancel_pending);
    tph_os_work_wait(w->os, cancel_pending);
}

tph_err tph_work_wait(tph_work *w) {
    if (w == NULL) return TPH_EINVAL;
    tph_object_drained(&w->base);
    drain(w, false);
    return TPH_OK;
}

tph_err tph_work_stop_and_drain(tph_work *w) { return tph_work_wait(w); }

tph_err tph_work_cancel_pending(tph_work *w) {
    if (w == NULL) return TPH_EINVAL;
    /* Dropping queued work cannot sever a pool (only a removed wait packet
     * was seen to), and the call waits for running callbacks: it discharges
     * the drain like a wait does. */
    tph_object_drained(&w->base);
    drain(w, true);
    return TPH_OK;
}

tph_err tph_work_close(tph_work *w) {
    if (w == NULL) return TPH_EINVAL;
    tph_object_close_begin(&w->base);
    drain(w, false);
    TPH_TRACE("api", "CloseThreadpoolWork", (uintptr_t)w->os, 0);
    tph_os_work_close(w->os);
    tph_object_close_finish(&w->base);
    return TPH_OK;
}
