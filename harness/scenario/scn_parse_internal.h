/* The scenario parser's own interface between its parts: the state of one
 * parse and the token readers every part uses.  The rest of the harness sees
 * only scn_parse/scn_parse_file/scn_free (scn_ast.h).
 *
 * The parts, in the order a file is read:
 *   scn_parse.c         the file: the purpose line, the statement dispatch,
 *                       thread/callback/repeat blocks, the whole-file checks
 *   scn_parse_tokens.c  errors at a token, words, numbers, durations, names
 *   scn_parse_decl.c    `pool` and the object declarations (`event`, `work`, ...)
 *   scn_parse_ops.c     one operation line inside a block
 *   scn_parse_expr.c    values and comparisons, `expect`, and the binding of
 *                       labels once every block is read
 *   scn_parse_holds.c   `hold`, `fault` and `require`
 * Every reader returns false after the first error, which scn_error_at keeps
 * (later errors are dropped), so a caller just propagates the false. */
#ifndef TPHEAL_SCN_PARSE_INTERNAL_H
#define TPHEAL_SCN_PARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "scn_ast.h"
#include "scn_lex.h"

/* Bounds that keep a hostile file from making a run unbounded in size. */
#define SCN_MAX_POOLS 32
#define SCN_MAX_OBJS 256
#define SCN_MAX_THREADS 32
#define SCN_MAX_OPS 4096
#define SCN_MAX_DEPTH 8
#define SCN_MAX_REPEAT 100000u
#define SCN_MAX_TIME (3600ull * 1000 * SCN_MS) /* one virtual hour */

typedef struct scn_parser {
    scn_scenario *s;
    scn_error *err;
    scn_line *ln;   /* the line being parsed */
    int pos;        /* next token */
    size_t total_ops;
} scn_parser;

/* The words that open a top-level statement (scn_parse.c): the suggestions
 * for a misspelt one, and what a block refuses (scn_parse_ops.c). */
extern const char *const scn_statement_words[];
extern const size_t scn_statement_word_count;

/* ---- errors (scn_parse_tokens.c) ------------------------------------------ */

/* Both record the first error only and return false. */
bool scn_error_at(scn_parser *p, int line, int col, const char *fmt, ...);
/* At token i of the current line (or the line's end when i is past it). */
bool scn_error_tok(scn_parser *p, int i, const char *fmt, ...);

/* ---- the current line's tokens -------------------------------------------- */

static inline bool at_end(scn_parser *p) { return p->pos >= p->ln->ntok; }
static inline const scn_tok *peek(scn_parser *p) { return at_end(p) ? NULL : &p->ln->tok[p->pos]; }

/* Keywords compare with '-' and '_' as the same letter: `retire-idle` is
 * `retire_idle`, so nobody has to remember which one a word uses. */
static inline bool kw_eq(const char *a, const char *b) { return scn_word_eq(a, b); }

static inline bool peek_kw(scn_parser *p, const char *kw) {
    const scn_tok *t = peek(p);
    return t && t->kind == SCN_TOK_WORD && kw_eq(t->text, kw);
}

static inline bool accept_kw(scn_parser *p, const char *kw) {
    if (!peek_kw(p, kw)) return false;
    p->pos++;
    return true;
}

static inline bool accept_punct(scn_parser *p, const char *s) {
    const scn_tok *t = peek(p);
    if (!t || t->kind != SCN_TOK_PUNCT || strcmp(t->text, s) != 0) return false;
    p->pos++;
    return true;
}

bool scn_expect_punct(scn_parser *p, const char *s);
bool scn_expect_end(scn_parser *p);
/* Reads a word token; `what` names it in the error. */
bool scn_take_word(scn_parser *p, const char *what, const scn_tok **out);

/* ---- numbers and durations ------------------------------------------------ */

bool scn_parse_uint(const char *s, size_t n, uint64_t *out);
bool scn_take_number(scn_parser *p, const char *what, uint64_t max, uint64_t *out);
/* "250ms", "2s", "40us" -> rt units; false with *why on anything else. */
bool scn_duration_of(const char *w, uint64_t *out, const char **why);
bool scn_take_duration(scn_parser *p, const char *what, uint64_t *out);

/* ---- names ---------------------------------------------------------------- */

/* Truncates a name that does not fit (labels in terms are not checked). */
void scn_copy_name(char *dst, const char *src);
/* Index of the name in its table, or -1. */
int scn_find_pool(const scn_scenario *s, const char *n);
int scn_find_obj(const scn_scenario *s, const char *n);
int scn_find_thread(const scn_scenario *s, const char *n);
int scn_find_label(const scn_scenario *s, const char *n);
/* A new name in the one namespace of pools, objects, threads and labels. */
bool scn_take_new_name(scn_parser *p, const char *what, const scn_tok **out);
/* A name declared above, of the kind asked for. */
bool scn_take_pool(scn_parser *p, int *out);
bool scn_take_obj(scn_parser *p, const char *what, int *out);
bool scn_take_point(scn_parser *p, int *out);

/* ---- statements: each reads the rest of its line (p->pos past the keyword) */

bool scn_parse_pool(scn_parser *p);                         /* scn_parse_decl.c */
bool scn_parse_object(scn_parser *p, scn_obj_kind kind);    /* scn_parse_decl.c */
bool scn_parse_hold(scn_parser *p);                         /* scn_parse_holds.c */
bool scn_parse_fault(scn_parser *p);                        /* scn_parse_holds.c */
bool scn_parse_require(scn_parser *p);                      /* scn_parse_holds.c */
bool scn_parse_expect(scn_parser *p);                       /* scn_parse_expr.c */
bool scn_parse_expr(scn_parser *p, scn_expr *e);            /* scn_parse_expr.c */
/* One operation line into block b (scn_parse_ops.c); *opened_repeat is set
 * when the line opens a `repeat`, whose body the caller reads next. */
bool scn_parse_op(scn_parser *p, scn_block *b, int depth, bool in_callback, int *opened_repeat);

/* ---- once the whole file is read (scn_parse_expr.c) ----------------------- */

/* Binds each blocked(LABEL) term to its label, wherever it was defined. */
bool scn_resolve_labels(scn_parser *p);
/* Sets the scenario's note when a severed check names a pool with no start-delay. */
void scn_note_severed_without_start_delay(scn_scenario *s);

#endif
