#ifndef TPHEAL_WORK_H
#define TPHEAL_WORK_H
#include <tpheal/env.h>

typedef struct tph_work tph_work;
typedef void (*tph_work_fn)(tph_work *, void *ctx);

tph_err tph_work_create(tph_work **out, tph_work_fn, void *ctx, const tph_env *);
/* Each submit queues one callback. */
tph_err tph_work_submit(tph_work *);
/* Waits for every queued and running callback (WaitFor...Callbacks(FALSE)). */
tph_err tph_work_wait(tph_work *);
/* Work cannot be disarmed, so this is the drain; kept for a uniform surface. */
tph_err tph_work_stop_and_drain(tph_work *);
/* Drops queued submissions and waits for running ones (WaitFor...(TRUE)). */
tph_err tph_work_cancel_pending(tph_work *);
/* Drains, then closes and frees. */
tph_err tph_work_close(tph_work *);

#endif
