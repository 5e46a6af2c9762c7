#ifndef TPHEAL_TIMER_H
#define TPHEAL_TIMER_H
#include <tpheal/env.h>

/* A one-shot timer.  Re-arming it from its own callback takes effect after
 * that callback returns, so it never overlaps itself. */
typedef struct tph_timer tph_timer;
typedef void (*tph_timer_fn)(tph_timer *, void *ctx);

tph_err tph_timer_create(tph_timer **out, tph_timer_fn, void *ctx, const tph_env *);
tph_err tph_timer_set_after(tph_timer *, uint64_t delay_ms, uint32_t window_ms);
/* at: absolute system time (FILETIME, 100 ns units since 1601). */
tph_err tph_timer_set_at(tph_timer *, uint64_t at_filetime, uint32_t window_ms);
/* After a disarm returns, no callback of the disarmed arming starts: a tick
 * already queued is swallowed (the native disarm would let it run).  A
 * callback already running finishes; tph_timer_wait waits for it. */
tph_err tph_timer_disarm(tph_timer *);
bool tph_timer_is_set(tph_timer *);
/* A drain, not a wait for the due time: returns once the callbacks already
 * queued or running have returned (WaitForThreadpoolTimerCallbacks(FALSE)).
 * A tick not yet due is not waited for, so `set_after(t, 10, 0); wait(t)`
 * returns at once and the callback runs about 10 ms later.  To wait for the
 * callback itself, have it say so (a flag, a semaphore, a condition
 * variable) and wait for that; wait() then waits out its return.  A re-arm
 * made from the callback is not waited for either. */
tph_err tph_timer_wait(tph_timer *);
/* Disarm, then drain: once it returns, no callback of this timer runs until
 * it is armed again. */
tph_err tph_timer_stop_and_drain(tph_timer *);
/* A drain that also drops a tick queued but not yet started
 * (WaitForThreadpoolTimerCallbacks(TRUE)); a running callback is waited for. */
tph_err tph_timer_cancel_pending(tph_timer *);
tph_err tph_timer_close(tph_timer *);

#endif
