/* Internal state of the simulated pool, shared by the model files
 * (sim_*.c, os_sim.c).  Not for users: they see sim.h and core/src/os.h.
 *
 * Concurrency: one rt_lock per simulated process (P->lock) guards everything
 * below.  One lock keeps the scheduling points per scenario in the low
 * hundreds (the controlled scheduler's benchmark budget) and makes every
 * model transition atomic, which is what the oracles read.
 * Callbacks always run with the lock released.
 */
#ifndef TPHEAL_SIM_MODEL_H
#define TPHEAL_SIM_MODEL_H

#include "os.h"
#include "rt.h"
#include "sim.h"
#include "sim_hb.h"

typedef struct sim_obj sim_obj;

/* A callback waiting in a pool queue. */
typedef struct sim_packet {
    struct sim_packet *next;
    sim_obj *obj;
    uint32_t wait_result;
    void *overlapped;
    uint32_t io_result;
    uintptr_t bytes;
    sim_obj *signal_event; /* a wait's packet queued by this event's signal (EVENT_SET) */
} sim_packet;

typedef struct sim_worker {
    struct sim_worker *next;     /* in its pool's list of live workers */
    struct sim_worker *all_next; /* every worker of the process (joined at end) */
    sim_obj *pool;
    rt_thread *thread;
    rt_waitq wake;
    uint32_t id;
    bool started;    /* its loop ran: counts towards a warm pool */
    bool idle;
    bool signalled;  /* picked for a queued packet, not yet awake */
    bool retired;    /* accounted as retired: exits when it next runs */
    uint64_t start_at; /* slow creation (sim_pool_set_start_delay): runs from then on, 0 = at once */
    uint64_t idle_since;
} sim_worker;

typedef struct sim_queue {
    sim_packet *head, *tail;
} sim_queue;

/* One struct for every kind (pools, objects, events, files): the model is
 * small and a flat record keeps the tombstone table trivial. */
struct sim_obj {
    sim_object_kind kind;
    unsigned char hb[SIM_HB_EDGE_COUNT]; /* sync addresses of the contract's rows (sim_hb.h) */
    uint32_t id;    /* per kind, creation order (default pool: 0) */
    uint32_t index; /* in P->objs; encodes the handle */
    bool closed;
    bool freed;

    /* pool-bound objects (work, wait, timer, io) */
    sim_obj *pool;
    sim_obj *group;
    tph_os_group_cancel_cb group_cancel;
    void *ctx;
    union {
        tph_os_work_cb work;
        tph_os_wait_cb wait;
        tph_os_timer_cb timer;
        tph_os_io_cb io;
    } cb;
    int priority;
    bool runs_long;
    uint32_t queued, running;
    uint64_t run_count, cancelled, group_cancel_calls;
    rt_waitq idle_q; /* woken when running drops to 0 */

    /* waits and timers */
    bool armed;
    bool timed;        /* in P->timed */
    uint64_t deadline; /* wait timeout / timer fire point (rt units) */
    sim_obj *event;    /* wait: the event it is registered on */
    sim_obj *ev_next;  /* wait: next in the event's registration list */
    uint64_t due;      /* timer: nominal due time of the next tick */
    uint32_t period_ms, window_ms;

    /* io */
    sim_obj *file;
    uint32_t io_pending;

    /* events */
    bool manual_reset, set;
    sim_obj *ev_head, *ev_tail;
    rt_waitq ev_q;

    /* files */
    sim_obj *io;

    /* pools */
    bool is_default;
    uint32_t min_threads, max_threads;
    uint32_t nworkers, nstarted, nidle;
    sim_worker *workers;
    sim_queue queue[3];
    uint32_t nqueued, nrunning, bound;
    bool severed;
    bool factory_held;
    uint64_t stalls, releases, workers_created, workers_retired, callbacks_run;
    sim_stall stall;
    uint64_t start_delay; /* sim_pool_set_start_delay */
    uint64_t idle_timeout;
};

typedef struct sim_fault_state {
    sim_fault armed;
    uint64_t calls, matching, fired;
} sim_fault_state;

typedef struct sim_process {
    rt_lock lock;
    const void *runtime; /* rt_installed() at begin: native runs join threads at end */
    sim_config cfg;
    sim_stall private_stall;
    sim_sever_watch_fn sever_watch; /* sim_set_sever_watch */
    void *sever_watch_ctx;

    sim_obj **objs;
    uint32_t nobjs, cap;
    uint32_t next_id[SIM_OBJ_KIND_COUNT];
    sim_obj *default_pool;
    uint32_t npools;

    struct sim_alloc_hdr *allocs; /* every live allocation of the process */

    sim_misuse *misuse;
    size_t nmisuse, capmisuse;

    sim_fault_state faults[SIM_FAULT_KIND_COUNT];

    sim_worker *all_workers;
    uint32_t next_worker_id;

    /* timer service */
    rt_thread *service;
    rt_waitq service_q;
    uint64_t service_sleep_until; /* what the service waits for (RT_FOREVER: none) */
    sim_obj **timed;
    uint32_t ntimed, captimed;

    bool shutdown;
    char fail_fast_reason[256];
    bool fail_fasted;
    uint64_t core_blocks_live; /* tph_os_alloc blocks not yet tph_os_free'd */
    /* Addresses of core blocks tph_os_free'd and not handed out again: a
     * callback whose context is one of them would run into freed memory
     * (sim_freed_context). */
    void **freed_core;
    uint32_t nfreed_core, capfreed_core;
} sim_process;

extern sim_process *sim_P;
#define P sim_P

