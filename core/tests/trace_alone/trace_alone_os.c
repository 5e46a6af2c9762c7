/* The slice of the seam the trace uses (os.h), over POSIX threads, for the
 * trace tested on its own.  Its diagnostics lock is a plain pthread mutex,
 * which TSan sees: the model's gives no edge and leaves its holder
 * unchecked on purpose (os.h), so that the trace, which the scenario runner
 * always hooks, orders none of the core's memory -- and with it the race
 * build cannot see the trace's own locking.  Here it can. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "os.h"

static pthread_mutex_t diag = PTHREAD_MUTEX_INITIALIZER;

void tph_os_diag_lock(tph_os_mutex *m) {
    (void)m; /* the trace has one lock */
    pthread_mutex_lock(&diag);
}

void tph_os_diag_unlock(tph_os_mutex *m) {
    (void)m;
    pthread_mutex_unlock(&diag);
}

uint32_t tph_os_gate_load32(const volatile uint32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

void tph_os_gate_store32(volatile uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

uint64_t tph_os_interrupt_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 10000000u + (uint64_t)ts.tv_nsec / 100u;
}

uint32_t tph_os_thread_id(void) {
    static __thread uint32_t id;
    static uint32_t next;
    if (id == 0) id = __atomic_add_fetch(&next, 1, __ATOMIC_SEQ_CST);
    return id;
}
