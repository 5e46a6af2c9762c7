/* The controlled run: one simulated process executed under the fiber
 * scheduler.  Every rt_ thread is a fiber, exactly one runs at a time, each
 * rt_ scheduling point lets the strategy (random walk, PCT) pick who runs
 * next, time is virtual, and the run is a pure function of
 * (options, main_fn, the code it runs): same seed => same interleaving.
 *
 * Usage:
 *     sched_options o; sched_options_default(&o); o.seed = 42;
 *     sched_result r;
 *     if (sched_run(&o, scenario_main, arg, &r) != 0) { bad options: r.reason }
 *     ... r.status, r.schedule (replay string), r.interleaving_hash ...
 *     sched_result_free(&r);
 *
 * sched_run may be called any number of times in one process (not
 * concurrently, and not from inside a run): nothing but a pool of fiber
 * stacks survives a run, and the pool never affects a run's behaviour.
 *
 * Not named sched.h: this directory is on the include path, and a sched.h
 * here shadows POSIX <sched.h>, which <pthread.h> includes (rt_native.c
 * stopped compiling: cpu_set_t unknown).
 */
#ifndef TPHEAL_RT_SCHED_H
#define TPHEAL_RT_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "rt.h"

/* X(KIND, name) -- the strategies, written once: the enum, the strategy
 * objects (sched_strategy_<name>), sched_strategy_name and the CLI's
 * `--strategy` words read it.
 *   random  uniform random walk over the runnable threads
 *   pct     Burckhardt et al. ASPLOS 2010, depth pct_depth
 *   dfs     bounded-exhaustive: the next run of a sched_dfs search
 *           (sched_dfs.h); needs sched_options.dfs */
#define SCHED_STRATEGY_MAP(X) X(RANDOM, random) X(PCT, pct) X(DFS, dfs)

typedef enum sched_strategy_kind {
#define SCHED_STRATEGY_ENUM_(kind, name) SCHED_STRATEGY_##kind,
    SCHED_STRATEGY_MAP(SCHED_STRATEGY_ENUM_)
#undef SCHED_STRATEGY_ENUM_
    SCHED_STRATEGY_COUNT
} sched_strategy_kind;

/* "random", "pct", "dfs"; "?" outside the map. */
const char *sched_strategy_name(sched_strategy_kind);
/* The strategy called `name`, or -1. */
int sched_strategy_find(const char *name);

struct sched_dfs;

/* How virtual time moves (README.md, "Virtual time").
 *   SCHED_TIME_STEPS  each scheduling point adds 1 us, so a busy thread moves
 *                     the clock and a deadline can come due between any two
 *                     steps.  The random walk and PCT run on it.
 *   SCHED_TIME_IDLE   the clock stands still while any thread can run and
 *                     jumps to the earliest deadline when none can -- or when
 *                     SCHED_IDLE_BUSY_POINTS points have passed since the last
 *                     jump with a deadline pending, so a thread that never
 *                     waits cannot stop time for a sleeper (1,000: a callback
 *                     that re-arms itself spins 1,000 points, not 10,000,
 *                     before a 5 ms sleeper wakes -- a run with two such
 *                     callbacks on two pools went from 57,725 choices to
 *                     4,477).  Every step between
 *                     two jumps reads the same time, so a clock read commutes
 *                     with them: what the bounded search's reduction needs
 *                     (sched_dfs.h).  Its schedules start "T1/idle:". */
typedef enum sched_time_model { SCHED_TIME_STEPS = 0, SCHED_TIME_IDLE = 1 } sched_time_model;
#define SCHED_IDLE_BUSY_POINTS 1000u

/* PCT's k when sched_options.pct_steps is 0. */
#define SCHED_PCT_DEFAULT_STEPS 200u

typedef struct sched_options {
    uint64_t seed;                /* seeds the run's pcg32: every pick and rt_choose */
    sched_strategy_kind strategy; /* default SCHED_STRATEGY_RANDOM */
    unsigned pct_depth;           /* PCT bug depth d (d-1 change points); default 3 */
    uint64_t pct_steps;           /* PCT k: expected choice points per run; 0 =
                                     SCHED_PCT_DEFAULT_STEPS.
                                     Pass the largest sched_result.choice_points seen
                                     so far (it is an input, so a seed still replays). */
    uint64_t max_steps;           /* livelock bound on scheduling points; default 1,000,000 */
    uint64_t max_virtual_time;    /* livelock bound (rt_now units) while a non-daemon
                                     thread is unfinished; default 1 hour */
    const char *schedule;         /* replay string from sched_result.schedule; NULL = seed */
    bool replay_continue;         /* replay: where the schedule stops fitting the program (a
                                     choice it does not record, or its end), the run goes on
                                     with its strategy from its seed instead of ending
                                     diverged; sched_result.diverged_at says where */
    size_t stack_size;            /* per fiber; default 64 KiB (rounded up to pages) */
    struct sched_dfs *dfs;        /* SCHED_STRATEGY_DFS: the search this run belongs to */
    sched_time_model time;        /* default SCHED_TIME_STEPS; a schedule's own header wins */
} sched_options;

void sched_options_default(sched_options *);

