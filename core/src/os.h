/* The OS seam: the only way the core reaches the operating system.
 *
 * Every function here is implemented by exactly one backend per build:
 *   core/src/win/os_win32.c   the real Windows thread pool (Win32 API)
 *   harness/sim/os_sim.c      the modelled Windows pool (harness/sim/)
 * The core (the .c files of core/src/) calls nothing else that touches threads, time,
 * memory or the pool.  That is what lets the harness run the very code a
 * Windows program links under a deterministic scheduler: every call below is
 * a scheduling point in the simulated backend.
 *
 * Shapes follow the Win32 calls they stand for, so the win32 backend is a
 * thin cast-and-call layer and a reader who knows the Win32 API knows this.
 * Handles are opaque; in the win32 backend they are the PTP_* / HANDLE values.
 */
#ifndef TPHEAL_OS_H
#define TPHEAL_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && !defined(_WIN64)
#define TPH_OS_CALLBACK __stdcall
#else
#define TPH_OS_CALLBACK
#endif

#if defined(_MSC_VER)
#define TPH_NORETURN __declspec(noreturn)
#else
#define TPH_NORETURN _Noreturn
#endif

typedef struct tph_os_pool tph_os_pool;         /* PTP_POOL; NULL = process default pool */
typedef struct tph_os_group tph_os_group;       /* PTP_CLEANUP_GROUP */
typedef struct tph_os_work tph_os_work;         /* PTP_WORK */
typedef struct tph_os_wait tph_os_wait;         /* PTP_WAIT */
typedef struct tph_os_timer tph_os_timer;       /* PTP_TIMER */
typedef struct tph_os_io tph_os_io;             /* PTP_IO */
typedef struct tph_os_event tph_os_event;       /* HANDLE of a waitable object */
typedef struct tph_os_instance tph_os_instance; /* PTP_CALLBACK_INSTANCE */

typedef void(TPH_OS_CALLBACK *tph_os_work_cb)(tph_os_instance *, void *ctx, tph_os_work *);
/* result: TPH_OS_WAIT_SIGNALED or TPH_OS_WAIT_TIMEOUT (WAIT_OBJECT_0 / WAIT_TIMEOUT) */
typedef void(TPH_OS_CALLBACK *tph_os_wait_cb)(tph_os_instance *, void *ctx, tph_os_wait *,
                                              uint32_t result);
typedef void(TPH_OS_CALLBACK *tph_os_timer_cb)(tph_os_instance *, void *ctx, tph_os_timer *);
typedef void(TPH_OS_CALLBACK *tph_os_io_cb)(tph_os_instance *, void *ctx, void *overlapped,
                                            uint32_t io_result, uintptr_t bytes, tph_os_io *);
/* PTP_CLEANUP_GROUP_CANCEL_CALLBACK: once per member on a cancelling release */
typedef void(TPH_OS_CALLBACK *tph_os_group_cancel_cb)(void *object_ctx, void *cleanup_ctx);

#define TPH_OS_WAIT_SIGNALED 0x00000000u
#define TPH_OS_WAIT_TIMEOUT 0x00000102u
#define TPH_OS_INFINITE 0xFFFFFFFFu

enum { TPH_OS_PRIORITY_HIGH = 0, TPH_OS_PRIORITY_NORMAL = 1, TPH_OS_PRIORITY_LOW = 2 };

/* TP_CALLBACK_ENVIRON, reduced to what the core sets. */
typedef struct tph_os_env {
    tph_os_pool *pool;                  /* NULL: the process default pool */
    tph_os_group *group;                /* NULL: no cleanup group */
    tph_os_group_cancel_cb group_cancel;/* only with group */
    int priority;                       /* TPH_OS_PRIORITY_* */
    bool runs_long;
} tph_os_env;

/* ---- pools ---------------------------------------------------------------- */
tph_os_pool *tph_os_pool_create(void);                     /* NULL on failure */
void tph_os_pool_set_max(tph_os_pool *, uint32_t max);     /* SetThreadpoolThreadMaximum */
bool tph_os_pool_set_min(tph_os_pool *, uint32_t min);     /* SetThreadpoolThreadMinimum */
void tph_os_pool_close(tph_os_pool *);                     /* frees once no object is bound */

/* ---- cleanup groups ------------------------------------------------------- */
tph_os_group *tph_os_group_create(void);
void tph_os_group_close_members(tph_os_group *, bool cancel_pending, void *cleanup_ctx);
void tph_os_group_close(tph_os_group *);

/* ---- work ----------------------------------------------------------------- */
tph_os_work *tph_os_work_create(tph_os_work_cb, void *ctx, const tph_os_env *);
void tph_os_work_submit(tph_os_work *);
void tph_os_work_wait(tph_os_work *, bool cancel_pending);
void tph_os_work_close(tph_os_work *);

/* ---- waits ---------------------------------------------------------------- */
tph_os_wait *tph_os_wait_create(tph_os_wait_cb, void *ctx, const tph_os_env *);
/* event NULL disarms (SetThreadpoolWait(w, NULL, NULL)); timeout_ms TPH_OS_INFINITE = none.
 * Backends use SetThreadpoolWaitEx when the OS has it. */
void tph_os_wait_set(tph_os_wait *, tph_os_event *event, uint32_t timeout_ms);
void tph_os_wait_wait(tph_os_wait *, bool cancel_pending);
void tph_os_wait_close(tph_os_wait *);

