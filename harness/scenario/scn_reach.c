/* Reach tracking for one run (scn_reach.h). */
#include "scn_reach.h"

#include <string.h>

#include "scn_pool.h"

#include "scn_atomic.h"

#define R_ADD(p, v) SCN_ATOMIC_ADD(p, v)
#define R_LOAD(p) SCN_ATOMIC_LOAD(p)
#define R_OR64(p, v) SCN_ATOMIC_OR64(p, v)

void scn_reach_begin(scn_reach *rs, const scn_scenario *s) {
    size_t i;
    memset((void *)rs, 0, sizeof *rs);
    rs->s = s;
    for (i = 0; i < s->nrequires; i++)
        if (s->requires[i].kind == SCN_REQ_OVERLAP) rs->overlaps = true;
}

bool scn_reach_op_in_flight(scn_op_kind k) {
    return k != SCN_OP_SLEEP && k != SCN_OP_YIELD && k != SCN_OP_AWAIT && k != SCN_OP_ASSERT && k != SCN_OP_REPEAT;
}

/* Each side raises its own count, then looks at the other's: with seq_cst
 * atomics, of two actors in flight together at least one sees the other
 * (on OS threads too). */
void scn_reach_enter(scn_reach *rs, int actor) {
    size_t i;
    if (!rs->overlaps || actor < 0 || actor >= SCN_REACH_ACTORS) return;
    R_ADD(&rs->in_flight[actor], 1u);
    for (i = 0; i < rs->s->nrequires; i++) {
        const scn_require *r = &rs->s->requires[i];
        int other;
        if (r->kind != SCN_REQ_OVERLAP || (r->a != actor && r->b != actor)) continue;
        other = r->a == actor ? r->b : r->a;
        if (R_LOAD(&rs->in_flight[other]) > 0) R_OR64(&rs->reached, (uint64_t)1 << i);
    }
}

void scn_reach_leave(scn_reach *rs, int actor) {
    if (!rs->overlaps || actor < 0 || actor >= SCN_REACH_ACTORS) return;
    R_ADD(&rs->in_flight[actor], (uint32_t)-1);
}

void scn_reach_at_quiescence(scn_reach *rs, const scn_reach_probe *p) {
    size_t i;
    for (i = 0; i < rs->s->nrequires; i++) {
        const scn_require *r = &rs->s->requires[i];
        bool hit = false;
        if (r->kind == SCN_REQ_SEVERED) hit = p->pool_stalls(p->ctx, r->pool) > 0;
        else if (r->kind == SCN_REQ_EXPR) hit = p->expr_holds(p->ctx, &r->expr);
        if (hit) R_OR64(&rs->reached, (uint64_t)1 << i);
    }
}

uint64_t scn_reach_at_end(scn_reach *rs, const scn_reach_probe *p) {
    size_t i;
    for (i = 0; i < rs->s->nrequires; i++) {
        const scn_require *r = &rs->s->requires[i];
        bool hit = false;
        switch (r->kind) {
        case SCN_REQ_TRACE: hit = p->trace_count(p->ctx, r->point, r->pool) >= r->count; break;
        case SCN_REQ_HOLD: hit = p->hold_parks(p->ctx, r->point) > 0; break;
        case SCN_REQ_FAULT: hit = scn_pool_fault_fired(r->fault) > 0; break;
        default: break;
        }
        if (hit) R_OR64(&rs->reached, (uint64_t)1 << i);
    }
    return rs->reached;
}
