/* The scenario runner's inside (scn_run.h is its outside): the one run's
 * state, handed explicitly to every stage, and the stages' entry points.
 * One run is a pipeline, a file a stage:
 *   scn_run.c       the driver: the state's life, setup, the main thread,
 *                   the outcome (what the caller gets back)
 *   scn_hook.c      the trace hook: counts, the tail, orders, holds; the
 *                   read-outs `require` asks (scn_reach.h)
 *   scn_exec.c      the op interpreter: scenario threads, callbacks, ops
 *   scn_kinds.c     one row per object kind: how each is created, armed,
 *                   waited for, closed and torn down
 *   scn_expr.c      expressions (`assert`, `expect`, `require`)
 *   scn_oracle.c    the checks every run makes, at quiescence and after
 *                   teardown
 *   scn_teardown.c  closing what the scenario left open
 *   scn_tracefmt.c  trace records as the reports print them
 * Nothing here is global: the run's state is one run_state, allocated per
 * run; the two file-scope caches that outlive runs are documented where
 * they live (the event-name cache, scn_hook.c; the real pool's healer key,
 * scn_run.c). */
#ifndef TPHEAL_SCN_RUN_INTERNAL_H
#define TPHEAL_SCN_RUN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tpheal/tpheal.h>

#include "rt.h"
#include "scn_ast.h"
#include "scn_failure.h"
#include "scn_pool.h"
#include "scn_reach.h"
#include "scn_text.h"

#define TRACE_TAIL 40
#define MAX_FAILURES SCN_FAILURES_SHOWN

typedef struct obj_state {
    struct run_state *run; /* the run it belongs to, and its index there: */
    int index;             /* what its callbacks' ctx tells them */
    void *h;              /* tph_work*, tph_wait*, ... (NULL until created) */
    void *file;           /* io: the backend's file (scn_pool_file_create) */
    bool created, dead;   /* dead: closed, or released by its group */
    const void *os;       /* the object's id for the pool's counts (kept after death) */
    uint64_t calls;       /* callbacks run (counted on entry) */
    uint64_t swallowed;   /* native ticks the core's trampoline dropped after a disarm */
    uint32_t running, max_running;
    uint64_t arms;        /* successful submits / arms / starts */
    /* The stop oracle (scn_exec.c), one word so that it changes at once:
     * bit 0 set when a stop_and_drain returned with no arm begun since,
     * the bits above it the arms begun and not yet returned. */
    volatile uint32_t stop_word;
    uint64_t io_cancels;
    uint64_t group_cancels;
} obj_state;

typedef struct hold_state {
    uint32_t matched;
    bool done;            /* a non-`every` hold parks once */
    uint64_t parks;
    rt_waitq q;
} hold_state;

typedef struct tail_rec {
    uint32_t thread;
    char who[24];         /* the recording thread's name (a copy: it may end) */
    uint64_t time;        /* rt_now(): virtual time since the run began */
    const char *target, *event;
    int pool;             /* index, or -1 */
    uintptr_t key;        /* the pool's key, for a point that names a pool */
    uint64_t a, b;
} tail_rec;

/* A pool the scenario did not declare (the healer's, or another the core
 * made), and who made it (scn_poolname.c). */
#define MAX_OTHER_POOLS 16
typedef struct other_pool {
    uintptr_t key;
    char made_by[72];
} other_pool;

/* An `expect A before B`: how many B records came with fewer A before
 * them than B, and the first such: its record number in the run's trace,
 * which B it was, and how many A had been recorded by then. */
typedef struct order_tally {
    uint64_t broken;
    uint64_t first_record, first_nth, firsts_seen;
} order_tally;

typedef struct scn_tl scn_tl; /* the timeline's collection (scn_timeline.c) */

