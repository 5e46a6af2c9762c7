/* A run's failures as data.  Each failure is a kind from the one table below,
 * the identity of the check that failed (its scenario line and the object,
 * pool or order it judged) and the message the report prints.  Every verdict
 * -- run's replay check, stress-faultloop's acceptance, stress-batch's and
 * run --json's `kind`, the sabotage sweep reading that JSON -- reads the kind
 * and the identity, never the message, so a message can be reworded without
 * changing a verdict (ci/test_failure_kinds.py rewords every one and checks). */
#ifndef TPHEAL_SCN_FAILURE_H
#define TPHEAL_SCN_FAILURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(ID, name, fault_may_cause): name is the JSON contract's word
 * (harness/json-schema.json, "failureKind"); fault_may_cause says a fault
 * injected at a seam call may legitimately cause it: an operation or a set-up
 * step answering the error, a later operation on the object that was never
 * created, the scenario's own comparisons whose numbers the missing object
 * changed, or the scenario's threads left waiting in an `await` or a `hold`
 * for a record the fault removed (stress-faultloop accepts these and no
 * other).  The run's own outcome comes first, then the checks in the order
 * a run makes them.  (What many runs say together -- every run one
 * interleaving, a `require` no run reached -- is the summary's `exercised`
 * and `reached`, not a run's failure.) */
#define SCN_FAILURE_KIND_MAP(X)                                                                                    \
    /* the run's outcome (scn_run.c) */                                                                             \
    X(DATA_RACE, "data-race", false)             /* the race build's report */                                     \
    X(LIVELOCK, "livelock", false)               /* the scheduler's step or time bound */                          \
    X(REPLAY_DIVERGED, "replay-diverged", false) /* a schedule that does not fit the run */                        \
    X(RT_MISUSE, "rt-misuse", false)             /* the program broke the runtime's contract */                    \
    X(EXPECTED_FAIL_FAST, "expected-fail-fast", false) /* `expect fail-fast` not met */                            \
    X(EXPECTED_DEADLOCK, "expected-deadlock", false)   /* `expect deadlock` not met */                             \
    X(EXPECTED_MISUSE, "expected-misuse", false)       /* `expect misuse` not met */                               \
    X(FAIL_FAST, "fail-fast", false)             /* the process was ended */                                       \
    X(DEADLOCK, "deadlock", false)               /* every thread blocked */                                        \
    X(SCRIPT_WAIT_DEADLOCK, "script-wait-deadlock", true) /* ... the scenario's own await/hold among them, and     \
                                                             no thread wanting a lock */                           \
    X(MISUSE, "misuse", false)                   /* the sim's misuse reports (a freed context included) */         \
    /* the checks (scn_run_fail) */                                                                                 \
    X(SETUP_FAILED, "setup-failed", true)        /* a pool, its limits or an object the runner sets up */          \
    X(EVENT_NOT_OPEN, "event-not-open", false)   /* a wait created on an event that is not open */                 \
    X(OBJECT_NOT_CREATED, "object-not-created", true) /* an op on an object never created */                       \
    X(OBJECT_CLOSED, "object-closed", false)     /* an op on an object already closed */                           \
    X(CLOSE_LENT_EVENT, "close-lent-event", false) /* closing an event a wait still borrows */                     \
    X(OP_RESULT, "op-result", true)              /* an op returned other than its `-> RESULT` */                   \
    X(ASSERT_FAILED, "assert-failed", true)                                                                        \
    X(EXPECT_FAILED, "expect-failed", true)                                                                        \
    X(ORDER_BROKEN, "order-broken", false)       /* `expect A before B` */                                         \
    X(TEARDOWN_CLOSE, "teardown-close", false)   /* closing what the scenario left open */                         \
    X(ORACLE_UNHEALED, "oracle-unhealed", false)                                                                   \
    X(ORACLE_OUTSTANDING, "oracle-outstanding", false)                                                             \
    X(ORACLE_SEVERED, "oracle-severed", false)                                                                     \
    X(ORACLE_REGISTRY_LEFT, "oracle-registry-left", false)                                                         \
    X(ORACLE_CALLBACKS_UNSEEN, "oracle-callbacks-unseen", false) /* the pool ran more than the scenario saw */      \
    X(ORACLE_WORK_ARMS, "oracle-work-arms", false)                                                                 \
    X(ORACLE_BOUNDED_ARMS, "oracle-bounded-arms", false) /* a wait's or timer's callbacks against its arms */      \
    X(ORACLE_IO_ARMS, "oracle-io-arms", false)                                                                     \
    X(ORACLE_STOP_DRAIN, "oracle-stop-drain", false) /* a callback after stop_and_drain returned */

typedef enum scn_failure_kind {
    SCN_FAILURE_NONE = 0,
#define SCN_FAILURE_ENUM(id, name, ok) SCN_FAILURE_##id,
    SCN_FAILURE_KIND_MAP(SCN_FAILURE_ENUM)
#undef SCN_FAILURE_ENUM
    SCN_FAILURE_KIND_COUNT
} scn_failure_kind;

/* The kind's word ("none" for SCN_FAILURE_NONE). */
const char *scn_failure_kind_name(scn_failure_kind);
bool scn_failure_fault_may_cause(scn_failure_kind);

/* One failure.  line and subject are the failing check's identity: the
 * scenario line of the statement (0: a check every run makes, or the run's
 * outcome) and the index in the scenario of the object, pool or order it
 * judged (-1: none). */
typedef struct scn_failure {
    scn_failure_kind kind;
    int line;
    int subject;
    char *message; /* as the report prints it, each line ending in '\n' */
} scn_failure;

/* The same failure: the same kind of the same check.  The message, whose
 * numbers may differ between two runs failing the same way, is not read. */
bool scn_failure_same(const scn_failure *a, const scn_failure *b);

/* A run's failures in report order: the first SCN_FAILURES_SHOWN checks'
 * and every outcome's; `unshown` counts the checks past them. */
#define SCN_FAILURES_SHOWN 20
typedef struct scn_failures {
    scn_failure *v;
    size_t n, cap;
    uint64_t unshown;
} scn_failures;

/* Appends a failure (the message copied); false when out of memory. */
bool scn_failures_add(scn_failures *, scn_failure_kind, int line, int subject, const char *message);
/* Copies every failure of `from` to the end of `to`, its unshown count
 * with them; false when out of memory. */
bool scn_failures_copy(scn_failures *to, const scn_failures *from);
/* The same, then frees `from`. */
void scn_failures_append(scn_failures *to, scn_failures *from);
/* The report's text: the messages in order, then "(more failures not
 * shown)" when some were not kept; NULL when there are none. */
char *scn_failures_text(const scn_failures *);
/* The same failures: as many, each the same as its counterpart. */
bool scn_failures_same(const scn_failures *a, const scn_failures *b);
/* The first failure whose kind a fault may not cause, or NULL. */
const scn_failure *scn_failures_first_not_fault_caused(const scn_failures *);
void scn_failures_free(scn_failures *);

/* The JSON contract's fields of a failing run: "kind", the first failure's,
 * and "kinds", every kind in report order. */
struct scn_json;
void scn_failures_json(struct scn_json *, const scn_failures *);

#endif
