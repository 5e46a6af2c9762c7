/* The healer: a private one-thread pool whose periodic timer walks the
 * registry and submits the repair owed to each severed pool.
 *
 * Started lazily at the first cancellation, so a program that never cancels
 * never gets a pool or a thread from us.  Built on the public objects, like
 * any other tpheal user: its pool is registered like any other. */
#include <string.h>

#include <tpheal/heal.h>
#include <tpheal/periodic.h>
#include <tpheal/pool.h>

#include "healer.h"
#include "obligation.h"
#include "registry.h"
#include "trace_point.h"

#if TPHEAL_SELF_HEAL

/* How often the healer looks.  With the window, this bounds how long a
 * severed pool waits for its repair; without the healer it would wait until
 * the program happened to submit work, which for a program built on waits,
 * timers and I/O is never. */
#define HEAL_PERIOD_MS 250u
/* A repair is not urgent to the millisecond; the window lets the system fold
 * the wake-up into others. */
#define HEAL_WINDOW_MS 250u
/* Five seconds in interrupt-time units (100 ns): twenty periods.  A wedged
 * pool and a merely busy one look the same from here and the busy one is far
 * more likely, so the report waits long enough not to cry wolf -- under
 * fail-fast a false report ends the process. */
#define OVERDUE_AFTER 50000000u
/* One re-attempt per episode: the first overdue report re-submits; a second
 * means that did not help either, and we have no further idea how to recover
 * the pool. */
#define REATTEMPTS_BEFORE_GIVING_UP 1u
/* Entries visited per registry lock hold: the tick takes references in small
 * batches so it needs no allocation of its own and never submits to a
 * possibly wedged pool while holding the process-wide lock. */
#define TICK_BATCH 16

static tph_os_mutex healer_slot_lock;
/* Serialises whole ticks.  The healer's single thread is the one ticker the
 * design assumes (the seed serialises ticks there, and its test gate
 * serialises a test's ticks against it), but tph_heal_tick is public: two
 * ticks that both read a repair as overdue before either re-submitted count
 * one overdue period as two episodes, and the second count is the fail-fast
 * threshold -- a merely busy pool ended the process (scenario
 * concurrent-ticks-one-overdue-episode: 500 of 500 runs).  A blocking lock,
 * not "skip if a tick is running": the caller of a public tick is promised a
 * full pass that began after its call, which a skipped tick would break.
 * Lock order: this, then the registry (snapshot, retire). */
static tph_os_mutex tick_lock;
static volatile uint32_t healer_running; /* fast path: one load, no lock */
static tph_pool *healer_pool;
static tph_periodic *healer_timer;

static void visit(tph_pool_entry *e) {
    uint32_t episodes;
    if (!tph_entry_unhealed(e)) {
        /* Never cancelled, or our own repair has run since the last
         * cancellation: direct evidence the pool dispatches. */
        return;
    }
    if (tph_entry_repair_in_flight(e)) {
        uint64_t now = tph_heal_now();
        uint64_t submitted = tph_os_load64(&e->last_submitted);
        uint64_t waited = now > submitted ? now - submitted : 0;
        if (waited < OVERDUE_AFTER) {
            /* A repair handed over moments ago has simply not run yet; a
             * second submit would tell us nothing the first will not. */
            TPH_TRACE("heal", "repair-in-flight", e->key, waited);
            return;
        }
        /* Long enough that "merely queued" is no longer the likely story.
         * Report, then submit again: whether a second submit helps is not
         * established, but it is cheap in a state that should not arise. */
        episodes = tph_entry_note_overdue(e);
        TPH_TRACE("heal", "repair-overdue", e->key, episodes);
        if (episodes > REATTEMPTS_BEFORE_GIVING_UP) tph_obligation_unrepairable(e->key, episodes);
    }
    tph_entry_submit_repair(e);
}

