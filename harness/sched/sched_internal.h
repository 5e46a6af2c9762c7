/* The controlled scheduler's run state, shared by sched*.c and the
 * strategies.  Exactly one run is active at a time (sched_current). */
#ifndef TPHEAL_SCHED_INTERNAL_H
#define TPHEAL_SCHED_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "fiber.h"
#include "pcg32.h"
#include "rt_impl.h"
#include "rt_sched.h"
#include "sched_strategy.h"

/* One scheduling point advances virtual time by 1 us (rt_now units are
 * 100 ns): time moves even in a run where nobody sleeps, and a busy thread
 * cannot hold the clock still while a timer is due. */
#define SCHED_STEP_TIME 10u
#define SCHED_NONE UINT32_MAX

typedef enum sched_tstate {
    TS_RUNNABLE,
    TS_LOCK,  /* wants a rt_lock */
    TS_WAIT,  /* in rt_wait on a waitq */
    TS_SLEEP, /* rt_sleep_until */
    TS_SETTLE, /* rt_settle_until: woken only by a time jump that finds nothing else due */
    TS_JOIN,  /* rt_join of an unfinished thread */
    TS_FINISHED
} sched_tstate;

struct rt_thread {
    uint32_t id;
    bool daemon;
    bool joined;
    bool woken;          /* rt_wait: woken (true) or timed out (false) */
    sched_tstate state;
    char name[32];
    rt_thread_fn fn;
    void *arg;
    sched_fiber fiber;
    uint32_t runnable_at; /* index in runnable[], SCHED_NONE when not runnable */
    uint32_t timed_at;    /* index in timed[], SCHED_NONE when no deadline */
    uint64_t deadline;
    const char *what;     /* rt_wait's description */
    /* What a blocked thread waits for, for sched_blocked_report, kept here
     * and never read back from the lock or queue: those may live on a
     * fiber's stack, and the report runs after the run abandoned its fibers
     * (ASan with detect_stack_use_after_return, clang >= 15's default, fails
     * that read: issue 11). */
    uintptr_t blocked_id;       /* TS_LOCK / TS_WAIT: the lock's or queue's id */
    rt_thread *blocked_thread;  /* TS_JOIN: the joined thread; TS_LOCK: the lock's
                                 * owner, kept current by sched_lock_take/give */
    struct sched_waitq *in_waitq; /* TS_WAIT: the queue a timeout removes it from
                                   * (read during the run only, never by the report) */
    rt_thread *qprev, *qnext; /* FIFO of a lock or waitq */
    rt_thread *joiner;
    uint64_t priority;    /* PCT: higher runs first */
    /* Race detector (sched_tsan.h): rt_lock_harness_only locks held, TSan
     * ignore regions open on this fiber, and whether the spawn gave this
     * thread an edge from its spawner. */
    uint32_t quiet_held;
    uint32_t diagnostic_held; /* diagnostic sections it is in: no point allowed */
    uint32_t atomic_held;     /* locks it holds that are marked rt_lock_atomic_sections */
    struct sched_lock *scoped_lock; /* the lock of the scoped section it is in, or NULL */
    uint32_t tsan_ignores;
    bool spawn_edge;
};

/* What an rt_lock / rt_waitq holds under the scheduler.  `gen` ties the
 * contents to a run: memory left by an earlier (abandoned) run reads as
 * empty, and ids number locks and queues per run in first-use order (for
 * reports that must not print addresses). */
typedef struct sched_lock {
    rt_thread *owner;
    rt_thread *head, *tail;
    uintptr_t gen;
    uintptr_t id;
    bool diagnostic; /* its holder took it with rt_lock_acquire_diagnostic */
    bool scoped;     /* its holder took it with rt_lock_acquire_scoped, unseen so far */
} sched_lock;
typedef struct sched_waitq {
    rt_thread *head, *tail;
    uintptr_t gen;
    uintptr_t id;
} sched_waitq;

typedef enum sched_item_kind { SCHED_ITEM_PICK, SCHED_ITEM_CHOOSE } sched_item_kind;
typedef struct sched_item {
    sched_item_kind kind;
    uint32_t value; /* thread id, or rt_choose result */
    uint64_t count; /* repetitions (picks only) */
} sched_item;

/* A ThreadSanitizer report caught during the run (sched_race.c): copied
 * out of TSan's report as it is raised, formatted after the run. */
