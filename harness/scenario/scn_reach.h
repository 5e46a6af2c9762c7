/* Reach goals (`require ...`, scn_ast.h): which of a scenario's
 * requirements one run reached.  Issue 12 measured the flagship stall
 * scenario passing at 500 seeds while its pool severed in none of them: a
 * scenario passes whether or not it got where it exists to go, so the
 * runner counts it.  The state is the run's own (a scn_reach inside the
 * runner's run state), handed to every call.
 *
 * What reaches what:
 *   severed P      P's severed count (the model's) is non-zero at quiescence
 *   trace POINT    POINT (for P) was recorded at least N times in the run
 *   hold POINT     a hold on POINT parked a thread
 *   overlap A B    A and B were in flight at one moment (scn_reach_enter)
 *   fault KIND     the fault fired
 *   EXPR           the expression held at quiescence */
#ifndef TPHEAL_SCN_REACH_H
#define TPHEAL_SCN_REACH_H

#include <stdbool.h>
#include <stdint.h>

#include "scn_ast.h"

/* What the runner knows, asked by requirement kind (ctx: the runner's). */
typedef struct scn_reach_probe {
    uint64_t (*trace_count)(void *ctx, int point, int pool); /* pool -1: any */
    uint64_t (*hold_parks)(void *ctx, int point);            /* parks by the holds on point */
    uint64_t (*pool_stalls)(void *ctx, int pool);            /* times the pool severed */
    bool (*expr_holds)(void *ctx, const scn_expr *);
    void *ctx;
} scn_reach_probe;

#define SCN_REACH_ACTORS (SCN_REQ_OBJ_BASE + 256)

/* One run's reach: written from every thread of the run (atomics). */
typedef struct scn_reach {
    const scn_scenario *s;
    bool overlaps; /* any overlap requirement: the enter/leave fast path */
    volatile uint64_t reached;
    volatile uint32_t in_flight[SCN_REACH_ACTORS];
} scn_reach;

void scn_reach_begin(scn_reach *, const scn_scenario *);
/* Whether an operation counts as its thread being in flight: it calls the
 * core or the pool (sleep, yield, await, assert and repeat do not). */
bool scn_reach_op_in_flight(scn_op_kind);
/* A thread (its index) or an object's callback (SCN_REQ_OBJ_BASE + index)
 * starts / stops being in flight.  No scheduling point: atomics, so adding
 * a requirement changes no run. */
void scn_reach_enter(scn_reach *, int actor);
void scn_reach_leave(scn_reach *, int actor);
void scn_reach_at_quiescence(scn_reach *, const scn_reach_probe *);
/* After the run (finished or not): the bit set of requirements reached. */
uint64_t scn_reach_at_end(scn_reach *, const scn_reach_probe *);

#endif
