#ifndef TPHEAL_TRACE_H
#define TPHEAL_TRACE_H
#include <tpheal/error.h>
#include <stdio.h>

/* A fixed-capacity ring of trace records.  Armed before main from the
 * environment variable TPHEAL_TRACE (comma-separated target substrings, "*"
 * for all); when unarmed, recording costs one relaxed load.  Event names are
 * stable strings, listed in docs/architecture.md. */
typedef struct tph_trace_record {
    uint64_t seq;       /* position in the stream since the last clear */
    uint64_t time;      /* interrupt time, 100 ns units */
    uint32_t thread;
    const char *target; /* static string, e.g. "heal" */
    const char *event;  /* static string, e.g. "repair-submitted" */
    uint64_t a, b;
} tph_trace_record;

#define TPH_TRACE_DEFAULT_CAPACITY 262144u

/* filter: NULL or "" disarms; "*" records every target. */
tph_err tph_trace_arm(const char *filter);
bool tph_trace_armed(void);
/* Capacity takes effect at the next clear; 0 restores the default. */
tph_err tph_trace_set_capacity(size_t records);
void tph_trace_clear(void);
/* Oldest first.  Returns how many were copied; *dropped (may be NULL) gets
 * how many were overwritten since the last clear. */
size_t tph_trace_snapshot(tph_trace_record *out, size_t max, uint64_t *dropped);
/* Oldest first, one line per record, with a line for records dropped. */
void tph_trace_dump(FILE *);

/* Runs at every record that passes the filter, on the recording thread,
 * after the record is stored (and outside the trace's lock).  While the trace
 * is disarmed a hook sees every record and nothing is stored, so holds do not
 * depend on TPHEAL_TRACE.  The harness parks a thread here to hold it at a
 * named point.  NULL removes it. */
typedef void (*tph_trace_hook)(const tph_trace_record *, void *ctx);
void tph_trace_set_hook(tph_trace_hook, void *ctx);

#endif
