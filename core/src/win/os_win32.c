/* The win32 backend of the OS seam (core/src/os.h): the real Windows thread pool.
 *
 * A thin cast-and-call layer.  Every seam handle IS the Win32 handle (PTP_WORK,
 * PTP_TIMER, HANDLE, ...), and the seam's callback typedefs have the Win32
 * callback ABI (TPH_OS_CALLBACK = __stdcall on x86, nothing on x64), so the
 * core's trampolines are handed to the pool unchanged.
 *
 * Three calls are resolved at run time, not linked: QueryInterruptTime,
 * SetThreadpoolTimerEx and SetThreadpoolWaitEx.  Wine 8.0 has none of them; a
 * program that imports them still loads there and then crashes at the first
 * call (measured: docs/pool-facts.md), so a missing export must be seen
 * before the call, which only GetProcAddress does.
 */
#if !defined(_WIN32_WINNT) || _WIN32_WINNT < 0x0601
#undef _WIN32_WINNT
#define _WIN32_WINNT 0x0601 /* Windows 7: callback priority, fail-fast, unbiased time */
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>

#include "../os.h"

/* The zero-bytes-is-unlocked promise of tph_os_mutex holds because
 * SRWLOCK_INIT is all zero and the lock fits in the seam's storage. */
_Static_assert(sizeof(SRWLOCK) <= sizeof(tph_os_mutex), "SRWLOCK must fit in tph_os_mutex");
_Static_assert(sizeof(LONG) == sizeof(uint32_t), "Interlocked* on LONG stands for uint32_t");
_Static_assert(sizeof(LONG64) == sizeof(uint64_t), "Interlocked*64 on LONG64 stands for uint64_t");
_Static_assert(TPH_OS_WAIT_SIGNALED == WAIT_OBJECT_0, "wait result values are Win32's");
_Static_assert(TPH_OS_WAIT_TIMEOUT == WAIT_TIMEOUT, "wait result values are Win32's");
_Static_assert(TPH_OS_INFINITE == INFINITE, "INFINITE is Win32's");
_Static_assert((int)TPH_OS_PRIORITY_HIGH == (int)TP_CALLBACK_PRIORITY_HIGH &&
                   (int)TPH_OS_PRIORITY_NORMAL == (int)TP_CALLBACK_PRIORITY_NORMAL &&
                   (int)TPH_OS_PRIORITY_LOW == (int)TP_CALLBACK_PRIORITY_LOW,
               "priorities are Win32's");

/* ---- optional exports, resolved once ------------------------------------- */

typedef VOID(WINAPI *query_interrupt_time_fn)(PULONGLONG);
typedef BOOL(WINAPI *set_timer_ex_fn)(PTP_TIMER, PFILETIME, DWORD, DWORD);
typedef BOOL(WINAPI *set_wait_ex_fn)(PTP_WAIT, HANDLE, PFILETIME, PVOID);

/* A resolved pointer, or this sentinel for "looked, not there". */
#define UNRESOLVED ((void *)0)
#define MISSING ((void *)1)

static void *volatile g_query_interrupt_time;
static void *volatile g_set_timer_ex;
static void *volatile g_set_wait_ex;

/* FARPROC -> void (*)(void) -> data pointer would not be portable C; keep the
 * function pointer in a union with a data pointer instead. */
typedef union proc_slot {
    FARPROC proc;
    void *data;
} proc_slot;

static void *resolve(void *volatile *slot, const char *name) {
    void *cached = *slot;
    if (cached != UNRESOLVED) return cached == MISSING ? NULL : cached;
    /* kernelbase.dll exports these on Windows 10+; kernel32 forwards some. */
    static const wchar_t *const modules[] = {L"kernelbase.dll", L"kernel32.dll"};
    proc_slot found;
    found.data = NULL;
    for (size_t i = 0; i < sizeof modules / sizeof modules[0] && !found.data; i++) {
        HMODULE m = GetModuleHandleW(modules[i]);
        if (m) found.proc = GetProcAddress(m, name);
    }
    /* Racing resolvers store the same value: a plain pointer store is enough. */
    InterlockedExchangePointer((PVOID volatile *)slot, found.data ? found.data : MISSING);
    return found.data;
}

