/* The scenario parser's operations: one line of a thread, callback or repeat
 * block (`submit w`, `arm t after 5ms`, `repeat 3`, `assert ...`), with its
 * `as LABEL` and `=> RESULT` suffixes.  The op words are scn_words.h's
 * SCN_OP_MAP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_parse_internal.h"
#include "scn_suggest.h"

static bool grow(void **arr, size_t *cap, size_t n, size_t elem) {
    void *np;
    size_t nc;
    if (n < *cap) return true;
    nc = *cap ? *cap * 2 : 8;
    np = realloc(*arr, nc * elem);
    if (!np) return false;
    memset((char *)np + *cap * elem, 0, (nc - *cap) * elem);
    *arr = np;
    *cap = nc;
    return true;
}

static const char *kinds_text(unsigned mask) {
    static char buf[96];
    int k;
    size_t n = 0;
    buf[0] = '\0';
    for (k = 0; k < SCN_OBJ_KIND_COUNT; k++) {
        if (!(mask & (1u << k))) continue;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? " or " : "",
                              scn_obj_kind_name((scn_obj_kind)k));
        if (n >= sizeof buf) break;
    }
    return buf;
}

static bool parse_result(scn_parser *p, int *expect) {
    const scn_tok *t = NULL;
    char words[96], what[128];
    scn_result_words(words, sizeof words);
    snprintf(what, sizeof what, "a result (%s)", words);
    if (!scn_take_word(p, what, &t)) return false;
    if (!scn_result_find(t->text, expect))
        return scn_error_tok(p, p->pos - 1, "unknown result '%s' (%s)", t->text, words);
    return true;
}

static bool push_op(scn_parser *p, scn_block *b, scn_op **out) {
    if (p->total_ops >= SCN_MAX_OPS)
        return scn_error_tok(p, 0, "too many operations (at most %d)", SCN_MAX_OPS);
    if (!grow((void **)&b->ops, &b->cap, b->n, sizeof *b->ops)) return scn_error_tok(p, 0, "out of memory");
    *out = &b->ops[b->n++];
    memset(*out, 0, sizeof **out);
    p->total_ops++;
    return true;
}

/* One operation line into block b; inside a repeat (depth > 0) or a callback
 * `create` is refused (an object is created once). */