#define SCHED_RACE_FRAMES 6
#define SCHED_RACE_THREADS 4
typedef struct sched_race_access {
    int tid, size, write, atomic;
    void *pc[SCHED_RACE_FRAMES];
} sched_race_access;
typedef struct sched_race {
    uint32_t reports;              /* every report raised during the run */
    char what[48];                 /* TSan's description: data-race, heap-use-after-free... */
    uint32_t naccess;
    sched_race_access access[2];   /* [0] the access that raised it, [1] the earlier one */
    uint32_t nthreads;
    int thread_tid[SCHED_RACE_THREADS];
    char thread_name[SCHED_RACE_THREADS][48];
} sched_race;

/* The behaviour class of a run (sched_trace.c): each object's highest
 * write and read level, each thread's last level and step count, and the
 * running step's footprint. */
typedef struct sched_trace_obj {
    uintptr_t key;
    uint32_t wl, rl;
} sched_trace_obj;
#define SCHED_TRACE_SPAWNS 8u /* children a step spawns that it keeps apart */
typedef struct sched_trace {
    sched_trace_obj *obj;   /* open addressing, key 0 free */
    size_t cap, n;
    uintptr_t *sorted;      /* the same keys in address order (forget) */
    size_t nsorted, sortcap;
    uint32_t *tlev, *tidx;  /* by thread id - 1 */
    uint32_t tcap;
    uint32_t floor, maxlev, time_wl;
    uint64_t hash;
    bool failed;            /* out of memory: no class for this run */
    /* the running step */
    bool open, writes_all, pending_all;
    uint32_t thread, nkeys, nwrites, nspawned;
    uintptr_t key[8];       /* POR_MAXK */
    bool write[8];
    uint32_t spawned[SCHED_TRACE_SPAWNS];
    uint64_t content;       /* rt_choose values */
} sched_trace;

typedef struct sched {
    sched_options opt;
    const sched_strategy *strategy;
    pcg32 rng;
    uintptr_t gen;

    rt_thread **threads; /* by id - 1 */
    uint32_t nthreads, cap;
    rt_thread **runnable;
    uint32_t nrunnable;
    rt_thread **timed;
    uint32_t ntimed;
    uint64_t next_deadline; /* <= every timed deadline (may be stale-low) */
    rt_thread *current;
    rt_thread *dead;        /* finished; its fiber is dropped by whoever runs next */
    uint32_t alive_nondaemon;
    uint32_t fibers_live, fibers_peak;
    uintptr_t nlocks, nqueues;

    uint64_t now, steps, choice_points, switches, choices;
    uint64_t preemptions; /* picks of another thread while the current one could go on */
    uint64_t step_time;     /* what a point adds to now: SCHED_STEP_TIME, 0 on idle time */
    uint64_t steps_at_jump; /* idle time: steps when the clock last jumped */
    uint64_t ihash, chash;

    sched_fiber main;
    sched_race race;
    sched_status status;
    bool por; /* dfs with partial-order reduction: every point feeds strategy_dfs_por.c */
    bool fp;  /* footprints recorded (every controlled run): sched_fp_* feed the class and the reduction */
    sched_trace tr;
    char reason[256];

    union {
        sched_pct_state pct;
    } st;

    /* replay */
    sched_item *replay;
    size_t nreplay, replay_pos;
    uint64_t replay_used; /* of replay[replay_pos].count */
    uint64_t diverged_at; /* replay_continue: sched_result.diverged_at */
    char diverged[200];

    /* recording (sched_schedule.c) */
    char *out;
    size_t outlen, outcap;
    uint32_t last_pick;
    uint64_t last_run;
    bool out_oom;
    uint64_t out_items;
} sched;

extern sched *sched_current;

/* sched_core.c */
void sched_tick_slow(sched *); /* a bound is crossed or a deadline is due */
void sched_reschedule(sched *);                 /* pick and switch; current may be blocked */
void sched_make_runnable(sched *, rt_thread *);
void sched_make_blocked(sched *, rt_thread *, sched_tstate);
void sched_timed_add(sched *, rt_thread *, uint64_t deadline);
void sched_timed_remove(sched *, rt_thread *);
#if defined(_MSC_VER)
#define SCHED_NORETURN __declspec(noreturn)
#else
#define SCHED_NORETURN _Noreturn
#endif
SCHED_NORETURN void sched_end(sched *, sched_status, const char *fmt, ...);
rt_thread *sched_spawn_thread(sched *, const char *name, rt_thread_fn, void *, bool daemon);
void sched_fail_oom(sched *);

