/* The scenario language's lists of names, each written once as an X-macro
 * table (libuv's UV_ERRNO_MAP style).  The enums in scn_ast.h, the parser's
 * word lookups, the runner's printing, `tpheal-harness list` and the docs
 * tests all expand these rows, so a word added here exists everywhere and a
 * word written twice cannot drift (the op words were once listed in both the
 * parser and scn_names.c).  The result words come from the core's own
 * TPH_ERR_MAP (<tpheal/error.h>); strategies from SCHED_STRATEGY_MAP
 * (harness/sched/rt_sched.h); the seam's fault sites from SIM_FAULT_SITE_MAP
 * (harness/sim/sim.h). */
#ifndef TPHEAL_SCN_WORDS_H
#define TPHEAL_SCN_WORDS_H

/* X(KIND, "word") -- the objects a scenario declares. */
#define SCN_OBJ_KIND_MAP(X)                                                                 \
    X(EVENT, "event")                                                                       \
    X(WORK, "work")                                                                         \
    X(WAIT, "wait")                                                                         \
    X(TIMER, "timer")                                                                       \
    X(PERIODIC, "periodic")                                                                 \
    X(IO, "io")                                                                             \
    X(GROUP, "group")

/* Operand-kind sets for the operation table, as bit masks over scn_obj_kind. */
#define SCN_K_(kind) (1u << SCN_OBJ_##kind)
#define SCN_K_NONE 0u
#define SCN_K_ANY                                                                           \
    (SCN_K_(EVENT) | SCN_K_(WORK) | SCN_K_(WAIT) | SCN_K_(TIMER) | SCN_K_(PERIODIC) |       \
     SCN_K_(IO) | SCN_K_(GROUP))
#define SCN_K_WAITABLE (SCN_K_(WORK) | SCN_K_(WAIT) | SCN_K_(TIMER) | SCN_K_(PERIODIC))

/* X(OP, "word", operand kinds) -- one row per operation; the order is the
 * order `tpheal-harness list` prints.  Comments name the core call. */
#define SCN_OP_MAP(X)                                                                       \
    X(CREATE, "create", SCN_K_ANY)                                                          \
    X(SUBMIT, "submit", SCN_K_(WORK))                                                       \
    X(ARM, "arm", SCN_K_(WAIT) | SCN_K_(TIMER) | SCN_K_(PERIODIC) | SCN_K_(IO))             \
    X(SIGNAL, "signal", SCN_K_(EVENT))                                                      \
    X(RESET, "reset", SCN_K_(EVENT))                                                        \
    X(DISARM, "disarm", SCN_K_(WAIT) | SCN_K_(TIMER) | SCN_K_(PERIODIC))                    \
    X(TRY_CANCEL, "try_cancel_pending", SCN_K_(WAIT))                                       \
    X(CANCEL_UNTRACKED, "cancel_untracked", SCN_K_(WAIT))                                   \
    X(CANCEL_PENDING, "cancel_pending", SCN_K_(WORK) | SCN_K_(TIMER))                       \
    X(WAIT, "wait", SCN_K_WAITABLE)                                                         \
    X(STOP_AND_DRAIN, "stop_and_drain", SCN_K_WAITABLE)                                     \
    X(CLOSE, "close", SCN_K_ANY)                                                            \
    X(RELEASE, "release", SCN_K_(GROUP))                                                    \
    X(COMPLETE, "complete", SCN_K_(IO))                                                     \
    X(IO_CANCEL, "io_cancel", SCN_K_(IO))                                                   \
    X(RUN_DOWN, "run_down", SCN_K_(IO))                                                     \
    X(TICK, "tick", SCN_K_NONE)                                                             \
    X(RETIRE_IDLE, "retire_idle", SCN_K_NONE)                                               \
    X(RETIRE_WORKERS, "retire_workers", SCN_K_NONE)                                         \
    X(SLEEP, "sleep", SCN_K_NONE)                                                           \
    X(YIELD, "yield", SCN_K_NONE)                                                           \
    X(REPEAT, "repeat", SCN_K_NONE)                                                         \
    X(ASSERT, "assert", SCN_K_NONE)                                                         \
    X(AWAIT, "await", SCN_K_NONE)

/* X("word", OP) -- other spellings the parser accepts (`start` reads better
 * for an I/O operation than `arm`). */
#define SCN_OP_ALIAS_MAP(X) X("start", ARM)

/* X(FIELD, "word") -- a heal entry's fields in `assert P.field ...`. */
#define SCN_FIELD_MAP(X)                                                                    \
    X(EXISTS, "exists")                                                                     \
    X(OBJECTS, "objects")                                                                   \
    X(LAST_CANCELLED, "last_cancelled")                                                     \
    X(LAST_STARTED, "last_started")                                                         \
    X(LAST_SUBMITTED, "last_submitted")                                                     \
    X(OUTSTANDING, "outstanding")                                                           \
    X(OVERDUE_EPISODES, "overdue_episodes")                                                 \
    X(REPAIRS_RUN, "repairs_run")                                                           \
    X(UNHEALED, "unhealed")

/* X(FAULT, "word", SITE, takes a pool) -- `fault WORD ...`.  SITE is the seam
 * call it fails (SIM_FAULT_SITE_MAP, and the SCN_FAULT_ row of the same
 * name): healer-start is pool-create under the name a scenario means, since
 * the healer is the only creator of pools once faults are armed, so the two
 * share one slot.  A fault that takes a pool fails only creates on it. */
