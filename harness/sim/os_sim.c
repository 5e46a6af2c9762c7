/* The plain part of the seam on the simulated backend: the mutex, clocks,
 * thread ids, memory and fail-fast.  Atomics: os_sim_atomic.c.  Pool
 * objects: sim_*.c.
 *
 * Every call is a scheduling point (rt_yield or an rt_lock), so the
 * controlled scheduler can preempt the core between any two seam calls --
 * CHESS's rule of switching before synchronisation and interlocked
 * operations (docs/harness-anchors.md, A1).  Each atomic also says which
 * address it touches (rt_access), for the bounded search's partial-order
 * reduction; the gate does too, without a point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_MSC_VER)
#include <intrin.h>
#include <windows.h> /* before sim_model.h, whose P macro must not meet it */
#endif

#include "sim_model.h"

void *sim_alloc_untracked(size_t n);
void sim_free_any(void *p);
void *sim_unlink_any(void *p);
uint64_t sim_system_epoch(void);

/* ---- mutex: an rt_lock in place ---------------------------------------------- */
_Static_assert(sizeof(rt_lock) <= sizeof(tph_os_mutex), "tph_os_mutex must hold an rt_lock");

/* The rt_lock gives no edge of its own, so that the edge is the contract's
 * row (MUTEX, sim_hb.h), stated here. */
void tph_os_mutex_lock(tph_os_mutex *m) {
    rt_lock *l = (rt_lock *)(void *)m->word;
    rt_lock_unordered(l);
    rt_lock_acquire(l);
    sim_hb_acquire(SIM_HB_MUTEX, m);
}
void tph_os_mutex_unlock(tph_os_mutex *m) {
    rt_lock *l = (rt_lock *)(void *)m->word;
    sim_hb_release(SIM_HB_MUTEX, m);
    rt_lock_release(l);
}

/* The diagnostics lock (os.h): a harness-only lock, so it gives no edge and its
 * holder's accesses are unchecked, as the trace's own; it stays a scheduling
 * point exactly where the plain mutex was, so every schedule is unchanged.
 * What it orders -- the trace ring, its filter -- no verdict reads, and its
 * sections hold no scheduling point: a diagnostic section. */
void tph_os_diag_lock(tph_os_mutex *m) {
    rt_lock *l = (rt_lock *)(void *)m->word;
    rt_lock_harness_only(l);
    rt_lock_acquire_diagnostic(l);
}
void tph_os_diag_unlock(tph_os_mutex *m) { rt_lock_release((rt_lock *)(void *)m->word); }

/* ---- clocks ------------------------------------------------------------------ */
/* The system tick: QueryInterruptTime advances in 15.625 ms steps, so two
 * stamps taken close together are equal -- the registry's ">=" must hold
 * for equal stamps (docs/pool-facts.md). */
#define SIM_TICK 156250ull
/* The uptime at process start: sim_config.uptime_base (one hour by default,
 * a nonzero whole number of ticks; 0 = just booted). */
uint64_t tph_os_interrupt_time(void) {
    rt_yield();
    uint64_t now = rt_now();
    return P->cfg.uptime_base / SIM_TICK * SIM_TICK + now / SIM_TICK * SIM_TICK;
}

uint64_t tph_os_system_time(void) {
    rt_yield();
    return sim_system_epoch() + rt_now();
}

uint32_t tph_os_thread_id(void) { return rt_thread_id(); }

/* ---- memory ------------------------------------------------------------------ */
/* The freed set holds addresses only (never dereferenced): the memory is
 * really freed, so ASan still sees any other use of it. */
static void forget_freed(const void *p) {
    for (uint32_t i = 0; i < P->nfreed_core; i++)
        if (P->freed_core[i] == p) {
            P->freed_core[i] = P->freed_core[--P->nfreed_core];
            return;
        }
}

static void remember_freed(void *p) {
    if (P->nfreed_core == P->capfreed_core) {
        uint32_t cap = P->capfreed_core ? P->capfreed_core * 2 : 32;
        void **n = (void **)realloc(P->freed_core, cap * sizeof *n);
        if (!n) return; /* the check is best effort; the model goes on */
        P->freed_core = n;
        P->capfreed_core = cap;
    }
    P->freed_core[P->nfreed_core++] = p;
}

bool sim_freed_context(const void *ctx) {
    rt_access(&P->freed_core, RT_READ);
    for (uint32_t i = 0; i < P->nfreed_core; i++)
        if (P->freed_core[i] == ctx) return true;
    return false;
}

void *tph_os_alloc(size_t n) {
    if (!P) return sim_alloc_untracked(n);
    sim_lock_scoped();
    sim_touch(&P->freed_core); /* and core_blocks_live, read only by an ordinary query */
    void *p = sim_fault_hit(SIM_FAULT_ALLOC, 0) ? NULL : sim_alloc_tracked(n);
    if (p) {
        P->core_blocks_live++;
        forget_freed(p);
    }
    sim_unlock();
    return p;
}

void tph_os_free(void *p) {
    if (!p) return;
    if (!P) {
        sim_free_any(p);
        return;
    }
    sim_lock_scoped();
    sim_touch(&P->freed_core);
    if (P->core_blocks_live) P->core_blocks_live--;
    void *raw = sim_unlink_any(p);
    remember_freed(p);
    sim_unlock();
    /* Freed outside the model's lock: in the race build the free is the
     * core's own (a write of the whole block by this thread, checked against
     * every access of the block no edge orders before it); under the lock
     * it would be the harness's, unchecked (rt_lock_harness_only). */
    free(raw);
}

uint64_t sim_core_blocks_live(void) {
    uint64_t n;
    if (!P) return 0;
    sim_lock();
    n = P->core_blocks_live;
    sim_unlock();
    return n;
}

/* ---- fail-fast ------------------------------------------------------------------ */
void tph_os_fail_fast(const char *reason) {
    if (P) {
        sim_lock();
        if (!P->fail_fasted) {
            P->fail_fasted = true;
            snprintf(P->fail_fast_reason, sizeof P->fail_fast_reason, "%s", reason ? reason : "");
        }
        sim_unlock();
    }
    rt_end_process(reason ? reason : "fail-fast");
}
