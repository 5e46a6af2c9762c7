/* The conformance matrix: behaviour cases of the Windows thread pool API,
 * written once against core/src/os.h and run against both backends of the
 * seam -- the real pool (core/src/win/os_win32.c) and the modelled one
 * (harness/sim) -- so the sim is held to what Windows (here: Wine) does.
 *
 * A case asserts outcomes (CONF_CHECK / CONF_EQ) and records observations
 * (conf_observe): counts and orders only, never times or addresses.  Both
 * runners print the observations as one "outcome" line per case, and the
 * comparison step fails when the two backends' lines differ.
 *
 * Timing: waits for something that must happen poll up to CONF_PATIENCE_MS
 * (generous: Wine's clocks jitter by ~10 ms and the tick is 15.6 ms); checks
 * that something must NOT happen let CONF_SETTLE_MS pass first (many ticks).
 * No assertion is made on elapsed time.
 */
#ifndef TPHEAL_CONF_H
#define TPHEAL_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "os.h"

#define CONF_PATIENCE_MS 5000u
#define CONF_SETTLE_MS 150u

typedef struct conf_ctx {
    const char *case_name;
    int failures;
    char observed[512];
    size_t observed_len;
} conf_ctx;

typedef struct conf_case {
    const char *name;
    void (*run)(conf_ctx *);
    /* Where Wine 8.0 differs from Microsoft's documentation: what each does,
     * which one the sim follows, and the page relied on.  NULL: no known
     * difference. */
    const char *wine_note;
} conf_case;

/* Every case, in a fixed order (cases.c). */
size_t conf_case_total(void);
const conf_case *conf_case_at(size_t index);

/* Runs every case (or those whose name starts with `only`) through `exec`,
 * which wraps one case in the backend's process (runner.c).  Prints one
 * "outcome" line per case on stdout and to `outcomes` (when not NULL), the
 * failures on stderr, the count and the documented Wine differences.
 * Returns the number of failed cases. */
typedef void (*conf_exec_fn)(const conf_case *, conf_ctx *);
int conf_run_all(const char *backend, conf_exec_fn exec, int argc, char **argv);

void conf_check(conf_ctx *, bool ok, const char *expr, const char *file, int line);
void conf_check_eq(conf_ctx *, uint64_t got, uint64_t want, const char *got_expr,
                   const char *want_expr, const char *file, int line);
#define CONF_CHECK(ctx, cond) conf_check((ctx), (cond) ? true : false, #cond, __FILE__, __LINE__)
#define CONF_EQ(ctx, got, want)                                                              \
    conf_check_eq((ctx), (uint64_t)(got), (uint64_t)(want), #got, #want, __FILE__, __LINE__)

/* Appends " key=value" to the case's outcome line. */
void conf_observe(conf_ctx *, const char *key, uint64_t value);

/* ---- helpers on os.h only (conf_util.c) ------------------------------------ */
void conf_sleep_ms(uint32_t ms);
/* Polls until *counter >= want or CONF_PATIENCE_MS passed; returns the last value. */
uint32_t conf_await_count(const volatile uint32_t *counter, uint32_t want);

/* Running-callback tracker: how many at once, at most. */
typedef struct conf_conc {
    volatile uint32_t now;
    volatile uint64_t max;
} conf_conc;
void conf_conc_enter(conf_conc *);
void conf_conc_leave(conf_conc *);

/* A private pool whose only thread is held by a blocker callback, so objects
 * on it queue callbacks without starting them -- the only way to make
 * "queued, not started" happen on demand on a real pool. */
typedef struct conf_blocker {
    tph_os_pool *pool;
    tph_os_work *work;
    tph_os_event *started;
    tph_os_event *gate;
    tph_os_env env; /* names the pool: create the objects under test with it */
} conf_blocker;
bool conf_blocker_start(conf_blocker *);
void conf_blocker_release(conf_blocker *); /* lets the blocker return and drains it */
void conf_blocker_close(conf_blocker *);   /* after every object on the pool is closed */

/* ---- the per-backend I/O fixture (conf_io_win32.c / conf_io_sim.c) -------- */
/* A file whose completions arrive only when the case says so. */
typedef struct conf_io conf_io;
conf_io *conf_io_open(void);
void *conf_io_handle(conf_io *);
/* Issues one overlapped operation (after tph_os_io_start); returns the
 * OVERLAPPED pointer its completion callback will receive, NULL on failure. */
void *conf_io_begin(conf_io *);
/* Completes the oldest issued operation with `bytes` transferred, success. */
bool conf_io_finish(conf_io *, uint32_t bytes);
void conf_io_close(conf_io *);

#endif
