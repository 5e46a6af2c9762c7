/* The runner's own atomics, for state its threads share outside the run's
 * lock: reach tracking (scn_reach.c) and the stop oracle (scn_exec.c).
 * Not scheduling points -- taking the run's lock is one, and bookkeeping
 * that added points would change every schedule -- and invisible to TSan,
 * since the runner's sources are not instrumented in the race build
 * (cmake/sanitize.cmake, tph_no_tsan): they order nothing of the core's. */
#ifndef TPHEAL_SCN_ATOMIC_H
#define TPHEAL_SCN_ATOMIC_H

#include <stdint.h>

#if defined(_MSC_VER)
#include <windows.h>
#define SCN_ATOMIC_ADD(p, v) ((uint32_t)InterlockedExchangeAdd((volatile LONG *)(p), (LONG)(v)))
#define SCN_ATOMIC_LOAD(p) ((uint32_t)InterlockedCompareExchange((volatile LONG *)(p), 0, 0))
#define SCN_ATOMIC_OR64(p, v) ((uint64_t)InterlockedOr64((volatile LONG64 *)(p), (LONG64)(v)))
/* True when *p held *expected and now holds desired; else *expected = *p. */
static inline int scn_atomic_cas(volatile uint32_t *p, uint32_t *expected, uint32_t desired) {
    uint32_t seen = (uint32_t)InterlockedCompareExchange((volatile LONG *)p, (LONG)desired, (LONG)*expected);
    if (seen == *expected) return 1;
    *expected = seen;
    return 0;
}
#else
#define SCN_ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define SCN_ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define SCN_ATOMIC_OR64(p, v) __atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST)
static inline int scn_atomic_cas(volatile uint32_t *p, uint32_t *expected, uint32_t desired) {
    return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
#endif

#endif
