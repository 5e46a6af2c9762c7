/* The runtime interface: what the simulated pool (harness/sim/) needs from
 * threads, locks, waits, sleeps, time and randomness -- and nothing more.
 *
 * Two implementations sit behind it, chosen per run:
 *   rt_native.c    real OS threads (pthreads / Win32 threads), real monotonic
 *                  clock; optional seeded noise at each point (free-running
 *                  stress mode, in the style of rr chaos mode / BUGGIFY).
 *   sched.c        the controlled scheduler: every rt_ thread is a fiber, one
 *                  runs at a time, every rt_ call is a scheduling point where
 *                  the strategy (random walk, PCT) picks who runs next, and
 *                  time is virtual.
 * The sim never knows which one it is on.
 */
#ifndef TPHEAL_RT_H
#define TPHEAL_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RT_FOREVER UINT64_MAX

typedef struct rt_thread rt_thread;
typedef void (*rt_thread_fn)(void *arg);

/* All-zero bytes is an unlocked lock / an empty wait queue in both
 * implementations, so these can live in zeroed or static memory.
 * `race_kind` (rt_lock_harness_only, rt_lock_unordered) is outside the
 * implementation's words: the controlled scheduler resets those per run,
 * never this. */
typedef struct rt_lock {
    uintptr_t word[7];
    uintptr_t race_kind; /* 0, RT_LOCK_HARNESS or RT_LOCK_UNORDERED */
} rt_lock;
#define RT_LOCK_HARNESS 1u
#define RT_LOCK_UNORDERED 2u
#define RT_LOCK_KIND 3u             /* the bits of race_kind the two above use */
#define RT_LOCK_ATOMIC_SECTIONS 4u  /* rt_lock_atomic_sections */
typedef struct rt_waitq {
    uintptr_t word[8];
} rt_waitq;

/* Threads.  A daemon thread (sim workers, the timer service) does not keep a
 * run alive: the run ends when every non-daemon thread has finished. */
rt_thread *rt_spawn(const char *name, rt_thread_fn, void *arg, bool daemon);
void rt_join(rt_thread *);         /* waits for it to finish; frees it */
uint32_t rt_thread_id(void);       /* small, stable within a run: 1, 2, 3... in spawn order */
const char *rt_thread_name(void);

/* A scheduling point with no other effect. */
void rt_yield(void);

/* Not a scheduling point: says that the calling thread, between its last
 * scheduling point and its next, reads (RT_READ) or writes (RT_WRITE) the
 * shared object at `obj` -- an atomic's address, say.  The bounded search's
 * partial-order reduction (harness/sched/README.md, "Dependency") treats
 * two threads' steps as independent only when what they touch differs, so
 * every shared access outside an rt_lock must be announced this way.  The
 * random walk, PCT and the native runtime ignore it: it changes no choice. */
typedef enum rt_access_kind { RT_READ = 0, RT_WRITE = 1 } rt_access_kind;
void rt_access(const volatile void *obj, rt_access_kind);

void rt_lock_acquire(rt_lock *);
void rt_lock_release(rt_lock *);
/* Takes `lock` for a section that writes only diagnostics -- state no
 * verdict reads: the core's trace ring, the tail a report prints -- and
 * what it announces with rt_access.  The same scheduling point as
 * rt_lock_acquire, so no schedule changes; the bounded search's reduction
 * counts the section as touching only what it announced, so two sections
 * that announce nothing in common commute (harness/sched/README.md,
 * "Dependency").  That holds only if nobody can see the lock held: under
 * the controlled scheduler a scheduling point inside the section ends the
 * run as misuse.  A section that finds it must write observed state after
 * all calls rt_lock_observed before doing so.  Released with
 * rt_lock_release. */
void rt_lock_acquire_diagnostic(rt_lock *);
/* The diagnostic section the caller holds on `lock` is an ordinary one from
 * here: its step touches the lock, and it may wait or wake. */
void rt_lock_observed(rt_lock *);
/* Takes a lock marked rt_lock_atomic_sections for a section whose holder
 * announces with rt_access everything it reads or writes under it.  The
 * same scheduling point as rt_lock_acquire; for the bounded search's
 * reduction the section's steps only read the lock, so two scoped sections
 * that announce nothing in common commute, while an ordinary section
 * (rt_lock_acquire), which writes the lock, is ordered with every one.
 * Where another thread can see it held -- its holder blocks inside, or a
 * search on step time switches inside -- it writes the lock from there.
 * An rt_wait inside gives the lock up and takes it back scoped: the steps
 * after it must announce again.  Released with rt_lock_release; no scoped
 * section inside another.  The random walk, PCT and the native runtime
 * take it as rt_lock_acquire. */
