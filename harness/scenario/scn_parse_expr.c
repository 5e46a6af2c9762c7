/* The scenario parser's expressions: values (numbers, POOL.field, count(..),
 * calls(..), overlap(..), outstanding(..), blocked(..), severed(..), ...), comparisons, the
 * `expect` statement, and what is checked once the whole file is read: the
 * labels blocked(..) names, and the note on a severed check without a
 * start-delay. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_parse_internal.h"

/* ---- expressions ------------------------------------------------------------ */

/* A blocked(LABEL) term keeps the label's name until the whole file is read
 * (a label may be defined by a later thread); scn_resolve_labels binds it. */
static bool parse_term(scn_parser *p, scn_term *term) {
    const scn_tok *t = NULL;
    const char *why = "";
    char *dot;
    memset(term, 0, sizeof *term);
    term->pool = -1;
    if (!scn_take_word(p, "a value", &t)) return false;
    if (t->text[0] >= '0' && t->text[0] <= '9') {
        size_t n = strlen(t->text);
        term->kind = SCN_TERM_NUMBER;
        if (scn_parse_uint(t->text, n, &term->number)) return true;
        if (scn_duration_of(t->text, &term->number, &why)) return true;
        return scn_error_tok(p, p->pos - 1, "bad number '%s'", t->text);
    }
    if (kw_eq(t->text, "true") || kw_eq(t->text, "false")) {
        term->kind = SCN_TERM_NUMBER;
        term->number = kw_eq(t->text, "true") ? 1 : 0;
        return true;
    }
    if (kw_eq(t->text, "entries")) { term->kind = SCN_TERM_ENTRIES; return true; }
    if (kw_eq(t->text, "healer")) { term->kind = SCN_TERM_HEALER; return true; }
    if (kw_eq(t->text, "now")) { term->kind = SCN_TERM_NOW; return true; }
    if (kw_eq(t->text, "count") || kw_eq(t->text, "calls") || kw_eq(t->text, "overlap") ||
        kw_eq(t->text, "outstanding") || kw_eq(t->text, "blocked") ||
        kw_eq(t->text, "severed")) {
        const char *fn = t->text;
        if (!scn_expect_punct(p, "(")) return false;
        if (kw_eq(fn, "count")) {
            term->kind = SCN_TERM_COUNT;
            if (!scn_take_point(p, &term->event)) return false;
            if (accept_punct(p, ",")) {
                if (!scn_trace_point_has_pool(term->event))
                    return scn_error_tok(p, p->pos, "trace point %s carries no pool",
                                         scn_trace_point_name(term->event));
                if (!scn_take_pool(p, &term->pool)) return false;
            }
        } else if (kw_eq(fn, "calls") || kw_eq(fn, "overlap")) {
            term->kind = kw_eq(fn, "calls") ? SCN_TERM_CALLS : SCN_TERM_OVERLAP;
            if (!scn_take_obj(p, "an object name", &term->obj)) return false;
            if (p->s->objs[term->obj].kind == SCN_OBJ_EVENT || p->s->objs[term->obj].kind == SCN_OBJ_GROUP)
                return scn_error_tok(p, p->pos - 1, "a %s has no callback to count",
                                     scn_obj_kind_name(p->s->objs[term->obj].kind));
        } else if (kw_eq(fn, "outstanding")) {
            term->kind = SCN_TERM_IO_OPEN;
            if (!scn_take_obj(p, "an io name", &term->obj)) return false;
            if (p->s->objs[term->obj].kind != SCN_OBJ_IO)
                return scn_error_tok(p, p->pos - 1, "outstanding(..) counts an io's open starts, and %s is a %s",
                                     p->s->objs[term->obj].name, scn_obj_kind_name(p->s->objs[term->obj].kind));
        } else if (kw_eq(fn, "blocked")) {
            const scn_tok *l;
            term->kind = SCN_TERM_BLOCKED;
            if (!scn_take_word(p, "a label", &l)) return false;
            term->label = -1;
            scn_copy_name(term->label_name, l->text);
            term->label_col = l->col;
        } else {
            term->kind = SCN_TERM_SEVERED;
            if (!scn_take_pool(p, &term->pool)) return false;
        }
        return scn_expect_punct(p, ")");
    }
    dot = strchr(t->text, '.');
    if (dot) {
        char pool[SCN_TOK_LEN];
        int f;
        size_t n = (size_t)(dot - t->text);
        memcpy(pool, t->text, n);
        pool[n] = '\0';
        term->kind = SCN_TERM_FIELD;
        term->pool = scn_find_pool(p->s, pool);
        if (term->pool < 0) return scn_error_tok(p, p->pos - 1, "undefined pool '%s'", pool);
        for (f = 0; f < SCN_FIELD_COUNT; f++)
            if (kw_eq(dot + 1, scn_field_name((scn_field)f))) break;
        if (f == SCN_FIELD_COUNT)
            return scn_error_tok(p, p->pos - 1, "unknown entry field '%s' (tpheal-harness list)", dot + 1);
        term->field = (scn_field)f;
        return true;
    }
    return scn_error_tok(p, p->pos - 1, "unknown value '%s' (a number, POOL.field, count(..), calls(..), overlap(..), "
                                    "outstanding(..), blocked(..), severed(..), entries, healer, now)",
                         t->text);
}