/* sched_sync.c */
sched_lock *sched_lock_of(sched *, rt_lock *);
sched_waitq *sched_waitq_of(sched *, rt_waitq *);
/* How a section's steps touch its lock for the reduction: an ordinary one
 * writes it; a diagnostic one not at all; a scoped one reads it while nobody
 * can see it held (rt_lock_acquire_scoped). */
typedef enum sched_take { SCHED_TAKE_ORDINARY, SCHED_TAKE_DIAGNOSTIC, SCHED_TAKE_SCOPED } sched_take;
void sched_lock_take(sched *, sched_lock *, sched_take);
/* The scoped section `t` holds may be seen held (its holder blocked inside,
 * or a search on step time switched inside): from here its steps write the
 * lock, as an ordinary one's. */
void sched_lock_seen(sched *, rt_thread *t);
void sched_lock_give(sched *, sched_lock *);
void sched_q_remove(rt_thread **head, rt_thread **tail, rt_thread *);
void sched_q_push_back(rt_thread **head, rt_thread **tail, rt_thread *);
extern const rt_ops sched_controlled_ops;

/* sched_schedule.c */
void sched_record_start(sched *);
void sched_record_pick_slow(sched *, uint32_t id);
void sched_record_choose(sched *, uint32_t value);
char *sched_record_finish(sched *);
int sched_schedule_parse(const char *text, sched_item **items, size_t *n, sched_time_model *time, char *err,
                         size_t errlen);
/* The schedule's next choice; NULL / false when it stopped fitting and the
 * run continues (sched_options.replay_continue): the strategy chooses. */
rt_thread *sched_replay_pick(sched *);
bool sched_replay_choose(sched *, uint32_t n, uint32_t *v);

/* sched.c */
char *sched_blocked_report(sched *);

/* strategy_dfs_por.c, the partial-order reduction (s->por only).  A step is
 * what a thread does from one scheduling point to its next; these say what
 * the running step touches (docs in harness/sched/README.md, "Dependency"). */
void sched_por_touch(sched *, uintptr_t key, bool write);
void sched_por_forget(sched *, uintptr_t p, size_t n); /* rt_forget */
void sched_por_clock(sched *);           /* the step read or moved virtual time (step time only) */
void sched_por_all(sched *);             /* the step is dependent with every step */
void sched_por_time_jump(sched *);       /* idle time: the clock jumps, a barrier */
void sched_por_point(sched *);           /* a point: the running step ends */
void sched_por_spawned(sched *, rt_thread *); /* the running step spawned it */
void sched_por_end(sched *);             /* the run ends: the last step, and who never ran again */
#define SCHED_POR_THREAD_KEY(id) ((uintptr_t)(id) * 16u + 8u) /* no object lives there */
/* sched_trace.c: the behaviour class (every controlled run), and the
 * sched_fp_* calls that feed both it and the reduction (s->fp only). */
void sched_trace_touch(sched *, uintptr_t key, bool write);
void sched_trace_forget(sched *, uintptr_t p, size_t n);
void sched_trace_clock(sched *);
void sched_trace_all(sched *);
void sched_trace_time_jump(sched *);
void sched_trace_point(sched *);
void sched_trace_spawned(sched *, rt_thread *);
void sched_trace_choose(sched *, uint32_t value);
void sched_trace_end(sched *);
uint64_t sched_trace_hash(const sched *);
void sched_trace_free(sched *);
void sched_fp_touch(sched *, uintptr_t key, bool write);
void sched_fp_forget(sched *, uintptr_t p, size_t n);
void sched_fp_clock(sched *);
void sched_fp_all(sched *);
void sched_fp_time_jump(sched *);
void sched_fp_point(sched *);
void sched_fp_spawned(sched *, rt_thread *);
static inline void sched_touch(sched *s, const void *obj, bool write) {
    if (s->fp) sched_fp_touch(s, (uintptr_t)obj, write);
}

/* One scheduling point's clock and bounds; inline because it runs at every
 * point and the common case is two increments and a compare. */
static inline void sched_tick(sched *s) {
    s->steps++;
    s->now += s->step_time;
    if (s->steps > s->opt.max_steps || s->now >= s->next_deadline ||
        s->now > s->opt.max_virtual_time)
        sched_tick_slow(s);
}

/* Run-length coding: the common case extends the current run. */
static inline void sched_record_pick(sched *s, uint32_t id) {
    if (s->last_run && s->last_pick == id) s->last_run++;
    else sched_record_pick_slow(s, id);
}

static inline uint64_t sched_mix(uint64_t h, uint64_t x) {
    h ^= x;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

#endif
