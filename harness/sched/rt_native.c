/* The native runtime (rt_native.h): rt.h on real OS threads.
 *
 * rt_lock is a pthread mutex (an SRWLOCK on Windows) embedded in the lock's
 * words and rt_waitq a condition variable, both valid when all-zero (glibc's
 * PTHREAD_*_INITIALIZER are zero bytes; checked below), so locks and queues
 * living in zeroed model memory need no init call.
 *
 * Ending a run: rt_end_process marks the run ended.  From then on every run
 * thread exits at its next rt_ call made with no rt_lock held, and threads
 * blocked in rt_ calls notice within one slice (SLICE_NS): the model's
 * threads must be joinable after a fail-fast without anyone releasing the
 * locks the dead thread held, and the model's own lock must be free for the
 * driver's queries and teardown.
 */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "rt_native.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcg32.h"
#include "rt_impl.h"

#if defined(_WIN32)
#include <windows.h>
#include <process.h>
#else
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#endif

#if defined(_MSC_VER)
#define RT_TLS __declspec(thread)
#else
#define RT_TLS _Thread_local
#endif

/* Blocked calls wake at least this often to notice an ended run. */
#define SLICE_NS 20000000ull

/* ---- platform primitives ---------------------------------------------------- */
#if defined(_WIN32)
typedef SRWLOCK plat_mutex;
typedef CONDITION_VARIABLE plat_cond;
typedef HANDLE plat_thread;
#define PLAT_MUTEX_INIT SRWLOCK_INIT
#define PLAT_COND_INIT CONDITION_VARIABLE_INIT
static void plat_lock(plat_mutex *m) { AcquireSRWLockExclusive(m); }
static void plat_unlock(plat_mutex *m) { ReleaseSRWLockExclusive(m); }
/* Windows: no timed SRW acquire; a lock held by a dead thread blocks (documented). */
static bool plat_lock_slice(plat_mutex *m) {
    AcquireSRWLockExclusive(m);
    return true;
}
static bool plat_cond_wait_slice(plat_cond *c, plat_mutex *m, uint64_t ns) {
    DWORD ms = (DWORD)((ns + 999999) / 1000000);
    return SleepConditionVariableSRW(c, m, ms, 0) != 0;
}
static void plat_cond_wait(plat_cond *c, plat_mutex *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static void plat_signal(plat_cond *c) { WakeConditionVariable(c); }
static void plat_broadcast(plat_cond *c) { WakeAllConditionVariable(c); }
static uint64_t plat_mono_ns(void) {
    static LARGE_INTEGER freq;
    LARGE_INTEGER t;
    if (freq.QuadPart == 0) QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&t);
    return (uint64_t)((double)t.QuadPart * 1e9 / (double)freq.QuadPart);
}
static void plat_sleep_ns(uint64_t ns) { Sleep((DWORD)((ns + 999999) / 1000000)); }
static void plat_os_yield(void) { SwitchToThread(); }
static void plat_thread_exit(void) { _endthreadex(0); }
#else
typedef pthread_mutex_t plat_mutex;
typedef pthread_cond_t plat_cond;
typedef pthread_t plat_thread;
#define PLAT_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define PLAT_COND_INIT PTHREAD_COND_INITIALIZER
static void plat_lock(plat_mutex *m) { pthread_mutex_lock(m); }
static void plat_unlock(plat_mutex *m) { pthread_mutex_unlock(m); }
/* Realtime absolute time `ns` from now, for the pthread timed calls (a clock
 * jump only changes one slice's length: deadlines are kept on the monotonic
 * clock by the callers). */
static struct timespec abs_after(uint64_t ns) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t n = (uint64_t)ts.tv_nsec + ns;
    ts.tv_sec += (time_t)(n / 1000000000ull);
    ts.tv_nsec = (long)(n % 1000000000ull);
    return ts;
}
static bool plat_lock_slice(plat_mutex *m) {
    struct timespec ts = abs_after(SLICE_NS);
    return pthread_mutex_timedlock(m, &ts) == 0;
}
static bool plat_cond_wait_slice(plat_cond *c, plat_mutex *m, uint64_t ns) {
    struct timespec ts = abs_after(ns);
    return pthread_cond_timedwait(c, m, &ts) == 0;
}
static void plat_cond_wait(plat_cond *c, plat_mutex *m) { pthread_cond_wait(c, m); }
static void plat_signal(plat_cond *c) { pthread_cond_signal(c); }
static void plat_broadcast(plat_cond *c) { pthread_cond_broadcast(c); }
static uint64_t plat_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static void plat_sleep_ns(uint64_t ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    nanosleep(&ts, NULL);
}
static void plat_os_yield(void) { sched_yield(); }
static void plat_thread_exit(void) { pthread_exit(NULL); }
#endif

