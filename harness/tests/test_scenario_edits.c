/* What the scenario parser says about inputs derived from the corpus.  Each
 * scenario file is edited one word at a time (deleted, duplicated, swapped
 * with the next, replaced by an odd word), one line at a time (duplicated)
 * and cut after each line.  Every edited text is parsed, and what the parser
 * answers -- the error as `file:line:col: message`, or a summary of the
 * scenario it built -- is one record.  The records of each (file, edit kind)
 * are digested with FNV-1a 64 and compared against
 * harness/tests/golden/scenario_edits.txt, so a change of any message, line,
 * column or parsed structure on any of these paths is seen (mutation testing
 * showed that tables of one bad input per message leave most of them
 * unpinned).
 *
 *   test_scenario_edits                   the cmocka test (ctest runs this)
 *   test_scenario_edits --list FILE KIND  print the records behind one digest
 *   test_scenario_edits --update          rewrite the golden file
 *
 * The inputs are built from whitespace-separated words, not from the
 * parser's lexer: a test whose inputs came from the code under test would
 * move with it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scn_ast.h"

#define NAME_LEN 256

/* ---- the edits ------------------------------------------------------------ */

typedef enum edit_kind {
    EDIT_DELETE = 0,
    EDIT_DUPLICATE,
    EDIT_SWAP,
    EDIT_HUGE_NUMBER,
    EDIT_PAREN,
    EDIT_DEFAULT,
    EDIT_ZERO,
    EDIT_DUPLICATE_LINE,
    EDIT_CUT,
    EDIT_KIND_COUNT
} edit_kind;

/* The odd words: a number past every range (and past what scn_parse_uint
 * reads), punctuation where a word is expected, the reserved pool name where
 * an object, a new name or a keyword is, and the zero that every count, nth
 * and max refuses.  A duplicated line declares a name, a fault, an outcome or
 * a `create` twice. */
static const struct {
    const char *name;
    const char *replacement; /* NULL: not a replacement */
} edit_kinds[EDIT_KIND_COUNT] = {
    {"delete", NULL},
    {"duplicate", NULL},
    {"swap", NULL},
    {"replace-number", "999999999999999999999"},
    {"replace-paren", "("},
    {"replace-default", "default"},
    {"replace-zero", "0"},
    {"duplicate-line", NULL},
    {"cut", NULL},
};

static int edit_kind_find(const char *name) {
    int k;
    for (k = 0; k < EDIT_KIND_COUNT; k++)
        if (strcmp(edit_kinds[k].name, name) == 0) return k;
    return -1;
}

/* ---- one corpus file, split into words ------------------------------------ */

typedef struct word_span {
    size_t at, len;
    int line, col;
    bool in_comment; /* after the first word of a comment */
} word_span;

typedef struct corpus_file {
    char name[NAME_LEN];
    char *text;
    size_t len;
    word_span *words;
    size_t nwords;
    size_t longest_word;
    size_t *line_starts; /* offsets; the last line may lack its newline */
    size_t nlines;
} corpus_file;

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

