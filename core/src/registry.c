/* The self-heal registry: which pools tpheal has objects on, which of them a
 * cancellation may have severed, and the work object each repair submits.
 *
 * Storage is an intrusive list guarded by one static seam mutex.  Intrusive
 * so that registering a pool costs exactly the entry's own allocation: a
 * growable array would add an allocation that can fail on its own and a
 * second failure path to keep honest. */
#include <string.h>

#include <tpheal/heal.h>

#include "registry.h"
#include "trace_point.h"

#if TPHEAL_SELF_HEAL

static tph_os_mutex registry_lock;
/* Serialises the making of entries (tph_register).  Lock order: the healer
 * slot, then this, then the registry lock. */
static tph_os_mutex create_lock;
static tph_pool_entry *registry_head;
static tph_pool_entry *registry_tail;
static uint64_t registry_serial;

/* ---- clock and entry predicates ------------------------------------------ */

uint64_t tph_heal_now(void) {
    /* Interrupt time: only the order of two readings is ever asked, and it is
     * the cheap monotonic counter.  It advances on the system tick, so two
     * events in one tick read equal -- see tph_entry_unhealed for which way
     * that falls. */
    return tph_os_interrupt_time();
}

bool tph_entry_unhealed(tph_pool_entry *e) {
    uint64_t cancelled = tph_os_load64(&e->last_cancelled);
    /* Zero means no cancellation ever, which is healthy.  Equal stamps count
     * as unhealed: within one clock tick we cannot tell whether the dispatch
     * came before the cancellation, and guessing "healed" could leave a pool
     * stalled, while guessing "unhealed" costs one spare submit. */
    return cancelled != 0 && cancelled >= tph_os_load64(&e->last_started);
}

bool tph_entry_repair_in_flight(tph_pool_entry *e) {
    return tph_os_load32(&e->outstanding) > 0;
}

bool tph_entry_is_retirable(tph_pool_entry *e) {
    /* Shared by release and retire_idle.  When the "nothing queued" condition
     * lived in only one of them, the other could still retire an entry whose
     * repair the pool had not dispatched, and the teardown's drain then
     * waited on a pool suspected of never dispatching -- possibly on the
     * healer's only thread, which ends self-heal for the whole process. */
    return tph_os_load64(&e->objects) == 0 && !tph_entry_unhealed(e) &&
           !tph_entry_repair_in_flight(e);
}

void tph_entry_stamp_cancelled(tph_pool_entry *e, uint64_t at) {
    /* fetch-max, not a store: any thread may cancel, and one that read the
     * clock, was preempted past a repair and a newer cancellation, and then
     * stored, would put the pool back to "healed" with a cancellation
     * unanswered. */
    tph_os_fetch_max64(&e->last_cancelled, at);
}

void tph_entry_stamp_started(tph_pool_entry *e, uint64_t at) {
    /* fetch-max too: after a retry two repairs can run at once and publish
     * out of order, and the stamps are only meaningful compared together. */
    tph_os_fetch_max64(&e->last_started, at);
}

uint32_t tph_entry_note_overdue(tph_pool_entry *e) {
    return tph_os_fetch_add32(&e->overdue_episodes, 1) + 1;
}

void tph_entry_stamp_submitted(tph_pool_entry *e, uint64_t at) {
    /* fetch-max because the inline fallback lets any cancelling thread
     * submit: a stale stamp landing last would make the repair look overdue
     * early, and under fail-fast enough early retries end the process.  The
     * count is a plain add so every submission is counted even when its
     * stamp loses the race. */
    tph_os_fetch_max64(&e->last_submitted, at);
    tph_os_fetch_add32(&e->outstanding, 1);
}

void tph_entry_note_repair_started(tph_pool_entry *e) {
    /* Saturating: a wrap would turn "nothing queued" into four billion queued
     * and pin the entry forever, worse than the double decrement it hides. */
    uint32_t seen = tph_os_load32(&e->outstanding);
    while (seen != 0 && !tph_os_cas32(&e->outstanding, &seen, seen - 1)) {
    }
}

void tph_entry_submit_repair(tph_pool_entry *e) {
    TPH_TRACE("heal", "repair-submitted", e->key, tph_os_load64(&e->runs));
    /* Counted before the submit, never after: the pool may run the callback
     * the instant it has the work, and a callback that lowered the count
     * before we raised it would leave the count saying "nothing queued" with
     * one queued -- and the saturating decrement could not even undo it. */
    {
        uint64_t at = tph_heal_now();
        /* The window the fetch-max in tph_entry_stamp_submitted exists for,
         * named for the same reason as cancel-clock-read (scenario
         * submit-stamp-published-late). */
        TPH_TRACE("heal", "submit-clock-read", e->key, at);
        tph_entry_stamp_submitted(e, at);
    }
    TPH_TRACE("api", "SubmitThreadpoolWork", e->key, 0);
    tph_os_work_submit(e->repair);
}

