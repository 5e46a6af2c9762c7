/* The controlled scheduler under ThreadSanitizer (TPHEAL_TSAN): the
 * happens-before edges the runtime itself gives, and the capture of TSan's
 * reports into the run that raised them.  No-ops in other builds.
 *
 * Fiber switches synchronise nothing (fiber_tsan.h), so these are the only
 * edges between a run's threads besides the ones the model states
 * (harness/sim/sim_hb.h); they are pthread's:
 *   - rt_lock release -> the next acquire of that lock;
 *   - rt_spawn -> the new thread's first instruction;
 *   - a thread's exit -> the rt_join that waited for it;
 *   - the end of the run -> the caller of sched_run (the process is over:
 *     whatever the harness tears down afterwards follows all of it).
 * None of them exists for a lock marked rt_lock_harness_only, nor for a
 * spawn or join made while the calling thread holds such a lock: those
 * order the model's state and the scenario runner's, never the core's
 * (docs/races.md).  The scheduler's own files are built without TSan
 * instrumentation: every fiber touches the run state, by design unordered. */
#ifndef TPHEAL_SCHED_TSAN_H
#define TPHEAL_SCHED_TSAN_H

#include "sched_internal.h"

#if defined(TPHEAL_TSAN)
#include <sanitizer/tsan_interface.h>
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
static inline void sched_hb_release(const void *addr) { __tsan_release((void *)addr); }
static inline void sched_hb_acquire(const void *addr) { __tsan_acquire((void *)addr); }
/* Names t's TSan fiber `thread N "name"`, as every run report names it. */
void sched_tsan_name(rt_thread *t);
/* The current thread t's accesses, allocations and frees are the harness's
 * from here to the matching end (nested): every rt_ call under the
 * scheduler, and all a holder of a harness-only lock does. */
static inline void sched_tsan_quiet_begin(rt_thread *t) {
    __tsan_ignore_thread_begin();
    t->tsan_ignores++;
}
static inline void sched_tsan_quiet_end(rt_thread *t) {
    t->tsan_ignores--;
    __tsan_ignore_thread_end();
}
/* t is not running and never runs again: closes its open ignore regions
 * (TSan ends the process when a fiber is destroyed with one open). */
void sched_tsan_forget(sched *s, rt_thread *t);
/* After the run, on the caller's stack: every fiber still alive releases
 * into the run's end, and the caller acquires it. */
void sched_tsan_run_end(sched *s);
/* The run's first race report, formatted (malloc'd; NULL: none).  Called
 * once, after sched_tsan_run_end. */
char *sched_tsan_race_text(sched *s);
#else
static inline void sched_hb_release(const void *addr) { (void)addr; }
static inline void sched_hb_acquire(const void *addr) { (void)addr; }
static inline void sched_tsan_name(rt_thread *t) { (void)t; }
static inline void sched_tsan_quiet_begin(rt_thread *t) { (void)t; }
static inline void sched_tsan_quiet_end(rt_thread *t) { (void)t; }
static inline void sched_tsan_forget(sched *s, rt_thread *t) {
    (void)s;
    (void)t;
}
static inline void sched_tsan_run_end(sched *s) { (void)s; }
static inline char *sched_tsan_race_text(sched *s) {
    (void)s;
    return NULL;
}
#endif

#endif
