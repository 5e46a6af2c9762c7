/* The parsed form of a scenario file (docs/scenarios.md is the language
 * reference).  Everything is owned by the scn_scenario and freed by
 * scn_free; names are indices into the scenario's tables, resolved by the
 * parser, so the runner never looks a name up. */
#ifndef TPHEAL_SCN_AST_H
#define TPHEAL_SCN_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scn_words.h"

#define SCN_NAME_MAX 32
/* Time in the scenario is virtual and counted in rt_now units (100 ns). */
#define SCN_MS 10000ull
#define SCN_DEFAULT_POOL 0 /* pools[0] is always the process default pool */

typedef enum scn_stall {
    SCN_STALL_UNSET = 0, /* the sim's default */
    SCN_STALL_NEVER,     /* the pool never severs */
    SCN_STALL_ALWAYS,    /* severs whenever the trigger lands on a cold pool */
    SCN_STALL_PERCENT    /* ... with the given percentage (seeded) */
} scn_stall;

typedef struct scn_pool {
    char name[SCN_NAME_MAX];
    bool is_default;
    bool has_min, has_max;
    uint32_t min, max;
    scn_stall stall;
    uint32_t stall_percent;
    uint64_t start_delay; /* `start-delay D`: workers start D after creation (model knob) */
    int line;
} scn_pool;

typedef enum scn_obj_kind {
#define SCN_OBJ_KIND_ENUM_(kind, word) SCN_OBJ_##kind,
    SCN_OBJ_KIND_MAP(SCN_OBJ_KIND_ENUM_)
#undef SCN_OBJ_KIND_ENUM_
    SCN_OBJ_KIND_COUNT
} scn_obj_kind;

typedef struct scn_block scn_block;

typedef struct scn_obj {
    char name[SCN_NAME_MAX];
    scn_obj_kind kind;
    int pool;    /* index into pools; groups and members: the group's pool */
    int group;   /* index into objs of the group it is created in, or -1 */
    int event;   /* waits: index into objs of the event watched */
    uint64_t period; /* periodic: period (rt units) */
    bool manual_reset, initially_set; /* events */
    bool cancel_callback;             /* groups: install a cancel callback */
    bool created_by_thread;           /* some thread runs `create NAME` */
    int callback;                     /* index into callbacks, or -1 */
    int line;
} scn_obj;

/* What each operation calls in the core: docs/scenarios.md. */
typedef enum scn_op_kind {
#define SCN_OP_ENUM_(op, word, kinds) SCN_OP_##op,
    SCN_OP_MAP(SCN_OP_ENUM_)
#undef SCN_OP_ENUM_
    SCN_OP_KIND_COUNT
} scn_op_kind;

typedef enum scn_release_mode {
    SCN_RELEASE_DRAINING = 0,
    SCN_RELEASE_CANCELLING,
    SCN_RELEASE_UNTRACKED
} scn_release_mode;

/* Expected result of an operation (`=> EBUSY`).  SCN_RESULT_ANY accepts all. */
#define SCN_RESULT_ANY (-1)

typedef enum scn_term_kind {
    SCN_TERM_NUMBER = 0,
    SCN_TERM_FIELD,    /* pool.field: a heal entry field (or `exists`) */
    SCN_TERM_COUNT,    /* count(event[, pool]) */
    SCN_TERM_CALLS,    /* calls(object): callbacks run */
    SCN_TERM_OVERLAP,  /* overlap(object): most of its callbacks running at once */
    SCN_TERM_IO_OPEN,  /* outstanding(io): starts not yet ended, tph_io_outstanding */
    SCN_TERM_BLOCKED,  /* blocked(label): longest virtual time the labelled op took */
    SCN_TERM_SEVERED,  /* severed(pool): 1 when the sim reports the pool severed */
    SCN_TERM_ENTRIES,  /* entries: tph_heal_entry_count() */
    SCN_TERM_HEALER,   /* healer: 1 when tph_heal_healer_running() */
    SCN_TERM_NOW       /* now: virtual time */
} scn_term_kind;

typedef enum scn_field {
#define SCN_FIELD_ENUM_(field, word) SCN_FIELD_##field,
    SCN_FIELD_MAP(SCN_FIELD_ENUM_)
#undef SCN_FIELD_ENUM_
    SCN_FIELD_COUNT
} scn_field;

typedef struct scn_term {
    scn_term_kind kind;
    uint64_t number;
    int pool;       /* FIELD, COUNT (-1 = any), SEVERED */
    scn_field field;
    int event;      /* COUNT: index into scn_trace_points() */
    int obj;        /* CALLS, OVERLAP */
    int label;      /* BLOCKED: index into labels */
    char label_name[SCN_NAME_MAX]; /* BLOCKED, until resolved */
    int label_col;
} scn_term;

