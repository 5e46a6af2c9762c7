/* Line tokenizer for the scenario language (see scn_lex.h). */
#include "scn_lex.h"

#include <string.h>

/* '/' so that a trace point may be written as `tpheal-harness list` prints
 * it (api/CreateThreadpoolWork); names reject it (scn_parse_tokens.c). */
static int is_word_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '%' || c == '/';
}

static void fail(scn_line *out, int col, const char *what) {
    if (!out->bad_col) {
        out->bad_col = col;
        out->bad_what = what;
    }
}

void scn_lex_line(const char *src, size_t len, int line, scn_line *out) {
    size_t i = 0;
    memset(out, 0, sizeof *out);
    out->line = line;
    out->end_col = 1;
    while (i < len) {
        unsigned char c = (unsigned char)src[i];
        int col = (int)i + 1;
        scn_tok *t;
        size_t n = 0;
        if (c == ' ' || c == '\t' || c == '\r') { i++; continue; }
        if (c == '#') break;
        if (out->ntok >= SCN_TOK_MAX) { fail(out, col, "too many words on one line"); return; }
        t = &out->tok[out->ntok];
        t->col = col;
        if (is_word_char(c)) {
            t->kind = SCN_TOK_WORD;
            while (i < len && is_word_char((unsigned char)src[i])) {
                if (n + 1 >= SCN_TOK_LEN) { fail(out, col, "word too long"); return; }
                t->text[n++] = src[i++];
            }
        } else if (c == '(' || c == ')' || c == ',') {
            t->kind = SCN_TOK_PUNCT;
            t->text[n++] = (char)c;
            i++;
        } else if (c == '=' || c == '!' || c == '<' || c == '>') {
            char d = (i + 1 < len) ? src[i + 1] : '\0';
            t->kind = SCN_TOK_PUNCT;
            t->text[n++] = (char)c;
            i++;
            if (d == '=' || (c == '=' && d == '>')) { t->text[n++] = d; i++; }
            if ((c == '=' || c == '!') && n == 1) { fail(out, col, "expected == or != or =>"); return; }
        } else {
            fail(out, col, (c < 0x20 || c >= 0x7f) ? "unexpected character (not printable ASCII)"
                                                   : "unexpected character");
            return;
        }
        t->text[n] = '\0';
        out->ntok++;
        out->end_col = (int)i + 1;
    }
}
