/* The self-heal registry's entry type and the operations the healer needs
 * from it.  Internal: defined by registry.c, used by healer.c (the layer
 * above) and the tests; it declares nothing defined above the registry.
 *
 * Everything here exists only in a TPHEAL_SELF_HEAL build. */
#ifndef TPHEAL_REGISTRY_H
#define TPHEAL_REGISTRY_H

#include <tpheal/config.h>

/* Forgets every entry (process_state.h: tph_process_state_reset); in both builds. */
void tph_registry_reset_process(void);

#if TPHEAL_SELF_HEAL

#include "os.h"
#include "registration.h"

/* What the library knows about one pool.  Every counter and stamp is touched
 * from several threads (cancelling callers, pool threads running the repair,
 * the healer), so each goes through the seam's atomics; `next`, `serial` and
 * `linked` are only touched under the registry lock. */
typedef struct tph_pool_entry {
    tph_pool_key_t key;
    /* Made when the pool is first registered, because only a *submit* releases
     * a stalled pool and by the time one is needed the pool may be stuck;
     * allocating then is the wrong moment.  Never NULL in a published entry. */
    tph_os_work *repair;
    /* Live tpheal objects claiming this pool. */
    volatile uint64_t objects;
    /* Holders of the memory: the registry's list while linked, each
     * registration, and a tick that is visiting the entry.  A retired entry
     * must outlive whoever still looks at it. */
    volatile uint32_t refs;
    /* The three stamps are only ever raised (fetch-max): several threads
     * publish them, and a thread that read the clock and was preempted before
     * storing would otherwise put an older reading over a newer one -- for the
     * cancellation stamp that hides an unanswered cancellation. */
    volatile uint64_t last_cancelled;
    volatile uint64_t last_started;
    volatile uint64_t last_submitted;
    /* Repairs handed to the pool and not yet started.  A count, not a stamp
     * comparison: once a retry can put two in the pool, "submitted after
     * started" reads idle while one is still queued. */
    volatile uint32_t outstanding;
    /* Overdue episodes since a repair last actually ran. */
    volatile uint32_t overdue_episodes;
    /* Dispatches of this entry's own repair work: proves the pre-created
     * object (not some fresh one) is what got submitted. */
    volatile uint64_t runs;
    /* Registry bookkeeping, under the registry lock. */
    struct tph_pool_entry *next;
    uint64_t serial; /* registration order, for the tick's chunked walk */
    bool linked;
} tph_pool_entry;

/* Stamps are on tph_os_interrupt_time(). */
uint64_t tph_heal_now(void);

/* A cancellation stands unanswered by a dispatch of our own repair. */
bool tph_entry_unhealed(tph_pool_entry *);
/* A repair was handed to the pool and has not started. */
bool tph_entry_repair_in_flight(tph_pool_entry *);
/* The one retirement rule, shared by both retirement sites. */
bool tph_entry_is_retirable(tph_pool_entry *);
/* The stamp and count primitives (fetch-max publication, saturating count),
 * each defined once and used by every path that stamps. */
void tph_entry_stamp_cancelled(tph_pool_entry *, uint64_t at);
void tph_entry_stamp_started(tph_pool_entry *, uint64_t at);
/* Raises `outstanding` too: the two must agree that a submission happened. */
void tph_entry_stamp_submitted(tph_pool_entry *, uint64_t at);
void tph_entry_note_repair_started(tph_pool_entry *);
/* Count one overdue episode; returns how many since the last run. */
uint32_t tph_entry_note_overdue(tph_pool_entry *);
/* Hand the entry's pre-created repair to its pool (tick and inline path). */
void tph_entry_submit_repair(tph_pool_entry *);
/* Drop one hold on the memory; the last one drains, closes and frees.
 * Never call with the registry lock held. */
void tph_entry_unref(tph_pool_entry *);

/* Fill `out` with up to `max` entries registered after `after_serial`, in
 * registration order, each with a reference the caller must unref.  Returns
 * how many. */
size_t tph_registry_snapshot(uint64_t after_serial, tph_pool_entry **out, size_t max);
/* Retire every entry nobody needs (objects, owed repair, queued repair). */
void tph_registry_retire_idle(void);

#endif /* TPHEAL_SELF_HEAL */
#endif
