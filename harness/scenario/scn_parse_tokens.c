/* The scenario parser's token readers (scn_parse_internal.h): the error at a
 * token, words, numbers, durations, and the names declared so far.  Nothing
 * here trusts the input's sizes: every read checks it fits. */
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "scn_parse_internal.h"

bool scn_error_at(scn_parser *p, int line, int col, const char *fmt, ...) {
    va_list ap;
    if (p->err->msg[0]) return false; /* the first error wins */
    p->err->line = line;
    p->err->col = col;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    return false;
}

/* Error at token i of the current line (or the line's end when i is past it). */
bool scn_error_tok(scn_parser *p, int i, const char *fmt, ...) {
    va_list ap;
    int col = (i < p->ln->ntok) ? p->ln->tok[i].col : p->ln->end_col;
    if (p->err->msg[0]) return false;
    p->err->line = p->ln->line;
    p->err->col = col;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    return false;
}
/* Names are checked to fit (is_ident) before they are copied; labels in
 * terms are not, so this truncates rather than overflow. */
void scn_copy_name(char *dst, const char *src) {
    size_t n = strlen(src);
    if (n >= SCN_NAME_MAX) n = SCN_NAME_MAX - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* ---- token helpers -------------------------------------------------------- */

bool scn_expect_punct(scn_parser *p, const char *s) {
    if (accept_punct(p, s)) return true;
    if (at_end(p)) return scn_error_tok(p, p->pos, "expected '%s' before the end of the line", s);
    return scn_error_tok(p, p->pos, "expected '%s', found '%s'", s, peek(p)->text);
}

bool scn_expect_end(scn_parser *p) {
    if (at_end(p)) return true;
    return scn_error_tok(p, p->pos, "unexpected '%s' (nothing more was expected on this line)",
                         peek(p)->text);
}

static bool is_ident(const char *w) {
    size_t i;
    if (!((w[0] >= 'a' && w[0] <= 'z') || (w[0] >= 'A' && w[0] <= 'Z') || w[0] == '_')) return false;
    for (i = 1; w[i]; i++) {
        char c = w[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return i < SCN_NAME_MAX;
}

/* Reads a word token; `what` names it in the error. */
bool scn_take_word(scn_parser *p, const char *what, const scn_tok **out) {
    const scn_tok *t = peek(p);
    /* Written on every path: gcc 12 -O2 inlines this, cannot see that the
     * error paths return false, and warns that callers' tokens may be read
     * uninitialized (-Wmaybe-uninitialized, three sites, issue 11). */
    *out = NULL;
    if (!t) return scn_error_tok(p, p->pos, "missing %s", what);
    if (t->kind != SCN_TOK_WORD) return scn_error_tok(p, p->pos, "expected %s, found '%s'", what, t->text);
    p->pos++;
    *out = t;
    return true;
}

/* ---- numbers and durations ----------------------------------------------- */

bool scn_parse_uint(const char *s, size_t n, uint64_t *out) {
    uint64_t v = 0;
    size_t i;
    if (n == 0 || n > 15) return false; /* < 10^15: no overflow anywhere below */
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

bool scn_take_number(scn_parser *p, const char *what, uint64_t max, uint64_t *out) {
    const scn_tok *t = NULL;
    if (!scn_take_word(p, what, &t)) return false;
    if (!scn_parse_uint(t->text, strlen(t->text), out))
        return scn_error_tok(p, p->pos - 1, "bad number '%s' for %s", t->text, what);
    if (*out > max)
        return scn_error_tok(p, p->pos - 1, "%s %s is out of range (at most %llu)", what, t->text,
                             (unsigned long long)max);
    return true;
}

/* "250ms", "2s", "40us" -> rt units (100 ns).  A bare number is refused: a
 * reader should never have to guess the unit. */
bool scn_duration_of(const char *w, uint64_t *out, const char **why) {
    size_t n = strlen(w), digits = 0;
    uint64_t v, mult;
    while (digits < n && w[digits] >= '0' && w[digits] <= '9') digits++;
    if (digits == 0) { *why = "a duration starts with a number"; return false; }
    if (strcmp(w + digits, "ms") == 0) mult = SCN_MS;
    else if (strcmp(w + digits, "s") == 0) mult = 1000 * SCN_MS;
    else if (strcmp(w + digits, "us") == 0) mult = 10;
    else if (w[digits] == '\0') { *why = "a duration needs a unit (us, ms or s)"; return false; }
    else { *why = "unknown time unit (use us, ms or s)"; return false; }
    if (!scn_parse_uint(w, digits, &v)) { *why = "number too large"; return false; }
    if (v > SCN_MAX_TIME / mult) { *why = "duration longer than one virtual hour"; return false; }
    *out = v * mult;
    return true;
}

bool scn_take_duration(scn_parser *p, const char *what, uint64_t *out) {
    const scn_tok *t = NULL;
    const char *why = "";
    if (!scn_take_word(p, what, &t)) return false;
    if (!scn_duration_of(t->text, out, &why))
        return scn_error_tok(p, p->pos - 1, "bad duration '%s' for %s: %s", t->text, what, why);
    return true;
}

/* ---- names ------------------------------------------------------------------ */

/* One lookup for every kind of name: each table is an array of structs with a
 * `char name[SCN_NAME_MAX]` member at `name_at`. */
static int find_named(const void *table, size_t n, size_t stride, size_t name_at, const char *name) {
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp((const char *)table + i * stride + name_at, name) == 0) return (int)i;
    return -1;
}

int scn_find_pool(const scn_scenario *s, const char *n) {
    return find_named(s->pools, s->npools, sizeof *s->pools, offsetof(scn_pool, name), n);
}
int scn_find_obj(const scn_scenario *s, const char *n) {
    return find_named(s->objs, s->nobjs, sizeof *s->objs, offsetof(scn_obj, name), n);
}
int scn_find_thread(const scn_scenario *s, const char *n) {
    return find_named(s->threads, s->nthreads, sizeof *s->threads, offsetof(scn_thread, name), n);
}
int scn_find_label(const scn_scenario *s, const char *n) {
    return find_named(s->labels, s->nlabels, sizeof *s->labels, offsetof(scn_label, name), n);
}

/* A new name: an identifier, not reserved, not used by any pool, object,
 * thread or label (one namespace, so a reader never has to ask which). */
bool scn_take_new_name(scn_parser *p, const char *what, const scn_tok **out) {
    const scn_tok *t = NULL;
    const scn_scenario *s = p->s;
    if (!scn_take_word(p, what, &t)) return false;
    if (!is_ident(t->text))
        return scn_error_tok(p, p->pos - 1, "bad name '%s' for %s (letters, digits, _; at most %d)",
                             t->text, what, SCN_NAME_MAX - 1);
    if (strcmp(t->text, "default") == 0 || strcmp(t->text, "end") == 0 ||
        strcmp(t->text, "entries") == 0 || strcmp(t->text, "healer") == 0 ||
        strcmp(t->text, "now") == 0)
        return scn_error_tok(p, p->pos - 1, "'%s' is reserved and cannot name a %s", t->text, what);
    if (scn_find_pool(s, t->text) >= 0 || scn_find_obj(s, t->text) >= 0 || scn_find_thread(s, t->text) >= 0 ||
        scn_find_label(s, t->text) >= 0)
        return scn_error_tok(p, p->pos - 1, "duplicate name '%s'", t->text);
    *out = t;
    return true;
}

bool scn_take_pool(scn_parser *p, int *out) {
    const scn_tok *t = NULL;
    if (!scn_take_word(p, "a pool name", &t)) return false;
    *out = scn_find_pool(p->s, t->text);
    if (*out < 0) {
        if (scn_find_obj(p->s, t->text) >= 0 || scn_find_thread(p->s, t->text) >= 0)
            return scn_error_tok(p, p->pos - 1, "'%s' is not a pool", t->text);
        return scn_error_tok(p, p->pos - 1, "undefined pool '%s'", t->text);
    }
    return true;
}

bool scn_take_obj(scn_parser *p, const char *what, int *out) {
    const scn_tok *t = NULL;
    if (!scn_take_word(p, what, &t)) return false;
    *out = scn_find_obj(p->s, t->text);
    if (*out < 0) {
        if (scn_find_pool(p->s, t->text) >= 0 || scn_find_thread(p->s, t->text) >= 0)
            return scn_error_tok(p, p->pos - 1, "'%s' is not an object", t->text);
        return scn_error_tok(p, p->pos - 1, "undefined object '%s'", t->text);
    }
    return true;
}

bool scn_take_point(scn_parser *p, int *out) {
    const scn_tok *t = NULL;
    const char *slash;
    if (!scn_take_word(p, "a trace point", &t)) return false;
    /* NAME, or TARGET/NAME as `list` prints it */
    slash = strchr(t->text, '/');
    *out = scn_trace_point_find(slash ? slash + 1 : t->text);
    if (*out >= 0 && slash &&
        (strlen(scn_trace_point_target(*out)) != (size_t)(slash - t->text) ||
         strncmp(scn_trace_point_target(*out), t->text, (size_t)(slash - t->text)) != 0))
        return scn_error_tok(p, p->pos - 1, "trace point '%s' is %s/%s", t->text, scn_trace_point_target(*out),
                             scn_trace_point_name(*out));
    if (*out < 0)
        return scn_error_tok(p, p->pos - 1, "unknown trace point '%s' (`tpheal-harness list` shows them)",
                             t->text);
    return true;
}