/* Where an expectation is located (the cold-pool note points there): at
 * its first word after `expect`, the comparison's or a short form's
 * (`entry`, `unhealed`, `severed`), or at the line's end when it has none. */
static int expr_col(const scn_parser *p) {
    return p->pos < p->ln->ntok ? p->ln->tok[p->pos].col : p->ln->end_col;
}

bool scn_parse_expr(scn_parser *p, scn_expr *e) {
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
    int first = p->pos, i;
    const scn_tok *t = NULL;
    memset(e, 0, sizeof *e);
    e->line = p->ln->line;
    e->col = expr_col(p);
    if (!parse_term(p, &e->lhs)) return false;
    t = peek(p);
    if (!t || t->kind != SCN_TOK_PUNCT)
        return scn_error_tok(p, p->pos, "expected a comparison (== != < <= > >=)");
    for (i = 0; i < 6; i++)
        if (strcmp(t->text, ops[i]) == 0) break;
    if (i == 6) return scn_error_tok(p, p->pos, "expected a comparison (== != < <= > >=), found '%s'", t->text);
    e->cmp = (scn_cmp)i;
    p->pos++;
    if (!parse_term(p, &e->rhs)) return false;
    {
        size_t n = 0;
        for (i = first; i < p->pos; i++) {
            int w = snprintf(e->text + n, sizeof e->text - n, "%s%s", n ? " " : "", p->ln->tok[i].text);
            if (w < 0 || (size_t)w >= sizeof e->text - n) break;
            n += (size_t)w;
        }
    }
    return true;
}

bool scn_parse_expect(scn_parser *p) {
    scn_scenario *s = p->s;
    scn_expr e;
    const int col = expr_col(p);
    if (accept_kw(p, "fail_fast") || accept_kw(p, "deadlock") || peek_kw(p, "misuse")) {
        const scn_tok *kw = &p->ln->tok[p->pos - 1];
        scn_outcome o;
        if (accept_kw(p, "misuse")) {
            const scn_tok *what;
            o = SCN_OUTCOME_MISUSE;
            if (!at_end(p)) {
                if (!scn_take_word(p, "a misuse word", &what)) return false;
                scn_copy_name(s->outcome_text, what->text);
            }
        } else {
            o = kw_eq(kw->text, "deadlock") ? SCN_OUTCOME_DEADLOCK : SCN_OUTCOME_FAIL_FAST;
            if (o == SCN_OUTCOME_FAIL_FAST && !at_end(p)) {
                const scn_tok *what;
                if (!scn_take_word(p, "a word of the fail-fast reason", &what)) return false;
                scn_copy_name(s->outcome_text, what->text);
            }
        }
        if (s->outcome != SCN_OUTCOME_NORMAL)
            return scn_error_at(p, p->ln->line, p->ln->tok[1].col, "a scenario expects one outcome");
        s->outcome = o;
        return scn_expect_end(p);
    }
    if (p->pos + 1 < p->ln->ntok && kw_eq(p->ln->tok[p->pos + 1].text, "before")) {
        scn_order o, *no;
        o.pool = -1;
        o.line = p->ln->line;
        if (!scn_take_point(p, &o.first)) return false;
        p->pos++; /* before */
        if (!scn_take_point(p, &o.then)) return false;
        if (accept_kw(p, "pool")) {
            if (!scn_trace_point_has_pool(o.first) || !scn_trace_point_has_pool(o.then))
                return scn_error_tok(p, p->pos - 1, "both trace points must carry a pool to filter by one");
            if (!scn_take_pool(p, &o.pool)) return false;
        }
        if (!scn_expect_end(p)) return false;
        no = realloc(s->orders, (s->norders + 1) * sizeof *no);
        if (!no) return scn_error_tok(p, 0, "out of memory");
        s->orders = no;
        s->orders[s->norders++] = o;
        return true;
    }
    if (accept_kw(p, "entry")) {
        int pool;
        bool exists;
        if (!scn_take_pool(p, &pool)) return false;
        if (accept_kw(p, "exists")) exists = true;
        else if (accept_kw(p, "absent")) exists = false;
        else return scn_error_tok(p, p->pos, "expected 'exists' or 'absent'");
        if (!scn_expect_end(p)) return false;
        memset(&e, 0, sizeof e);
        e.line = p->ln->line;
        e.col = col;
        e.lhs.kind = SCN_TERM_FIELD;
        e.lhs.pool = pool;
        e.lhs.field = SCN_FIELD_EXISTS;
        e.rhs.kind = SCN_TERM_NUMBER;
        e.rhs.number = exists ? 1 : 0;
        snprintf(e.text, sizeof e.text, "entry %s %s", s->pools[pool].name, exists ? "exists" : "absent");
    } else if (accept_kw(p, "unhealed")) {
        int pool;
        if (!scn_take_pool(p, &pool)) return false;
        if (!scn_expect_end(p)) return false;
        memset(&e, 0, sizeof e);
        e.line = p->ln->line;
        e.col = col;
        e.lhs.kind = SCN_TERM_FIELD;
        e.lhs.pool = pool;
        e.lhs.field = SCN_FIELD_UNHEALED;
        e.rhs.kind = SCN_TERM_NUMBER;
        e.rhs.number = 1;
        snprintf(e.text, sizeof e.text, "unhealed %s", s->pools[pool].name);
        s->allow_unhealed |= 1ull << pool;
    } else if (!(p->pos + 1 < p->ln->ntok && strcmp(p->ln->tok[p->pos + 1].text, "(") == 0) &&
               accept_kw(p, "severed")) { /* `severed P`; `severed(P) == 0` is an expression */
        int pool;
        if (!scn_take_pool(p, &pool)) return false;
        if (!scn_expect_end(p)) return false;
        memset(&e, 0, sizeof e);
        e.line = p->ln->line;
        e.col = col;
        e.lhs.kind = SCN_TERM_SEVERED;
        e.lhs.pool = pool;
        e.rhs.kind = SCN_TERM_NUMBER;
        e.rhs.number = 1;
        snprintf(e.text, sizeof e.text, "severed %s", s->pools[pool].name);
        s->allow_severed = true;
    } else {
        if (!scn_parse_expr(p, &e)) return false;
        if (!scn_expect_end(p)) return false;
    }
    {
        scn_expr *ne = realloc(s->expects, (s->nexpects + 1) * sizeof *ne);
        if (!ne) return scn_error_tok(p, 0, "out of memory");
        s->expects = ne;
        s->expects[s->nexpects++] = e;
    }
    return true;
}

