/* Windows fiber backend (mingw and MSVC): CreateFiberEx / SwitchToFiber.
 * Windows owns the stacks (with its own guard page), so the stack pool is
 * not used; a fiber is created per spawn and deleted when dropped. */
#include "fiber.h"

#if defined(SCHED_FIBER_WIN32)

#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0600 /* IsThreadAFiber */
#endif
#include <stdlib.h>
#include <windows.h>

static void WINAPI fiber_start(void *p) {
    sched_fiber *f = (sched_fiber *)p;
    f->entry(f->arg);
    abort();
}

/* GCC 12 flags mingw's inline __readgsqword (behind GetCurrentFiber) with
 * -Warray-bounds at -O2: a false positive in the system header. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
void sched_fiber_main(sched_fiber *f) {
    f->stack = NULL;
    f->stack_size = 0;
    f->asan_fake = NULL;
    if (IsThreadAFiber()) {
        f->ctx = GetCurrentFiber();
        f->converted = 0;
    } else {
        f->ctx = ConvertThreadToFiberEx(NULL, FIBER_FLAG_FLOAT_SWITCH);
        if (!f->ctx) abort();
        f->converted = 1;
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void sched_fiber_main_done(sched_fiber *f) {
    if (f->converted) ConvertFiberToThread();
    f->ctx = NULL;
    f->converted = 0;
}

int sched_fiber_make(sched_fiber *f, size_t stack_size, void (*entry)(void *), void *arg) {
    f->entry = entry;
    f->arg = arg;
    f->stack = NULL;
    f->stack_size = stack_size;
    f->asan_fake = NULL;
    f->converted = 0;
    f->ctx = CreateFiberEx(stack_size, stack_size, FIBER_FLAG_FLOAT_SWITCH, fiber_start, f);
    return f->ctx ? 0 : -1;
}

void sched_fiber_drop(sched_fiber *f) {
    if (f->ctx) DeleteFiber(f->ctx);
    f->ctx = NULL;
}

void sched_fiber_switch(sched_fiber *from, sched_fiber *to) {
    (void)from;
    SwitchToFiber(to->ctx);
}

void sched_fiber_switch_final(sched_fiber *from, sched_fiber *to) {
    (void)from;
    SwitchToFiber(to->ctx);
    abort();
}

void *sched_stack_get(size_t size) { (void)size; return NULL; }
void sched_stack_put(void *stack, size_t size) { (void)stack; (void)size; }

#endif