typedef enum scn_cmp { SCN_EQ = 0, SCN_NE, SCN_LT, SCN_LE, SCN_GT, SCN_GE } scn_cmp;

typedef struct scn_expr {
    scn_term lhs, rhs;
    scn_cmp cmp;
    int line, col;
    char text[96]; /* the source text, for reports */
} scn_expr;

typedef struct scn_op {
    scn_op_kind kind;
    int obj;            /* target object, or pool for RETIRE_WORKERS, or -1 */
    uint64_t count;     /* REPEAT count; COMPLETE bytes */
    uint64_t time;      /* SLEEP duration; ARM: timeout/due (rt units) */
    uint64_t window;    /* ARM: timer window (rt units) */
    bool forever;       /* ARM wait: no timeout */
    bool has_time;      /* ARM: a time was given */
    scn_release_mode release;
    int expect;         /* tph_err expected, or SCN_RESULT_ANY */
    int label;          /* index into labels, or -1 */
    int point, pool;    /* AWAIT: trace point, pool (-1 any) */
    scn_block *body;    /* REPEAT */
    scn_expr *expr;     /* ASSERT */
    int line, col;
} scn_op;

struct scn_block {
    scn_op *ops;
    size_t n, cap;
};

typedef struct scn_thread {
    char name[SCN_NAME_MAX];
    scn_block body;
    int line;
} scn_thread;

/* `callback X ... end`: ops run inside every callback of X. */
typedef struct scn_callback {
    int obj;
    scn_block body;
    int line;
} scn_callback;

typedef enum scn_hold_release { SCN_HOLD_FOR = 0, SCN_HOLD_UNTIL } scn_hold_release;

typedef struct scn_hold {
    int point;        /* index into scn_trace_points() */
    int pool;         /* -1: any pool */
    uint32_t nth;     /* hold the nth matching record (1 = first) */
    bool every;       /* hold every matching record from the nth on */
    scn_hold_release release;
    uint64_t duration;   /* FOR */
    int until_point;     /* UNTIL */
    int until_pool;      /* UNTIL: -1 any */
    uint32_t until_count;/* UNTIL: released once the point was recorded this often */
    int line;
} scn_hold;

/* Faults are armed after the scenario's pools exist and before any object is
 * created, so `nth` counts the calls the scenario's objects, the registry and
 * the healer make from then on.  The healer is the only creator of pools
 * after that point, so healer-start is pool-create under its usual name. */
typedef enum scn_fault_kind {
#define SCN_FAULT_ENUM_(fault, word, site, takes_pool) SCN_FAULT_##fault,
    SCN_FAULT_MAP(SCN_FAULT_ENUM_)
#undef SCN_FAULT_ENUM_
    SCN_FAULT_KIND_COUNT
} scn_fault_kind;

typedef struct scn_fault {
    scn_fault_kind kind;
    int pool;        /* creates with an environment: only calls on this pool; -1 any */
    uint32_t nth;    /* 1-based */
    bool onward;     /* every matching call from the nth on fails */
    int line;
} scn_fault;

typedef enum scn_outcome {
    SCN_OUTCOME_NORMAL = 0,  /* the run must finish cleanly */
    SCN_OUTCOME_FAIL_FAST,   /* the run must end by fail-fast */
    SCN_OUTCOME_DEADLOCK,    /* the run must deadlock */
    SCN_OUTCOME_MISUSE       /* the sim must report a misuse */
} scn_outcome;

/* `expect A before B [pool P]`: every record of B comes after at least as
 * many records of A (checked at each B, on the recording thread). */
typedef struct scn_order {
    int first, then;  /* trace points */
    int pool;         /* -1 any */
    int line;
} scn_order;

/* `require ...`: a state the scenario exists to reach.  Not an oracle: a
 * run that misses it passes, but the runner counts the runs that reached
 * it, and a scenario whose requirement no run reached is NOT-EXERCISED
 * (scn_reach.h). */
typedef enum scn_req_kind {
    SCN_REQ_SEVERED = 0, /* require severed P: the pool severed at least once */
    SCN_REQ_TRACE,       /* require trace POINT [pool P] [count N] */
    SCN_REQ_HOLD,        /* require hold POINT: a hold on POINT parked a thread */
    SCN_REQ_OVERLAP,     /* require overlap A B: both in flight at one moment */
    SCN_REQ_FAULT,       /* require fault KIND: the fault fired */
    SCN_REQ_EXPR         /* require EXPR: true at quiescence */
} scn_req_kind;

#define SCN_MAX_REQUIRES 32
/* Overlap operands: a thread's index, or this plus an object's index. */
#define SCN_REQ_OBJ_BASE 64

