/* Bounded-exhaustive exploration (CHESS-style iterative context bounding,
 * Musuvathi & Qadeer PLDI'07): every run of a search takes the next
 * unexplored branch of the tree of scheduling choices -- thread picks at
 * choice points and rt_choose values -- depth first, with at most
 * `max_preemptions` preemptions per run.  A preemption is a pick of another
 * thread while the thread at the scheduling point could have continued;
 * switching away from a thread that blocked or finished is free, and so is
 * an rt_choose value (data, not scheduling; explored at its extremes 0 and
 * n-1 only, strategy_dfs.c says why).  An rt_choose_delay value is explored
 * at the same extremes, and its late one counts as a preemption does (delay
 * bounding): the bound is on preemptions and late firings together.  Runs are replays of a prefix
 * then a non-preemptive extension, so the program must be deterministic
 * given its choices (everything under the controlled scheduler is).
 *
 *     sched_dfs *d = sched_dfs_new(2);
 *     do {
 *         o.strategy = SCHED_STRATEGY_DFS; o.dfs = d;
 *         sched_run(&o, main_fn, arg, &r);  ... r.schedule replays this run ...
 *     } while (sched_dfs_advance(d) && sched_dfs_runs(d) < limit);
 *     sched_dfs_complete(d): the whole bounded tree ran
 *
 * Each run is a distinct leaf of the tree (a distinct choice sequence), so
 * the number of runs is the number of distinct interleavings explored. */
#ifndef TPHEAL_SCHED_DFS_H
#define TPHEAL_SCHED_DFS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sched_dfs sched_dfs;

/* Fairness (strategy_dfs_fair.c says why): a thread that keeps the CPU for
 * this many choice points in a row while another thread is runnable is
 * demoted until every other runnable thread has run; the switch is free. */
#define SCHED_DFS_FAIR_BOUND 1024

sched_dfs *sched_dfs_new(unsigned max_preemptions); /* NULL when out of memory */
/* Before the first run: the fairness bound in choice points; 0 turns
 * fairness off (the unfair search, kept to show what fairness prevents). */
void sched_dfs_set_fair_bound(sched_dfs *, uint64_t picks);
void sched_dfs_free(sched_dfs *);
/* After a run: moves to the next unexplored branch.  False when there is
 * none (the search is complete) or the last run broke determinism. */
bool sched_dfs_advance(sched_dfs *);
bool sched_dfs_complete(const sched_dfs *);
uint64_t sched_dfs_runs(const sched_dfs *);       /* runs started */
uint64_t sched_dfs_max_depth(const sched_dfs *);  /* most choice nodes in one run */
unsigned sched_dfs_max_used(const sched_dfs *);   /* most preemptions one run used */
/* The last run's preemptions (late firings included), and its choice
 * prefix: the choice points up to and including the last one that took
 * another option than the non-preemptive default -- the current thread
 * while it can go on, else the lowest id; an rt_choose's 0 (0: none).  Past
 * the prefix each thread runs until it blocks or ends, so the prefix is
 * what a reader of the schedule has to follow. */
unsigned sched_dfs_run_preemptions(const sched_dfs *);
uint64_t sched_dfs_run_prefix(const sched_dfs *);
/* Before the first run: partial-order reduction (sleep sets + DPOR over the
 * dependency relation of harness/sched/README.md, "Dependency") on or off.
 * With it, runs explore one schedule per class of equivalent ones, as far
 * as the relation and the bound allow (strategy_dfs_por.c says what it may
 * miss). */
void sched_dfs_set_por(sched_dfs *, bool on);
bool sched_dfs_por(const sched_dfs *);
uint64_t sched_dfs_traces(const sched_dfs *);       /* runs that were not redundant */
uint64_t sched_dfs_blocked_runs(const sched_dfs *); /* runs the sleep sets showed redundant */
uint64_t sched_dfs_pruned(const sched_dfs *);       /* options within the bound never taken */
uint64_t sched_dfs_races(const sched_dfs *);        /* races seen (backtrack points added) */
uint64_t sched_dfs_fair_switches(const sched_dfs *); /* demotions over the search */
uint64_t sched_dfs_fair_runs(const sched_dfs *);     /* runs with at least one */
uint64_t sched_dfs_max_streak(const sched_dfs *);    /* most choice points one thread kept the CPU */
/* Non-NULL when a run did not follow its own prefix (a nondeterministic
 * program, or the wrong program): what differed. */
const char *sched_dfs_error(const sched_dfs *);

#endif
