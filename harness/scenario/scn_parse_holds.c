/* The scenario parser's statements about the schedule: `hold` (park a thread
 * at a trace point), `fault` (fail the Nth seam call of a kind) and `require`
 * (a state some run must reach, which names the holds and faults above). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_parse_internal.h"

/* ---- hold and fault --------------------------------------------------------- */

bool scn_parse_hold(scn_parser *p) {
    scn_scenario *s = p->s;
    scn_hold h;
    bool have_release = false;
    memset(&h, 0, sizeof h);
    h.pool = -1;
    h.until_pool = -1;
    h.until_point = -1;
    h.nth = 1;
    h.until_count = 1;
    h.line = p->ln->line;
    if (!scn_take_point(p, &h.point)) return false;
    while (!at_end(p)) {
        if (accept_kw(p, "pool")) {
            if (!scn_trace_point_has_pool(h.point))
                return scn_error_tok(p, p->pos - 1, "trace point %s carries no pool",
                                     scn_trace_point_name(h.point));
            if (!scn_take_pool(p, &h.pool)) return false;
        } else if (accept_kw(p, "nth")) {
            uint64_t v;
            if (!scn_take_number(p, "nth", 1000000, &v)) return false;
            if (v == 0) return scn_error_tok(p, p->pos - 1, "nth counts from 1");
            h.nth = (uint32_t)v;
        } else if (accept_kw(p, "every")) {
            h.every = true;
        } else if (accept_kw(p, "for")) {
            if (have_release) return scn_error_tok(p, p->pos - 1, "a hold has one `for` or one `until`");
            h.release = SCN_HOLD_FOR;
            if (!scn_take_duration(p, "hold duration", &h.duration)) return false;
            have_release = true;
        } else if (accept_kw(p, "until")) {
            if (have_release) return scn_error_tok(p, p->pos - 1, "a hold has one `for` or one `until`");
            h.release = SCN_HOLD_UNTIL;
            if (!scn_take_point(p, &h.until_point)) return false;
            if (accept_kw(p, "pool")) {
                if (!scn_trace_point_has_pool(h.until_point))
                    return scn_error_tok(p, p->pos - 1, "trace point %s carries no pool",
                                         scn_trace_point_name(h.until_point));
                if (!scn_take_pool(p, &h.until_pool)) return false;
            }
            if (accept_kw(p, "count")) {
                uint64_t v;
                if (!scn_take_number(p, "count", 1000000, &v)) return false;
                if (v == 0) return scn_error_tok(p, p->pos - 1, "count must be at least 1");
                h.until_count = (uint32_t)v;
            }
            have_release = true;
        } else {
            return scn_error_tok(p, p->pos, "unknown hold option '%s' (pool, nth, every, for, until)",
                                 peek(p)->text);
        }
    }
    if (!have_release)
        return scn_error_tok(p, p->pos, "a hold needs `for DURATION` or `until POINT [pool P]`");
    {
        scn_hold *nh = realloc(s->holds, (s->nholds + 1) * sizeof *nh);
        if (!nh) return scn_error_tok(p, 0, "out of memory");
        s->holds = nh;
        s->holds[s->nholds++] = h;
    }
    return true;
}

static bool fault_takes_pool(scn_fault_kind k) { return scn_fault_takes_pool(k); }

/* healer-start and pool-create arm the same seam fault: one per slot. */
static scn_fault_kind fault_slot(scn_fault_kind k) { return scn_fault_slot(k); }

bool scn_parse_fault(scn_parser *p) {
    scn_scenario *s = p->s;
    scn_fault f;
    const scn_tok *t = NULL;
    size_t i;
    int k;
    memset(&f, 0, sizeof f);
    f.pool = -1;
    f.nth = 1;
    f.line = p->ln->line;
    if (!scn_take_word(p, "a fault kind (tpheal-harness list shows them)", &t)) return false;
    if ((k = scn_fault_find(t->text)) < 0)
        return scn_error_tok(p, p->pos - 1, "unknown fault '%s' (tpheal-harness list shows them)", t->text);
    f.kind = (scn_fault_kind)k;
    for (i = 0; i < s->nfaults; i++)
        if (fault_slot(s->faults[i].kind) == fault_slot(f.kind))
            return scn_error_tok(p, p->pos - 1, "a second %s fault (one per kind; line %d has one)",
                                 scn_fault_name(f.kind), s->faults[i].line);
    while (!at_end(p)) {
        uint64_t v;
        if (accept_kw(p, "pool")) {
            if (!fault_takes_pool(f.kind))
                return scn_error_tok(p, p->pos - 1, "a %s fault names no pool", scn_fault_name(f.kind));
            if (!scn_take_pool(p, &f.pool)) return false;
        } else if (accept_kw(p, "nth")) {
            if (!scn_take_number(p, "nth", 1000000, &v)) return false;
            if (v == 0) return scn_error_tok(p, p->pos - 1, "nth counts from 1");
            f.nth = (uint32_t)v;
        } else if (accept_kw(p, "onward")) {
            f.onward = true;
        } else {
            return scn_error_tok(p, p->pos, "unknown fault option '%s' (pool, nth, onward)", peek(p)->text);
        }
    }
    {
        scn_fault *nf = realloc(s->faults, (s->nfaults + 1) * sizeof *nf);
        if (!nf) return scn_error_tok(p, 0, "out of memory");
        s->faults = nf;
        s->faults[s->nfaults++] = f;
    }
    return true;
}

