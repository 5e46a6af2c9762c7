/* Faults in front of the real Windows pool (win32_faults.c): the model's
 * fault kinds, for tpheal-harness-realpool's core only -- the library users
 * link has none. */
#ifndef TPHEAL_SCN_WIN32_FAULTS_H
#define TPHEAL_SCN_WIN32_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum win32_fault_kind {
    WIN32_FAULT_ALLOC = 0,     /* tph_os_alloc */
    WIN32_FAULT_POOL_CREATE,   /* CreateThreadpool (the healer's pool included) */
    WIN32_FAULT_WORK_CREATE,   /* the create calls below may match one pool only */
    WIN32_FAULT_WAIT_CREATE,
    WIN32_FAULT_TIMER_CREATE,
    WIN32_FAULT_IO_CREATE,
    WIN32_FAULT_GROUP_CREATE,
    WIN32_FAULT_EVENT_CREATE,
    WIN32_FAULT_KIND_COUNT
} win32_fault_kind;

/* The nth matching call of `kind` fails (every one from the nth on when
 * onward); match_pool: only creates whose environment names `pool` (NULL:
 * the default pool) match.  Arming replaces the kind's fault and its count. */
void win32_fault_arm(win32_fault_kind kind, uint32_t nth, bool onward, bool match_pool, const void *pool);
void win32_fault_disarm_all(void);
/* Calls the kind's armed fault failed. */
uint64_t win32_fault_fired(win32_fault_kind kind);

#endif
