/* The seam's atomics on the simulated backend.  A file of their own
 * because it is the one model file the race build instruments: TSan sees
 * these as the sequentially consistent atomics the seam promises (os.h) --
 * an edge of the pool's contract like the others (sim_hb.h) -- while the
 * rest of the model is invisible to it (harness/sim/CMakeLists.txt).
 *
 * Every call is a scheduling point (rt_yield), so the controlled scheduler
 * can preempt the core between any two seam calls -- CHESS's rule of
 * switching before synchronisation and interlocked operations
 * (docs/harness-anchors.md, A1). */
#if defined(_MSC_VER)
#include <intrin.h>
#include <windows.h>
#endif

#include "os.h"
#include "rt.h"

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

