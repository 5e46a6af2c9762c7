#ifndef TPHEAL_PERIODIC_H
#define TPHEAL_PERIODIC_H
#include <tpheal/env.h>

/* A periodic timer; ticks may overlap one another. */
typedef struct tph_periodic tph_periodic;
typedef void (*tph_periodic_fn)(tph_periodic *, void *ctx);

/* period_ms in [1, 2^32-1]; anything else is TPH_EINVAL. */
tph_err tph_periodic_create(tph_periodic **out, uint64_t period_ms, tph_periodic_fn, void *ctx,
                            const tph_env *);
tph_err tph_periodic_start(tph_periodic *);                       /* first tick after one period */
tph_err tph_periodic_start_after(tph_periodic *, uint64_t due_ms);
tph_err tph_periodic_start_with_window(tph_periodic *, uint64_t due_ms, uint32_t window_ms);
/* Stops future ticks.  As with the native call, a tick already queued still
 * runs; stop_and_drain waits for it. */
tph_err tph_periodic_stop(tph_periodic *);
bool tph_periodic_is_running(tph_periodic *);
tph_err tph_periodic_wait(tph_periodic *);
tph_err tph_periodic_stop_and_drain(tph_periodic *);
tph_err tph_periodic_close(tph_periodic *);

#endif
