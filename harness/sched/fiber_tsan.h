/* ThreadSanitizer fiber annotations (no-ops unless TPHEAL_TSAN).
 * Every fiber is a TSan thread of its own, and every switch is announced
 * with __tsan_switch_to_fiber_no_sync: one fiber runs at a time, so without
 * the annotation TSan sees one thread and no race at all, and without
 * no_sync every switch would be a release/acquire pair ordering everything
 * the previous fiber did before everything the next one does -- a
 * synchronisation the real threads never have.  The happens-before edges a
 * run does have are given explicitly (sched_tsan.h, harness/sim/sim_hb.h). */
#ifndef TPHEAL_FIBER_TSAN_H
#define TPHEAL_FIBER_TSAN_H

#include "fiber.h"

#if defined(TPHEAL_TSAN)
#include <sanitizer/tsan_interface.h>

static inline void sched_tsan_fiber_main(sched_fiber *f) { f->tsan_fiber = __tsan_get_current_fiber(); }
/* TSan fibers are recycled across runs like stacks (fiber_stack.c). */
void *sched_tsan_fiber_get(void);
void sched_tsan_fiber_put(void *fiber);
static inline void sched_tsan_fiber_make(sched_fiber *f) { f->tsan_fiber = sched_tsan_fiber_get(); }
/* Never the running fiber, never the OS thread's own. */
static inline void sched_tsan_fiber_drop(sched_fiber *f) {
    if (f->tsan_fiber) sched_tsan_fiber_put(f->tsan_fiber);
    f->tsan_fiber = NULL;
}
/* First thing on a new fiber: its stack's previous owners (earlier runs)
 * are ordered before it (fiber_stack.c). */
static inline void sched_tsan_fiber_started(sched_fiber *f) { __tsan_acquire(f->stack); }
/* Immediately before the machine switch: nothing instrumented runs between. */
static inline void sched_tsan_switch(sched_fiber *to) {
    __tsan_switch_to_fiber(to->tsan_fiber, __tsan_switch_to_fiber_no_sync);
}
#else
static inline void sched_tsan_fiber_main(sched_fiber *f) { (void)f; }
static inline void sched_tsan_fiber_make(sched_fiber *f) { (void)f; }
static inline void sched_tsan_fiber_drop(sched_fiber *f) { (void)f; }
static inline void sched_tsan_switch(sched_fiber *to) { (void)to; }
static inline void sched_tsan_fiber_started(sched_fiber *f) { (void)f; }
#endif

#endif