/* ---- sim_process.c --------------------------------------------------------- */
/* Aborts with a message when no simulated process is active (a harness bug). */
void sim_need_process(const char *call);
void sim_lock(void);
void sim_unlock(void);
/* Scoped sections (rt_lock_acquire_scoped): a seam call's section names
 * what it touches, so the bounded search orders two of them only when they
 * share something (harness/sim/README.md, "Scoped sections").  The units:
 * a pool-bound object's state is its pool's, a pool, event, group or file
 * is its own (sim_touch_obj); the handle table, the timer service, thread
 * creation, the misuse list, a fault's counters and the freed core blocks
 * are one each, named by their field of P (sim_touch).  The functions that
 * reach an object or such a field announce it where they reach it, so a
 * section built of them is covered; one that reads anything else -- every
 * object, say -- stays ordinary (sim_lock). */
void sim_lock_scoped(void);
void sim_touch(const void *key);
void sim_touch_obj(const sim_obj *o);
/* rt_wait on the model's lock in a section about `o`: the wait ends the
 * step that named o, so the step after it names o again (what a scoped
 * section needs; an ordinary one writes the lock anyway). */
void sim_wait_about(rt_waitq *q, uint64_t deadline, const char *what, const sim_obj *o);
/* Model memory: tracked, freed at process end; aborts when malloc fails. */
void *sim_zalloc(size_t);
void sim_free(void *);
/* Failable allocation for tph_os_alloc (NULL when the heap is exhausted). */
void *sim_alloc_tracked(size_t);
sim_obj *sim_obj_new(sim_object_kind kind);
void *sim_handle_of(const sim_obj *);
/* The object a handle names, or NULL (handle unknown / wrong kind). */
sim_obj *sim_obj_from_handle(const void *handle, sim_object_kind kind);
void sim_report_misuse(const char *call, const sim_obj *o, sim_object_kind kind, const char *problem);
/* Looks a handle up for `call`; reports and returns NULL when it is unknown,
 * or (when !allow_closed) already closed. */
sim_obj *sim_use(const void *handle, sim_object_kind kind, const char *call, bool allow_closed);
/* Counts a failable call; true when the armed fault says this one fails. */
bool sim_fault_hit(sim_fault_kind kind, uintptr_t pool_key);

/* ---- sim_announce.c -------------------------------------------------------- */
/* The registry's and a user's key of a pool: 0 for the default pool. */
uintptr_t sim_pool_key_of(const sim_obj *pool);
/* The pool a handle's object runs on (the pool itself for a pool), or NULL:
 * the registry announces its repair work by its pool's key. */
const sim_obj *sim_announced_pool(const void *handle, sim_object_kind kind);
/* Lock held, at the top of an announced call: the calling thread's last api
 * record must name `call`, carry a == a1 or a2, and b; misuse otherwise. */
void sim_expect_announced(const char *call, uintptr_t a1, uintptr_t a2, uint64_t b);

/* ---- os_sim.c ---------------------------------------------------------------- */
/* Lock held: is `ctx` a core block the core has freed?  A callback about to
 * run with it is the teardown bug the core's drains exist to prevent
 * (reported as misuse and not run, instead of running into freed memory). */
bool sim_freed_context(const void *ctx);

/* ---- sim_pool.c ------------------------------------------------------------ */
sim_obj *sim_pool_new(bool is_default);
/* The pool an env names (default when env or env->pool is NULL); reports and
 * returns NULL for a closed/unknown pool. */
sim_obj *sim_env_pool(const tph_os_env *env, const char *call);
void sim_enqueue(sim_obj *o, const sim_packet *proto);
/* Removes o's queued packets; returns how many. */
uint32_t sim_drop_packets(sim_obj *o);
/* The stall rule: a cancellation dropped `dropped` queued wait packets. */
void sim_stall_check(sim_obj *pool, uint32_t dropped);
/* A SubmitThreadpoolWork reached the pool: releases a severed pool. */
void sim_pool_release(sim_obj *pool);
/* Frees a closed object whose callbacks are all done. */
void sim_maybe_free(sim_obj *o);
/* Waits (lock held) until o has nothing running and, when !cancel_done, nothing
 * queued either.  Returns early at shutdown.  The return acquires `edge`
 * (CALLBACK_RETURN, or GROUP_RELEASE for a group's release) of o. */
void sim_wait_callbacks(sim_obj *o, bool include_queued, const char *what, sim_hb_edge edge);
void sim_stop_workers_locked(void);

/* ---- sim_object.c ---------------------------------------------------------- */
/* Creates a pool-bound object for a Create* call: checks the env's pool and
 * group, counts the failable call (fault `fk`).  NULL on fault or misuse. */
sim_obj *sim_bound_new(sim_object_kind kind, sim_fault_kind fk, const tph_os_env *env, void *ctx,
                       const char *call);
/* Close* common part: marks closed, leaves its group. */
void sim_close_common(sim_obj *o);

/* ---- sim_timer.c ----------------------------------------------------------- */
void sim_timed_add(sim_obj *o);
void sim_timed_remove(sim_obj *o);

/* ---- sim_wait.c ------------------------------------------------------------ */
void sim_wait_unarm(sim_obj *w);
/* `signal`: the event whose SetEvent fired it (EVENT_SET), or NULL. */
void sim_wait_fire(sim_obj *w, uint32_t result, sim_obj *signal);

/* ---- sim_event.c ----------------------------------------------------------- */
void sim_event_register(sim_obj *ev, sim_obj *w);
void sim_event_unregister(sim_obj *ev, sim_obj *w);

#endif
