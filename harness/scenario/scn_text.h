/* A growable text buffer for reports (no fixed limits on what a failure says). */
#ifndef TPHEAL_SCN_TEXT_H
#define TPHEAL_SCN_TEXT_H
#include <stddef.h>

typedef struct scn_text {
    char *s;
    size_t n, cap;
} scn_text;

#if defined(__GNUC__)
#define SCN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SCN_PRINTF(a, b)
#endif

void scn_text_printf(scn_text *, const char *fmt, ...) SCN_PRINTF(2, 3);
/* Hands the string over (never NULL once something was printed). */
char *scn_text_take(scn_text *);
void scn_text_free(scn_text *);
/* A virtual duration or time (100 ns units, SCN_MS a millisecond) in the
 * user's units: "2ms", "15.625ms", "86us", "0.3us", "0ms".  Into buf (24
 * bytes are enough); returns buf. */
char *scn_duration(char *buf, size_t n, unsigned long long units);
/* strdup is POSIX, not C11. NULL stays NULL. */
char *scn_strdup(const char *);

#endif
