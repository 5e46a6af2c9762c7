/* Splitting one scenario line into tokens, with their columns, so every
 * error can point at `file:line:col`. */
#ifndef TPHEAL_SCN_LEX_H
#define TPHEAL_SCN_LEX_H
#include <stddef.h>

#define SCN_TOK_MAX 48   /* tokens per line; more is a parse error */
#define SCN_TOK_LEN 64   /* longer words are a parse error */

typedef enum scn_tok_kind {
    SCN_TOK_WORD = 0, /* letters, digits, _ - . % */
    SCN_TOK_PUNCT     /* ( ) , == != < <= > >= => */
} scn_tok_kind;

typedef struct scn_tok {
    scn_tok_kind kind;
    int col;              /* 1-based */
    char text[SCN_TOK_LEN];
} scn_tok;

typedef struct scn_line {
    int line;
    int ntok;
    scn_tok tok[SCN_TOK_MAX];
    int end_col;          /* column just past the last token (for "missing X" errors) */
    int bad_col;          /* 0, or the column of a character no token may hold */
    const char *bad_what; /* why bad_col is bad */
} scn_line;

/* Tokenizes src[0..len) (one line, no newline); `#` starts a comment. */
void scn_lex_line(const char *src, size_t len, int line, scn_line *out);

#endif
