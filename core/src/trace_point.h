/* How core code records a trace event.  One macro, so the unarmed cost is
 * one relaxed load at every site (tph_trace_mask is read without the seam:
 * it is the gate, not a shared datum the scheduler needs to interleave). */
#ifndef TPHEAL_TRACE_POINT_H
#define TPHEAL_TRACE_POINT_H
#include <stdint.h>
#include <tpheal/trace.h>

extern volatile uint32_t tph_trace_on; /* 0 when unarmed and no hook */
/* Named _emit: tph_trace_record is the public record type in <tpheal/trace.h>. */
void tph_trace_emit(const char *target, const char *event, uint64_t a, uint64_t b);

#define TPH_TRACE(target, event, a, b)                                                      \
    do {                                                                                    \
        if (tph_trace_on) tph_trace_emit((target), (event), (uint64_t)(a), (uint64_t)(b)); \
    } while (0)

#endif
