#ifndef TPHEAL_WAIT_H
#define TPHEAL_WAIT_H
#include <tpheal/env.h>
#include <tpheal/handle.h>

typedef struct tph_wait tph_wait;
typedef enum tph_wait_result { TPH_WAIT_SIGNALED = 0, TPH_WAIT_TIMED_OUT = 1 } tph_wait_result;
typedef void (*tph_wait_fn)(tph_wait *, void *ctx, tph_wait_result);

#define TPH_WAIT_FOREVER 0xFFFFFFFFu

/* The wait borrows the handle: keep it open until the wait is closed. */
tph_err tph_wait_create(tph_wait **out, tph_handle *, tph_wait_fn, void *ctx, const tph_env *);
/* One-shot: one callback per arm (signal or timeout). */
tph_err tph_wait_arm(tph_wait *, uint32_t timeout_ms /* TPH_WAIT_FOREVER */);
/* Stops watching; a callback already queued still runs. */
tph_err tph_wait_disarm(tph_wait *);
tph_err tph_wait_wait(tph_wait *);
/* Disarm, then drain. */
tph_err tph_wait_stop_and_drain(tph_wait *);
#if TPHEAL_SELF_HEAL
/* Disarm and drop a queued callback.  The removal can sever a cold pool (see
 * docs/architecture.md); this records the pool as owed a repair, which the
 * healer then delivers.  Exists only in the self-heal build. */
tph_err tph_wait_try_cancel_pending(tph_wait *);
#endif
/* The same cancellation with no repair arranged: the caller owns the risk. */
tph_err tph_wait_try_cancel_pending_no_heal_tracking(tph_wait *);
tph_err tph_wait_close(tph_wait *);

#endif
