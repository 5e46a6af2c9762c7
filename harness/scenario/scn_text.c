/* Growable text buffer (scn_text.h). */
#include "scn_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scn_text_printf(scn_text *t, const char *fmt, ...) {
    va_list ap;
    int need;
    va_start(ap, fmt);
    need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) return;
    if (t->n + (size_t)need + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        char *ns;
        while (cap < t->n + (size_t)need + 1) cap *= 2;
        ns = realloc(t->s, cap);
        if (!ns) return;
        t->s = ns;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)need;
}

char *scn_text_take(scn_text *t) {
    char *s = t->s;
    t->s = NULL;
    t->n = t->cap = 0;
    return s;
}

void scn_text_free(scn_text *t) {
    free(t->s);
    t->s = NULL;
    t->n = t->cap = 0;
}

char *scn_strdup(const char *s) {
    size_t n;
    char *d;
    if (!s) return NULL;
    n = strlen(s) + 1;
    d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