/* ---- the repair callback ------------------------------------------------- */

static void TPH_OS_CALLBACK repair_callback(tph_os_instance *instance, void *ctx,
                                           tph_os_work *work) {
    tph_pool_entry *e = (tph_pool_entry *)ctx;
    (void)instance;
    (void)work;
    /* The callback's work is nothing: the submit is what frees a stalled
     * pool, and running here is only the proof that it did.  The context is
     * the entry, valid for as long as a callback can run, because an entry's
     * teardown drains this work before freeing it.
     *
     * Stamp and count first: together they make the entry retirable, so from
     * here a retirement can overlap this still-running callback -- which is
     * exactly the window the teardown's drain covers. */
    tph_entry_stamp_started(e, tph_heal_now());
    tph_entry_note_repair_started(e);
    TPH_TRACE("heal", "repair-started", e->key, 0);
    /* The write a teardown without a drain would make into freed memory. */
    tph_os_fetch_add64(&e->runs, 1);
    /* The pool dispatched, so any overdue episode before this is over. */
    tph_os_store32(&e->overdue_episodes, 0);
    TPH_TRACE("heal", "repair-ran", e->key, tph_os_load64(&e->runs));
}

/* ---- entry lifetime ------------------------------------------------------ */

static void entry_teardown(tph_pool_entry *e) {
    if (e->repair != NULL) {
        /* Drain before close: closing does not wait for a running callback,
         * and a repair already running would go on writing into this entry
         * after it was freed.  Draining (not cancelling) waits only for what
         * is queued or running, and retirement guarantees nothing is queued. */
        TPH_TRACE("api", "WaitForThreadpoolWorkCallbacks", e->key, 0);
        tph_os_work_wait(e->repair, false);
        TPH_TRACE("heal", "repair-closed", e->key, tph_os_load64(&e->runs));
        TPH_TRACE("api", "CloseThreadpoolWork", e->key, 0);
        tph_os_work_close(e->repair);
    }
    tph_os_free(e);
}

void tph_entry_unref(tph_pool_entry *e) {
    if (tph_os_fetch_sub32(&e->refs, 1) == 1) entry_teardown(e);
}

static void entry_ref(tph_pool_entry *e) { tph_os_fetch_add32(&e->refs, 1); }

/* Under the lock.  The list's reference moves to the caller, who drops it
 * after unlocking. */
static void unlink_locked(tph_pool_entry *e) {
    tph_pool_entry **at = &registry_head;
    tph_pool_entry *prev = NULL;
    while (*at != NULL && *at != e) {
        prev = *at;
        at = &(*at)->next;
    }
    if (*at == NULL) return;
    *at = e->next;
    if (registry_tail == e) registry_tail = prev;
    e->next = NULL;
    e->linked = false;
}

static tph_pool_entry *find_locked(tph_pool_key_t key) {
    tph_pool_entry *e;
    for (e = registry_head; e != NULL; e = e->next)
        if (e->key == key) return e;
    return NULL;
}

/* ---- registration -------------------------------------------------------- */

/* Give a new entry its work object, with the entry itself as the context (the
 * entry must exist first, and the context needs no storage of its own whose
 * lifetime could differ from the entry's). */
static bool arm_repair(tph_pool_entry *e) {
    tph_os_env env;
    memset(&env, 0, sizeof env);
    env.pool = (tph_os_pool *)e->key;
    env.priority = TPH_OS_PRIORITY_NORMAL;
    TPH_TRACE("api", "CreateThreadpoolWork", e->key, 0);
    e->repair = tph_os_work_create(repair_callback, e, &env);
    return e->repair != NULL;
}

/* A fresh entry with its repair work, not yet published; NULL when either
 * the allocation or the work object failed.
 *
 * Best effort: a failure leaves the caller's registration empty but keyed,
 * and the object is still created -- failing the caller's request over our
 * own bookkeeping would turn an unrelated allocation failure into theirs.
 * The cancellation path registers again. */
static tph_pool_entry *create_entry(tph_pool_key_t key) {
    tph_pool_entry *e = (tph_pool_entry *)tph_os_alloc(sizeof *e);
    if (e == NULL) return NULL;
    memset(e, 0, sizeof *e);
    e->key = key;
    if (!arm_repair(e)) {
        /* Never published: nothing can reach it, nothing to drain. */
        tph_os_free(e);
        return NULL;
    }
    tph_os_store64(&e->objects, 1);
    tph_os_store32(&e->refs, 2); /* the list's and the registration's */
    return e;
}

/* Under the registry lock: append to the list in registration order. */
static void publish_locked(tph_pool_entry *e) {
    e->serial = ++registry_serial;
    e->linked = true;
    if (registry_tail != NULL)
        registry_tail->next = e;
    else
        registry_head = e;
    registry_tail = e;
}