typedef struct scn_require {
    scn_req_kind kind;
    int pool;           /* SEVERED; TRACE (-1 any) */
    int point;          /* TRACE, HOLD */
    uint64_t count;     /* TRACE: records needed (default 1) */
    int a, b;           /* OVERLAP */
    scn_fault_kind fault;
    scn_expr expr;      /* EXPR */
    int line;
    char text[96];      /* the source text after `require`, for reports */
} scn_require;

typedef struct scn_label {
    char name[SCN_NAME_MAX];
    int line;
} scn_label;

typedef struct scn_scenario {
    char *path;
    char purpose[160];
    uint64_t content_hash; /* FNV-1a of the file bytes */
    bool fail_fast_build;
    char sampled[160];     /* `sampled "why"`: the reason the bounded search cannot finish it ("" none) */
    uint64_t settle;       /* extra virtual time to run after the threads end */
    scn_outcome outcome;
    char outcome_text[64]; /* MISUSE / FAIL_FAST: substring the report or reason must contain ("" any) */
    bool allow_severed;    /* `expect severed P`-style scenarios opt out of that oracle */
    uint64_t allow_unhealed; /* bit per pool: `expect unhealed P` opts out of the
                                repaired-after-cancel and empty-registry oracles */

    scn_pool *pools; size_t npools;
    scn_obj *objs; size_t nobjs;
    scn_thread *threads; size_t nthreads;
    scn_callback *callbacks; size_t ncallbacks;
    scn_hold *holds; size_t nholds;
    scn_fault *faults; size_t nfaults;
    scn_expr *expects; size_t nexpects;
    scn_label *labels; size_t nlabels;
    scn_order *orders; size_t norders;
    scn_require *requires; size_t nrequires;
    /* The parser's advice on a scenario that parses but likely does not do
     * what it says (`file:line:col: note: ...`, printed by `run`); "" none. */
    int note_line, note_col;
    char note[200];
} scn_scenario;

typedef struct scn_error {
    int line, col;
    char msg[200];
} scn_error;

/* Parses `len` bytes of scenario text.  Returns NULL and fills *err on bad
 * input (never crashes, never reads past len).  `path` is copied. */
scn_scenario *scn_parse(const char *path, const char *text, size_t len, scn_error *err);
/* Reads and parses a file; an unreadable file is reported at line 0. */
scn_scenario *scn_parse_file(const char *path, scn_error *err);
/* The *.scn file names in dir, sorted (the same order on every platform),
 * each allocated, and the array; false when the directory cannot be read.
 * scn_scenario_names_free releases them (scn_corpus.c). */
bool scn_scenario_names(const char *dir, char ***names, size_t *n);
void scn_scenario_names_free(char **names, size_t n);
void scn_free(scn_scenario *);

/* Names the language knows: lookups over the tables of scn_words.h
 * (scn_names.c).  A _find returns -1 for a word not in its table. */
size_t scn_trace_point_count(void);
const char *scn_trace_point_name(int i);
const char *scn_trace_point_target(int i);
int scn_trace_point_find(const char *name);
bool scn_trace_point_has_pool(int i); /* the record's `a` is a pool key */
int scn_trace_point_b_unit(int i);    /* SCN_B_*; SCN_B_PLAIN for -1 */
const char *scn_op_name(scn_op_kind);
int scn_op_find(const char *word);    /* an op word or an alias */
const char *scn_obj_kind_name(scn_obj_kind);
const char *scn_field_name(scn_field);
const char *scn_fault_name(scn_fault_kind);
int scn_fault_find(const char *word);
/* The fault kind that owns k's slot: the one named after the seam call k
 * fails (healer-start -> pool-create).  Inline: the real pool's fault front
 * (pool/win32_faults.c) is built into a core library without the parser. */
static inline scn_fault_kind scn_fault_slot(scn_fault_kind k) {
    switch (k) {
#define SCN_FAULT_SLOT_CASE_(fault, word, site, takes_pool) \
    case SCN_FAULT_##fault: return SCN_FAULT_##site;
        SCN_FAULT_MAP(SCN_FAULT_SLOT_CASE_)
#undef SCN_FAULT_SLOT_CASE_
    default: return k;
    }
}
bool scn_fault_takes_pool(scn_fault_kind k);
/* What each operation applies to: a bit per scn_obj_kind (0 = no operand). */
unsigned scn_op_operand_kinds(scn_op_kind);
/* Result words (`=> EBUSY`), from the core's TPH_ERR_MAP: "ok" for TPH_OK,
 * the error's name without TPH_ otherwise, "any" for SCN_RESULT_ANY. */
const char *scn_result_name(int result);
int scn_result_find(const char *word, int *result); /* 0 when not a result word */
/* "ok, EINVAL, ENOMEM, EBUSY, any" into buf: the words, for messages. */
void scn_result_words(char *buf, size_t size);
/* Word equality as the language reads it: `-` and `_` are one letter. */
bool scn_word_eq(const char *a, const char *b);

#endif
