/* Control and query API of the simulated Windows thread pool (the model behind
 * core/src/os.h in harness builds).  Used by the harness's own tests, the core's
 * tests, the scenario runner and its oracles.  What is modelled and which
 * Microsoft/Wine fact each behaviour follows: harness/sim/README.md.
 *
 * One simulated process at a time: sim_process_begin .. sim_process_end.
 * Every query reads the model under its lock, so it may be called from any rt
 * thread of the run (and from the driver after a native run, before end).
 *
 * Handles the model gives out (pools, objects, events, files) are NOT
 * addresses: they encode (index, kind), so the same seed gives the same handle
 * values, and a handle stays recognisable after the object is freed (tombstone)
 * which is what makes the misuse reports reliable instead of undefined.
 */
#ifndef TPHEAL_SIM_H
#define TPHEAL_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Same typedefs as core/src/os.h (C11 allows the repetition), so users of this
 * header need not see the core's private include directory. */
typedef struct tph_os_pool tph_os_pool;
typedef struct tph_os_event tph_os_event;

/* 100 ns units, like rt_now(). */
#define SIM_MS 10000ull
#define SIM_SECOND 10000000ull

/* ---- stall control --------------------------------------------------------- */
/* Whether a pool severs when the stall condition holds (a cancellation removes
 * an already-queued wait packet while the pool has no started worker). */
typedef enum sim_stall_mode {
    SIM_STALL_NEVER = 0,
    SIM_STALL_ALWAYS = 1,
    SIM_STALL_PROBABILITY = 2 /* numerator/denominator, drawn with rt_choose */
} sim_stall_mode;

typedef struct sim_stall {
    sim_stall_mode mode;
    uint32_t numerator;   /* PROBABILITY only */
    uint32_t denominator; /* PROBABILITY only; 0 is treated as NEVER */
} sim_stall;

/* ---- process lifecycle ----------------------------------------------------- */
typedef struct sim_config {
    uint64_t default_idle_timeout; /* default pool worker idle timeout (67 s) */
    uint64_t private_idle_timeout; /* private pools, above their minimum (67 s) */
    uint32_t default_max_threads;  /* default pool thread maximum (512) */
    uint32_t private_max_threads;  /* initial maximum of a private pool (512) */
    sim_stall default_pool_stall;  /* ALWAYS */
    sim_stall private_pool_stall;  /* NEVER: for private pools created later */
    /* SetThreadpoolTimer(t, NULL, 0, 0) with a tick queued: false (default)
     * = the tick still runs, as Microsoft documents (pftDueTime) and as Wine
     * 8.0 measured in this repository (conformance case
     * timer.disarm_keeps_queued_tick); true = the disarm discards it, the
     * claim the project started from (docs/pool-facts.md), kept for comparison runs. */
    bool timer_disarm_drops_queued;
    /* tph_os_interrupt_time() at the process's start (rt units, a whole
     * number of 15.625 ms ticks): one hour by default.  0 models a machine
     * that has just booted, where the clock the registry stamps with can
     * read 0 -- the value its stamps reserve for "never". */
    uint64_t uptime_base;
} sim_config;

sim_config sim_config_default(void);
/* A fresh simulated process (default pool, empty tables).  NULL = defaults.
 * Called on the run's main rt thread. */
void sim_process_begin(const sim_config *);
/* Tears the model down and frees every allocation of the simulated process
 * (core's tph_os_alloc blocks included), whatever state it is in.  Under the
 * native runtime it first stops and joins its worker and timer threads
 * (running callbacks finish); under the controlled scheduler the run's other
 * threads were abandoned, so it only frees.  No query is valid afterwards. */
void sim_process_end(void);
bool sim_process_active(void);

/* Stall setting of one pool (NULL = the default pool). */
void sim_set_stall(tph_os_pool *pool, sim_stall);
/* Stall setting for private pools created from now on. */
void sim_set_private_stall(sim_stall);
/* Told when the model severs a pool (queued: the callbacks it strands) and
 * when a SubmitThreadpoolWork releases it (queued: what the released worker
 * now serves); pool is the native pool, NULL the default pool.  Called on
 * the thread whose call did it, under the model's lock: the watcher takes
 * no scheduling point in a controlled run (the schedule and every trace
 * stay as they were without it) and calls nothing of the sim.  One watcher
 * per process; NULL to stop.  Set after sim_process_begin. */
typedef void (*sim_sever_watch_fn)(void *ctx, const void *pool, bool severed, uint32_t queued);
void sim_set_sever_watch(sim_sever_watch_fn fn, void *ctx);

/* ---- fault injection ------------------------------------------------------- */
/* X(SITE, "name", what fails) -- the seam's failure sites the model can
 * inject, written once: the enum, sim_fault_kind_name and the scenario
 * language's faults (SCN_FAULT_MAP names its site by these) read it. */
