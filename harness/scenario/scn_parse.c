/* The scenario parser: text -> scn_scenario (scn_ast.h).  Reference:
 * docs/scenarios.md.  Every malformed input ends in one scn_error with a
 * line and column; nothing here trusts the input's sizes (the fuzz target in
 * harness/fuzz/ feeds it arbitrary bytes).
 *
 * This file reads the file: the purpose line, the statement each line opens,
 * the thread, callback and repeat blocks, and the checks that need the whole
 * file; each statement's own words are read by the parts that
 * scn_parse_internal.h lists. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "scn_parse_internal.h"
#include "scn_suggest.h"

/* The words that open a top-level statement: the object kinds come from
 * scn_words.h, in its order (a suggestion's tie goes to the earlier word). */
const char *const scn_statement_words[] = {
    "pool",
#define SCN_STATEMENT_KIND_(kind, word) word,
    SCN_OBJ_KIND_MAP(SCN_STATEMENT_KIND_)
#undef SCN_STATEMENT_KIND_
    "thread", "callback", "hold", "fault", "expect", "build", "settle", "require", "sampled"};
const size_t scn_statement_word_count = sizeof scn_statement_words / sizeof scn_statement_words[0];

typedef struct frame {
    scn_block *block;
    int line, col;
    const char *what; /* "thread", "callback", "repeat" */
    bool in_callback;
} frame;

static bool parse_build(scn_parser *p) {
    const scn_tok *t = NULL;
    if (!scn_take_word(p, "a build name (fail-fast)", &t)) return false;
    if (!kw_eq(t->text, "fail_fast")) return scn_error_tok(p, p->pos - 1, "unknown build '%s' (fail-fast)", t->text);
    p->s->fail_fast_build = true;
    return scn_expect_end(p);
}

/* `sampled "why"` at the top level: the scenario says the bounded search
 * cannot finish it and why.  The reason is free text, so the line is read
 * here, before the lexer (which has no strings).  -1: the line is not a
 * `sampled` statement; 0: an error was reported (scn_error_at returns
 * false); 1: read. */
static int parse_sampled(scn_parser *p, const char *t, size_t n, int line) {
    const char *kw = "sampled";
    size_t k = 0, kl = strlen(kw), b, i;
    while (k < n && (t[k] == ' ' || t[k] == '\t')) k++;
    if (n - k < kl || memcmp(t + k, kw, kl) != 0) return -1;
    if (k + kl < n && t[k + kl] != ' ' && t[k + kl] != '\t' && t[k + kl] != '"' && t[k + kl] != '\r') return -1;
    k += kl;
    while (k < n && (t[k] == ' ' || t[k] == '\t')) k++;
    if (k >= n || t[k] != '"')
        return scn_error_at(p, line, (int)k + 1, "`sampled` needs its reason in double quotes: sampled \"why\"");
    b = ++k;
    while (k < n && t[k] != '"') {
        unsigned char c = (unsigned char)t[k];
        if (c < 0x20 || c >= 0x7f)
            return scn_error_at(p, line, (int)k + 1, "a `sampled` reason is printable ASCII");
        k++;
    }
    if (k >= n) return scn_error_at(p, line, (int)b, "the `sampled` reason is not closed by '\"'");
    if (k == b) return scn_error_at(p, line, (int)b, "the `sampled` reason says nothing");
    if (k - b >= sizeof p->s->sampled)
        return scn_error_at(p, line, (int)b, "the `sampled` reason is longer than %d characters",
                            (int)sizeof p->s->sampled - 1);
    if (p->s->sampled[0]) return scn_error_at(p, line, 1, "a second `sampled` line");
    for (i = k + 1; i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r'); i++) {}
    if (i < n && t[i] != '#') return scn_error_at(p, line, (int)i + 1, "unexpected text after the `sampled` reason");
    memcpy(p->s->sampled, t + b, k - b);
    p->s->sampled[k - b] = '\0';
    return 1;
}

/* The object kind a declaration's first word names, or -1. */
static int object_kind(const char *w) {
    int k;
    for (k = 0; k < SCN_OBJ_KIND_COUNT; k++)
        if (kw_eq(w, scn_obj_kind_name((scn_obj_kind)k))) return k;
    return -1;
}

static uint64_t fnv1a(const char *t, size_t n) {
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= (unsigned char)t[i];
        h *= 1099511628211ull;
    }
    return h;
}