static bool read_whole_file(const char *path, char **text, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    if (!f) return false;
    do {
        if (n == cap) {
            char *nb = realloc(buf, cap ? cap * 2 : 4096);
            if (!nb) break;
            buf = nb;
            cap = cap ? cap * 2 : 4096;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (ferror(f) || n == cap) {
        fclose(f);
        free(buf);
        return false;
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return true;
}

/* A checkout with CRLF line ends (git's autocrlf on Windows) digests as the
 * LF one: the golden file holds one set of digests for every platform. */
static void drop_carriage_returns_before_newlines(char *text, size_t *len) {
    size_t i, n = 0;
    for (i = 0; i < *len; i++)
        if (!(text[i] == '\r' && i + 1 < *len && text[i + 1] == '\n')) text[n++] = text[i];
    text[n] = '\0';
    *len = n;
}

/* Words inside a comment are left alone (editing them changes nothing the
 * parser reads) except the comment's first, the one holding the `#`. */
static bool split_words(corpus_file *f) {
    size_t i = 0, cap = 0;
    int line = 1;
    size_t line_start = 0;
    bool comment = false;
    while (i < f->len) {
        word_span *w;
        if (f->text[i] == '\n') {
            line++;
            line_start = i + 1;
            comment = false;
        }
        if (is_space(f->text[i])) {
            i++;
            continue;
        }
        if (f->nwords == cap) {
            word_span *nw = realloc(f->words, (cap ? cap * 2 : 256) * sizeof *nw);
            if (!nw) return false;
            f->words = nw;
            cap = cap ? cap * 2 : 256;
        }
        w = &f->words[f->nwords++];
        w->at = i;
        w->line = line;
        w->col = (int)(i - line_start) + 1;
        w->in_comment = comment;
        while (i < f->len && !is_space(f->text[i])) {
            if (f->text[i] == '#') comment = true;
            i++;
        }
        w->len = i - w->at;
        if (w->len > f->longest_word) f->longest_word = w->len;
    }
    return true;
}

static bool find_lines(corpus_file *f) {
    size_t i;
    f->line_starts = malloc((f->len + 1) * sizeof *f->line_starts);
    if (!f->line_starts) return false;
    f->line_starts[f->nlines++] = 0;
    for (i = 0; i + 1 < f->len; i++)
        if (f->text[i] == '\n') f->line_starts[f->nlines++] = i + 1;
    return true;
}

static size_t line_end(const corpus_file *f, size_t l) { return l + 1 < f->nlines ? f->line_starts[l + 1] : f->len; }

static void corpus_file_free(corpus_file *f) {
    free(f->text);
    free(f->words);
    free(f->line_starts);
    memset(f, 0, sizeof *f);
}

static bool corpus_file_load(const char *dir, const char *name, corpus_file *f) {
    char path[NAME_LEN * 5];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!read_whole_file(path, &f->text, &f->len)) return false;
    drop_carriage_returns_before_newlines(f->text, &f->len);
    if (split_words(f) && find_lines(f)) return true;
    corpus_file_free(f);
    return false;
}

/* ---- records and their digest ---------------------------------------------- */

typedef struct record_sink {
    uint64_t digest; /* FNV-1a 64 of every record byte */
    size_t records;
    FILE *echo; /* --list: the records as they are digested, or NULL */
} record_sink;

static void sink_start(record_sink *k, FILE *echo) {
    k->digest = 1469598103934665603ull;
    k->records = 0;
    k->echo = echo;
}

static void sink_bytes(record_sink *k, const char *b, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        k->digest ^= (unsigned char)b[i];
        k->digest *= 1099511628211ull;
    }
    if (k->echo) fwrite(b, 1, n, k->echo);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void sink_printf(record_sink *k, const char *fmt, ...) {
    char buf[1024]; /* the longest piece is a note (200) or a quoted word (64) */
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
    sink_bytes(k, buf, (size_t)n);
}

/* ---- the summary of a parsed scenario ---------------------------------------- */

static void summarize_term(record_sink *k, const scn_term *t) {
    sink_printf(k, "{%d n=%llu pool=%d field=%s event=%s obj=%d label=%d '%s'@%d}", (int)t->kind,
                (unsigned long long)t->number, t->pool, t->kind == SCN_TERM_FIELD ? scn_field_name(t->field) : "-",
                t->kind == SCN_TERM_COUNT ? scn_trace_point_name(t->event) : "-", t->obj, t->label, t->label_name,
                t->label_col);
}

static void summarize_expr(record_sink *k, const scn_expr *e) {
    sink_printf(k, "%d:%d cmp=%d '%s' ", e->line, e->col, (int)e->cmp, e->text);
    summarize_term(k, &e->lhs);
    sink_printf(k, " ");
    summarize_term(k, &e->rhs);
}

static void summarize_block(record_sink *k, const scn_block *b, int depth) {
    size_t i;
    for (i = 0; i < b->n; i++) {
        const scn_op *op = &b->ops[i];
        sink_printf(k, "  %*s%d:%d %s obj=%d count=%llu time=%llu window=%llu forever=%d has_time=%d release=%d "
                       "=> %s label=%d point=%d pool=%d\n",
                    depth * 2, "", op->line, op->col, scn_op_name(op->kind), op->obj, (unsigned long long)op->count,
                    (unsigned long long)op->time, (unsigned long long)op->window, op->forever, op->has_time,
                    (int)op->release, scn_result_name(op->expect), op->label, op->point, op->pool);
        if (op->expr) {
            sink_printf(k, "  %*s  assert ", depth * 2, "");
            summarize_expr(k, op->expr);
            sink_printf(k, "\n");
        }
        if (op->body) summarize_block(k, op->body, depth + 1);
    }
}

static void summarize_settings(record_sink *k, const scn_scenario *s) {
    /* %d and %llu only: mingw's msvcrt printf has no z */
    sink_printf(k, "  path '%s' purpose '%s' hash %016llx\n", s->path, s->purpose,
                (unsigned long long)s->content_hash);
    sink_printf(k, "  outcome %d '%s' fail_fast_build=%d settle=%llu allow_severed=%d allow_unhealed=%llx\n",
                (int)s->outcome, s->outcome_text, s->fail_fast_build, (unsigned long long)s->settle,
                s->allow_severed, (unsigned long long)s->allow_unhealed);
    sink_printf(k, "  counts pools=%d objs=%d threads=%d callbacks=%d holds=%d faults=%d expects=%d labels=%d "
                   "orders=%d requires=%d\n",
                (int)s->npools, (int)s->nobjs, (int)s->nthreads, (int)s->ncallbacks, (int)s->nholds, (int)s->nfaults,
                (int)s->nexpects, (int)s->nlabels, (int)s->norders, (int)s->nrequires);
    if (s->note[0]) sink_printf(k, "  note %d:%d %s\n", s->note_line, s->note_col, s->note);
}

static void summarize_declarations(record_sink *k, const scn_scenario *s) {
    size_t i;
    for (i = 0; i < s->npools; i++) {
        const scn_pool *p = &s->pools[i];
        sink_printf(k, "  pool %d %s default=%d min=%d/%u max=%d/%u stall=%d/%u start_delay=%llu\n", p->line,
                    p->name, p->is_default, p->has_min, p->min, p->has_max, p->max, (int)p->stall,
                    p->stall_percent, (unsigned long long)p->start_delay);
    }
    for (i = 0; i < s->nobjs; i++) {
        const scn_obj *o = &s->objs[i];
        sink_printf(k, "  %s %d %s pool=%d group=%d event=%d period=%llu manual=%d set=%d cancel_cb=%d "
                       "by_thread=%d callback=%d\n",
                    scn_obj_kind_name(o->kind), o->line, o->name, o->pool, o->group, o->event,
                    (unsigned long long)o->period, o->manual_reset, o->initially_set, o->cancel_callback,
                    o->created_by_thread, o->callback);
    }
    for (i = 0; i < s->nlabels; i++) sink_printf(k, "  label %d %s\n", s->labels[i].line, s->labels[i].name);
}

static void summarize_blocks(record_sink *k, const scn_scenario *s) {
    size_t i;
    for (i = 0; i < s->nthreads; i++) {
        sink_printf(k, "  thread %d %s\n", s->threads[i].line, s->threads[i].name);
        summarize_block(k, &s->threads[i].body, 1);
    }
    for (i = 0; i < s->ncallbacks; i++) {
        sink_printf(k, "  callback %d obj=%d\n", s->callbacks[i].line, s->callbacks[i].obj);
        summarize_block(k, &s->callbacks[i].body, 1);
    }
}

static void summarize_holds_and_faults(record_sink *k, const scn_scenario *s) {
    size_t i;
    for (i = 0; i < s->nholds; i++) {
        const scn_hold *h = &s->holds[i];
        sink_printf(k, "  hold %d %s pool=%d nth=%u every=%d release=%d duration=%llu until=%s pool=%d count=%u\n",
                    h->line, scn_trace_point_name(h->point), h->pool, h->nth, h->every, (int)h->release,
                    (unsigned long long)h->duration, scn_trace_point_name(h->until_point), h->until_pool,
                    h->until_count);
    }
    for (i = 0; i < s->nfaults; i++) {
        const scn_fault *f = &s->faults[i];
        sink_printf(k, "  fault %d %s pool=%d nth=%u onward=%d\n", f->line, scn_fault_name(f->kind), f->pool,
                    f->nth, f->onward);
    }
}

static void summarize_checks(record_sink *k, const scn_scenario *s) {
    size_t i;
    for (i = 0; i < s->nexpects; i++) {
        sink_printf(k, "  expect ");
        summarize_expr(k, &s->expects[i]);
        sink_printf(k, "\n");
    }
    for (i = 0; i < s->norders; i++)
        sink_printf(k, "  order %d %s before %s pool=%d\n", s->orders[i].line, scn_trace_point_name(s->orders[i].first),
                    scn_trace_point_name(s->orders[i].then), s->orders[i].pool);
    for (i = 0; i < s->nrequires; i++) {
        const scn_require *r = &s->requires[i];
        sink_printf(k, "  require %d kind=%d '%s' pool=%d point=%d count=%llu a=%d b=%d fault=%s", r->line,
                    (int)r->kind, r->text, r->pool, r->point, (unsigned long long)r->count, r->a, r->b,
                    r->kind == SCN_REQ_FAULT ? scn_fault_name(r->fault) : "-");
        if (r->kind == SCN_REQ_EXPR) {
            sink_printf(k, " ");
            summarize_expr(k, &r->expr);
        }
        sink_printf(k, "\n");
    }
}

static void summarize(record_sink *k, const scn_scenario *s) {
    summarize_settings(k, s);
    summarize_declarations(k, s);
    summarize_blocks(k, s);
    summarize_holds_and_faults(k, s);
    summarize_checks(k, s);
}

/* ---- applying one edit and recording the answer -------------------------------- */

typedef struct edit_buffer {
    char *text;
    size_t len, cap;
} edit_buffer;

static void put(edit_buffer *b, const char *bytes, size_t n) {
    memcpy(b->text + b->len, bytes, n);
    b->len += n;
}

/* Word edits: word i (and, for a swap, word i + 1) rewritten in place; the
 * whitespace around it stays, so every other word keeps its line and
 * column. */
static void apply_word_edit(const corpus_file *f, edit_kind kind, size_t i, edit_buffer *b) {
    const word_span *w = &f->words[i];
    const char *t = f->text;
    size_t after = w->at + w->len;
    b->len = 0;
    put(b, t, w->at);
    if (kind == EDIT_DUPLICATE) {
        put(b, t + w->at, w->len);
        put(b, " ", 1);
        put(b, t + w->at, w->len);
    } else if (kind == EDIT_SWAP) {
        const word_span *next = &f->words[i + 1];
        put(b, t + next->at, next->len);
        put(b, t + after, next->at - after);
        put(b, t + w->at, w->len);
        after = next->at + next->len;
    } else if (edit_kinds[kind].replacement) {
        put(b, edit_kinds[kind].replacement, strlen(edit_kinds[kind].replacement));
    }
    put(b, t + after, f->len - after);
}

static void describe_word(record_sink *k, const corpus_file *f, size_t i) {
    const word_span *w = &f->words[i];
    sink_printf(k, "%d:%d '%.*s'", w->line, w->col, (int)w->len, f->text + w->at);
}

static void record_parse(record_sink *k, const corpus_file *f, const edit_buffer *b) {
    scn_error err;
    scn_scenario *s = scn_parse(f->name, b->text, b->len, &err);
    if (!s) {
        sink_printf(k, " => %s:%d:%d: %s\n", f->name, err.line, err.col, err.msg);
        return;
    }
    sink_printf(k, " => ok\n");
    summarize(k, s);
    scn_free(s);
}

/* Line l (0-based) twice; a last line without its newline gets one. */
static void apply_line_duplication(const corpus_file *f, size_t l, edit_buffer *b) {
    size_t start = f->line_starts[l], end = line_end(f, l);
    b->len = 0;
    put(b, f->text, end);
    if (end == 0 || f->text[end - 1] != '\n') put(b, "\n", 1);
    put(b, f->text + start, f->len - start);
}

static void run_line_edits(const corpus_file *f, edit_kind kind, edit_buffer *b, record_sink *k) {
    /* a cut after the last line would be the file itself */
    size_t l, n = kind == EDIT_CUT ? f->nlines - 1 : f->nlines;
    for (l = 0; l < n; l++) {
        if (kind == EDIT_CUT) {
            b->len = 0;
            put(b, f->text, line_end(f, l));
        } else {
            apply_line_duplication(f, l, b);
        }
        sink_printf(k, "%s %d", kind == EDIT_CUT ? "cut after line" : "duplicate line", (int)l + 1);
        record_parse(k, f, b);
        k->records++;
    }
}

static bool word_edit_applies(const corpus_file *f, edit_kind kind, size_t i) {
    if (f->words[i].in_comment) return false;
    return kind != EDIT_SWAP || i + 1 < f->nwords;
}

/* Every edit of one kind to one file, each parsed and recorded. */
static void run_edits(const corpus_file *f, edit_kind kind, edit_buffer *b, record_sink *k) {
    size_t i;
    if (kind == EDIT_CUT || kind == EDIT_DUPLICATE_LINE) {
        run_line_edits(f, kind, b, k);
        return;
    }
    for (i = 0; i < f->nwords; i++) {
        if (!word_edit_applies(f, kind, i)) continue;
        apply_word_edit(f, kind, i, b);
        sink_printf(k, "%s ", edit_kinds[kind].name);
        describe_word(k, f, i);
        if (kind == EDIT_SWAP) {
            sink_printf(k, " with ");
            describe_word(k, f, i + 1);
        }
        record_parse(k, f, b);
        k->records++;
    }
}

static bool edit_buffer_fit(edit_buffer *b, const corpus_file *f) {
    /* the longest edit: a duplicated line (at most the whole text and a
     * newline), a duplicated word, or the longest replacement */
    size_t need = 2 * f->len + f->longest_word + 64;
    char *nt;
    if (need <= b->cap) return true;
    nt = realloc(b->text, need);
    if (!nt) return false;
    b->text = nt;
    b->cap = need;
    return true;
}

/* ---- the golden file ---------------------------------------------------------------- */

typedef struct digest_row {
    char file[NAME_LEN];
    char kind[32];
    unsigned long long records, digest;
    bool seen; /* matched by a corpus file */
} digest_row;

typedef struct digest_table {
    digest_row *rows;
    size_t n, cap;
} digest_table;

static const char golden_header[] =
    "# What the scenario parser says about inputs derived from scenarios/ (harness/tests/test_scenario_edits.c):\n"
    "# one line per corpus file and edit kind -- FILE KIND RECORDS FNV1A64 of the records.\n"
    "# A deliberate change of the parser's messages, lines, columns or parsed structure changes some of\n"
    "# these: regenerate the file with `test_scenario_edits --update` in the same commit, after reading\n"
    "# the records that changed (`test_scenario_edits --list FILE KIND`).\n";

static bool digest_table_add(digest_table *t, const digest_row *r) {
    if (t->n == t->cap) {
        digest_row *nr = realloc(t->rows, (t->cap ? t->cap * 2 : 512) * sizeof *nr);
        if (!nr) return false;
        t->rows = nr;
        t->cap = t->cap ? t->cap * 2 : 512;
    }
    t->rows[t->n++] = *r;
    return true;
}

/* FILE KIND RECORDS DIGEST; the numbers through strtoull, as mingw's msvcrt
 * scanf may not know %ll. */
static bool parse_golden_line(const char *line, digest_row *r) {
    int used = 0;
    char *end;
    memset(r, 0, sizeof *r);
    if (sscanf(line, "%255s %31s %n", r->file, r->kind, &used) != 2 || used == 0) return false;
    r->records = strtoull(line + used, &end, 10);
    if (end == line + used) return false;
    line = end;
    r->digest = strtoull(line, &end, 16);
    return end != line && end[strspn(end, " \t\r\n")] == '\0';
}

static bool read_golden(const char *path, digest_table *t) {
    char line[1024];
    int n = 0;
    bool ok = true;
    FILE *f = fopen(path, "r");
    memset(t, 0, sizeof *t);
    if (!f) return false;
    while (ok && fgets(line, sizeof line, f)) {
        digest_row r;
        n++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0') continue;
        if (parse_golden_line(line, &r)) {
            ok = digest_table_add(t, &r);
        } else {
            fprintf(stderr, "%s:%d:1: expected FILE KIND RECORDS DIGEST\n", path, n);
            ok = false;
        }
    }
    fclose(f);
    if (!ok) {
        free(t->rows);
        memset(t, 0, sizeof *t);
    }
    return ok;
}

static digest_row *digest_table_find(digest_table *t, const char *file, const char *kind) {
    size_t i;
    for (i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].file, file) == 0 && strcmp(t->rows[i].kind, kind) == 0) return &t->rows[i];
    return NULL;
}

