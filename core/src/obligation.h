/* Broken obligations, and what the build does about them.
 *
 * Three situations are reported, always as a trace event and, in a
 * TPHEAL_FAIL_FAST build, by ending the process -- and always *after* the
 * caller has finished the drain, close and free it owed, never before, so a
 * fail-fast never skips teardown work (a fail-fast before the drain would end
 * the process with a callback still writing into the object):
 *   - a close that had to perform a drain the owner never did
 *       (event "drop-obligation-owed");
 *   - a cancellation left untracked (event "cancel-untracked" is recorded by
 *       the registry; the caller then calls tph_obligation_untracked);
 *   - a pool that will not be repaired (second overdue episode).
 */
#ifndef TPHEAL_OBLIGATION_H
#define TPHEAL_OBLIGATION_H
#include <stdbool.h>
#include <stdint.h>

/* `kind` is a static string naming the object kind ("wait", "timer", ...). */
void tph_obligation_drop_owed(const char *kind, uint64_t object_id);
void tph_obligation_untracked(uintptr_t pool_key);
void tph_obligation_unrepairable(uintptr_t pool_key, uint32_t overdue_episodes);

#endif