typedef struct run_state {
    const scn_scenario *s;
    rt_lock lock;                 /* guards everything below touched by >1 thread */
    tph_pool **pools;             /* [npools]; [0] = NULL (default) */
    uintptr_t *keys;              /* pool keys */
    obj_state *objs;
    hold_state *holds;
    uint64_t *label_time;
    uint64_t *counts;             /* [npoints * (npools + 1)]: count_slot() */
    bool *watched;                /* [as counts]: read while the run goes on (an
                                   * await, an assert, a `before`; scn_hook_observe) */
    bool *held;                   /* [npoints]: a hold parks on it or waits for it */
    order_tally *orders;          /* [norders]: each `A before B`'s breaks */
    rt_waitq await_q;             /* threads in an `await` op */
    uint32_t *awaiting;           /* [as counts]: threads awaiting that slot; a
                                   * record wakes them only for their slot, since
                                   * every wake is a choice the bounded search
                                   * branches on (an await woken by each record
                                   * made io-concurrent-cancels-one-start's tree
                                   * at <= 1 preemption 2679 runs; by slot, 1701) */
    bool free_running;            /* native runtime: the start gate below is used */
    bool gate_open;
    rt_waitq gate_q;              /* scenario threads waiting for the start gate */
    size_t npoints;
    uintptr_t healer_key;
    bool healer_key_known;
    other_pool others[MAX_OTHER_POOLS]; /* undeclared pools, in order of first record */
    size_t nothers;
    /* per pool (first 64): position in the trace stream of the last
     * cancellation and the last repair start -- the true order, which the
     * stamps cannot give within one clock tick */
    uint64_t last_cancel_at[64], last_start_at[64];
    /* per pool: position of the last native call that may remove a queued
     * wait packet (WaitForThreadpoolWaitCallbacks or a group release, with
     * cancel set): a cancellation marks its pool after it */
    uint64_t last_cancel_call_at[64];
    uint64_t tolerated_unhealed;  /* pools whose entry may outlive their objects */
    /* trace tail ring */
    tail_rec tail[TRACE_TAIL];
    uint64_t tail_n;
    /* the checks' failures (the run's outcome adds its own at the end) */
    scn_failures fail;
    int nfail;
    /* scenario threads parked in an `await` or a `hold` (scn_exec.c,
     * scn_hook.c): at a deadlock, whether the script's own waits are in it */
    uint32_t script_waiters;
    /* the trace as it was at the first failing check (a report showing the
     * end-of-run tail showed the runner's closes, not what the check saw) */
    scn_text fail_tail;
    uint64_t fail_rec, fail_time;
    int fail_line;                /* the first failing check's scenario line (0: none) */
    bool fail_seen;
    bool full_trace;              /* --trace: every record, formatted */
    scn_tl *tl;                   /* --timeline: every record, span and band, or NULL */
    scn_text trace_all;
    scn_text misuse;
    scn_text faults;
    scn_reach reach;              /* which `require` lines this run reached */
} run_state;

/* A scenario thread's or a callback's context for the op interpreter. */
typedef struct exec_ctx {
    struct run_state *run;
    const char *who; /* thread name or "callback X" */
    int actor;       /* the thread's index (scn_reach_enter), -1 in a callback */
    int cb_obj;      /* in a callback, the object whose callback it is; -1 in a thread */
} exec_ctx;

/* The slot in run->counts of trace point `point` recorded for scenario pool
 * `pool`; pool < 0 is the `any` column (npools), which counts every record
 * of the point.  The one definition of the counts layout. */
static inline size_t count_slot(const run_state *run, int point, int pool) {
    return (size_t)point * (run->s->npools + 1) + (pool < 0 ? run->s->npools : (size_t)pool);
}

/* ---- scn_run.c: the run's state ------------------------------------------- */

/* A failed check of kind `kind` at scenario line `line` (0: none) about the
 * object, pool or order `subject` (-1: none): the failure (the first
 * MAX_FAILURES of them), and at the first, the trace as the check saw it. */
