/* "Did you mean": the nearest of a list of words to a misspelt one. */
#ifndef TPHEAL_SCN_SUGGEST_H
#define TPHEAL_SCN_SUGGEST_H
#include <stddef.h>

/* The candidate closest to word by edit distance (insert, delete, replace,
 * swap of neighbours; '-' and '_' the same), when it is close enough to be a
 * slip -- at most 2 edits, and fewer than half the word's letters -- else
 * NULL.  Ties go to the earlier candidate, so the answer is the same every run. */
const char *scn_suggest(const char *word, const char *const *candidates, size_t n);

#endif
