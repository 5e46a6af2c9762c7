/* tpheal's checker for a user's own thread-pool code (docs/check.md).
 *
 * A check is a function that creates pools and objects through tpheal's
 * public API, with the user's own callbacks, and asserts with TPH_CHECK.
 * tph_check_run runs it many times under the controlled scheduler on the
 * modelled Windows pool -- every simulated thread a fiber, one at a time,
 * each pool operation a scheduling point -- with N seeds of the random walk
 * and N of PCT, and fails a run on:
 *   - a TPH_CHECK that does not hold (file:line and the expression),
 *   - a deadlock (nothing can run, nothing is timed) or a livelock (the
 *     step or virtual-time bound passed),
 *   - a run that does not end within TPHEAL_CHECK_TIMEOUT seconds of real
 *     time (default 60): a thread stopped where the scheduler cannot see
 *     it (a watchdog thread reports it and ends the process),
 *   - misuse the model reports (a call on a closed object, a double close,
 *     a native call the library did not announce),
 *   - the library's rules after the check returned and the process settled
 *     (one second of virtual time): a pool severed with callbacks queued, a
 *     cancelled pool never repaired, a repair still outstanding, an object
 *     the check left open.
 * Each failing run is printed with its seed, strategy and a one-line replay:
 * TPHEAL_CHECK_REPLAY="SEED STRATEGY [K]" in the environment of the same
 * test binary reruns exactly that run (TPHEAL_CHECK_REPLAY="T1/idle:..."
 * the run of a bounded search its schedule string names).
 *
 * The check must be a function of the schedule alone: it resets whatever
 * state it reads (its own statics included) at its start, and uses no real
 * time, no OS threads and no blocking call of its own: its locks and waits
 * go through tph_lock (<tpheal/lock.h>) and tph_handle_wait, which are
 * scheduling points here; a raw mutex or a sleep is not, and hangs or hides
 * the run.
 *
 * Linked as tpheal::check (CMake) over the library built on the model; off
 * Windows only. */
#ifndef TPHEAL_CHECK_H
#define TPHEAL_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Strategies, a bit each; the seeded runs go random first, then PCT. */
#define TPH_CHECK_RANDOM 1u
#define TPH_CHECK_PCT 2u

/* Exit statuses of tph_check_run and tph_check_main. */
#define TPH_CHECK_PASSED 0
#define TPH_CHECK_FAILED 1
#define TPH_CHECK_BAD_INPUT 2

/* Limits: runs per strategy 1..TPH_CHECK_MAX_RUNS, PCT depth 1..16, the
 * bounded search's preemptions 0..8. */
#define TPH_CHECK_MAX_RUNS 1000000u
#define TPH_CHECK_MAX_DEPTH 16u
#define TPH_CHECK_MAX_PREEMPTIONS 8

typedef struct tph_check_options {
    const char *name;      /* the check's name in every line; default "check" */
    const char *command;   /* the command that runs this check again, printed after
                              the replay variable; default "<this test>" */
    uint64_t runs;         /* seeds per strategy; default 100 */
    uint64_t first_seed;   /* seeds first_seed .. first_seed + runs - 1; default 1 */
    unsigned strategies;   /* TPH_CHECK_RANDOM | TPH_CHECK_PCT (the default) */
    unsigned pct_depth;    /* PCT's bug depth d; default 3 */
    uint64_t max_failures; /* stop at the Nth failing run; 0 (default): run every seed */
    unsigned show;         /* failing runs printed in full; default 3 (the rest counted) */
    /* -1 (default): the seeded runs above.  0..8: instead, the bounded search
     * -- every schedule with at most this many preemptions -- stopping after
     * search_runs runs if not complete by then.  Without the partial-order
     * reduction of `tpheal-harness verify`: the check's own memory accesses
     * are unknown to its dependency relation, so it would prune the very
     * interleavings a check is after.  A failure's replay is then the run's
     * schedule string. */
    int preemptions;
    uint64_t search_runs;  /* default TPH_CHECK_MAX_RUNS */
    FILE *out;             /* default stdout */
} tph_check_options;

void tph_check_options_default(tph_check_options *);

/* Runs test(arg) under the checker as the options say, or -- when
 * TPHEAL_CHECK_REPLAY is set -- the one run it names.  Returns
 * TPH_CHECK_PASSED, TPH_CHECK_FAILED, or TPH_CHECK_BAD_INPUT (an option out
 * of range, a malformed replay string, a call from inside a check: one line
 * on stderr says which). */
int tph_check_run(const tph_check_options *, void (*test)(void *arg), void *arg);

/* True on a thread of a run of tph_check_run (the check and its callbacks). */
bool tph_check_active(void);

/* TPH_CHECK's failure: ends the run, recording file:line and the text.
 * Outside a check it prints that line and exits with TPH_CHECK_BAD_INPUT. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noreturn))
#elif defined(_MSC_VER)
__declspec(noreturn)
#endif
void tph_check_fail_at(const char *file, int line, const char *what);

#define TPH_CHECK(cond)                                              \
    do {                                                             \
        if (!(cond)) tph_check_fail_at(__FILE__, __LINE__, #cond);   \
    } while (0)

/* The pattern for a test binary with several checks, one ctest case each:
 *     prog NAME [--runs N] [--seed S] [--preemptions P]
 * runs the case called NAME with tph_check_run (the command in its replay
 * lines is "prog NAME").  An unknown name or a bad option: one line on
 * stderr and TPH_CHECK_BAD_INPUT. */
typedef struct tph_check_case {
    const char *name;
    void (*test)(void *arg);
    void *arg;
} tph_check_case;

int tph_check_main(int argc, char **argv, const tph_check_case *cases, size_t ncases);

#ifdef __cplusplus
}
#endif

#endif