void scn_run_fail(run_state *run, scn_failure_kind kind, int line, int subject, const char *fmt, ...)
    SCN_PRINTF(5, 6);
/* The scenario pool whose key is `key`, or -1. */
int scn_run_pool_index(run_state *run, uintptr_t key);
/* The native pool of scenario pool `pool` (NULL: the default pool), as the
 * pool backend's knobs and read-outs name it. */
const void *scn_run_pool_native(run_state *run, int pool);

/* ---- scn_poolname.c: what a report calls each pool ------------------------- */

/* A record of `thread` (named who) names pool `key`: remembers who made it
 * if the scenario did not declare it and it is new. */
void scn_poolname_note(run_state *run, uintptr_t key, uint32_t thread, const char *who);
/* The pool's name: declared, "default", "healer pool", or "pool made by X on
 * thread T"; in buf when made up. */
const char *scn_poolname(run_state *run, uintptr_t key, char *buf, size_t n);
/* The same as a sentence names it: "pool P1", "healer pool", "pool made by X ...". */
const char *scn_pool_phrase(run_state *run, uintptr_t key, char *buf, size_t n);
/* An undeclared pool met in the trace (the healer's or another), by key. */
bool scn_poolname_known(run_state *run, uintptr_t key);
/* The same for a record's (pool index, key). */
const char *scn_poolname_at(run_state *run, int pool, uintptr_t key, char *buf, size_t n);

/* ---- scn_timeline.c: the run as a picture ------------------------------------ */

scn_tl *scn_tl_new(void);
void scn_tl_free(scn_tl *);
/* Record n of the run (as the tail keeps it). */
void scn_tl_record(run_state *run, uint64_t n, const tail_rec *r);
/* A span of the calling thread from t0 to now: kind "hold" or "await". */
void scn_tl_span(run_state *run, uint64_t t0, const char *kind, const char *text);
/* A callback of object obj starts or returns on the calling thread. */
void scn_tl_callback(run_state *run, int obj, bool start);
/* The page; failed: mark the failing check at fail_time, failure its text. */
char *scn_tl_html(run_state *run, const char *title, bool failed, uint64_t fail_time, const char *failure);

/* ---- scn_hook.c ------------------------------------------------------------ */

/* The run's trace hook (ctx: the run). */
void scn_hook_record(const tph_trace_record *rec, void *ctx);
/* The pool backend's sever watch (scn_pool_watch_severing; ctx: the run). */
void scn_hook_severing(void *ctx, const void *pool_os, bool severed, uint32_t queued);
/* Fills run->watched, the count slots an await, an assert or a `before`
 * order reads while the run goes on, and run->held, the points of holds and
 * of their until-events: what decides how the bounded search orders a
 * record (scn_hook_record). */
void scn_hook_observe(run_state *run);
/* What `require` asks of this run (scn_reach.h). */
scn_reach_probe scn_hook_reach_probe(run_state *run);

/* ---- scn_exec.c ------------------------------------------------------------ */

/* rt thread body of scenario thread arg (an exec_ctx that outlives it). */
void scn_exec_thread_main(void *arg);
/* Lets the scenario's threads start (free-running runs; a no-op otherwise). */
void scn_exec_open_start_gate(run_state *run);
/* A callback of object obj has started: count it, run its body. */
void scn_exec_callback(run_state *run, int obj);
/* Creates object obj (its env, its kind's create); TPH_EBUSY if it exists. */
tph_err scn_exec_create(run_state *run, int obj);
/* Closes object obj by its kind; marks it dead on success. */
tph_err scn_exec_close(run_state *run, int obj);
/* Marks group g's created members dead: the group released them. */
void scn_exec_mark_group_released(run_state *run, int g);

/* ---- scn_kinds.c: the per-kind operations table ------------------------------ */

/* One row per object kind (libuv / SQLite VFS style): the runner never
 * switches on a kind, it calls the kind's row.  A NULL operation is one the
 * kind does not have (the parser refuses it; called anyway it answers
 * TPH_EINVAL).  Adding a kind is one row in scn_kinds.c. */