/* rt_lock / rt_waitq carry the platform objects in place: an rt_lock its
 * mutex and, beside it, the thread holding it.  Releasing a
 * lock the caller does not hold, or waiting on one, is the misuse the
 * controlled scheduler reports, and pthread's default mutex lets both pass
 * silently (a condition wait on a mutex nobody holds can lose its wake-up),
 * so a native run aborts on them, naming which. */
typedef struct native_lock {
    plat_mutex m;
    const void *owner; /* a holder's thread_token(); NULL: free (all-zero) */
} native_lock;
_Static_assert(sizeof(native_lock) <= sizeof(((rt_lock *)0)->word), "rt_lock too small for the native mutex");
_Static_assert(sizeof(plat_cond) <= sizeof(rt_waitq), "rt_waitq too small for the native condvar");

/* ---- draws for rt_choose and the noise -------------------------------------- */
/* The project's one pcg32 (pcg32.h).  Native draws keep the modulo rejection
 * they always used, so a seed picks the same noise and window points as
 * before. */
typedef pcg32 pcg;
static void pcg_seed(pcg *g, uint64_t seed, uint64_t stream) { pcg32_seed(g, seed, stream); }
/* Unbiased draw in [0, n): rejection of the short top range.  Terminates only
 * on a seeded stream (inc odd): the all-zero state of an unseeded one returns
 * 0 forever, below every threshold -- the consumer hang that
 * choose_stream_locked exists to rule out. */
static uint32_t pcg_below(pcg *g, uint32_t n) {
    uint32_t threshold = (uint32_t)(0u - n) % n;
    for (;;) {
        uint32_t r = pcg32_next(g);
        if (r >= threshold) return r % n;
    }
}

/* ---- run state ------------------------------------------------------------- */
struct rt_thread {
    struct rt_thread *next; /* all threads not yet joined */
    plat_thread handle;
    uint32_t id;
    bool daemon;
    bool finished;
    uint32_t held; /* rt_locks this thread holds: it exits an ended run only at 0 */
    uint32_t generation; /* the run that spawned it: a thread an ended run left behind may finish in a later one */
    rt_thread_fn fn;
    void *arg;
    pcg noise;
    char name[40];
};

static plat_mutex run_mu = PLAT_MUTEX_INIT;
static plat_cond run_cv = PLAT_COND_INIT;
static plat_mutex choose_mu = PLAT_MUTEX_INIT;
static struct {
    rt_thread *threads;
    uint32_t next_id;
    uint32_t live_nondaemon;
    uint32_t ended; /* read with atomics on the fast path */
    char reason[256];
    uint64_t start_ns;
    pcg choose;           /* under choose_mu; see choose_stream_locked */
    bool choose_seeded;   /* under choose_mu */
    rt_native_options opts;
    uint32_t generation;      /* bumped by every rt_native_run */
    uint32_t foreign_threads; /* threads not spawned by the run that called in */
} run;
static rt_native_result last_result;
static RT_TLS rt_thread *self;
/* The noise stream of a thread the run did not spawn, and the run it was
 * seeded for. */
static RT_TLS pcg foreign_noise;
static RT_TLS uint32_t foreign_generation;

