/* AddressSanitizer fiber annotations (no-ops unless TPHEAL_ASAN).
 * Every switch is bracketed: start (naming the stack we go to) before it,
 * finish (on the stack we arrived at) after it.  A fiber abandoned mid-call
 * passes a NULL save slot so ASan drops its fake stack.
 *
 * A fiber that exits (its frames unwound back to its entry) hands its fake
 * stack to the next fiber made instead: with detect_stack_use_after_return
 * every fiber otherwise gets a fresh fake stack (an ~720 KiB mapping for a
 * 64 KiB stack) made on its first call and unmapped at its end, and that was
 * 95% of the ASan unit tests' time -- test_sched_dfs took 50.6 s, 37.6 s of
 * it in the kernel (276,724 munmaps, 559,021 mmaps, 830,252 madvises:
 * strace -c), against 2.7 s with the option off.  A reused fake stack
 * still catches a use after return: frames are poisoned as they return and
 * unpoisoned only when handed out again (test_sched_asan checks frames still
 * come from it after thousands of reuses). */
#ifndef TPHEAL_FIBER_ASAN_H
#define TPHEAL_FIBER_ASAN_H

#include "fiber.h"

#if defined(TPHEAL_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

/* The fiber we are leaving: the arriving side learns the OS thread's own
 * stack bounds from ASan the first time the main fiber switches out. */
extern sched_fiber *sched_asan_leaving;

static inline void sched_asan_before(sched_fiber *from, sched_fiber *to, int final) {
    sched_asan_leaving = from;
    __sanitizer_start_switch_fiber(final ? NULL : &from->asan_fake, to->stack, to->stack_size);
}
/* Fake stacks of exited fibers, waiting for the next fiber made. */
#define SCHED_ASAN_FAKE_CACHE 64
extern void *sched_asan_fake_cache[SCHED_ASAN_FAKE_CACHE];
extern unsigned sched_asan_fake_cached;

/* The final switch of a fiber that exited: its fake stack holds no live
 * frame (the exit path takes no address of a local), so it is kept. */
static inline void sched_asan_before_exit(sched_fiber *from, sched_fiber *to) {
    void **slot = sched_asan_fake_cached < SCHED_ASAN_FAKE_CACHE
                      ? &sched_asan_fake_cache[sched_asan_fake_cached] : NULL; /* full: dropped */
    sched_asan_leaving = from;
    __sanitizer_start_switch_fiber(slot, to->stack, to->stack_size);
    if (slot && *slot) sched_asan_fake_cached++;
}
/* A new fiber starts on an exited fiber's fake stack when one is kept. */
static inline void *sched_asan_fake_for_new_fiber(void) {
    return sched_asan_fake_cached ? sched_asan_fake_cache[--sched_asan_fake_cached] : NULL;
}
static inline void sched_asan_after(sched_fiber *self) {
    const void *bottom = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(self ? self->asan_fake : NULL, &bottom, &size);
    if (sched_asan_leaving && sched_asan_leaving->stack == NULL) {
        sched_asan_leaving->stack = (void *)bottom;
        sched_asan_leaving->stack_size = size;
    }
}
/* A reused stack may still carry poison from a fiber abandoned mid-call. */
static inline void sched_asan_fresh_stack(void *stack, size_t size) {
    __asan_unpoison_memory_region(stack, size);
}
#else
static inline void sched_asan_before(sched_fiber *from, sched_fiber *to, int final) {
    (void)from; (void)to; (void)final;
}
static inline void sched_asan_before_exit(sched_fiber *from, sched_fiber *to) { (void)from; (void)to; }
static inline void *sched_asan_fake_for_new_fiber(void) { return NULL; }
static inline void sched_asan_after(sched_fiber *self) { (void)self; }
static inline void sched_asan_fresh_stack(void *stack, size_t size) { (void)stack; (void)size; }
#endif

#endif