/* ---- the whole corpus ---------------------------------------------------------------- */

typedef struct corpus_run {
    digest_table computed;
    size_t parses;
} corpus_run;

/* Digests every (file, edit kind) of the corpus into run->computed. */
static bool digest_corpus(const char *dir, corpus_run *run) {
    char **names;
    size_t i, n;
    edit_buffer b = {NULL, 0, 0};
    bool ok = scn_scenario_names(dir, &names, &n) && n > 0;
    memset(run, 0, sizeof *run);
    for (i = 0; ok && i < n; i++) {
        corpus_file f;
        int kind;
        if (!corpus_file_load(dir, names[i], &f)) {
            fprintf(stderr, "cannot read %s/%s\n", dir, names[i]);
            ok = false;
            break;
        }
        ok = edit_buffer_fit(&b, &f);
        for (kind = 0; ok && kind < EDIT_KIND_COUNT; kind++) {
            record_sink k;
            digest_row r;
            sink_start(&k, NULL);
            run_edits(&f, (edit_kind)kind, &b, &k);
            memset(&r, 0, sizeof r);
            snprintf(r.file, sizeof r.file, "%s", f.name);
            snprintf(r.kind, sizeof r.kind, "%s", edit_kinds[kind].name);
            r.records = k.records;
            r.digest = k.digest;
            run->parses += k.records;
            ok = digest_table_add(&run->computed, &r);
        }
        corpus_file_free(&f);
    }
    scn_scenario_names_free(names, n);
    free(b.text);
    if (!ok) {
        free(run->computed.rows);
        memset(run, 0, sizeof *run);
    }
    return ok;
}