static bool parse_text(scn_parser *p, const char *text, size_t len) {
    scn_scenario *s = p->s;
    frame stack[SCN_MAX_DEPTH]; /* 0: the thread or callback; repeats up to SCN_MAX_DEPTH - 1 (scn_parse_op) */
    int depth = -1; /* -1: top level */
    size_t at = 0;
    int line = 0;
    scn_line ln;
    p->ln = &ln;
    while (at < len || line == 0) {
        size_t e = at;
        const scn_tok *w;
        int kind;
        while (e < len && text[e] != '\n') e++;
        line++;
        if (line == 1) {
            const char *pre = "# purpose:";
            size_t n = strlen(pre), k = n;
            if (e - at < n || memcmp(text + at, pre, n) != 0)
                return scn_error_at(p, 1, 1, "a scenario starts with a `# purpose: ...` line");
            while (at + k < e && (text[at + k] == ' ' || text[at + k] == '\t')) k++;
            if (at + k >= e || (e - at - k == 1 && text[at + k] == '\r'))
                return scn_error_at(p, 1, (int)k + 1, "the purpose line says nothing");
            {
                size_t m = e - at - k, i;
                if (m >= sizeof s->purpose) m = sizeof s->purpose - 1;
                for (i = 0; i < m; i++) {
                    unsigned char c = (unsigned char)text[at + k + i];
                    s->purpose[i] = (c >= 0x20 && c < 0x7f) ? (char)c : ' ';
                }
                while (m > 0 && s->purpose[m - 1] == ' ') m--;
                s->purpose[m] = '\0';
            }
            at = e + 1;
            if (e >= len) break;
            continue;
        }
        if (depth < 0) {
            int r = parse_sampled(p, text + at, e - at, line);
            if (r == 0) return false;
            if (r == 1) {
                at = e + 1;
                if (e >= len) break;
                continue;
            }
        }
        scn_lex_line(text + at, e - at, line, &ln);
        at = e + 1;
        if (ln.bad_col) return scn_error_at(p, line, ln.bad_col, "%s", ln.bad_what);
        if (ln.ntok == 0) {
            if (e >= len) break;
            continue;
        }
        p->pos = 0;
        w = &ln.tok[0];
        if (w->kind != SCN_TOK_WORD) return scn_error_tok(p, 0, "unexpected '%s' at the start of a line", w->text);
        if (kw_eq(w->text, "end")) {
            p->pos = 1;
            if (depth < 0) return scn_error_tok(p, 0, "`end` with no thread, callback or repeat open");
            if (!scn_expect_end(p)) return false;
            if (strcmp(stack[depth].what, "repeat") != 0 && stack[depth].block->n == 0)
                return scn_error_at(p, stack[depth].line, stack[depth].col, "empty %s", stack[depth].what);
            depth--;
        } else if (depth >= 0) {
            int opened;
            scn_block *b = stack[depth].block;
            if (!scn_parse_op(p, b, depth, stack[depth].in_callback, &opened)) return false;
            if (opened) {
                scn_op *op = &b->ops[b->n - 1];
                depth++;
                stack[depth].block = op->body;
                stack[depth].line = line;
                stack[depth].col = w->col;
                stack[depth].what = "repeat";
                stack[depth].in_callback = stack[depth - 1].in_callback;
            }
        } else {
            p->pos = 1;
            if (kw_eq(w->text, "pool")) {
                if (!scn_parse_pool(p)) return false;
            } else if ((kind = object_kind(w->text)) >= 0) {
                if (!scn_parse_object(p, (scn_obj_kind)kind)) return false;
            } else if (kw_eq(w->text, "thread")) {
                const scn_tok *name;
                scn_thread *th;
                if (!scn_take_new_name(p, "thread", &name)) return false;
                if (!scn_expect_end(p)) return false;
                if (s->nthreads >= SCN_MAX_THREADS)
                    return scn_error_tok(p, 1, "too many threads (at most %d)", SCN_MAX_THREADS);
                th = &s->threads[s->nthreads++];
                memset(th, 0, sizeof *th);
                scn_copy_name(th->name, name->text);
                th->line = line;
                depth = 0;
                stack[0].block = &th->body;
                stack[0].line = line;
                stack[0].col = w->col;
                stack[0].what = "thread";
                stack[0].in_callback = false;
            } else if (kw_eq(w->text, "callback")) {
                int o;
                scn_callback *cb;
                if (!scn_take_obj(p, "an object name", &o)) return false;
                if (s->objs[o].kind == SCN_OBJ_EVENT || s->objs[o].kind == SCN_OBJ_GROUP)
                    return scn_error_tok(p, 1, "a %s has no callback", scn_obj_kind_name(s->objs[o].kind));
                if (s->objs[o].callback >= 0)
                    return scn_error_tok(p, 1, "%s already has a callback block", s->objs[o].name);
                if (!scn_expect_end(p)) return false;
                if (s->ncallbacks >= SCN_MAX_OBJS) return scn_error_tok(p, 0, "too many callbacks");
                cb = &s->callbacks[s->ncallbacks];
                memset(cb, 0, sizeof *cb);
                cb->obj = o;
                cb->line = line;
                s->objs[o].callback = (int)s->ncallbacks++;
                depth = 0;
                stack[0].block = &cb->body;
                stack[0].line = line;
                stack[0].col = w->col;
                stack[0].what = "callback";
                stack[0].in_callback = true;
            } else if (kw_eq(w->text, "hold")) {
                if (!scn_parse_hold(p)) return false;
            } else if (kw_eq(w->text, "fault")) {
                if (!scn_parse_fault(p)) return false;
            } else if (kw_eq(w->text, "expect")) {
                if (!scn_parse_expect(p)) return false;
            } else if (kw_eq(w->text, "require")) {
                if (!scn_parse_require(p)) return false;
            } else if (kw_eq(w->text, "build")) {
                if (!parse_build(p)) return false;
            } else if (kw_eq(w->text, "settle")) {
                if (!scn_take_duration(p, "settle", &s->settle)) return false;
                if (!scn_expect_end(p)) return false;
            } else if (scn_op_find(w->text) >= 0) {
                return scn_error_tok(p, 0, "operation '%s' outside a thread or callback block", w->text);
            } else {
                const char *nearest = scn_suggest(w->text, scn_statement_words, scn_statement_word_count);
                if (nearest) return scn_error_tok(p, 0, "unknown word '%s' (did you mean '%s'?)", w->text, nearest);
                return scn_error_tok(p, 0, "unknown word '%s'", w->text);
            }
        }
        if (e >= len) break;
    }
    if (depth >= 0)
        return scn_error_at(p, stack[depth].line, stack[depth].col, "%s is not closed by `end`",
                            stack[depth].what);
    if (s->nthreads == 0) return scn_error_at(p, line, 1, "a scenario needs at least one thread");
    scn_note_severed_without_start_delay(s);
    return scn_resolve_labels(p);
}