/* Converting a resolved address back to a callable pointer goes through the
 * same union, so no data<->function pointer cast appears. */
static query_interrupt_time_fn get_query_interrupt_time(void) {
    proc_slot s;
    s.data = resolve(&g_query_interrupt_time, "QueryInterruptTime");
    return s.data ? (query_interrupt_time_fn)(void (*)(void))s.proc : NULL;
}
static set_timer_ex_fn get_set_timer_ex(void) {
    proc_slot s;
    s.data = resolve(&g_set_timer_ex, "SetThreadpoolTimerEx");
    return s.data ? (set_timer_ex_fn)(void (*)(void))s.proc : NULL;
}
static set_wait_ex_fn get_set_wait_ex(void) {
    proc_slot s;
    s.data = resolve(&g_set_wait_ex, "SetThreadpoolWaitEx");
    return s.data ? (set_wait_ex_fn)(void (*)(void))s.proc : NULL;
}

/* ---- callback environments ----------------------------------------------- */

/* Builds the TP_CALLBACK_ENVIRON a Create* call reads.  The pool copies what
 * it needs at creation, so the environment lives on the caller's stack. */
static void env_init(TP_CALLBACK_ENVIRON *cbe, const tph_os_env *env) {
    InitializeThreadpoolEnvironment(cbe);
    if (!env) return;
    if (env->pool) SetThreadpoolCallbackPool(cbe, (PTP_POOL)env->pool);
    if (env->group)
        SetThreadpoolCallbackCleanupGroup(
            cbe, (PTP_CLEANUP_GROUP)env->group,
            (PTP_CLEANUP_GROUP_CANCEL_CALLBACK)(void (*)(void))env->group_cancel);
    /* An out-of-range priority would index past the pool's queues; the seam
     * maps it to normal rather than pass it on. */
    int prio = env->priority;
    if (prio < TPH_OS_PRIORITY_HIGH || prio > TPH_OS_PRIORITY_LOW) prio = TPH_OS_PRIORITY_NORMAL;
    SetThreadpoolCallbackPriority(cbe, (TP_CALLBACK_PRIORITY)prio);
    if (env->runs_long) SetThreadpoolCallbackRunsLong(cbe);
}

/* ---- pools ---------------------------------------------------------------- */

tph_os_pool *tph_os_pool_create(void) { return (tph_os_pool *)CreateThreadpool(NULL); }

void tph_os_pool_set_max(tph_os_pool *p, uint32_t max) {
    if (p) SetThreadpoolThreadMaximum((PTP_POOL)p, (DWORD)max);
}

bool tph_os_pool_set_min(tph_os_pool *p, uint32_t min) {
    if (!p) return false; /* the default pool's limits are not ours to set */
    return SetThreadpoolThreadMinimum((PTP_POOL)p, (DWORD)min) != FALSE;
}

void tph_os_pool_close(tph_os_pool *p) {
    if (p) CloseThreadpool((PTP_POOL)p);
}

/* ---- cleanup groups ------------------------------------------------------- */

tph_os_group *tph_os_group_create(void) { return (tph_os_group *)CreateThreadpoolCleanupGroup(); }

void tph_os_group_close_members(tph_os_group *g, bool cancel_pending, void *cleanup_ctx) {
    CloseThreadpoolCleanupGroupMembers((PTP_CLEANUP_GROUP)g, cancel_pending ? TRUE : FALSE,
                                       cleanup_ctx);
}

void tph_os_group_close(tph_os_group *g) { CloseThreadpoolCleanupGroup((PTP_CLEANUP_GROUP)g); }

/* ---- work ----------------------------------------------------------------- */

tph_os_work *tph_os_work_create(tph_os_work_cb cb, void *ctx, const tph_os_env *env) {
    TP_CALLBACK_ENVIRON cbe;
    env_init(&cbe, env);
    PTP_WORK w = CreateThreadpoolWork((PTP_WORK_CALLBACK)(void (*)(void))cb, ctx, &cbe);
    DestroyThreadpoolEnvironment(&cbe);
    return (tph_os_work *)w;
}

