/* Which of a scenario's statements need more than the core's public API --
 * a knob or read-out of the model, or a process that ends with the run -- so
 * a pool backend can decline the scenarios it cannot run faithfully
 * (scn_pool.h).  One walk over the parsed scenario, first use reported. */
#include "scn_features.h"

#include <stdio.h>
#include <string.h>

static const char *const feature_text[SCN_FEATURE_COUNT] = {
    [SCN_FEATURE_FAULT] = "a fault counts the Nth call from a fresh process (the healer's start included)",
    [SCN_FEATURE_STALL] = "a stall setting is a knob of the model of the pool",
    [SCN_FEATURE_RETIRE_WORKERS] = "retire_workers forces the model's idle timeout",
    [SCN_FEATURE_SEVERED] = "severed() reads the model's state of the pool",
    [SCN_FEATURE_HEALER] = ("the healer starts once per process (`healer`, healer-started, "
                            "healer-start-failed), and here the process outlives a run"),
    [SCN_FEATURE_FAIL_FAST] = "a fail-fast ends the real process (RaiseFailFastException)",
    [SCN_FEATURE_DEADLOCK] = "a deadlock on OS threads hangs for good",
    [SCN_FEATURE_MISUSE] = "misuse is reported by the model; the real pool may corrupt memory",
    [SCN_FEATURE_SAME_TICK] = ("`expect unhealed` shows a repair starting in its cancellation's clock tick, "
                               "which virtual time makes certain and real time rare"),
};

const char *scn_feature_text(scn_feature f) {
    return (unsigned)f < SCN_FEATURE_COUNT ? feature_text[f] : "?";
}

/* The trace points that happen once per process: the healer's start. */
static bool once_per_process(int point) {
    const char *name = point >= 0 ? scn_trace_point_name(point) : "";
    return strcmp(name, "healer-started") == 0 || strcmp(name, "healer-start-failed") == 0;
}

static int term_line(const scn_term *t, scn_feature f, int line) {
    if (f == SCN_FEATURE_SEVERED && t->kind == SCN_TERM_SEVERED) return line;
    if (f == SCN_FEATURE_HEALER && t->kind == SCN_TERM_HEALER) return line;
    if (f == SCN_FEATURE_HEALER && t->kind == SCN_TERM_COUNT && once_per_process(t->event)) return line;
    return 0;
}

static int expr_line(const scn_expr *e, scn_feature f) {
    int l = term_line(&e->lhs, f, e->line);
    return l ? l : term_line(&e->rhs, f, e->line);
}

/* A requirement's expression reads what an expectation's would.  The other
 * kinds decline nothing: a requirement is no oracle, and reach is judged
 * only on controlled runs (the model); on the real pool `require severed`
 * reads 0 and is reported, not enforced. */
static int require_line(const scn_require *r, scn_feature f) {
    return r->kind == SCN_REQ_EXPR ? expr_line(&r->expr, f) : 0;
}

static int block_line(const scn_block *b, scn_feature f) {
    size_t i;
    for (i = 0; i < b->n; i++) {
        const scn_op *op = &b->ops[i];
        int l = 0;
        if (f == SCN_FEATURE_RETIRE_WORKERS && op->kind == SCN_OP_RETIRE_WORKERS) l = op->line;
        else if (f == SCN_FEATURE_HEALER && op->kind == SCN_OP_AWAIT && once_per_process(op->point)) l = op->line;
        else if (op->kind == SCN_OP_ASSERT && op->expr) l = expr_line(op->expr, f);
        else if (op->kind == SCN_OP_REPEAT && op->body) l = block_line(op->body, f);
        if (l) return l;
    }
    return 0;
}

int scn_feature_line(const scn_scenario *s, scn_feature f) {
    size_t i;
    int l;
    switch (f) {
    case SCN_FEATURE_FAULT: return s->nfaults ? s->faults[0].line : 0;
    case SCN_FEATURE_STALL:
        for (i = 0; i < s->npools; i++)
            if (s->pools[i].stall != SCN_STALL_UNSET) return s->pools[i].line ? s->pools[i].line : 1;
        return 0;
    case SCN_FEATURE_FAIL_FAST: return s->outcome == SCN_OUTCOME_FAIL_FAST || s->fail_fast_build ? -1 : 0;
    case SCN_FEATURE_DEADLOCK: return s->outcome == SCN_OUTCOME_DEADLOCK ? -1 : 0;
    case SCN_FEATURE_MISUSE: return s->outcome == SCN_OUTCOME_MISUSE ? -1 : 0;
    case SCN_FEATURE_SAME_TICK:
        for (i = 0; s->allow_unhealed && i < s->nexpects; i++)
            if (s->expects[i].lhs.kind == SCN_TERM_FIELD && s->expects[i].lhs.field == SCN_FIELD_UNHEALED)
                return s->expects[i].line;
        return s->allow_unhealed ? -1 : 0;
    default: break;
    }
    for (i = 0; i < s->nthreads; i++)
        if ((l = block_line(&s->threads[i].body, f)) != 0) return l;
    for (i = 0; i < s->ncallbacks; i++)
        if ((l = block_line(&s->callbacks[i].body, f)) != 0) return l;
    for (i = 0; i < s->nexpects; i++)
        if ((l = expr_line(&s->expects[i], f)) != 0) return l;
    for (i = 0; i < s->nrequires; i++)
        if ((l = require_line(&s->requires[i], f)) != 0) return l;
    for (i = 0; f == SCN_FEATURE_HEALER && i < s->nholds; i++)
        if (once_per_process(s->holds[i].point) ||
            (s->holds[i].release == SCN_HOLD_UNTIL && once_per_process(s->holds[i].until_point)))
            return s->holds[i].line;
    for (i = 0; f == SCN_FEATURE_HEALER && i < s->norders; i++)
        if (once_per_process(s->orders[i].first) || once_per_process(s->orders[i].then)) return s->orders[i].line;
    return 0;
}

const char *scn_features_first(const scn_scenario *s, unsigned mask, char *buf, size_t n) {
    int f;
    for (f = 0; f < SCN_FEATURE_COUNT; f++) {
        int line;
        if (!(mask & (1u << f))) continue;
        line = scn_feature_line(s, (scn_feature)f);
        if (line == 0) continue;
        if (line > 0) snprintf(buf, n, "line %d: %s", line, feature_text[f]);
        else snprintf(buf, n, "%s", feature_text[f]);
        return buf;
    }
    return NULL;
}