#define SIM_FAULT_SITE_MAP(X)                                                               \
    X(ALLOC, "alloc", "tph_os_alloc returns NULL")                                          \
    X(POOL_CREATE, "pool-create", "tph_os_pool_create returns NULL")                        \
    X(WORK_CREATE, "work-create", "tph_os_work_create; optionally only for one pool key")   \
    X(WAIT_CREATE, "wait-create", "tph_os_wait_create; optionally for one pool key")        \
    X(TIMER_CREATE, "timer-create", "tph_os_timer_create; optionally for one pool key")     \
    X(IO_CREATE, "io-create", "tph_os_io_create; optionally for one pool key")              \
    X(GROUP_CREATE, "group-create", "tph_os_group_create returns NULL")                     \
    X(EVENT_CREATE, "event-create", "tph_os_event_create returns NULL")

typedef enum sim_fault_kind {
#define SIM_FAULT_ENUM_(site, name, what) SIM_FAULT_##site,
    SIM_FAULT_SITE_MAP(SIM_FAULT_ENUM_)
#undef SIM_FAULT_ENUM_
    SIM_FAULT_KIND_COUNT
} sim_fault_kind;

typedef struct sim_fault {
    sim_fault_kind kind;
    uint64_t nth;       /* 1-based: the Nth matching call fails (0 = disarmed) */
    bool from_nth_on;   /* every matching call from the Nth on fails */
    bool match_pool;    /* only calls on pool `pool_key` match (creates with an env) */
    uintptr_t pool_key; /* (uintptr_t)tph_os_pool*, 0 = the default pool */
} sim_fault;

/* One armed fault per kind; arming replaces the previous one of that kind and
 * restarts its matching-call count.  Arm after sim_process_begin. */
void sim_fault_arm(const sim_fault *);
void sim_fault_disarm_all(void);
/* Failable calls of `kind` reached in this process (all, matching or not). */
uint64_t sim_fault_calls(sim_fault_kind);
/* Calls that matched the armed fault's filter since it was armed. */
uint64_t sim_fault_matching_calls(sim_fault_kind);
/* How many calls the armed fault of `kind` failed (0 = it never fired). */
uint64_t sim_fault_fired(sim_fault_kind);
const char *sim_fault_kind_name(sim_fault_kind);

/* ---- objects: ids and kinds ------------------------------------------------ */
typedef enum sim_object_kind {
    SIM_OBJ_NONE = 0,
    SIM_OBJ_POOL,
    SIM_OBJ_GROUP,
    SIM_OBJ_WORK,
    SIM_OBJ_WAIT,
    SIM_OBJ_TIMER,
    SIM_OBJ_IO,
    SIM_OBJ_EVENT,
    SIM_OBJ_FILE,
    SIM_OBJ_KIND_COUNT
} sim_object_kind;

const char *sim_object_kind_name(sim_object_kind); /* "pool", "work", ... */
/* Kind of a handle given out by the model (SIM_OBJ_NONE if not one).
 * NULL is the default pool only where a pool is expected: use sim_pool_stats. */
sim_object_kind sim_object_kind_of(const void *handle);
/* Stable id: creation order within the process and kind, starting at 1
 * (the default pool is pool#0).  0 when the handle is unknown. */
uint32_t sim_object_id(const void *handle);

/* ---- queries for oracles --------------------------------------------------- */
typedef struct sim_pool_stats {
    uint32_t id;               /* 0 = default pool */
    bool closed;               /* CloseThreadpool called */
    bool freed;                /* closed and no object bound any more */
    uint32_t min_threads, max_threads;
    uint32_t workers;          /* worker threads alive (started or starting) */
    uint32_t started_workers;  /* alive and started: 0 means the pool is cold */
    uint32_t idle_workers;
    uint32_t queued;           /* callbacks queued, not started */
    uint32_t running;          /* callbacks running now */
    uint32_t bound_objects;    /* objects created on it and not freed */
    bool severed;              /* stalled now: dispatches nothing until a submit */
    uint64_t stalls;           /* times it severed */
    uint64_t releases;         /* times a submit released it */
    uint64_t workers_created, workers_retired;
    uint64_t callbacks_run;
} sim_pool_stats;

/* NULL = default pool.  False when the handle is not a pool of this process. */
bool sim_pool_stats_get(tph_os_pool *pool, sim_pool_stats *out);
/* Pools of this process in creation order; index 0 is the default pool. */
uint32_t sim_pool_count(void);
tph_os_pool *sim_pool_at(uint32_t index); /* index 0 -> NULL (default pool) */
/* True when some pool is severed with callbacks queued (the bug, observable). */
bool sim_any_pool_severed_with_queued(void);
/* The same answer, and in one section of the model lock (so the oracles
 * that read both take the scheduling points of one read): bit i of
 * *severed set when pools[i] (NULL: the default pool) is severed now. */