/* ---- once the whole file is read ------------------------------------------- */

/* A label may be defined after the expression that names it (a later thread
 * or callback), so blocked(LABEL) is bound only here. */
static bool resolve_term(scn_parser *p, const scn_expr *e, scn_term *t) {
    if (t->kind != SCN_TERM_BLOCKED) return true;
    t->label = scn_find_label(p->s, t->label_name);
    if (t->label < 0) return scn_error_at(p, e->line, t->label_col, "undefined label '%s'", t->label_name);
    return true;
}

static bool resolve_expr(scn_parser *p, scn_expr *e) {
    return resolve_term(p, e, &e->lhs) && resolve_term(p, e, &e->rhs);
}

static bool resolve_block(scn_parser *p, scn_block *b) {
    size_t i;
    for (i = 0; i < b->n; i++) {
        if (b->ops[i].expr && !resolve_expr(p, b->ops[i].expr)) return false;
        if (b->ops[i].body && !resolve_block(p, b->ops[i].body)) return false;
    }
    return true;
}

/* `severed(P)`, `expect severed P` or `require severed P` on a pool with no
 * `start-delay`: a cancellation severs only a pool whose first worker has not
 * started, and without the delay that window is a few scheduling points wide
 * (the random walk severed the default pool in 0 of 200 seeds).  Legal, and
 * right for a scenario that checks a pool does *not* sever, so a note. */
void scn_note_severed_without_start_delay(scn_scenario *s) {
    size_t i;
    int pool = -1, line = 0, col = 1;
    for (i = 0; i < s->nexpects && pool < 0; i++) {
        const scn_expr *e = &s->expects[i];
        if (e->lhs.kind == SCN_TERM_SEVERED && s->pools[e->lhs.pool].start_delay == 0) pool = e->lhs.pool;
        else if (e->rhs.kind == SCN_TERM_SEVERED && s->pools[e->rhs.pool].start_delay == 0) pool = e->rhs.pool;
        line = e->line;
        col = e->col;
    }
    for (i = 0; i < s->nrequires && pool < 0; i++) {
        const scn_require *r = &s->requires[i];
        if (r->kind == SCN_REQ_SEVERED && s->pools[r->pool].start_delay == 0) pool = r->pool;
        line = r->line;
        col = 1;
    }
    if (pool < 0) return;
    s->note_line = line;
    s->note_col = col;
    snprintf(s->note, sizeof s->note,
             "pool %s has no start-delay: a cancellation severs only a cold pool, and without "
             "`pool %s ... start-delay D` it rarely is (docs/scenarios.md)",
             s->pools[pool].name, s->pools[pool].name);
}

bool scn_resolve_labels(scn_parser *p) {
    scn_scenario *s = p->s;
    size_t i;
    for (i = 0; i < s->nthreads; i++)
        if (!resolve_block(p, &s->threads[i].body)) return false;
    for (i = 0; i < s->ncallbacks; i++)
        if (!resolve_block(p, &s->callbacks[i].body)) return false;
    for (i = 0; i < s->nexpects; i++)
        if (!resolve_expr(p, &s->expects[i])) return false;
    for (i = 0; i < s->nrequires; i++)
        if (s->requires[i].kind == SCN_REQ_EXPR && !resolve_expr(p, &s->requires[i].expr)) return false;
    return true;
}