#define SCN_FAULT_MAP(X)                                                                    \
    X(WORK_CREATE, "work-create", WORK_CREATE, 1)                                           \
    X(WAIT_CREATE, "wait-create", WAIT_CREATE, 1)                                           \
    X(TIMER_CREATE, "timer-create", TIMER_CREATE, 1)                                        \
    X(IO_CREATE, "io-create", IO_CREATE, 1)                                                 \
    X(GROUP_CREATE, "group-create", GROUP_CREATE, 0)                                        \
    X(EVENT_CREATE, "event-create", EVENT_CREATE, 0)                                        \
    X(POOL_CREATE, "pool-create", POOL_CREATE, 0)                                           \
    X(HEALER_START, "healer-start", POOL_CREATE, 0)                                         \
    X(ALLOC, "alloc", ALLOC, 0)

/* What a trace record's b operand is, for the reports' trace tails. */
#define SCN_B_PLAIN 0 /* a count or an id, printed as a number */
#define SCN_B_TIME 1  /* a clock stamp or a wait, in 100 ns units (core/src/registry.c, healer.c) */
#define SCN_B_DUE 2   /* a FILETIME due time: negative = relative */

/* X("target", "name", carries a pool, unit of b) -- the stable trace points
 * (docs/architecture.md, "Trace events (stable names)"); a pool-carrying
 * record's a operand is the pool key.  Target api has one row per seam pool
 * call, named after the Win32 call. */
#define SCN_TRACE_POINT_MAP(X)                                                              \
    X("heal", "registered", 1, SCN_B_PLAIN)                                                 \
    X("heal", "register-failed", 1, SCN_B_PLAIN)                                            \
    X("heal", "entry-created", 1, SCN_B_PLAIN)                                              \
    X("heal", "released", 1, SCN_B_PLAIN)                                                   \
    X("heal", "entry-retired", 1, SCN_B_PLAIN)                                              \
    X("heal", "repair-submitted", 1, SCN_B_PLAIN)                                           \
    X("heal", "repair-submitted-inline", 1, SCN_B_PLAIN)                                    \
    X("heal", "submit-clock-read", 1, SCN_B_TIME)                                           \
    X("heal", "repair-in-flight", 1, SCN_B_TIME)                                            \
    X("heal", "repair-overdue", 1, SCN_B_PLAIN)                                             \
    X("heal", "repair-started", 1, SCN_B_PLAIN)                                             \
    X("heal", "repair-ran", 1, SCN_B_PLAIN)                                                 \
    X("heal", "repair-closed", 1, SCN_B_PLAIN)                                              \
    X("heal", "healer-started", 0, SCN_B_PLAIN)                                             \
    X("heal", "healer-start-failed", 0, SCN_B_PLAIN)                                        \
    X("heal", "healer-tick", 0, SCN_B_PLAIN)                                                \
    X("heal", "cancel-untracked", 1, SCN_B_PLAIN)                                           \
    X("heal", "cancel-clock-read", 1, SCN_B_TIME)                                           \
    X("heal", "cancelled", 1, SCN_B_TIME)                                                   \
    X("obligation", "drop-obligation-owed", 0, SCN_B_PLAIN)                                 \
    X("obligation", "drain-owed", 0, SCN_B_PLAIN)                                           \
    X("obligation", "fail-fast", 0, SCN_B_PLAIN)                                            \
    X("api", "CreateThreadpool", 0, SCN_B_PLAIN)                                            \
    X("api", "CloseThreadpool", 0, SCN_B_PLAIN)                                             \
    X("api", "SetThreadpoolThreadMaximum", 0, SCN_B_PLAIN)                                  \
    X("api", "SetThreadpoolThreadMinimum", 0, SCN_B_PLAIN)                                  \
    X("api", "CreateThreadpoolCleanupGroup", 0, SCN_B_PLAIN)                                \
    X("api", "CloseThreadpoolCleanupGroupMembers", 0, SCN_B_PLAIN)                          \
    X("api", "CloseThreadpoolCleanupGroup", 0, SCN_B_PLAIN)                                 \
    X("api", "CreateThreadpoolWork", 0, SCN_B_PLAIN)                                        \
    X("api", "SubmitThreadpoolWork", 0, SCN_B_PLAIN)                                        \
    X("api", "WaitForThreadpoolWorkCallbacks", 0, SCN_B_PLAIN)                              \
    X("api", "CloseThreadpoolWork", 0, SCN_B_PLAIN)                                         \
    X("api", "CreateThreadpoolWait", 0, SCN_B_PLAIN)                                        \
    X("api", "SetThreadpoolWait", 0, SCN_B_PLAIN)                                           \
    X("api", "WaitForThreadpoolWaitCallbacks", 0, SCN_B_PLAIN)                              \
    X("api", "CloseThreadpoolWait", 0, SCN_B_PLAIN)                                         \
    X("api", "CreateThreadpoolTimer", 0, SCN_B_PLAIN)                                       \
    X("api", "SetThreadpoolTimer", 0, SCN_B_DUE)                                            \
    X("api", "IsThreadpoolTimerSet", 0, SCN_B_PLAIN)                                        \
    X("api", "WaitForThreadpoolTimerCallbacks", 0, SCN_B_PLAIN)                             \
    X("api", "CloseThreadpoolTimer", 0, SCN_B_PLAIN)                                        \
    X("api", "CreateThreadpoolIo", 0, SCN_B_PLAIN)                                          \
    X("api", "StartThreadpoolIo", 0, SCN_B_PLAIN)                                           \
    X("api", "CancelThreadpoolIo", 0, SCN_B_PLAIN)                                          \
    X("api", "WaitForThreadpoolIoCallbacks", 0, SCN_B_PLAIN)                                \
    X("api", "CloseThreadpoolIo", 0, SCN_B_PLAIN)

#endif
