/* Faults in front of the real Windows pool (win32_faults.c): the scenario
 * language's fault kinds, for tpheal-harness-realpool's core only -- the
 * library users link has none. */
#ifndef TPHEAL_SCN_WIN32_FAULTS_H
#define TPHEAL_SCN_WIN32_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "scn_ast.h" /* scn_fault_kind */

/* The nth matching call of `kind` fails (every one from the nth on when
 * onward); match_pool: only creates whose environment names `pool` (NULL:
 * the default pool) match.  healer-start is pool-create, as on the model.
 * Arming replaces the kind's fault and its count. */
void win32_fault_arm(scn_fault_kind kind, uint32_t nth, bool onward, bool match_pool, const void *pool);
void win32_fault_disarm_all(void);
/* Calls the kind's armed fault failed. */
uint64_t win32_fault_fired(scn_fault_kind kind);

#endif
