/* The plain part of the seam on the simulated backend: atomics, the mutex,
 * clocks, thread ids, memory and fail-fast.  Pool objects: sim_*.c.
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
uint64_t sim_system_epoch(void);

/* ---- atomics: seq_cst, correct on real threads too ------------------------- */
#if defined(_MSC_VER)
#define A_LOAD32(p) ((uint32_t)InterlockedCompareExchange((volatile LONG *)(p), 0, 0))
#define A_XCHG32(p, v) ((uint32_t)InterlockedExchange((volatile LONG *)(p), (LONG)(v)))
#define A_ADD32(p, v) ((uint32_t)InterlockedExchangeAdd((volatile LONG *)(p), (LONG)(v)))
#define A_CAS32(p, e, d) ((uint32_t)InterlockedCompareExchange((volatile LONG *)(p), (LONG)(d), (LONG)(e)))
#define A_LOAD64(p) ((uint64_t)InterlockedCompareExchange64((volatile LONG64 *)(p), 0, 0))
#define A_XCHG64(p, v) ((uint64_t)InterlockedExchange64((volatile LONG64 *)(p), (LONG64)(v)))
#define A_ADD64(p, v) ((uint64_t)InterlockedExchangeAdd64((volatile LONG64 *)(p), (LONG64)(v)))
#define A_CAS64(p, e, d) \
    ((uint64_t)InterlockedCompareExchange64((volatile LONG64 *)(p), (LONG64)(d), (LONG64)(e)))
#define A_LOADP(p) InterlockedCompareExchangePointer((void *volatile *)(p), NULL, NULL)
#define A_XCHGP(p, v) InterlockedExchangePointer((void *volatile *)(p), (v))
#define A_CASP(p, e, d) InterlockedCompareExchangePointer((void *volatile *)(p), (d), (e))
#else
#define A_LOAD32(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define A_XCHG32(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define A_ADD32(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define A_LOAD64(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define A_XCHG64(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define A_ADD64(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define A_LOADP(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define A_XCHGP(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#endif

uint32_t tph_os_load32(const volatile uint32_t *p) {
    rt_yield();
    rt_access(p, RT_READ);
    return A_LOAD32((volatile uint32_t *)p);
}
void tph_os_store32(volatile uint32_t *p, uint32_t v) {
    rt_yield();
    rt_access(p, RT_WRITE);
    (void)A_XCHG32(p, v);
}
/* No rt_yield: see os.h -- the gate must not add scheduling points.  The
 * access is announced all the same: the partial-order reduction must see a
 * gate read race with a gate write. */
uint32_t tph_os_gate_load32(const volatile uint32_t *p) {
    rt_access(p, RT_READ);
    return A_LOAD32((volatile uint32_t *)p);
}
void tph_os_gate_store32(volatile uint32_t *p, uint32_t v) {
    rt_access(p, RT_WRITE);
    (void)A_XCHG32(p, v);
}
uint32_t tph_os_fetch_add32(volatile uint32_t *p, uint32_t v) {
    rt_yield();
    rt_access(p, RT_WRITE);
    return A_ADD32(p, v);
}
uint32_t tph_os_fetch_sub32(volatile uint32_t *p, uint32_t v) {
    rt_yield();
    rt_access(p, RT_WRITE);
    return A_ADD32(p, 0u - v);
}
bool tph_os_cas32(volatile uint32_t *p, uint32_t *expected, uint32_t desired) {
    rt_yield();
    rt_access(p, RT_WRITE);
#if defined(_MSC_VER)
    uint32_t old = A_CAS32(p, *expected, desired);
    if (old == *expected) return true;
    *expected = old;
    return false;
#else
    return __atomic_compare_exchange_n(p, expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
#endif
}
uint64_t tph_os_load64(const volatile uint64_t *p) {
    rt_yield();
    rt_access(p, RT_READ);
    return A_LOAD64((volatile uint64_t *)p);
}
void tph_os_store64(volatile uint64_t *p, uint64_t v) {
    rt_yield();
    rt_access(p, RT_WRITE);
    (void)A_XCHG64(p, v);
}
uint64_t tph_os_fetch_add64(volatile uint64_t *p, uint64_t v) {
    rt_yield();
    rt_access(p, RT_WRITE);
    return A_ADD64(p, v);
}
uint64_t tph_os_fetch_sub64(volatile uint64_t *p, uint64_t v) {
    rt_yield();
    rt_access(p, RT_WRITE);
    return A_ADD64(p, 0u - v);
}
static bool cas64(volatile uint64_t *p, uint64_t *expected, uint64_t desired) {
#if defined(_MSC_VER)
    uint64_t old = A_CAS64(p, *expected, desired);
    if (old == *expected) return true;
    *expected = old;
    return false;
#else
    return __atomic_compare_exchange_n(p, expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
#endif
}
bool tph_os_cas64(volatile uint64_t *p, uint64_t *expected, uint64_t desired) {
    rt_yield();
    rt_access(p, RT_WRITE);
    return cas64(p, expected, desired);
}
/* One scheduling point for the whole read-modify-write: it is one call. */
uint64_t tph_os_fetch_max64(volatile uint64_t *p, uint64_t v) {
    rt_yield();
    rt_access(p, RT_WRITE);
    uint64_t cur = A_LOAD64(p);
    while (cur < v && !cas64(p, &cur, v)) {
    }
    return cur;
}
void *tph_os_load_ptr(void *const volatile *p) {
    rt_yield();
    rt_access(p, RT_READ);
    return A_LOADP((void *volatile *)p);
}
void tph_os_store_ptr(void *volatile *p, void *v) {
    rt_yield();
    rt_access(p, RT_WRITE);
    (void)A_XCHGP(p, v);
}
bool tph_os_cas_ptr(void *volatile *p, void **expected, void *desired) {
    rt_yield();
    rt_access(p, RT_WRITE);
#if defined(_MSC_VER)
    void *old = A_CASP(p, *expected, desired);
    if (old == *expected) return true;
    *expected = old;
    return false;
#else
    return __atomic_compare_exchange_n(p, expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
#endif
}

/* ---- mutex: an rt_lock in place ---------------------------------------------- */
_Static_assert(sizeof(rt_lock) <= sizeof(tph_os_mutex), "tph_os_mutex must hold an rt_lock");

void tph_os_mutex_lock(tph_os_mutex *m) { rt_lock_acquire((rt_lock *)(void *)m->word); }
void tph_os_mutex_unlock(tph_os_mutex *m) { rt_lock_release((rt_lock *)(void *)m->word); }

/* ---- clocks ------------------------------------------------------------------ */
/* The system tick: QueryInterruptTime advances in 15.625 ms steps, so two
 * stamps taken close together are equal -- the registry's ">=" must hold
 * for equal stamps (windows-pool-facts.md). */
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
    for (uint32_t i = 0; i < P->nfreed_core; i++)
        if (P->freed_core[i] == ctx) return true;
    return false;
}

void *tph_os_alloc(size_t n) {
    if (!P) return sim_alloc_untracked(n);
    sim_lock();
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
    sim_lock();
    if (P->core_blocks_live) P->core_blocks_live--;
    sim_free_any(p);
    remember_freed(p);
    sim_unlock();
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
