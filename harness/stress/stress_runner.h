/* One run of a parsed scenario, as the stress subcommands need it: the seam
 * between them and the scenario engine's runner (harness/scenario/), kept in
 * one file (stress_runner.c) so the engine's interface is adapted once. */
#ifndef TPHEAL_STRESS_RUNNER_H
#define TPHEAL_STRESS_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "scn_ast.h"
#include "scn_run.h"

typedef enum stress_mode { STRESS_CONTROLLED = 0, STRESS_NATIVE = 1 } stress_mode;

typedef struct stress_run_cfg {
    stress_mode mode;
    uint64_t seed;
    bool pct;            /* controlled: PCT (else random walk) */
    unsigned depth;      /* PCT depth */
    uint64_t pct_steps;  /* PCT k; 0 = the scheduler's default */
    bool want_schedule;  /* keep the replay string of a failed run */
    bool want_report;    /* keep the full report and the trace tail */
    bool full_trace;     /* keep every trace record, formatted (stress-faultloop --trace) */
} stress_run_cfg;

typedef struct stress_run_out {
    bool passed;              /* every oracle of the scenario held */
    char status[32];          /* "ok", "deadlock", "livelock", "oracle", ... */
    char reason[320];         /* first failing oracle or the scheduler's reason */
    scn_failure_kind kind;    /* the first failure's kind (SCN_FAILURE_NONE: passed) */
    scn_failures failure_list;/* every failure as data, if want_report (scn_failure.h) */
    char *schedule;           /* malloc'd replay string (controlled, failed, if wanted) */
    char *report;             /* malloc'd full failure report (NULL if passed), if wanted */
    char *trace_tail;         /* malloc'd last trace records, if wanted */
    char *trace_full;         /* malloc'd every trace record (cfg.full_trace) */
    int line;                 /* the failing check's scenario line, 0: none (scn_run_out.fail_line) */
    uint64_t steps;           /* scheduling points (controlled) */
    uint64_t choice_points;   /* points with more than one runnable thread */
    uint64_t interleaving_hash;
    uint64_t trace_hash;      /* the behaviour class (sched_result.trace_hash) */
    uint64_t reached;         /* bit i: the scenario's requirement i was reached */
    /* A deadlock in which the scenario's own threads are stuck in an `await`
     * or a `hold ... until` (and none wants a lock; SCN_FAILURE_SCRIPT_WAIT_DEADLOCK):
     * the scenario waited for a trace point that an injected fault
     * legitimately removed (healer-tick when the healer could not start; a
     * second cancellation by the very thread the hold parked).  The fault
     * loop accepts it; nothing else does. */
    bool deadlock_in_scenario_wait;
} stress_run_out;

/* The engine's options for a run of this configuration: what stress_run_one
 * runs, and what the printed replay commands (scn_report.h) are built from. */
void stress_run_opts(const stress_run_cfg *, scn_run_opts *);

/* What a batch or the fault loop reads of a run's result: out gets copies
 * (the schedule and the report only as cfg wants them). */
void stress_run_read(const scn_run_out *, const stress_run_cfg *, stress_run_out *out);

/* Runs `scn` once.  Returns false when the run could not happen at all
 * (reason says why); the out fields are then only status/reason. */
bool stress_run_one(const scn_scenario *scn, const stress_run_cfg *, stress_run_out *out);
void stress_run_out_free(stress_run_out *);

#endif