void tph_heal_tick(void) {
    tph_pool_entry *batch[TICK_BATCH];
    uint64_t cursor = 0;
    size_t n, i;
    tph_os_mutex_lock(&tick_lock);
    TPH_TRACE("heal", "healer-tick", 0, 0);
    /* Reads state and writes only its own stamps: there is no "owed" flag to
     * clear, so a cancellation landing mid-tick cannot be erased by it -- it
     * raises last_cancelled past anything this tick's repair can answer. */
    do {
        n = tph_registry_snapshot(cursor, batch, TICK_BATCH);
        for (i = 0; i < n; i++) {
            visit(batch[i]);
            cursor = batch[i]->serial;
        }
        for (i = 0; i < n; i++) tph_entry_unref(batch[i]);
    } while (n == TICK_BATCH);
    /* An entry kept only for its owed repair becomes retirable once the
     * repair has run, and only this pass notices. */
    tph_registry_retire_idle();
    tph_os_mutex_unlock(&tick_lock);
}

static void healer_timer_fn(tph_periodic *timer, void *ctx) {
    (void)timer;
    (void)ctx;
    tph_heal_tick();
}

/* Make the pool and the timer, or nothing. */
static bool build(void) {
    tph_pool *pool = NULL;
    tph_periodic *timer = NULL;
    tph_env env;
    if (tph_pool_create(&pool) != TPH_OK) return false;
    /* One thread is enough: a tick submits and returns. */
    if (tph_pool_set_thread_limits(pool, 1, 1) != TPH_OK) goto fail;
    tph_env_init(&env);
    if (tph_env_set_pool(&env, pool) != TPH_OK) goto fail;
    if (tph_periodic_create(&timer, HEAL_PERIOD_MS, healer_timer_fn, NULL, &env) != TPH_OK)
        goto fail;
    if (tph_periodic_start_with_window(timer, HEAL_PERIOD_MS, HEAL_WINDOW_MS) != TPH_OK) goto fail;
    healer_pool = pool;
    healer_timer = timer;
    return true;
fail:
    if (timer != NULL) tph_periodic_close(timer);
    tph_pool_close(pool);
    return false;
}

bool tph_healer_ensure_running(void) {
    bool ok;
    if (tph_os_load32(&healer_running)) return true;
    /* Lock order: this slot, then the registry (build registers the healer's
     * pool).  Nothing takes them the other way round: the tick and register
     * take only the registry, and cancellations call here without it. */
    tph_os_mutex_lock(&healer_slot_lock);
    ok = healer_timer != NULL;
    if (!ok) {
        /* Only success is remembered.  Caching a failure would turn one bad
         * moment at the first cancellation into no self-heal for the rest of
         * the process, with nothing reported; the next cancellation retries. */
        ok = build();
        if (ok) {
            tph_os_store32(&healer_running, 1);
            TPH_TRACE("heal", "healer-started", tph_pool_key(healer_pool), 0);
        } else {
            TPH_TRACE("heal", "healer-start-failed", 0, 0);
        }
    }
    tph_os_mutex_unlock(&healer_slot_lock);
    /* Never stopped once running: stopping when nothing is owed would race a
     * cancellation that marked its pool after the tick looked, leaving a
     * repair owed with no tick to deliver it. */
    return ok;
}

/* The objects report cancellations here, not to the registry directly, so the
 * registry is handed the healer's start instead of calling up to it. */
bool tph_owe_repair(const tph_registration *r) {
    return tph_registry_owe_repair(r, tph_healer_ensure_running);
}

bool tph_owe_repair_claimed(const tph_registration *r) {
    return tph_registry_owe_repair_claimed(r, tph_healer_ensure_running);
}

bool tph_heal_healer_running(void) { return tph_os_load32(&healer_running) != 0; }

void tph_healer_reset_process(void) {
    /* The simulated process ended and took the healer's pool and timer with
     * it; a fresh process has no healer until its first cancellation. */
    memset(&healer_slot_lock, 0, sizeof healer_slot_lock);
    memset(&tick_lock, 0, sizeof tick_lock);
    healer_running = 0;
    healer_pool = NULL;
    healer_timer = NULL;
}

#else /* !TPHEAL_SELF_HEAL: no healer pool or thread is ever made */

bool tph_heal_healer_running(void) { return false; }
void tph_heal_tick(void) {}
void tph_healer_reset_process(void) {}

#endif
