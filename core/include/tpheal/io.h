#ifndef TPHEAL_IO_H
#define TPHEAL_IO_H
#include <tpheal/env.h>

/* An I/O completion object bound to a file handle.  Call tph_io_start before
 * every overlapped operation; if the operation fails synchronously, call
 * tph_io_cancel.  Every start ends in exactly one callback or one cancel.  A
 * cancel ends a start that has returned: one racing a start still in progress
 * may reach the pool before that start's native call. */
typedef struct tph_io tph_io;
typedef void (*tph_io_fn)(tph_io *, void *ctx, void *overlapped, uint32_t io_result,
                          uintptr_t bytes);

tph_err tph_io_create(tph_io **out, void *file_handle, tph_io_fn, void *ctx, const tph_env *);
tph_err tph_io_start(tph_io *);
tph_err tph_io_cancel(tph_io *);
/* Starts not yet ended by a callback or a cancel. */
uint64_t tph_io_outstanding(tph_io *);
/* Waits until every started operation has ended by its callback or a cancel
 * (WaitForThreadpoolIoCallbacks(FALSE) waits for open starts too): a start
 * never issued nor cancelled blocks it for good, on Windows as in the model.
 * TPH_EBUSY: a start made on another thread during the wait; the object
 * stays open (close: not freed). */
tph_err tph_io_run_down(tph_io *);
/* Runs down (above), then closes and frees. */
tph_err tph_io_close(tph_io *);

#endif