/* ---- require: the states a scenario exists to reach ---------------------- */

/* An overlap operand: a thread, or an object whose callbacks run. */
static bool take_actor(scn_parser *p, int *out) {
    const scn_tok *t = NULL;
    int i;
    if (!scn_take_word(p, "a thread or object name", &t)) return false;
    if ((i = scn_find_thread(p->s, t->text)) >= 0) {
        *out = i;
        return true;
    }
    if ((i = scn_find_obj(p->s, t->text)) >= 0) {
        if (p->s->objs[i].kind == SCN_OBJ_EVENT || p->s->objs[i].kind == SCN_OBJ_GROUP)
            return scn_error_tok(p, p->pos - 1, "a %s runs no callback to overlap with",
                                 scn_obj_kind_name(p->s->objs[i].kind));
        *out = SCN_REQ_OBJ_BASE + i;
        return true;
    }
    return scn_error_tok(p, p->pos - 1, "'%s' is not a thread or object declared above", t->text);
}

bool scn_parse_require(scn_parser *p) {
    scn_scenario *s = p->s;
    scn_require r;
    int first = p->pos, i;
    size_t n = 0, k;
    memset(&r, 0, sizeof r);
    r.line = p->ln->line;
    r.pool = -1;
    r.count = 1;
    if (s->nrequires >= SCN_MAX_REQUIRES)
        return scn_error_tok(p, 0, "too many requirements (at most %d)", SCN_MAX_REQUIRES);
    if (accept_kw(p, "severed")) {
        r.kind = SCN_REQ_SEVERED;
        if (!scn_take_pool(p, &r.pool) || !scn_expect_end(p)) return false;
    } else if (accept_kw(p, "trace")) {
        r.kind = SCN_REQ_TRACE;
        if (!scn_take_point(p, &r.point)) return false;
        if (accept_kw(p, "pool")) {
            if (!scn_trace_point_has_pool(r.point))
                return scn_error_tok(p, p->pos - 1, "trace point %s carries no pool", scn_trace_point_name(r.point));
            if (!scn_take_pool(p, &r.pool)) return false;
        }
        if (accept_kw(p, "count")) {
            if (!scn_take_number(p, "count", 1000000, &r.count)) return false;
            if (r.count == 0) return scn_error_tok(p, p->pos - 1, "count must be at least 1");
        }
        if (!scn_expect_end(p)) return false;
    } else if (accept_kw(p, "hold")) {
        r.kind = SCN_REQ_HOLD;
        if (!scn_take_point(p, &r.point)) return false;
        for (k = 0; k < s->nholds && s->holds[k].point != r.point; k++) continue;
        if (k == s->nholds)
            return scn_error_tok(p, p->pos - 1, "no hold on %s is declared above", scn_trace_point_name(r.point));
        if (!scn_expect_end(p)) return false;
    } else if (accept_kw(p, "overlap")) {
        r.kind = SCN_REQ_OVERLAP;
        if (!take_actor(p, &r.a) || !take_actor(p, &r.b)) return false;
        if (r.a == r.b) return scn_error_tok(p, p->pos - 1, "an overlap needs two different names");
        if (!scn_expect_end(p)) return false;
    } else if (accept_kw(p, "fault")) {
        const scn_tok *t = NULL;
        r.kind = SCN_REQ_FAULT;
        if (!scn_take_word(p, "a fault kind", &t)) return false;
        int fk = scn_fault_find(t->text);
        if (fk < 0) return scn_error_tok(p, p->pos - 1, "unknown fault '%s'", t->text);
        r.fault = (scn_fault_kind)fk;
        for (k = 0; k < s->nfaults && fault_slot(s->faults[k].kind) != fault_slot(r.fault); k++) continue;
        if (k == s->nfaults)
            return scn_error_tok(p, p->pos - 1, "no %s fault is declared above", scn_fault_name(r.fault));
        if (!scn_expect_end(p)) return false;
    } else {
        r.kind = SCN_REQ_EXPR;
        if (!scn_parse_expr(p, &r.expr) || !scn_expect_end(p)) return false;
    }
    for (i = first; i < p->ln->ntok; i++) {
        int w = snprintf(r.text + n, sizeof r.text - n, "%s%s", n ? " " : "", p->ln->tok[i].text);
        if (w < 0 || (size_t)w >= sizeof r.text - n) break;
        n += (size_t)w;
    }
    {
        scn_require *nr = realloc(s->requires, (s->nrequires + 1) * sizeof *nr);
        if (!nr) return scn_error_tok(p, 0, "out of memory");
        s->requires = nr;
        s->requires[s->nrequires++] = r;
    }
    return true;
}