bool scn_parse_op(scn_parser *p, scn_block *b, int depth, bool in_callback, int *opened_repeat) {
    scn_scenario *s = p->s;
    const scn_tok *w = peek(p);
    int k = scn_op_find(w->text);
    scn_op *op = NULL;
    unsigned kinds;
    *opened_repeat = 0;
    if (k < 0) {
        const char *ops[SCN_OP_KIND_COUNT];
        const char *nearest;
        size_t i;
        for (i = 0; i < scn_statement_word_count; i++)
            if (kw_eq(w->text, scn_statement_words[i]) && !kw_eq(w->text, "wait"))
                return scn_error_tok(p, p->pos, "'%s' cannot appear inside a block (missing `end`?)", w->text);
        for (i = 0; i < SCN_OP_KIND_COUNT; i++) ops[i] = scn_op_name((scn_op_kind)i);
        if ((nearest = scn_suggest(w->text, ops, SCN_OP_KIND_COUNT)) != NULL)
            return scn_error_tok(p, p->pos, "unknown operation '%s' (did you mean '%s'?)", w->text, nearest);
        return scn_error_tok(p, p->pos, "unknown operation '%s' (tpheal-harness list shows them)", w->text);
    }
    if (!push_op(p, b, &op)) return false;
    p->pos++;
    op->kind = (scn_op_kind)k;
    op->obj = -1;
    op->label = -1;
    op->line = p->ln->line;
    op->col = w->col;
    kinds = scn_op_operand_kinds(op->kind);
    if (kinds) {
        scn_obj_kind ok;
        if (!scn_take_obj(p, "an object name", &op->obj)) return false;
        ok = s->objs[op->obj].kind;
        if (!(kinds & (1u << ok)))
            return scn_error_tok(p, p->pos - 1, "`%s` needs a %s; %s is a %s", w->text, kinds_text(kinds),
                                 s->objs[op->obj].name, scn_obj_kind_name(ok));
    }
    switch (op->kind) {
    case SCN_OP_CREATE:
        if (depth > 0 || in_callback)
            return scn_error_tok(p, 0, "`create` cannot be inside a repeat or a callback (an object is created once)");
        if (s->objs[op->obj].created_by_thread)
            return scn_error_tok(p, p->pos - 1, "%s is created twice", s->objs[op->obj].name);
        if (s->objs[op->obj].group >= 0 && s->objs[s->objs[op->obj].group].created_by_thread)
            return scn_error_tok(p, p->pos - 1, "%s's group is created by a thread: create %s in main",
                                 s->objs[op->obj].name, s->objs[op->obj].name);
        s->objs[op->obj].created_by_thread = true;
        break;
    case SCN_OP_ARM: {
        scn_obj_kind ok = s->objs[op->obj].kind;
        while (!at_end(p) && !peek_kw(p, "as") && !(peek(p)->kind == SCN_TOK_PUNCT)) {
            if (ok == SCN_OBJ_WAIT && accept_kw(p, "timeout")) {
                if (!scn_take_duration(p, "timeout", &op->time)) return false;
                op->has_time = true;
            } else if (ok == SCN_OBJ_WAIT && accept_kw(p, "forever")) {
                op->forever = true;
            } else if ((ok == SCN_OBJ_TIMER || ok == SCN_OBJ_PERIODIC) && accept_kw(p, "after")) {
                if (!scn_take_duration(p, "due time", &op->time)) return false;
                op->has_time = true;
            } else if ((ok == SCN_OBJ_TIMER || ok == SCN_OBJ_PERIODIC) && accept_kw(p, "window")) {
                if (!scn_take_duration(p, "window", &op->window)) return false;
            } else {
                return scn_error_tok(p, p->pos, "unknown option '%s' for arming a %s", peek(p)->text,
                                     scn_obj_kind_name(ok));
            }
        }
        if (op->forever && op->has_time)
            return scn_error_tok(p, 0, "`timeout` and `forever` together"); /* at the op, token 0 */
        if (ok == SCN_OBJ_WAIT && !op->has_time) op->forever = true;
        break;
    }
    case SCN_OP_RELEASE:
        if (accept_kw(p, "draining")) op->release = SCN_RELEASE_DRAINING;
        else if (accept_kw(p, "cancelling")) op->release = SCN_RELEASE_CANCELLING;
        else if (accept_kw(p, "untracked")) op->release = SCN_RELEASE_UNTRACKED;
        else return scn_error_tok(p, p->pos, "expected draining, cancelling or untracked");
        break;
    case SCN_OP_COMPLETE:
        if (accept_kw(p, "bytes") && !scn_take_number(p, "bytes", 1u << 30, &op->count)) return false;
        break;
    case SCN_OP_RETIRE_WORKERS:
        op->obj = SCN_DEFAULT_POOL;
        if (!at_end(p) && !peek_kw(p, "as") && peek(p)->kind == SCN_TOK_WORD &&
            !scn_take_pool(p, &op->obj))
            return false;
        break;
    case SCN_OP_SLEEP:
        if (!scn_take_duration(p, "sleep", &op->time)) return false;
        break;
    case SCN_OP_REPEAT:
        if (!scn_take_number(p, "repeat count", SCN_MAX_REPEAT, &op->count)) return false;
        if (depth + 1 >= SCN_MAX_DEPTH) return scn_error_tok(p, 0, "repeat nested too deeply (at most %d)", SCN_MAX_DEPTH - 1);
        op->body = calloc(1, sizeof *op->body);
        if (!op->body) return scn_error_tok(p, 0, "out of memory");
        *opened_repeat = 1;
        return scn_expect_end(p);
    case SCN_OP_AWAIT:
        op->pool = -1;
        op->count = 1;
        if (!scn_take_point(p, &op->point)) return false;
        if (accept_kw(p, "pool")) {
            if (!scn_trace_point_has_pool(op->point))
                return scn_error_tok(p, p->pos - 1, "trace point %s carries no pool", scn_trace_point_name(op->point));
            if (!scn_take_pool(p, &op->pool)) return false;
        }
        if (accept_kw(p, "count")) {
            if (!scn_take_number(p, "count", 1000000, &op->count)) return false;
            if (op->count == 0) return scn_error_tok(p, p->pos - 1, "count must be at least 1");
        }
        break;
    case SCN_OP_ASSERT:
        op->expr = calloc(1, sizeof *op->expr);
        if (!op->expr) return scn_error_tok(p, 0, "out of memory");
        if (!scn_parse_expr(p, op->expr)) return false;
        break;
    default:
        break;
    }
    /* suffixes: `as LABEL`, `=> RESULT` */
    while (!at_end(p)) {
        if (accept_kw(p, "as")) {
            const scn_tok *l;
            scn_label *nl;
            if (op->label >= 0) return scn_error_tok(p, p->pos - 1, "an operation has one label");
            if (!scn_take_new_name(p, "label", &l)) return false;
            nl = realloc(s->labels, (s->nlabels + 1) * sizeof *nl);
            if (!nl) return scn_error_tok(p, 0, "out of memory");
            s->labels = nl;
            memset(&nl[s->nlabels], 0, sizeof *nl);
            scn_copy_name(nl[s->nlabels].name, l->text);
            nl[s->nlabels].line = p->ln->line;
            op->label = (int)s->nlabels++;
        } else if (accept_punct(p, "=>")) {
            if (!parse_result(p, &op->expect)) return false;
        } else {
            return scn_error_tok(p, p->pos, "unexpected '%s' after `%s`", peek(p)->text, w->text);
        }
    }
    return true;
}
