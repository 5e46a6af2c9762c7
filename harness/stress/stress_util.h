/* Small pieces shared by the stress subcommands: the seed derivation (the
 * same function as ci/stress_plan.py, so Python can recompute a failure's
 * seed from its batch), a set of 64-bit hashes, JSON string output, the
 * crash line that names the run a crash happened in, and option parsing. */
#ifndef TPHEAL_STRESS_UTIL_H
#define TPHEAL_STRESS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

uint64_t stress_splitmix64(uint64_t x);
/* Seed of run j of a batch whose base seed is `base`. */
uint64_t stress_run_seed(uint64_t base, uint64_t j);

/* Open-addressing set of 64-bit values (distinct interleavings). */
typedef struct stress_hashset {
    uint64_t *slot;
    size_t cap, n;
    bool has_zero;
} stress_hashset;
void stress_hashset_init(stress_hashset *);
bool stress_hashset_add(stress_hashset *, uint64_t v); /* false when out of memory */
void stress_hashset_free(stress_hashset *);

/* Monotonic wall-clock milliseconds: decides only how many runs a batch
 * makes, never what a run does. */
uint64_t stress_wall_ms(void);

/* The crash line: once installed, a fatal signal or a sanitizer's death
 * prints "tph-stress: crashed in run PATH seed=0x... j=N" on stderr for the
 * run last announced with stress_crash_current, then, when one was set with
 * stress_crash_command, "tph-stress: LABEL: COMMAND" (the command the run
 * path prints for that run: ci/stress.py pastes it into the failure file).
 * The strings stay the caller's: they must stay whole until replaced (or
 * cleared with NULL). */
void stress_crash_install(const char *scenario_path);
void stress_crash_current(uint64_t seed, uint64_t j);
void stress_crash_command(const char *label, const char *cmd);

/* A scenario that says `build fail-fast` needs the core built with
 * TPHEAL_FAIL_FAST, which is the sibling executable tpheal-harness-failfast.
 * Returns true (after printing why on stderr) when `needs_fail_fast` does
 * not match this build; the subcommand then exits STRESS_EXIT_OTHER_BUILD
 * and ci/stress.py sends the scenario to the sibling. */
#define STRESS_EXIT_OTHER_BUILD 4
bool stress_wrong_build(const char *path, bool needs_fail_fast);

/* Options: "--name value".  Returns false (and prints a message on stderr,
 * `stress-batch: ...`) for a malformed number. */
bool stress_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t *out);

#endif