void tph_os_work_submit(tph_os_work *w) { SubmitThreadpoolWork((PTP_WORK)w); }

void tph_os_work_wait(tph_os_work *w, bool cancel_pending) {
    WaitForThreadpoolWorkCallbacks((PTP_WORK)w, cancel_pending ? TRUE : FALSE);
}

void tph_os_work_close(tph_os_work *w) { CloseThreadpoolWork((PTP_WORK)w); }

/* ---- waits ---------------------------------------------------------------- */

tph_os_wait *tph_os_wait_create(tph_os_wait_cb cb, void *ctx, const tph_os_env *env) {
    TP_CALLBACK_ENVIRON cbe;
    env_init(&cbe, env);
    PTP_WAIT w = CreateThreadpoolWait((PTP_WAIT_CALLBACK)(void (*)(void))cb, ctx, &cbe);
    DestroyThreadpoolEnvironment(&cbe);
    return (tph_os_wait *)w;
}

/* A FILETIME for a relative interval: negative 100 ns units. */
static FILETIME relative_ms(uint32_t ms) {
    ULARGE_INTEGER u;
    u.QuadPart = (ULONGLONG)(-(LONGLONG)ms * 10000);
    FILETIME ft;
    ft.dwLowDateTime = u.LowPart;
    ft.dwHighDateTime = u.HighPart;
    return ft;
}

void tph_os_wait_set(tph_os_wait *w, tph_os_event *event, uint32_t timeout_ms) {
    FILETIME ft;
    PFILETIME timeout = NULL;
    if (event && timeout_ms != TPH_OS_INFINITE) {
        ft = relative_ms(timeout_ms);
        timeout = &ft;
    }
    set_wait_ex_fn ex = get_set_wait_ex();
    if (ex)
        (void)ex((PTP_WAIT)w, (HANDLE)event, timeout, NULL);
    else
        SetThreadpoolWait((PTP_WAIT)w, (HANDLE)event, timeout);
}

void tph_os_wait_wait(tph_os_wait *w, bool cancel_pending) {
    WaitForThreadpoolWaitCallbacks((PTP_WAIT)w, cancel_pending ? TRUE : FALSE);
}

void tph_os_wait_close(tph_os_wait *w) { CloseThreadpoolWait((PTP_WAIT)w); }

/* ---- timers --------------------------------------------------------------- */

tph_os_timer *tph_os_timer_create(tph_os_timer_cb cb, void *ctx, const tph_os_env *env) {
    TP_CALLBACK_ENVIRON cbe;
    env_init(&cbe, env);
    PTP_TIMER t = CreateThreadpoolTimer((PTP_TIMER_CALLBACK)(void (*)(void))cb, ctx, &cbe);
    DestroyThreadpoolEnvironment(&cbe);
    return (tph_os_timer *)t;
}

void tph_os_timer_set(tph_os_timer *t, const int64_t *due, uint32_t period_ms,
                      uint32_t window_ms) {
    FILETIME ft;
    PFILETIME pft = NULL;
    if (due) {
        ULARGE_INTEGER u;
        u.QuadPart = (ULONGLONG)*due;
        ft.dwLowDateTime = u.LowPart;
        ft.dwHighDateTime = u.HighPart;
        pft = &ft;
    }
    set_timer_ex_fn ex = get_set_timer_ex();
    if (ex)
        (void)ex((PTP_TIMER)t, pft, (DWORD)period_ms, (DWORD)window_ms);
    else
        SetThreadpoolTimer((PTP_TIMER)t, pft, (DWORD)period_ms, (DWORD)window_ms);
}

bool tph_os_timer_is_set(tph_os_timer *t) { return IsThreadpoolTimerSet((PTP_TIMER)t) != FALSE; }

void tph_os_timer_wait(tph_os_timer *t, bool cancel_pending) {
    WaitForThreadpoolTimerCallbacks((PTP_TIMER)t, cancel_pending ? TRUE : FALSE);
}

void tph_os_timer_close(tph_os_timer *t) { CloseThreadpoolTimer((PTP_TIMER)t); }