#if defined(_MSC_VER)
static bool ended_now(void) { return InterlockedCompareExchange((volatile LONG *)&run.ended, 0, 0) != 0; }
static void set_ended(void) { InterlockedExchange((volatile LONG *)&run.ended, 1); }
static uint32_t load_u32(volatile uint32_t *p) { return (uint32_t)InterlockedCompareExchange((volatile LONG *)p, 0, 0); }
static uint32_t increment_u32(volatile uint32_t *p) { return (uint32_t)InterlockedIncrement((volatile LONG *)p); }
static void store_u32(volatile uint32_t *p, uint32_t v) { InterlockedExchange((volatile LONG *)p, (LONG)v); }
#else
static bool ended_now(void) { return __atomic_load_n(&run.ended, __ATOMIC_SEQ_CST) != 0; }
static void set_ended(void) { __atomic_store_n(&run.ended, 1u, __ATOMIC_SEQ_CST); }
static uint32_t load_u32(volatile uint32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static uint32_t increment_u32(volatile uint32_t *p) { return __atomic_add_fetch(p, 1u, __ATOMIC_SEQ_CST); }
static void store_u32(volatile uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
#endif

static void finish_self(void) {
    plat_lock(&run_mu);
    self->finished = true;
    /* Only the run's own threads count down its live ones: a thread left
     * behind by an ended run, finishing during the next, once ended that run
     * while its main still ran. */
    if (!self->daemon && self->generation == run.generation && run.live_nondaemon > 0) run.live_nondaemon--;
    plat_broadcast(&run_cv);
    plat_unlock(&run_mu);
}

/* A run thread of an ended run exits here, once it holds no rt_lock: the
 * model's lock is innermost and never held across a blocking call, so after
 * an ended run it is free again and the driver can still query and tear down
 * the model.  (Only the thread calling rt_end_process dies holding locks.) */
static void exit_if_ended(void) {
    if (self && self->held == 0 && ended_now()) {
        finish_self();
        plat_thread_exit();
    }
}

/* The calling thread's noise stream.  A thread the run did not spawn -- a
 * worker of the real Windows pool running a callback that reaches the
 * harness's trace hook -- gets one too, seeded from the run's seed and the
 * order in which such threads first call in: without it the real pool's
 * callbacks would run unshaken while only the scenario's threads were. */
static pcg *noise_stream(void) {
    if (self) return &self->noise;
    uint32_t gen = load_u32(&run.generation);
    if (gen == 0) return NULL; /* no run yet */
    if (foreign_generation != gen) {
        uint32_t k = increment_u32(&run.foreign_threads);
        pcg_seed(&foreign_noise, run.opts.seed, 0xc2b2ae3d27d4eb4full ^ ((uint64_t)k << 32));
        foreign_generation = gen;
    }
    return &foreign_noise;
}

/* Free-running noise, drawn from the thread's own stream (no shared lock). */
static void noise(void) {
    exit_if_ended();
    const rt_native_options *o = &run.opts;
    if ((o->yield_ppm | o->spin_ppm | o->sleep_ppm) == 0) return;
    pcg *g = noise_stream();
    if (!g) return;
    uint32_t r = pcg_below(g, 1000000u);
    if (r < o->yield_ppm) {
        plat_os_yield();
    } else if (r < o->yield_ppm + o->spin_ppm) {
        uint32_t max = o->spin_max_iters ? o->spin_max_iters : 2000u;
        volatile uint32_t sink = 0;
        uint32_t n = pcg_below(g, max) + 1u;
        for (uint32_t i = 0; i < n; i++) sink += i;
        (void)sink;
    } else if (r < o->yield_ppm + o->spin_ppm + o->sleep_ppm) {
        uint32_t max = o->sleep_max_us ? o->sleep_max_us : 200u;
        plat_sleep_ns(((uint64_t)pcg_below(g, max) + 1u) * 1000u);
    }
}

/* ---- rt_ops ---------------------------------------------------------------- */
#if defined(_WIN32)
static unsigned __stdcall thread_entry(void *p)
#else
static void *thread_entry(void *p)
#endif
{
    self = (rt_thread *)p;
    if (!ended_now()) self->fn(self->arg);
    finish_self();
#if defined(_WIN32)
    return 0;
#else
    return NULL;
#endif
}

static rt_thread *n_spawn(const char *name, rt_thread_fn fn, void *arg, bool daemon) {
    noise();
    rt_thread *t = (rt_thread *)calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "rt_native: out of memory spawning %s\n", name ? name : "?");
        abort();
    }
    t->fn = fn;
    t->arg = arg;
    t->daemon = daemon;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "thread");
    plat_lock(&run_mu);
    t->id = ++run.next_id;
    t->generation = run.generation;
    pcg_seed(&t->noise, run.opts.seed, 0x9e3779b97f4a7c15ull ^ t->id);
    t->next = run.threads;
    run.threads = t;
    if (!daemon) run.live_nondaemon++;
    plat_unlock(&run_mu);
#if defined(_WIN32)
    t->handle = (HANDLE)_beginthreadex(NULL, 0, thread_entry, t, 0, NULL);
    bool ok = t->handle != 0;
#else
    bool ok = pthread_create(&t->handle, NULL, thread_entry, t) == 0;
#endif
    if (!ok) {
        fprintf(stderr, "rt_native: cannot create thread %s\n", t->name);
        abort();
    }
    return t;
}

