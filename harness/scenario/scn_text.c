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

/* 100 ns units: 10 to the microsecond, 10,000 to the millisecond (SCN_MS).
 * The micro sign is written as its UTF-8 bytes: the sources stay ASCII for
 * compilers that read them in another code page. */
char *scn_duration(char *buf, size_t n, unsigned long long units) {
    if (units >= 10000 || units == 0) {
        unsigned long long ms = units / 10000, frac = units % 10000;
        int digits = 4;
        if (frac == 0) {
            snprintf(buf, n, "%llums", ms);
            return buf;
        }
        while (frac % 10 == 0) {
            frac /= 10;
            digits--;
        }
        snprintf(buf, n, "%llu.%0*llums", ms, digits, frac);
    } else if (units % 10 == 0) {
        snprintf(buf, n, "%llu\xc2\xb5" "s", units / 10);
    } else {
        snprintf(buf, n, "%llu.%llu\xc2\xb5" "s", units / 10, units % 10);
    }
    return buf;
}
