/* Running a generated program and shrinking its failure (gen_shrink.c).
 * A program is judged as any scenario is: its text parsed, each seed one
 * scn_run, every oracle of the runner checked. */
#ifndef TPHEAL_GEN_CHECK_H
#define TPHEAL_GEN_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "gen.h"
#include "rt_sched.h"
#include "scn_failure.h"
#include "scn_run.h"

/* How a program is searched: seeds first..first+seeds-1 of each strategy
 * (a bit per sched_strategy_kind), PCT at `depth` with its k measured by a
 * probe run as `run` measures it. */
typedef struct gen_search {
    unsigned strategies;
    uint64_t first_seed, seeds;
    unsigned depth;
} gen_search;

/* One failing run: how to run it again, and what failed. */
typedef struct gen_failure {
    scn_run_opts how;       /* seed, strategy, depth, pct_steps (schedule: NULL) */
    int status;             /* sched_status of the run */
    char *failures;         /* the runner's lines */
    char *schedule;         /* the run's schedule string */
    char *signature;        /* gen_failure_signature: what "the same failure" compares */
    scn_failures list;      /* the run's failures as data: generate --json's kind and kinds */
} gen_failure;

void gen_failure_free(gen_failure *);

/* What makes two failures the same while a program shrinks: the first
 * failure's kind (scn_failure.h's table) and the run's status, and its
 * message with the numbers taken out -- the names it gives stay as the
 * program shrinks, while scn_failure_same's subject indices and lines move
 * when an earlier object or line goes. */
char *gen_failure_signature(int status, const scn_failures *list, const char *failures);

/* Parses text (as file `path`) and runs the search; true and *out filled at
 * the first failing run (when `same` is given: the first whose signature is
 * `same`'s).  *runs counts the runs made.  False also when the text does not
 * parse (*parse_error then says why, static buffer of the caller, may be NULL). */
bool gen_find_failure(const char *path, const char *text, const gen_search *how, const char *same, gen_failure *out,
                      uint64_t *runs, char *parse_error, size_t parse_error_len);

/* Delta debugging (ddmin, Zeller & Hildebrandt) over the program's units
 * while a failure with signature `same` persists under `how`; p is left
 * at the smallest program found.  Returns the runs spent. */
uint64_t gen_shrink_program(gen_program *p, const char *path, const gen_search *how, const char *same,
                            uint64_t max_runs);

/* The schedule: the shared shrinker (scn_shrink.h) over the program's text
 * at 0, 1, 2, 3 preemptions (at most max_runs each, no time budget: the
 * output stays a function of the seed), the same signature as "the same";
 * the failing run with the fewest preemptions, then the shortest choice
 * prefix, fills *out, and its preemptions are returned; -1 when none fails
 * within the bounds. */
int gen_shrink_schedule(const char *path, const char *text, const char *same, uint64_t max_runs, gen_failure *out,
                        uint64_t *runs);

#endif
