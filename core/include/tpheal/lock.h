#ifndef TPHEAL_LOCK_H
#define TPHEAL_LOCK_H
#include <tpheal/error.h>

/* A lock for the user's own state beside the pool: an exclusive SRW lock on
 * Windows, the model's mutex elsewhere -- where, under the checker
 * (docs/check.md), taking it is a scheduling point, a thread waiting for it
 * is seen as blocked (a deadlock is reported, not a hang), and a release
 * orders what the next holder reads.  Not recursive: taking it twice on one
 * thread deadlocks on Windows, as an SRW lock does (the model reports it). */
typedef struct tph_lock tph_lock;

tph_err tph_lock_create(tph_lock **out);
tph_err tph_lock_acquire(tph_lock *);
tph_err tph_lock_release(tph_lock *);
/* The lock must be free. */
tph_err tph_lock_close(tph_lock *);

#endif
