/* I/O completion objects.  Every start must end in exactly one callback or one
 * cancel; the count of starts not yet ended is kept here (through the seam's
 * atomics) so a run-down can prove it left nothing behind. */
#include <tpheal/io.h>

#include "object.h"
#include "trace_point.h"

struct tph_io {
    tph_object base; /* first: the block is freed as a tph_object by a group */
    tph_os_io *os;
    tph_io_fn fn;
    volatile uint64_t outstanding;
};

static void TPH_OS_CALLBACK io_trampoline(tph_os_instance *inst, void *ctx, void *overlapped,
                                          uint32_t io_result, uintptr_t bytes, tph_os_io *os) {
    tph_io *io = (tph_io *)ctx;
    (void)inst;
    (void)os;
    /* Counted down before the user function: a run-down that the user
     * function itself waits on must not see this completion as outstanding. */
    tph_os_fetch_sub64(&io->outstanding, 1);
    io->fn(io, io->base.user_ctx, overlapped, io_result, bytes);
}

tph_err tph_io_create(tph_io **out, void *file_handle, tph_io_fn fn, void *ctx,
                      const tph_env *env) {
    tph_io *io;
    tph_os_env oe;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    if (file_handle == NULL || fn == NULL) return TPH_EINVAL;
    io = (tph_io *)tph_os_alloc(sizeof *io);
    if (io == NULL) return TPH_ENOMEM;
    tph_object_init(&io->base, "io", ctx);
    io->fn = fn;
    io->outstanding = 0;
    tph_env_to_os(env, &oe);
    TPH_TRACE("api", "CreateThreadpoolIo", tph_key_of_env(env), 0);
    io->os = tph_os_io_create(file_handle, io_trampoline, io, &oe);
    if (io->os == NULL) {
        tph_os_free(io);
        return TPH_ENOMEM;
    }
    tph_object_created(&io->base, (uintptr_t)io->os, env);
    *out = io;
    return TPH_OK;
}

tph_err tph_io_start(tph_io *io) {
    if (io == NULL) return TPH_EINVAL;
    if (!tph_object_arm_begin(&io->base)) return TPH_EBUSY;
    tph_object_owe_drain(&io->base);
    /* Counted before the native start: the completion it enables can only
     * follow the caller's overlapped call, which follows this return, but
     * counting first means the count can never go below zero whatever the
     * backend does. */
    tph_os_fetch_add64(&io->outstanding, 1);
    TPH_TRACE("api", "StartThreadpoolIo", (uintptr_t)io->os, 0);
    tph_os_io_start(io->os);
    tph_object_arm_end(&io->base);
    return TPH_OK;
}

tph_err tph_io_cancel(tph_io *io) {
    uint64_t n;
    if (io == NULL) return TPH_EINVAL;
    /* A cancel with no start outstanding would unbalance the native count
     * too (CancelThreadpoolIo has no way to refuse), so it is refused here. */
    n = tph_os_load64(&io->outstanding);
    do {
        if (n == 0) return TPH_EINVAL;
    } while (!tph_os_cas64(&io->outstanding, &n, n - 1));
    TPH_TRACE("api", "CancelThreadpoolIo", (uintptr_t)io->os, 0);
    tph_os_io_cancel(io->os);
    return TPH_OK;
}

uint64_t tph_io_outstanding(tph_io *io) { return io ? tph_os_load64(&io->outstanding) : 0; }

/* The run-down is a drain of the starts as well as the callbacks:
 * WaitForThreadpoolIoCallbacks(FALSE) does not return while a start is open
 * (conformance case io.wait_blocks_on_open_start; Wine's ntdll test asserts
 * the same of Windows).  So a start the caller neither issues nor cancels
 * blocks it for good -- the promise of io.h, not something the core can
 * refuse up front: a start whose completion is queued but whose callback has
 * not begun looks the same from here.  The core once answered an open start
 * with EBUSY after the wait, trusting a model that let the wait return; on
 * the real pool (tpheal-harness-realpool under Wine) that run-down never
 * came back.  EBUSY now means a start made on another thread during the
 * wait, which the object must not be freed under. */
static tph_err run_down(tph_io *io) {
    TPH_TRACE("api", "WaitForThreadpoolIoCallbacks", (uintptr_t)io->os, 0);
    tph_os_io_wait(io->os, false);
    return tph_os_load64(&io->outstanding) == 0 ? TPH_OK : TPH_EBUSY;
}

tph_err tph_io_run_down(tph_io *io) {
    if (io == NULL) return TPH_EINVAL;
    tph_object_drained(&io->base);
    return run_down(io);
}

tph_err tph_io_close(tph_io *io) {
    if (io == NULL) return TPH_EINVAL;
    tph_object_close_begin(&io->base);
    if (run_down(io) != TPH_OK) {
        /* A start raced the close: still open and usable, the caller ends
         * it and closes again.  Freeing now would let that operation
         * complete into freed memory. */
        tph_object_stop_end(&io->base);
        return TPH_EBUSY;
    }
    TPH_TRACE("api", "CloseThreadpoolIo", (uintptr_t)io->os, 0);
    tph_os_io_close(io->os);
    /* The fail-fast for a start never run down fires in here, after the
     * run-down and the close. */
    tph_object_close_finish(&io->base);
    return TPH_OK;
}