/* Prints each difference; returns how many there are. */
static size_t compare_with_golden(corpus_run *run, digest_table *golden) {
    size_t i, bad = 0;
    for (i = 0; i < run->computed.n; i++) {
        const digest_row *c = &run->computed.rows[i];
        digest_row *g = digest_table_find(golden, c->file, c->kind);
        if (!g) {
            fprintf(stderr, "%s %s: not in the golden file\n", c->file, c->kind);
            bad++;
            continue;
        }
        g->seen = true;
        if (g->records != c->records || g->digest != c->digest) {
            fprintf(stderr, "%s %s: %llu records, digest %016llx; the golden file has %llu, %016llx\n", c->file,
                    c->kind, c->records, c->digest, g->records, g->digest);
            fprintf(stderr, "  records: test_scenario_edits --list %s %s\n", c->file, c->kind);
            bad++;
        }
    }
    for (i = 0; i < golden->n; i++)
        if (!golden->rows[i].seen) {
            fprintf(stderr, "%s %s: in the golden file, but no such corpus file or edit kind\n",
                    golden->rows[i].file, golden->rows[i].kind);
            bad++;
        }
    return bad;
}

static void parser_answers_every_edit_as_the_golden_file_says(void **state) {
    corpus_run run;
    digest_table golden;
    size_t bad;
    (void)state;
    if (!digest_corpus(TPHEAL_SCENARIO_DIR, &run)) {
        fail_msg("cannot read the corpus in %s", TPHEAL_SCENARIO_DIR);
        return;
    }
    if (!read_golden(TPHEAL_SCENARIO_EDITS_GOLDEN, &golden)) {
        free(run.computed.rows);
        fail_msg("cannot read %s (test_scenario_edits --update writes it)", TPHEAL_SCENARIO_EDITS_GOLDEN);
        return;
    }
    print_message("%llu parses of edited corpus files\n", (unsigned long long)run.parses);
    bad = compare_with_golden(&run, &golden);
    free(run.computed.rows);
    free(golden.rows);
    if (bad)
        fail_msg("%llu (file, edit kind) rows differ from %s; if the change is meant, regenerate it with "
                 "test_scenario_edits --update in the same commit",
                 (unsigned long long)bad, TPHEAL_SCENARIO_EDITS_GOLDEN);
}

