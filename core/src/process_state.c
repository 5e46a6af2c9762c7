/* Returning the core's process-wide state to a fresh process's.  The three
 * parts are independent; the order only matters in that the trace goes last,
 * so nothing the first two do is recorded into a ring that was just cleared. */
#include "process_state.h"

void tph_process_state_reset(void) {
    tph_registry_reset_process();
    tph_healer_reset_process();
    tph_trace_reset_process();
}