/* Under the registry lock: a claim on the entry for `key`, if it has one. */
static tph_pool_entry *claim_existing_locked(tph_pool_key_t key, uint64_t *objects) {
    tph_pool_entry *e = find_locked(key);
    if (e == NULL) return NULL;
    *objects = tph_os_fetch_add64(&e->objects, 1) + 1;
    entry_ref(e);
    return e;
}

tph_registration tph_register(tph_pool_key_t key) {
    tph_registration r;
    tph_pool_entry *e;
    uint64_t objects = 0;
    r.key = key;
    r.entry = NULL;
    tph_os_mutex_lock(&registry_lock);
    e = claim_existing_locked(key, &objects);
    tph_os_mutex_unlock(&registry_lock);
    if (e == NULL) {
        /* A new entry is made under the creation lock, not the registry
         * lock: making one records trace events (CreateThreadpoolWork), and a
         * trace hook may read the registry -- under the registry lock that
         * re-took a non-recursive lock on its own thread, a deadlock on Win32
         * (test_heal_hook).  The creation lock still keeps two first objects
         * on one pool from each making an entry: the second finds the
         * first's in the look-up below. */
        tph_os_mutex_lock(&create_lock);
        tph_os_mutex_lock(&registry_lock);
        e = claim_existing_locked(key, &objects);
        tph_os_mutex_unlock(&registry_lock);
        if (e == NULL) {
            e = create_entry(key);
            if (e == NULL) {
                tph_os_mutex_unlock(&create_lock);
                TPH_TRACE("heal", "register-failed", key, 0);
                return r;
            }
            tph_os_mutex_lock(&registry_lock);
            publish_locked(e);
            tph_os_mutex_unlock(&registry_lock);
            tph_os_mutex_unlock(&create_lock);
            TPH_TRACE("heal", "entry-created", key, e->serial);
            r.entry = e;
            return r;
        }
        tph_os_mutex_unlock(&create_lock);
    }
    TPH_TRACE("heal", "registered", key, objects);
    r.entry = e;
    return r;
}

void tph_registration_release(tph_registration *r) {
    tph_pool_entry *e = r->entry;
    tph_pool_entry *retired = NULL;
    uint64_t remaining;
    if (e == NULL) return;
    r->entry = NULL;
    tph_os_mutex_lock(&registry_lock);
    remaining = tph_os_fetch_sub64(&e->objects, 1) - 1;
    /* An entry owing a repair outlives its last object: retiring it would
     * throw the repair away at the moment it is needed.  The tick retires it
     * once the repair has run. */
    if (e->linked && tph_entry_is_retirable(e)) {
        unlink_locked(e);
        retired = e;
    }
    tph_os_mutex_unlock(&registry_lock);
    if (retired != NULL) {
        TPH_TRACE("heal", "entry-retired", e->key, remaining);
        /* Outside the lock: the teardown drains a pool, and one slow pool
         * must not stall every other pool's registration and release. */
        tph_entry_unref(retired);
    } else {
        TPH_TRACE("heal", "released", e->key, remaining);
    }
    tph_entry_unref(e);
}

tph_registration tph_registration_reclaim(const tph_registration *r) {
    return tph_register(r->key);
}

/* ---- cancellation ---------------------------------------------------------- */

static bool mark_and_arrange_repair(tph_pool_entry *e, tph_healer_start_fn *start) {
    uint64_t at = tph_heal_now();
    /* Zero is reserved for "never cancelled"; a clock that happens to read
     * zero must still leave a mark. */
    if (at == 0) at = 1;
    /* Between the clock read and the publish: the window the fetch-max in
     * tph_entry_stamp_cancelled exists for.  Named so a scenario can park a
     * canceller here across a repair and a newer cancellation (scenario
     * cancel-stamp-published-late); without it no schedule ever spanned a
     * clock tick inside the window and a plain store went uncaught. */
    TPH_TRACE("heal", "cancel-clock-read", e->key, at);
    /* Stamp before starting the healer, so its first tick cannot run before
     * the entry it was started for says it is owed. */
    tph_entry_stamp_cancelled(e, at);
    TPH_TRACE("heal", "cancelled", e->key, at);
    /* No registry lock here: starting the healer registers its own pool. */
    if (start()) return true;
    /* No healer means no tick will ever come, so do now what a tick would:
     * reporting "tracked" while arranging nothing would make the cancel's
     * safety claim silently false. */
    TPH_TRACE("heal", "repair-submitted-inline", e->key, 0);
    tph_entry_submit_repair(e);
    return true;
}