/* ---- I/O ------------------------------------------------------------------ */

tph_os_io *tph_os_io_create(void *file_handle, tph_os_io_cb cb, void *ctx,
                            const tph_os_env *env) {
    TP_CALLBACK_ENVIRON cbe;
    env_init(&cbe, env);
    PTP_IO io = CreateThreadpoolIo((HANDLE)file_handle,
                                   (PTP_WIN32_IO_CALLBACK)(void (*)(void))cb, ctx, &cbe);
    DestroyThreadpoolEnvironment(&cbe);
    return (tph_os_io *)io;
}

void tph_os_io_start(tph_os_io *io) { StartThreadpoolIo((PTP_IO)io); }
void tph_os_io_cancel(tph_os_io *io) { CancelThreadpoolIo((PTP_IO)io); }

void tph_os_io_wait(tph_os_io *io, bool cancel_pending) {
    WaitForThreadpoolIoCallbacks((PTP_IO)io, cancel_pending ? TRUE : FALSE);
}

void tph_os_io_close(tph_os_io *io) { CloseThreadpoolIo((PTP_IO)io); }

/* ---- events --------------------------------------------------------------- */

tph_os_event *tph_os_event_create(bool manual_reset, bool initially_set) {
    return (tph_os_event *)CreateEventW(NULL, manual_reset ? TRUE : FALSE,
                                        initially_set ? TRUE : FALSE, NULL);
}

void tph_os_event_set(tph_os_event *e) { (void)SetEvent((HANDLE)e); }
void tph_os_event_reset(tph_os_event *e) { (void)ResetEvent((HANDLE)e); }

uint32_t tph_os_event_wait(tph_os_event *e, uint32_t timeout_ms) {
    DWORD r = WaitForSingleObject((HANDLE)e, (DWORD)timeout_ms);
    if (r == WAIT_OBJECT_0 || r == WAIT_TIMEOUT) return (uint32_t)r;
    /* WAIT_FAILED: a closed or foreign handle.  The seam promises one of two
     * results; continuing on a third would hide a use-after-close. */
    tph_os_fail_fast("WaitForSingleObject failed on a tph_os_event");
}

void tph_os_event_close(tph_os_event *e) {
    if (e) (void)CloseHandle((HANDLE)e);
}

/* ---- mutex ---------------------------------------------------------------- */

void tph_os_mutex_lock(tph_os_mutex *m) { AcquireSRWLockExclusive((PSRWLOCK)(void *)m->word); }
void tph_os_mutex_unlock(tph_os_mutex *m) { ReleaseSRWLockExclusive((PSRWLOCK)(void *)m->word); }
void tph_os_diag_lock(tph_os_mutex *m) { tph_os_mutex_lock(m); }
void tph_os_diag_unlock(tph_os_mutex *m) { tph_os_mutex_unlock(m); }

/* ---- atomics -------------------------------------------------------------- */
/* Every Interlocked* call is a full barrier, which is what "sequentially
 * consistent" asks.  Loads are read-modify-writes of nothing (Or 0) so they
 * are ordered with the rest; the const is cast away for that reason only. */

#define L32(p) ((LONG volatile *)(void *)(p))
#define L64(p) ((LONG64 volatile *)(void *)(p))

uint32_t tph_os_load32(const volatile uint32_t *p) {
    return (uint32_t)InterlockedOr(L32((volatile uint32_t *)p), 0);
}
void tph_os_store32(volatile uint32_t *p, uint32_t v) { (void)InterlockedExchange(L32(p), (LONG)v); }
/* The real backend has no scheduler: the gate's pair is the same atomics. */
uint32_t tph_os_gate_load32(const volatile uint32_t *p) { return tph_os_load32(p); }
void tph_os_gate_store32(volatile uint32_t *p, uint32_t v) { tph_os_store32(p, v); }
uint32_t tph_os_fetch_add32(volatile uint32_t *p, uint32_t v) {
    return (uint32_t)InterlockedExchangeAdd(L32(p), (LONG)v);
}
uint32_t tph_os_fetch_sub32(volatile uint32_t *p, uint32_t v) {
    /* two's complement: adding the negation wraps exactly like unsigned subtraction */
    return (uint32_t)InterlockedExchangeAdd(L32(p), (LONG)(0u - v));
}
bool tph_os_cas32(volatile uint32_t *p, uint32_t *expected, uint32_t desired) {
    LONG old = InterlockedCompareExchange(L32(p), (LONG)desired, (LONG)*expected);
    if ((uint32_t)old == *expected) return true;
    *expected = (uint32_t)old;
    return false;
}