bool sim_severed_scan(tph_os_pool *const *pools, size_t n, uint64_t *severed);
/* Holds the pool's worker factory: while held it creates no worker (idle
 * workers are still woken), modelling slow thread creation.  A hold is how a
 * test or scenario keeps a packet queued on a cold pool on real threads.
 * Releasing the hold lets the factory catch up with the queue. */
void sim_pool_hold_factory(tph_os_pool *pool, bool hold);
/* Slow thread creation: a worker the pool's factory creates from now on
 * starts `delay` (rt units) after its creation (0: at once).  The stall
 * needs a cancellation to land before the worker spawned for the packet has
 * started; without a delay that window is a few scheduling points wide and
 * a random walk almost never hits it (issue 12: 0 of 500 seeds severed the
 * default pool of default-pool-stall-healed-in-window).  NULL = default pool. */
void sim_pool_set_start_delay(tph_os_pool *pool, uint64_t delay);
/* Forces the idle timeout now: every idle worker above the pool's minimum
 * retires, so the pool becomes cold again (NULL = default pool). */
void sim_pool_retire_idle_workers(tph_os_pool *pool);

typedef struct sim_object_stats {
    sim_object_kind kind;
    uint32_t id;
    uint32_t pool_id;        /* the pool its callbacks run on */
    uint32_t group_id;       /* 0 = none */
    bool closed;             /* Close* called (or released by its group) */
    bool freed;              /* closed and nothing outstanding: tombstone */
    bool armed;              /* wait registered / timer set */
    bool runs_long;          /* the environment's runs-long hint it was created with */
    int priority;            /* its callback priority: 0 high, 1 normal, 2 low */
    uint32_t period_ms;      /* timer: period and window of the last SetThreadpoolTimer */
    uint32_t window_ms;
    uint32_t queued;         /* callbacks queued, not started */
    uint32_t running;        /* callbacks running now */
    uint64_t callbacks_run;  /* callbacks that returned */
    uint64_t cancelled;      /* queued callbacks dropped by a cancel/disarm/close */
    uint64_t group_cancel_calls; /* cancel-callback calls made for this member */
    uint32_t io_pending;     /* I/O: starts not yet completed or cancelled */
    bool event_set;          /* events: signalled state */
} sim_object_stats;

bool sim_object_stats_get(const void *handle, sim_object_stats *out);
/* The handle of the object of `kind` with per-kind id `id` (creation order
 * from 1, as in "work#1"; the default pool is pool#0), or NULL: for tests that must look at an object the core
 * made without handing it out (the registry's repair work). */
void *sim_object_handle(sim_object_kind kind, uint32_t id);

/* ---- misuse reports -------------------------------------------------------- */
/* A call on a closed or freed object, an environment naming a closed pool, a
 * double close, a submit after close, an unknown handle...  Recorded, never
 * crashed on: the call does nothing (creates return NULL). */
typedef struct sim_misuse {
    const char *call;     /* Win32 name: "SubmitThreadpoolWork" */
    sim_object_kind kind; /* of the object named */
    uint32_t id;          /* of the object named (0 = unknown handle) */
    const char *problem;  /* "object already closed", ... */
} sim_misuse;

size_t sim_misuse_count(void);
bool sim_misuse_get(size_t index, sim_misuse *out);
/* "SubmitThreadpoolWork(work#3): object already closed"; returns snprintf's value. */
int sim_misuse_format(const sim_misuse *, char *buf, size_t size);

/* The announcement rule (sim_announce.c): each native call must follow, on
 * its thread, the core's `api/<call>` trace record naming its object and
 * argument, with no other record of that thread in between, and each such
 * record must be followed by its call; anything else is misuse ("not
 * announced: ...", "announced but never called").  A harness trace hook
 * feeds every record in.  Checking is on from sim_announce_check(true)
 * (runners turn it on when their hook sees every record) until
 * sim_announce_check(false). */
void sim_announce_check(bool on);
void sim_announce_note(const char *target, const char *event, uint64_t a, uint64_t b);

/* Blocks the core got from tph_os_alloc in this process and has not freed:
 * what a failed create must leave unchanged (the core's leak check). */
uint64_t sim_core_blocks_live(void);

/* The reason given to tph_os_fail_fast in this process, or NULL. */
const char *sim_fail_fast_reason(void);

/* ---- I/O ------------------------------------------------------------------- */
/* A simulated file handle, usable as file_handle of tph_os_io_create. */
void *sim_file_create(void);
/* Posts a completion for `file` to the pool its io object is bound to.  A post
 * with no start outstanding (or on an unknown/unbound file) is misuse and
 * returns false. */
bool sim_io_complete(void *file, void *overlapped, uint32_t io_result, uintptr_t bytes);

/* ---- events ---------------------------------------------------------------- */
bool sim_event_is_set(tph_os_event *event);

#endif
