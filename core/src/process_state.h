/* Returning the core's process-wide state to what a fresh process has.
 *
 * A real process gets this for free by ending.  The harness runs thousands of
 * simulated processes in one OS process, so once a simulated process is over
 * (every simulated thread abandoned, every simulated OS object gone) it calls
 * this.  Never call it while any tpheal object or callback is live. */
#ifndef TPHEAL_PROCESS_STATE_H
#define TPHEAL_PROCESS_STATE_H
void tph_process_state_reset(void);   /* process_state.c: calls the three below */
void tph_registry_reset_process(void);
void tph_healer_reset_process(void);
void tph_trace_reset_process(void);
#endif