uint64_t tph_os_load64(const volatile uint64_t *p) {
    return (uint64_t)InterlockedOr64(L64((volatile uint64_t *)p), 0);
}
void tph_os_store64(volatile uint64_t *p, uint64_t v) {
    (void)InterlockedExchange64(L64(p), (LONG64)v);
}
uint64_t tph_os_fetch_add64(volatile uint64_t *p, uint64_t v) {
    return (uint64_t)InterlockedExchangeAdd64(L64(p), (LONG64)v);
}
uint64_t tph_os_fetch_sub64(volatile uint64_t *p, uint64_t v) {
    return (uint64_t)InterlockedExchangeAdd64(L64(p), (LONG64)(0u - v));
}
bool tph_os_cas64(volatile uint64_t *p, uint64_t *expected, uint64_t desired) {
    LONG64 old = InterlockedCompareExchange64(L64(p), (LONG64)desired, (LONG64)*expected);
    if ((uint64_t)old == *expected) return true;
    *expected = (uint64_t)old;
    return false;
}
/* Windows has no InterlockedMax: a CAS loop that stops as soon as the stored
 * value is already >= v (then nothing is written at all). */
uint64_t tph_os_fetch_max64(volatile uint64_t *p, uint64_t v) {
    uint64_t cur = tph_os_load64(p);
    while (cur < v && !tph_os_cas64(p, &cur, v)) {
    }
    return cur;
}

void *tph_os_load_ptr(void *const volatile *p) {
    return InterlockedCompareExchangePointer((PVOID volatile *)(void *)p, NULL, NULL);
}
void tph_os_store_ptr(void *volatile *p, void *v) {
    (void)InterlockedExchangePointer((PVOID volatile *)p, v);
}
bool tph_os_cas_ptr(void *volatile *p, void **expected, void *desired) {
    void *old = InterlockedCompareExchangePointer((PVOID volatile *)p, desired, *expected);
    if (old == *expected) return true;
    *expected = old;
    return false;
}

/* ---- time, threads, memory, process --------------------------------------- */

uint64_t tph_os_interrupt_time(void) {
    ULONGLONG t = 0;
    query_interrupt_time_fn q = get_query_interrupt_time();
    if (q)
        q(&t);
    else
        (void)QueryUnbiasedInterruptTime(&t); /* Windows 7+, and Wine 8.0 */
    return (uint64_t)t;
}

uint64_t tph_os_system_time(void) {
    FILETIME ft;
    GetSystemTimeAsFileTime(&ft);
    ULARGE_INTEGER u;
    u.LowPart = ft.dwLowDateTime;
    u.HighPart = ft.dwHighDateTime;
    return (uint64_t)u.QuadPart;
}

uint32_t tph_os_thread_id(void) { return (uint32_t)GetCurrentThreadId(); }

void *tph_os_alloc(size_t n) { return HeapAlloc(GetProcessHeap(), 0, n ? n : 1); }

void tph_os_free(void *p) {
    if (p) (void)HeapFree(GetProcessHeap(), 0, p);
}

/* The reason goes to stderr first (flushed: nothing after this point returns
 * to flush it), then the process ends without running atexit handlers or
 * unwinding, which is what fail-fast means: RaiseFailFastException reports
 * to WER and terminates.  abort() stays as the fallback for a system where
 * that call returns (it must not, but the seam promises noreturn). */
TPH_NORETURN void tph_os_fail_fast(const char *reason) {
    fprintf(stderr, "tpheal: fail-fast: %s\n", reason ? reason : "(no reason)");
    fflush(stderr);
    RaiseFailFastException(NULL, NULL, 0);
    abort();
}