typedef struct scn_kind_ops {
    /* Creates the object; ctx is what its callbacks get (its obj_state). */
    tph_err (*create)(run_state *run, int obj, void *ctx, tph_env *env, void **h);
    const void *(*native)(void *h);  /* the native object behind h (the pool's id) */
    tph_err (*arm)(run_state *run, const scn_op *op, void *h);
    tph_err (*disarm)(void *h);
    tph_err (*wait)(void *h);
    tph_err (*stop_and_drain)(void *h);
    tph_err (*cancel_pending)(void *h);
    tph_err (*close)(void *h);
    /* Teardown: stops what the object may still start, before its close
     * (NULL: nothing to stop). */
    void (*quiesce)(obj_state *st);
    /* Teardown: releases the members still open (a group; NULL: none). */
    tph_err (*release_members)(void *h);
    /* Teardown closes in passes: callback objects (0), then events (1),
     * whose waits are closed, then groups (2), whose members are. */
    int close_pass; /* < SCN_CLOSE_PASSES */
    /* It borrows the handle of its event (objs[].event: a wait), which
     * must be open when it is created ... */
    bool borrows_event;
    /* ... and is lent to those (an event): closing it under an open wait
     * would hand the core a dead handle at the next arm. */
    bool lent_to_waits;
    /* Whether the pool runs callbacks for it, and the oracle on its
     * callbacks against its arms (NULL: none; scn_oracle.c). */
    bool has_callbacks;
    /* Its stop_and_drain refuses arms until it returns, so nothing of it
     * may run after the stop (the stop oracle, scn_exec.c); a work
     * object's is its drain (work.h) and promises only that. */
    bool stop_refuses_arms;
    void (*check_arms)(run_state *run, const scn_obj *o, const obj_state *st, bool counted,
                       const scn_pool_object_counts *os);
} scn_kind_ops;

#define SCN_CLOSE_PASSES 3

/* The row of `kind`. */
const scn_kind_ops *scn_kind(scn_obj_kind kind);

/* ---- scn_expr.c ------------------------------------------------------------ */

/* Evaluates e: true when it holds; its two sides in *l and *r. */
bool scn_expr_eval(run_state *run, const scn_expr *e, uint64_t *l, uint64_t *r);
/* A failure of `kind` naming `where` ("assert", "expect") when e does not hold. */
void scn_expr_check(run_state *run, const scn_expr *e, scn_failure_kind kind, const char *where);

/* ---- scn_oracle.c ------------------------------------------------------------ */

void scn_oracle_at_quiescence(run_state *run);
void scn_oracle_after_teardown(run_state *run);
/* The per-kind callbacks-against-arms oracles (rows of scn_kinds.c). */
void scn_oracle_work_arms(run_state *run, const scn_obj *o, const obj_state *st, bool counted,
                          const scn_pool_object_counts *os);
void scn_oracle_bounded_arms(run_state *run, const scn_obj *o, const obj_state *st, bool counted,
                             const scn_pool_object_counts *os);
void scn_oracle_io_arms(run_state *run, const scn_obj *o, const obj_state *st, bool counted,
                        const scn_pool_object_counts *os);

/* ---- scn_teardown.c ------------------------------------------------------------ */

/* Closes what the scenario left open, in an order that is always legal. */
void scn_teardown(run_state *run);

/* ---- scn_tracefmt.c ------------------------------------------------------------ */

void scn_tracefmt_rec(run_state *run, scn_text *t, uint64_t n, const tail_rec *r);
void scn_tracefmt_tail_into(run_state *run, scn_text *t);
char *scn_tracefmt_tail(run_state *run);
/* `replay --trace`: a callback's start or return (run's lock held). */
void scn_tracefmt_callback_locked(run_state *run, int obj, const char *what);

#endif
