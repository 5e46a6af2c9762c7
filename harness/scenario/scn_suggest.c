/* "Did you mean" (scn_suggest.h): optimal string alignment distance. */
#include "scn_suggest.h"

#include <string.h>

#define MAX_WORD 64

static char fold(char c) { return c == '-' ? '_' : c; }

static size_t distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), i, j;
    static const size_t FAR = (size_t)-1 / 2;
    size_t d[MAX_WORD + 1][MAX_WORD + 1];
    if (la > MAX_WORD || lb > MAX_WORD) return FAR;
    for (i = 0; i <= la; i++) d[i][0] = i;
    for (j = 0; j <= lb; j++) d[0][j] = j;
    for (i = 1; i <= la; i++)
        for (j = 1; j <= lb; j++) {
            size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *scn_suggest(const char *word, const char *const *candidates, size_t n) {
    const char *best = NULL;
    size_t best_d = 3, i, len = word ? strlen(word) : 0;
    if (len == 0) return NULL;
    for (i = 0; i < n; i++) {
        size_t d = distance(word, candidates[i]);
        if (d < best_d && 2 * d < len) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}