/* ---- timers --------------------------------------------------------------- */
tph_os_timer *tph_os_timer_create(tph_os_timer_cb, void *ctx, const tph_os_env *);
/* due == NULL disarms: no new ticks; a tick already queued still runs (as the
 * SetThreadpoolTimer documentation says and Wine 8.0 does).  *due follows FILETIME:
 * negative = relative, in 100 ns units; positive = absolute system time in
 * 100 ns units (tph_os_system_time's clock); 0 = now. */
void tph_os_timer_set(tph_os_timer *, const int64_t *due, uint32_t period_ms, uint32_t window_ms);
bool tph_os_timer_is_set(tph_os_timer *);
void tph_os_timer_wait(tph_os_timer *, bool cancel_pending);
void tph_os_timer_close(tph_os_timer *);

/* ---- I/O ------------------------------------------------------------------ */
tph_os_io *tph_os_io_create(void *file_handle, tph_os_io_cb, void *ctx, const tph_os_env *);
void tph_os_io_start(tph_os_io *);   /* StartThreadpoolIo  */
void tph_os_io_cancel(tph_os_io *);  /* CancelThreadpoolIo */
void tph_os_io_wait(tph_os_io *, bool cancel_pending);
void tph_os_io_close(tph_os_io *);

/* ---- events (waitable handles) -------------------------------------------- */
tph_os_event *tph_os_event_create(bool manual_reset, bool initially_set); /* NULL on failure */
void tph_os_event_set(tph_os_event *);
void tph_os_event_reset(tph_os_event *);
/* WaitForSingleObject; returns TPH_OS_WAIT_SIGNALED or TPH_OS_WAIT_TIMEOUT */
uint32_t tph_os_event_wait(tph_os_event *, uint32_t timeout_ms);
void tph_os_event_close(tph_os_event *);

/* ---- mutex ---------------------------------------------------------------- */
/* All-zero bytes is an unlocked mutex in every backend, so a static one needs
 * no initialiser call (the registry's and the healer slot's are static). */
typedef struct tph_os_mutex {
    uintptr_t word[8];
} tph_os_mutex;
#define TPH_OS_MUTEX_INIT {{0, 0, 0, 0, 0, 0, 0, 0}}
void tph_os_mutex_lock(tph_os_mutex *);
void tph_os_mutex_unlock(tph_os_mutex *);

/* The diagnostics lock: a tph_os_mutex that orders the trace's own state (its
 * ring, filter and hook) and is no synchronisation of the program.  Every real
 * backend makes it the same lock as tph_os_mutex_lock.  The model gives it no
 * happens-before edge and leaves what its holder does unchecked: a user's
 * process with the trace neither armed nor hooked never takes it, but the
 * scenario runner always hooks the trace, so as a plain mutex it ordered any
 * two traced steps of the core -- the race build then saw an edge at every
 * record that the user's process lacks, and races between records hid. */
void tph_os_diag_lock(tph_os_mutex *);
void tph_os_diag_unlock(tph_os_mutex *);

/* ---- atomics: all sequentially consistent --------------------------------- */
uint32_t tph_os_load32(const volatile uint32_t *);
void tph_os_store32(volatile uint32_t *, uint32_t);
uint32_t tph_os_fetch_add32(volatile uint32_t *, uint32_t);            /* returns old */
uint32_t tph_os_fetch_sub32(volatile uint32_t *, uint32_t);            /* returns old, wraps */
bool tph_os_cas32(volatile uint32_t *, uint32_t *expected, uint32_t desired);
uint64_t tph_os_load64(const volatile uint64_t *);
void tph_os_store64(volatile uint64_t *, uint64_t);
uint64_t tph_os_fetch_add64(volatile uint64_t *, uint64_t);
uint64_t tph_os_fetch_sub64(volatile uint64_t *, uint64_t);
bool tph_os_cas64(volatile uint64_t *, uint64_t *expected, uint64_t desired);
uint64_t tph_os_fetch_max64(volatile uint64_t *, uint64_t);            /* returns old */
/* Atomic like the above, but never a scheduling point of the simulated
 * backend.  For the trace gate only: it is read at every trace site, and a
 * yield there would make each trace point an interleaving point and shift the
 * schedule of every recorded seed.  Atomic all the same because the gate
 * changes while other threads read it (the harness unhooks at the end of a
 * run while the healer still ticks: a TSan-reported race on a plain volatile). */
uint32_t tph_os_gate_load32(const volatile uint32_t *);
void tph_os_gate_store32(volatile uint32_t *, uint32_t);
void *tph_os_load_ptr(void *const volatile *);
void tph_os_store_ptr(void *volatile *, void *);
bool tph_os_cas_ptr(void *volatile *, void **expected, void *desired);

/* ---- time, threads, memory, process --------------------------------------- */
/* QueryInterruptTime (fallback QueryUnbiasedInterruptTime): 100 ns units,
 * advancing on the system tick (15.625 ms), so equal stamps happen. */
uint64_t tph_os_interrupt_time(void);
/* GetSystemTimeAsFileTime: the clock absolute timer due times are on. */
uint64_t tph_os_system_time(void);
uint32_t tph_os_thread_id(void);
void *tph_os_alloc(size_t);   /* NULL on failure: every caller handles it */
void tph_os_free(void *);
/* Ends the process (fail-fast).  The simulated backend ends the simulated
 * process and reports it; it never returns either way. */
TPH_NORETURN void tph_os_fail_fast(const char *reason);

#endif