static void free_block(scn_block *b) {
    size_t i;
    for (i = 0; i < b->n; i++) {
        if (b->ops[i].body) {
            free_block(b->ops[i].body);
            free(b->ops[i].body);
        }
        free(b->ops[i].expr);
    }
    free(b->ops);
}

void scn_free(scn_scenario *s) {
    size_t i;
    if (!s) return;
    for (i = 0; i < s->nthreads; i++) free_block(&s->threads[i].body);
    for (i = 0; i < s->ncallbacks; i++) free_block(&s->callbacks[i].body);
    free(s->path);
    free(s->pools);
    free(s->objs);
    free(s->threads);
    free(s->callbacks);
    free(s->holds);
    free(s->faults);
    free(s->expects);
    free(s->labels);
    free(s->orders);
    free(s->requires);
    free(s);
}

scn_scenario *scn_parse(const char *path, const char *text, size_t len, scn_error *err) {
    scn_parser p;
    scn_scenario *s = calloc(1, sizeof *s);
    memset(err, 0, sizeof *err);
    memset(&p, 0, sizeof p);
    if (!s) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    s->path = malloc(strlen(path ? path : "") + 1);
    s->pools = calloc(SCN_MAX_POOLS, sizeof *s->pools);
    s->objs = calloc(SCN_MAX_OBJS, sizeof *s->objs);
    s->threads = calloc(SCN_MAX_THREADS, sizeof *s->threads);
    s->callbacks = calloc(SCN_MAX_OBJS, sizeof *s->callbacks);
    if (!s->path || !s->pools || !s->objs || !s->threads || !s->callbacks) {
        scn_free(s);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    strcpy(s->path, path ? path : "");
    s->content_hash = fnv1a(text, len);
    snprintf(s->pools[0].name, sizeof s->pools[0].name, "default");
    s->pools[0].is_default = true;
    s->npools = 1;
    p.s = s;
    p.err = err;
    if (memchr(text, '\0', len)) {
        /* report where: a NUL is never valid text */
        size_t i, l = 1, c = 1;
        for (i = 0; text[i] != '\0'; i++) {
            if (text[i] == '\n') { l++; c = 1; } else c++;
        }
        scn_error_at(&p, (int)l, (int)c, "NUL byte in the file");
    } else {
        parse_text(&p, text, len);
    }
    if (err->msg[0]) {
        scn_free(s);
        return NULL;
    }
    return s;
}

/* The largest scenario file read: far above any real scenario, low enough that
 * a path naming a device or a huge log is refused before it fills memory. */
#define SCN_FILE_MAX ((size_t)1 << 24)

scn_scenario *scn_parse_file(const char *path, scn_error *err) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    scn_scenario *s;
    memset(err, 0, sizeof *err);
    if (!f) {
        snprintf(err->msg, sizeof err->msg, "cannot open the file: %s", strerror(errno));
        return NULL;
    }
    /* The buffer grows to one byte past the limit at most, so a file of
     * exactly the limit is read whole and one byte more is what refuses it
     * (growing by a fixed margin refused files up to 4 KiB short of it). */
    for (;;) {
        size_t got;
        if (n == cap) {
            char *nb;
            if (cap > SCN_FILE_MAX) {
                free(buf);
                fclose(f);
                snprintf(err->msg, sizeof err->msg, "file larger than 16 MiB");
                return NULL;
            }
            cap = cap ? cap * 2 : 8192;
            if (cap > SCN_FILE_MAX) cap = SCN_FILE_MAX + 1;
            nb = realloc(buf, cap);
            if (!nb) { /* parsing what was read so far would report the wrong error, or none */
                free(buf);
                fclose(f);
                snprintf(err->msg, sizeof err->msg, "out of memory");
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) { /* a directory opens on POSIX; reading it fails */
        snprintf(err->msg, sizeof err->msg, "cannot read the file: %s", strerror(errno));
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    /* a UTF-8 byte order mark (Windows editors write one) is not text */
    if (buf && n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        memmove(buf, buf + 3, n - 3);
        n -= 3;
    }
    s = scn_parse(path, buf ? buf : "", n, err);
    free(buf);
    return s;
}