static void unlink_thread(rt_thread *t) {
    plat_lock(&run_mu);
    for (rt_thread **pp = &run.threads; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    plat_unlock(&run_mu);
}

static void join_os(rt_thread *t) {
#if defined(_WIN32)
    WaitForSingleObject(t->handle, INFINITE);
    CloseHandle(t->handle);
#else
    pthread_join(t->handle, NULL);
#endif
}

static void n_join(rt_thread *t) {
    noise();
    if (!t) return;
    /* Unlinked first: once t is off run.threads, rt_native_run's reap of
     * finished non-daemon threads cannot join and free it as well (joined
     * first, a daemon waiting here on a non-daemon that finished met the reap
     * and both freed it: a double free under ASan). */
    unlink_thread(t);
    join_os(t);
    free(t);
}

static uint32_t n_thread_id(void) { return self ? self->id : 0; }
static const char *n_thread_name(void) { return self ? self->name : "driver"; }
static void n_yield(void) { noise(); }

/* A value no other live thread has: the address of a thread-local. */
static RT_TLS char token_byte;
static const void *thread_token(void) { return &token_byte; }

static native_lock *native_lock_of(rt_lock *l) { return (native_lock *)(void *)l->word; }

static void must_hold(const native_lock *nl, const char *call) {
    if (nl->owner != thread_token()) {
        fprintf(stderr, "rt_native: %s of a lock this thread does not hold\n", call);
        abort();
    }
}

static void n_lock_acquire(rt_lock *l) {
    noise();
    native_lock *nl = native_lock_of(l);
    while (!plat_lock_slice(&nl->m)) exit_if_ended();
    nl->owner = thread_token();
    if (self) self->held++;
}

/* The holder gives the lock up: no owner, then the mutex. */
static void give_up(native_lock *nl) {
    nl->owner = NULL;
    plat_unlock(&nl->m);
}

static void n_lock_release(rt_lock *l) {
    native_lock *nl = native_lock_of(l);
    must_hold(nl, "rt_lock_release");
    give_up(nl);
    if (self && self->held > 0) self->held--;
    noise();
}

/* In rt_wait of an ended run: give the wait's lock back and exit when it is
 * the only one held; otherwise keep waiting (the thread is stuck like any
 * thread of a dead process). */
static void exit_from_wait_if_ended(native_lock *nl) {
    if (self && ended_now() && self->held == 1) {
        give_up(nl);
        self->held = 0;
        exit_if_ended();
    }
}

static uint64_t n_now(void) { return (plat_mono_ns() - run.start_ns) / 100u; }

static bool n_wait(rt_waitq *q, rt_lock *l, uint64_t deadline, const char *what) {
    (void)what;
    noise();
    plat_cond *c = (plat_cond *)(void *)q->word;
    native_lock *nl = native_lock_of(l);
    must_hold(nl, "rt_wait");
    for (;;) {
        uint64_t slice = SLICE_NS;
        if (deadline != RT_FOREVER) {
            uint64_t now = n_now();
            if (now >= deadline) return false;
            uint64_t left_ns = (deadline - now) * 100u;
            if (left_ns < slice) slice = left_ns;
        }
        nl->owner = NULL; /* the wait gives the mutex up, and has it again after */
        bool woken = plat_cond_wait_slice(c, &nl->m, slice);
        nl->owner = thread_token();
        exit_from_wait_if_ended(nl);
        /* A slice that ends before the deadline returns as a spurious
         * wake-up (allowed by rt.h): the caller re-checks its condition.
         * Without it, a TSan run hung in the sim's teardown with the timer
         * service still waiting after the broadcast that should have woken
         * it (a lost condvar wake-up; glibc bug 25847 is of this kind). */
        if (woken || deadline == RT_FOREVER || n_now() < deadline) return true;
    }
}

static void n_wake_one(rt_waitq *q) {
    noise();
    plat_signal((plat_cond *)(void *)q->word);
}

static void n_wake_all(rt_waitq *q) {
    noise();
    plat_broadcast((plat_cond *)(void *)q->word);
}

static void n_sleep_until(uint64_t deadline) {
    noise();
    for (;;) {
        exit_if_ended();
        uint64_t now = n_now();
        if (now >= deadline) return;
        uint64_t left_ns = (deadline - now) * 100u;
        plat_sleep_ns(left_ns < SLICE_NS ? left_ns : SLICE_NS);
    }
}

/* The stream rt_choose draws from, seeded as by a run with seed 0 when no run
 * driver has seeded it.  A program that links the installed library never
 * calls rt_native_run, yet the sim draws from this stream (a timer's point in
 * its window, first of all the healer's periodic timer on the first
 * cancellation); unseeded, the draw never returned, holding the registry lock. */
#define CHOOSE_STREAM 0xda3e39cb94b95bdbull
static pcg *choose_stream_locked(void) {
    if (!run.choose_seeded) {
        pcg_seed(&run.choose, 0, CHOOSE_STREAM);
        run.choose_seeded = true;
    }
    return &run.choose;
}

static uint32_t n_choose(uint32_t n) {
    noise();
    if (n <= 1) return 0;
    plat_lock(&choose_mu);
    uint32_t r = pcg_below(choose_stream_locked(), n);
    plat_unlock(&choose_mu);
    return r;
}

static void n_end_process(const char *reason) {
    plat_lock(&run_mu);
    if (!ended_now()) {
        snprintf(run.reason, sizeof run.reason, "%s", reason ? reason : "");
        set_ended();
    }
    plat_broadcast(&run_cv);
    plat_unlock(&run_mu);
    if (!self) {
        fprintf(stderr, "rt_native: rt_end_process(%s) outside a run thread\n", reason ? reason : "");
        abort();
    }
    finish_self();
    plat_thread_exit();
    abort();
}

/* Real threads race for real: nothing to record. */
static void n_access(const volatile void *obj, rt_access_kind k) {
    (void)obj;
    (void)k;
}

/* Real threads: nothing numbers objects by address. */
static void n_forget(const void *p, size_t n) {
    (void)p;
    (void)n;
}

/* Real threads: a diagnostic or scoped section is an ordinary one. */
static void n_lock_observed(rt_lock *l) { must_hold(native_lock_of(l), "rt_lock_observed"); }

const rt_ops rt_native_ops = {
    "native",     n_spawn, n_join,    n_thread_id, n_thread_name, n_yield,       n_lock_acquire,
    n_lock_release, n_wait, n_wake_one, n_wake_all, n_now,      n_sleep_until, n_choose,
    n_end_process, n_access, n_lock_acquire, n_lock_observed, n_choose, n_lock_acquire,
    n_sleep_until, /* settle: real threads have no "quiet" to wait for beyond the sleep */
    n_forget,
};

/* ---- the run driver -------------------------------------------------------- */
void rt_native_options_default(rt_native_options *o) { memset(o, 0, sizeof *o); }

bool rt_native_ended(void) { return ended_now(); }

void rt_native_last_result(rt_native_result *out) { *out = last_result; }

int rt_native_run(rt_thread_fn main_fn, void *arg, const rt_native_options *opts) {
    rt_native_options defaults;
    if (!opts) {
        rt_native_options_default(&defaults);
        opts = &defaults;
    }
    plat_lock(&run_mu);
    run.opts = *opts;
    run.next_id = 0;
    run.live_nondaemon = 0;
    run.reason[0] = '\0';
    run.start_ns = plat_mono_ns();
    store_u32(&run.foreign_threads, 0);
    increment_u32(&run.generation);
    plat_unlock(&run_mu);
    plat_lock(&choose_mu);
    pcg_seed(&run.choose, opts->seed, CHOOSE_STREAM);
    run.choose_seeded = true;
    plat_unlock(&choose_mu);
#if defined(_MSC_VER)
    InterlockedExchange((volatile LONG *)&run.ended, 0);
#else
    __atomic_store_n(&run.ended, 0u, __ATOMIC_SEQ_CST);
#endif
    rt_install(&rt_native_ops);

    n_spawn("main", main_fn, arg, false);

    plat_lock(&run_mu);
    while (run.live_nondaemon > 0 && !ended_now()) plat_cond_wait(&run_cv, &run_mu);
    bool ended = ended_now();
    /* An ended run's threads exit at their next rt_ call: give them up to
     * 2 s so they can be joined (a thread stuck behind a dead thread's lock
     * is left behind, as in a dead process). */
    for (int i = 0; ended && run.live_nondaemon > 0 && i < 100; i++) {
        plat_unlock(&run_mu);
        plat_sleep_ns(SLICE_NS);
        plat_lock(&run_mu);
    }
    memset(&last_result, 0, sizeof last_result);
    last_result.ended = ended;
    snprintf(last_result.reason, sizeof last_result.reason, "%s", run.reason);
    last_result.threads = run.next_id;
    /* Reap finished non-daemon threads nobody joined; daemons belong to
     * whoever spawned them (the sim joins its workers at process end). */
    rt_thread *reap = NULL;
    for (rt_thread **pp = &run.threads; *pp;) {
        rt_thread *t = *pp;
        if (!t->daemon && t->finished) {
            *pp = t->next;
            t->next = reap;
            reap = t;
        } else {
            pp = &t->next;
        }
    }
    plat_unlock(&run_mu);
    while (reap) {
        rt_thread *t = reap;
        reap = t->next;
        join_os(t);
        free(t);
    }
    return ended ? 1 : 0;
}
