/* Returning the core's process-wide state to what a fresh process has.
 *
 * A real process gets this for free by ending.  The harness runs thousands of
 * simulated processes in one OS process, so once a simulated process is over
 * (every simulated thread abandoned, every simulated OS object gone) it calls
 * this.  Never call it while any tpheal object or callback is live. */
#ifndef TPHEAL_PROCESS_STATE_H
#define TPHEAL_PROCESS_STATE_H
#include "healer.h"      /* tph_healer_reset_process */
#include "registry.h"    /* tph_registry_reset_process */
#include "trace_point.h" /* tph_trace_reset_process */
/* process_state.c: calls the three parts' resets, each declared by its own
 * layer's header, so this header sits above them and none includes it. */
void tph_process_state_reset(void);
#endif