void rt_lock_acquire_scoped(rt_lock *);
/* Marks a lock that orders the harness's own state only -- the model's lock,
 * the scenario runner's -- and is no synchronisation of the code under test:
 * under the race detector (TPHEAL_TSAN, controlled runs) taking, releasing or
 * waiting on it, and spawning or joining a thread while holding it, give no
 * happens-before edge, so the one lock that orders every model transition
 * cannot order the core's memory; and whatever its holder does is the
 * harness's business, unchecked (docs/races.md).  Idempotent; a plain store
 * (call it before the lock is shared).  Native runs ignore the mark. */
void rt_lock_harness_only(rt_lock *);
/* A lock whose holder is checked as usual but which gives no edge itself:
 * its user states the edge (the seam mutex, harness/sim/sim_hb.h). */
void rt_lock_unordered(rt_lock *);
/* Marks a lock whose sections no other thread can see into: everything a
 * holder does between taking it and giving it up (by a release or an
 * rt_wait) -- its wakes, spawns and atomics included -- touches only state
 * that every other thread reaches through this lock.  A switch at a
 * scheduling point inside such a section can only let others run steps
 * that commute with the section's rest, or block on the lock; so on idle
 * time (the bounded search's, rt_sched.h) the holder keeps the CPU there
 * while it can run, and the search does not branch on those points.  The
 * random walk, PCT (step time) and the native runtime switch as before.
 * Idempotent; a plain store, combinable with the two marks above. */
void rt_lock_atomic_sections(rt_lock *);

/* Atomically release `lock` and wait on `q` until woken or until `deadline`
 * (rt_now units; RT_FOREVER for none); re-acquires `lock` before returning.
 * Returns true when woken, false on timeout.  `what` names the wait for
 * deadlock reports ("WaitForThreadpoolWorkCallbacks(work#3)").  Spurious
 * wake-ups may happen: callers loop on their condition. */
bool rt_wait(rt_waitq *q, rt_lock *lock, uint64_t deadline, const char *what);
void rt_wake_one(rt_waitq *);
void rt_wake_all(rt_waitq *);

/* Time in 100 ns units since the run began (virtual under the scheduler).
 * Precise; the sim rounds it to the interrupt tick where Windows does. */
uint64_t rt_now(void);
void rt_sleep_until(uint64_t deadline);
/* rt_sleep_until, and then on until the process is quiet: under the
 * scheduler a settling thread wakes only at a moment when no other thread
 * can run and no other deadline falls at or before its own, so it never
 * races what was due with it; the native runtime just sleeps.  The scenario
 * runner's settle before its oracles: a check of the settled state is no
 * racer of what settles. */
void rt_settle_until(uint64_t deadline);

/* The memory [p, p + n) is being freed: the bounded search forgets the
 * objects it numbered there, so an allocation that reuses the address is a
 * new object.  Which addresses the allocator reuses differs between builds
 * (ASan's quarantine reuses none), and a search keyed by a reused address
 * merged a freed wait's mutex with the work object allocated where it had
 * been: registration-races-retirement counted 9,151 races in the default
 * build, 9,149 under ASan.  Not a scheduling point; the native runtime and
 * the random walk have nothing to forget. */
void rt_forget(const void *p, size_t n);

/* A seeded choice in [0, n) (n >= 1): timer points inside a window, stall
 * probabilities.  Deterministic for a seed under the scheduler. */
uint32_t rt_choose(uint32_t n);
/* The same draw for a delay: how late, in [0, n), something fires that the
 * contract lets fire anywhere in a window (a timer's tolerable delay).  0 is
 * on time.  The bounded search counts a late value against its preemption
 * bound; the random walk, PCT and the native runtime draw as rt_choose. */
uint32_t rt_choose_delay(uint32_t n);

/* Ends the simulated process: the run stops here, no thread runs again, and
 * the run's result records `reason` (fail-fast, or a fatal misuse). */
#if defined(_MSC_VER)
__declspec(noreturn)
#else
_Noreturn
#endif
void rt_end_process(const char *reason);

#endif