bool tph_registry_owe_repair(const tph_registration *r, tph_healer_start_fn *start) {
    tph_registration again;
    bool tracked;
    if (r->entry != NULL) return mark_and_arrange_repair(r->entry, start);
    /* The object's own registration failed.  Allocating now is the lesser
     * evil: the alternative is not "repair later" but "never repair".  The
     * mark keeps the entry alive past the release below, since an owed
     * repair makes it unretirable. */
    again = tph_register(r->key);
    if (again.entry == NULL) {
        TPH_TRACE("heal", "cancel-untracked", r->key, 0);
        return false;
    }
    tracked = mark_and_arrange_repair(again.entry, start);
    tph_registration_release(&again);
    return tracked;
}

bool tph_registry_owe_repair_claimed(const tph_registration *r, tph_healer_start_fn *start) {
    /* A claim taken before a group release: when it holds no entry it pinned
     * nothing, so the pool may already be freed, and registering now would
     * create a work object on a dead pool.  Report instead of retrying. */
    if (r->entry == NULL) {
        TPH_TRACE("heal", "cancel-untracked", r->key, 0);
        return false;
    }
    return mark_and_arrange_repair(r->entry, start);
}

/* ---- the healer's view ---------------------------------------------------- */

size_t tph_registry_snapshot(uint64_t after_serial, tph_pool_entry **out, size_t max) {
    size_t n = 0;
    tph_pool_entry *e;
    tph_os_mutex_lock(&registry_lock);
    for (e = registry_head; e != NULL && n < max; e = e->next) {
        if (e->serial <= after_serial) continue;
        entry_ref(e);
        out[n++] = e;
    }
    tph_os_mutex_unlock(&registry_lock);
    return n;
}

void tph_registry_retire_idle(void) {
    tph_pool_entry *retired = NULL;
    tph_pool_entry *e;
    tph_pool_entry *next;
    tph_os_mutex_lock(&registry_lock);
    for (e = registry_head; e != NULL; e = next) {
        next = e->next;
        if (!tph_entry_is_retirable(e)) continue;
        unlink_locked(e);
        e->next = retired; /* reuse the link for the local chain */
        retired = e;
    }
    tph_os_mutex_unlock(&registry_lock);
    /* Torn down after the lock is released: see tph_registration_release. */
    for (e = retired; e != NULL; e = next) {
        next = e->next;
        e->next = NULL;
        TPH_TRACE("heal", "entry-retired", e->key, 0);
        tph_entry_unref(e);
    }
}

void tph_heal_retire_idle(void) { tph_registry_retire_idle(); }

/* ---- read-only view (heal.h) ---------------------------------------------- */

static void describe(tph_pool_entry *e, tph_heal_entry_info *out) {
    out->key = e->key;
    out->objects = tph_os_load64(&e->objects);
    out->last_cancelled = tph_os_load64(&e->last_cancelled);
    out->last_started = tph_os_load64(&e->last_started);
    out->last_submitted = tph_os_load64(&e->last_submitted);
    out->outstanding = tph_os_load32(&e->outstanding);
    out->overdue_episodes = tph_os_load32(&e->overdue_episodes);
    out->repairs_run = tph_os_load64(&e->runs);
    out->unhealed = tph_entry_unhealed(e);
}

bool tph_heal_entry_get(uintptr_t key, tph_heal_entry_info *out) {
    tph_pool_entry *e;
    tph_os_mutex_lock(&registry_lock);
    e = find_locked(key);
    if (e != NULL && out != NULL) describe(e, out);
    tph_os_mutex_unlock(&registry_lock);
    return e != NULL;
}

size_t tph_heal_entry_count(void) { return tph_heal_entries(NULL, 0); }

size_t tph_heal_entries(tph_heal_entry_info *out, size_t max) {
    size_t n = 0;
    tph_pool_entry *e;
    tph_os_mutex_lock(&registry_lock);
    for (e = registry_head; e != NULL; e = e->next) {
        if (out != NULL && n < max) describe(e, &out[n]);
        n++;
    }
    tph_os_mutex_unlock(&registry_lock);
    return n;
}

void tph_registry_reset_process(void) {
    /* The simulated process that owned the entries is over and took their
     * memory and work objects with it: forget them, do not tear them down. */
    memset(&registry_lock, 0, sizeof registry_lock);
    memset(&create_lock, 0, sizeof create_lock);
    registry_head = NULL;
    registry_tail = NULL;
    registry_serial = 0;
}

#else /* !TPHEAL_SELF_HEAL: no registry, an empty view */

bool tph_heal_entry_get(uintptr_t key, tph_heal_entry_info *out) {
    (void)key;
    (void)out;
    return false;
}
size_t tph_heal_entry_count(void) { return 0; }
size_t tph_heal_entries(tph_heal_entry_info *out, size_t max) {
    (void)out;
    (void)max;
    return 0;
}
void tph_heal_retire_idle(void) {}
void tph_registry_reset_process(void) {}

#endif
