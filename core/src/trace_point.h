/* How core code records a trace event.  One macro, so the unarmed cost is
 * one atomic load at every site.  The gate is read through the seam's
 * non-yielding load: it is not a datum the scheduler needs to interleave, but
 * it is written while other threads read it (a plain volatile read here was a
 * TSan-reported data race against tph_trace_set_hook in native runs). */
#ifndef TPHEAL_TRACE_POINT_H
#define TPHEAL_TRACE_POINT_H
#include <stdint.h>
#include <tpheal/trace.h>

#include "os.h"

extern volatile uint32_t tph_trace_on; /* 0 when unarmed and no hook */
/* Named _emit: tph_trace_record is the public record type in <tpheal/trace.h>. */
void tph_trace_emit(const char *target, const char *event, uint64_t a, uint64_t b);
/* Empties the ring and drops the hook (process_state.h: tph_process_state_reset). */
void tph_trace_reset_process(void);

#define TPH_TRACE(target, event, a, b)                                                     \
    do {                                                                                   \
        if (tph_os_gate_load32(&tph_trace_on))                                             \
            tph_trace_emit((target), (event), (uint64_t)(a), (uint64_t)(b));               \
    } while (0)

#endif