typedef enum sched_status {
    SCHED_OK = 0,              /* every non-daemon thread finished */
    SCHED_DEADLOCK = 1,        /* nothing runnable, nothing timed, a non-daemon unfinished */
    SCHED_LIVELOCK = 2,        /* max_steps or max_virtual_time exceeded */
    SCHED_PROCESS_ENDED = 3,   /* rt_end_process(reason) */
    SCHED_REPLAY_DIVERGED = 4, /* the replayed schedule does not fit this program */
    SCHED_MISUSE = 5           /* the program broke the rt contract (reason says how) */
} sched_status;

const char *sched_status_name(sched_status);

typedef struct sched_result {
    sched_status status;
    char reason[256];           /* empty for SCHED_OK */
    uint64_t steps;             /* scheduling points executed */
    uint64_t choice_points;     /* points where more than one thread was runnable */
    uint64_t preemptions;       /* choice points where another thread was picked while the
                                   current one could go on (a late timer firing, which the
                                   bounded search also counts, is not among them) */
    uint64_t switches;          /* fiber switches between threads */
    uint64_t choices;           /* rt_choose calls with n > 1 */
    uint64_t virtual_time;      /* rt_now() at the end */
    uint32_t threads;           /* threads spawned, main included */
    uint32_t fibers_peak;       /* most fibers alive at once (a finished thread's stack
                                   is reused at once: memory is peak x stack_size) */
    uint64_t interleaving_hash; /* hash of (step, thread) at each switch: equal hash <=>
                                   (almost surely) the same interleaving */
    uint64_t choice_hash;       /* hash of the full choice stream (picks + rt_choose) */
    uint64_t trace_hash;        /* the behaviour class: a hash of the run's Mazurkiewicz trace
                                   under the reduction's dependency relation (sched_trace.c);
                                   runs differing only in the order of independent steps
                                   share it.  0 if it could not be computed (out of memory) */
    char *schedule;             /* malloc'd replay string, see README.md */
    char *blocked_report;       /* malloc'd, non-OK runs: one line per unfinished thread
                                   and what it waits on; NULL for SCHED_OK */
    uint32_t lock_waiters;      /* non-OK runs: unfinished threads that want a lock */
    char *race;                 /* malloc'd, race-detector builds (TPHEAL_TSAN) only: the
                                   run's first ThreadSanitizer report -- both accesses with
                                   their threads' names and sites, no addresses -- or NULL.
                                   A race is a failure of the run whatever its status. */
    uint32_t races;             /* reports raised during the run (the first is `race`) */
    const char *fairness;       /* static; livelocks found by a strategy that schedules
                                   fairly (dfs): what fairness the schedule had; NULL
                                   otherwise, and for replays */
    uint64_t diverged_at;       /* replay_continue: the schedule item (from 1) that did not
                                   fit, or nreplay + 1 when the run outgrew the schedule;
                                   0 when the whole schedule fit and was used */
    char diverged[200];         /* why it did not fit ("" when it did) */
} sched_result;

/* Runs main_fn(arg) as thread 1 (non-daemon) under the controlled runtime:
 * installs the controlled rt_ops, and restores rt_install(NULL) before
 * returning.  Returns 0 when the run happened (outcome in out->status), -1
 * when the options are unusable (a bad schedule string: out->reason is
 * "schedule:1:COL: message"); out must be freed with sched_result_free in
 * both cases. */
int sched_run(const sched_options *, rt_thread_fn main_fn, void *arg, sched_result *out);
/* Frees the result's strings and leaves their pointers NULL, so freeing it
 * again (a caller's cleanup path after an earlier free) does nothing. */
void sched_result_free(sched_result *);

/* Race-detector builds: a program that turns every report raised inside a
 * run into a failure of that run (sched_result.race) calls this once; at
 * exit TSan's own failure status is then kept only for reports raised
 * outside any run.  Without it a report fails the process as TSan's exit
 * code (66) always does.  A no-op in other builds. */
void sched_race_reports_claimed(void);

/* Frees the cached fiber stacks (for leak checkers at process exit). */
void sched_release_cache(void);

/* Benchmark: raw fiber switches per second (two fibers ping-ponging n times
 * with the same switch primitive the scheduler uses).  Real time: for the
 * bench command only, never inside a run. */
double sched_bench_raw_switches_per_sec(uint64_t n);
/* The clock every benchmark rate is taken on, so rates compare: the calling
 * thread's CPU time on POSIX (a shared machine's neighbours do not count),
 * the performance counter on Windows (thread times tick at 15.6 ms there).
 * Seconds; only differences mean anything. */
double sched_bench_seconds(void);
const char *sched_bench_clock_name(void);

/* PCT measured against its bound (Burckhardt et al.: a run hits a depth-d
 * bug with probability >= 1/(n k^(d-1))): `runs` PCT runs at depth
 * pct_depth, seeds first_seed .. first_seed + runs - 1, of a two-thread
 * program whose bug has depth bug_depth (sched_bench.c), k measured first by
 * 100 probe runs with the next 100 seeds, so that a bench line is replayed
 * from its first seed alone.  0, or -1 when a
 * run did not end normally.  For the bench line and test_sched_pct. */
typedef struct sched_bench_pct_out {
    uint64_t k;       /* choice points (the most of the probe runs) */
    uint64_t threads; /* n */
    uint64_t runs, hits;
    double bound;     /* 1 / (n k^(bug_depth-1)) */
} sched_bench_pct_out;
int sched_bench_pct(unsigned bug_depth, unsigned pct_depth, uint64_t runs, uint64_t first_seed,
                    sched_bench_pct_out *);

#endif
