/* Generated programs (docs/generate.md): a program is a model of a scenario
 * -- pools with their knobs, objects of every kind, 2-6 threads of
 * operations, callback bodies, seam faults -- drawn from one pcg32 stream
 * named by (master seed, index), legal by construction, and printed as an
 * ordinary scenario file with no `expect` of its own: the runner's oracles
 * judge it.  The shrinker switches units of the model off (`live`) and
 * prints it again, so every shrunk form is a scenario too.
 *
 *   gen_program.c  the model and its draw (legality rules at each choice)
 *   gen_emit.c     the model as scenario text
 *   gen_shrink.c   delta debugging over the model's units, then the
 *                  schedule's preemptions by the bounded search
 *
 * Determinism: every decision is a pcg32 draw in a fixed order over fixed
 * tables; no hash order, no address, no float decides anything, so one
 * (seed, index) is one program byte for byte on every build and platform. */
#ifndef TPHEAL_GEN_H
#define TPHEAL_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scn_text.h"

#define GEN_MAX_POOLS 3   /* the default pool and up to two private ones */
#define GEN_MAX_EVENTS 2
#define GEN_MAX_OBJS 10   /* events excluded */
#define GEN_MAX_THREADS 6
#define GEN_MAX_OPS 12    /* per thread */
#define GEN_MAX_CB_OPS 3  /* per callback body */

/* The object kinds a program declares (events are kept apart: every thread
 * may signal them and only the runner's teardown closes them). */
typedef enum gen_kind { GEN_WORK = 0, GEN_WAIT, GEN_TIMER, GEN_PERIODIC, GEN_IO, GEN_GROUP, GEN_KIND_COUNT } gen_kind;

/* One operation a program's thread or callback performs.  Some are two
 * scenario lines that only make sense together (an I/O start and its
 * completion; a stop and the close after it; a release and the group's
 * close): one unit, so the shrinker removes both or neither. */
typedef enum gen_opk {
    GEN_OP_SUBMIT = 0,   /* submit W */
    GEN_OP_ARM,          /* arm X [timeout|after] [window] */
    GEN_OP_SIGNAL,       /* signal E */
    GEN_OP_RESET,        /* reset E */
    GEN_OP_DISARM,       /* disarm X */
    GEN_OP_TRY_CANCEL,   /* try_cancel_pending X */
    GEN_OP_CANCEL_UNTRACKED, /* cancel_untracked X */
    GEN_OP_CANCEL_PENDING,   /* cancel_pending W|T */
    GEN_OP_WAIT,         /* wait X (drain) */
    GEN_OP_STOP,         /* stop_and_drain X */
    GEN_OP_STOP_CLOSE,   /* stop_and_drain X + close X (the owner, last) */
    GEN_OP_IO_COMPLETE,  /* start I + complete I */
    GEN_OP_IO_CANCEL,    /* start I + io_cancel I */
    GEN_OP_RUN_DOWN,     /* run_down I */
    GEN_OP_RELEASE_CLOSE,/* release G MODE + close G (the owner, last) */
    GEN_OP_TICK,         /* tick */
    GEN_OP_RETIRE_IDLE,  /* retire_idle */
    GEN_OP_RETIRE_WORKERS, /* retire_workers P */
    GEN_OP_SLEEP,        /* sleep Nms */
    GEN_OP_YIELD,        /* yield */
    GEN_OPK_COUNT
} gen_opk;

typedef struct gen_op {
    uint8_t kind;   /* gen_opk */
    int8_t target;  /* object index; event index for SIGNAL/RESET; pool for RETIRE_WORKERS */
    uint16_t a;     /* ms: timeout / due / sleep; release mode; 0 = none */
    uint16_t b;     /* ms: timer window; 0 = none */
    bool forever;   /* ARM of a wait: no timeout */
    bool live;
} gen_op;

typedef struct gen_pool {
    bool used;          /* declared (pool 0, the default pool, always is) */
    bool live;
    uint8_t max, min;   /* 0 = not set */
    uint8_t stall;      /* 0 unset, 1 never, 2 always, 3 percent */
    uint8_t stall_percent;
    uint8_t start_delay_ms; /* 0 = none */
    /* knobs the shrinker may drop one by one */
    bool limits_live, stall_live, delay_live;
} gen_pool;

typedef struct gen_event {
    bool manual, set, live;
} gen_event;

typedef struct gen_obj {
    uint8_t kind;        /* gen_kind */
    int8_t pool;         /* pool index (members: the group's) */
    int8_t group;        /* object index of its group, or -1 */
    int8_t event;        /* waits: the event watched */
    uint16_t period_ms;  /* periodic */
    bool cancel_callback;/* groups */
    int8_t owner;        /* the thread that closes it (or releases it, a
                            member: its group's), or -1: never closed by a
                            thread, any thread may use it, teardown closes */
    gen_op cb[GEN_MAX_CB_OPS]; /* callback body (kinds with callbacks) */
    uint8_t ncb;
    bool live;
} gen_obj;

typedef struct gen_thread {
    gen_op ops[GEN_MAX_OPS];
    uint8_t nops;
    bool live;
} gen_thread;

/* Seam faults the generator draws (the kinds that fail no object the
 * program itself creates: docs/generate.md says why and what is left). */
typedef struct gen_fault {
    uint8_t kind;   /* 0 healer-start, 1 work-create on a pool (its repair work) */
    int8_t pool;
    uint8_t nth;
    bool onward;
    bool live;
} gen_fault;

#define GEN_MAX_FAULTS 2

typedef struct gen_program {
    uint64_t seed, index;
    gen_pool pools[GEN_MAX_POOLS];
    gen_event events[GEN_MAX_EVENTS];
    uint8_t nevents;
    gen_obj objs[GEN_MAX_OBJS];
    uint8_t nobjs;
    gen_thread threads[GEN_MAX_THREADS];
    uint8_t nthreads;
    gen_fault faults[GEN_MAX_FAULTS];
    uint8_t nfaults;
} gen_program;

/* Draws program `index` of master seed `seed` (gen_program.c). */
void gen_program_draw(gen_program *p, uint64_t seed, uint64_t index);

/* Checks the model against the legality rules the draw follows (no use of
 * an object by another thread than its owner when the owner closes it, no
 * op after the close, ...); NULL when legal, else what is broken (static
 * text).  The shrinker keeps only what passes, and the tests hold every
 * drawn program to it. */
const char *gen_program_illegal(const gen_program *p);

/* Whether object i is in the program: itself, its pool, its group and
 * (a wait) its event not switched off. */
bool gen_obj_alive(const gen_program *p, int i);

/* The program as scenario text (gen_emit.c); `purpose` goes on line 1 after
 * `# purpose: `, `comments` (may be NULL) are lines appended as comments. */
void gen_emit(const gen_program *p, const char *purpose, const char *comments, scn_text *out);

/* The units the shrinker may switch off, counted and toggled in one fixed
 * order (threads, then each thread's ops, objects with their callback ops,
 * events, private pools and their knobs, faults). */
size_t gen_units(const gen_program *p);
void gen_unit_set(gen_program *p, size_t unit, bool live);
bool gen_unit_live(const gen_program *p, size_t unit);

#endif
