/* The pool's happens-before contract: every edge the race build (TPHEAL_TSAN)
 * gives ThreadSanitizer between the core's threads on the model, and nothing
 * more.  Each is one row here, with what releases it, what acquires it, and
 * the Microsoft page it rests on.  The model's own lock orders nothing
 * (rt_lock_harness_only in sim_process_begin), fiber switches order nothing
 * (harness/sched/fiber_tsan.h), and the model is not instrumented: an access
 * of the core is ordered after another only through these rows, the
 * scheduler's pthread-like edges for the harness's own threads
 * (harness/sched/sched_tsan.h), and the core's own code.  docs/races.md
 * explains each row and what is deliberately absent.
 *
 * Sync addresses are per object: the row's byte in the object's hb[] (never
 * freed before the process ends: the model tombstones), or, for MUTEX, the
 * core's mutex itself.  An acquire takes in every release made so far on the
 * address, so a callback start is ordered after every earlier submit of its
 * object, not only the one that queued it -- an over-approximation the
 * pages allow (a callback cannot tell which submit it serves).
 *
 * X(name, released by, acquired by, page) */
#ifndef TPHEAL_SIM_HB_H
#define TPHEAL_SIM_HB_H

#define SIM_HB_LEARN "https://learn.microsoft.com/en-us/windows/win32/"
#define SIM_HB_EDGES(X)                                                                                             \
    X(SUBMIT, "SubmitThreadpoolWork, SetThreadpoolWait, StartThreadpoolIo, an I/O completion",                      \
      "the start of a callback of that object",                                                                     \
      SIM_HB_LEARN "api/threadpoolapiset/nf-threadpoolapiset-submitthreadpoolwork")                                 \
    X(CALLBACK_RETURN, "the return of a callback of an object",                                                     \
      "the return of WaitForThreadpool{Work,Wait,Timer,Io}Callbacks on it (the drain every close begins with)",     \
      SIM_HB_LEARN "api/threadpoolapiset/nf-threadpoolapiset-waitforthreadpoolworkcallbacks")                       \
    X(IO_CANCEL, "CancelThreadpoolIo (it ends an open start)",                                                      \
      "the return of WaitForThreadpoolIoCallbacks, which waits for open starts too (io.wait_blocks_on_open_start)", \
      SIM_HB_LEARN "api/threadpoolapiset/nf-threadpoolapiset-cancelthreadpoolio")                                   \
    X(EVENT_SET, "SetEvent", "the wait callback it queues; a WaitForSingleObject it satisfies",                     \
      SIM_HB_LEARN "api/synchapi/nf-synchapi-setevent")                                                             \
    X(TIMER_SET, "SetThreadpoolTimer", "the start of the callback of each tick it arms",                            \
      SIM_HB_LEARN "api/threadpoolapiset/nf-threadpoolapiset-setthreadpooltimer")                                   \
    X(GROUP_RELEASE, "the return of a callback of a cleanup-group member",                                          \
      "the return of CloseThreadpoolCleanupGroupMembers that released the member",                                  \
      SIM_HB_LEARN "api/threadpoolapiset/nf-threadpoolapiset-closethreadpoolcleanupgroupmembers")                   \
    X(MUTEX, "tph_os_mutex_unlock (ReleaseSRWLockExclusive)", "the next tph_os_mutex_lock of that mutex",           \
      SIM_HB_LEARN "sync/slim-reader-writer--srw--locks")                                                           \
    X(ATOMICS, "every tph_os_ atomic (Interlocked*: full barriers)",                                                \
      "the atomics after it in their single total order -- TSan's own C11 seq_cst model, os_sim_atomic.c",          \
      SIM_HB_LEARN "sync/interlocked-variable-access")

typedef enum sim_hb_edge {
#define SIM_HB_ENUM(name, rel, acq, page) SIM_HB_##name,
    SIM_HB_EDGES(SIM_HB_ENUM)
#undef SIM_HB_ENUM
    SIM_HB_EDGE_COUNT
} sim_hb_edge;

/* The rows, for the docs check (ci/test_races.py reads them from
 * `tpheal-harness races --json`). */
typedef struct sim_hb_row {
    const char *name, *released_by, *acquired_by, *page;
} sim_hb_row;
extern const sim_hb_row sim_hb_rows[SIM_HB_EDGE_COUNT];

/* The row's release / acquire on `sync` (an object's hb[] byte, or the
 * mutex); no-ops outside the race build.  ATOMICS is never passed: TSan sees
 * those atomics itself. */
void sim_hb_release(sim_hb_edge, const void *sync);
void sim_hb_acquire(sim_hb_edge, const void *sync);

#endif
