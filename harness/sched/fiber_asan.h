/* AddressSanitizer fiber annotations (no-ops unless TPHEAL_ASAN).
 * Every switch is bracketed: start (naming the stack we go to) before it,
 * finish (on the stack we arrived at) after it.  A fiber that will never
 * resume passes a NULL save slot so ASan drops its fake stack. */
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
static inline void sched_asan_after(sched_fiber *self) { (void)self; }
static inline void sched_asan_fresh_stack(void *stack, size_t size) { (void)stack; (void)size; }
#endif

#endif