/* ---- the options ------------------------------------------------------------------------ */

static int update_golden(void) {
    corpus_run run;
    size_t i;
    FILE *f;
    if (!digest_corpus(TPHEAL_SCENARIO_DIR, &run)) {
        fprintf(stderr, "cannot read the corpus in %s\n", TPHEAL_SCENARIO_DIR);
        return 1;
    }
    f = fopen(TPHEAL_SCENARIO_EDITS_GOLDEN, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", TPHEAL_SCENARIO_EDITS_GOLDEN);
        free(run.computed.rows);
        return 1;
    }
    fputs(golden_header, f);
    for (i = 0; i < run.computed.n; i++) {
        const digest_row *r = &run.computed.rows[i];
        fprintf(f, "%s %s %llu %016llx\n", r->file, r->kind, r->records, r->digest);
    }
    free(run.computed.rows);
    if (fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", TPHEAL_SCENARIO_EDITS_GOLDEN);
        return 1;
    }
    printf("wrote %s: %llu parses\n", TPHEAL_SCENARIO_EDITS_GOLDEN, (unsigned long long)run.parses);
    return 0;
}

static int list_records(const char *file, const char *kind_name) {
    int kind = edit_kind_find(kind_name);
    corpus_file f;
    edit_buffer b = {NULL, 0, 0};
    record_sink k;
    if (kind < 0) {
        fprintf(stderr, "unknown edit kind '%s'\n", kind_name);
        return 2;
    }
    if (strchr(file, '/') || strchr(file, '\\') || !corpus_file_load(TPHEAL_SCENARIO_DIR, file, &f)) {
        fprintf(stderr, "no corpus file '%s' in %s\n", file, TPHEAL_SCENARIO_DIR);
        return 2;
    }
    if (!edit_buffer_fit(&b, &f)) {
        corpus_file_free(&f);
        return 1;
    }
    sink_start(&k, stdout);
    run_edits(&f, (edit_kind)kind, &b, &k);
    printf("# %s %s %llu %016llx\n", f.name, edit_kinds[kind].name, (unsigned long long)k.records,
           (unsigned long long)k.digest);
    corpus_file_free(&f);
    free(b.text);
    return 0;
}

static int usage(void) {
    int k;
    fprintf(stderr, "usage: test_scenario_edits [--list FILE KIND | --update]\nKIND:");
    for (k = 0; k < EDIT_KIND_COUNT; k++) fprintf(stderr, " %s", edit_kinds[k].name);
    fprintf(stderr, "\n");
    return 2;
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parser_answers_every_edit_as_the_golden_file_says),
    };
    if (argc == 4 && strcmp(argv[1], "--list") == 0) return list_records(argv[2], argv[3]);
    if (argc == 2 && strcmp(argv[1], "--update") == 0) return update_golden();
    if (argc != 1) return usage();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
