/* ucontext fiber backend: other Unix targets.  swapcontext saves the signal
 * mask with a system call each way (~450 ns round trip here), so x86-64 uses
 * fiber_x86_64.c instead; build with -DTPHEAL_FIBER_UCONTEXT=1 to test this. */
#if !defined(_WIN32)
#define _DEFAULT_SOURCE 1
#define _XOPEN_SOURCE 700 /* ucontext on glibc/macOS */
#endif

#include "fiber.h"

#if defined(SCHED_FIBER_UCONTEXT)

#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>

#include "fiber_asan.h"
#include "fiber_tsan.h"

#if defined(TPHEAL_ASAN)
sched_fiber *sched_asan_leaving;
void *sched_asan_fake_cache[SCHED_ASAN_FAKE_CACHE];
unsigned sched_asan_fake_cached;
#endif

/* makecontext passes int arguments only: the fiber pointer goes in halves. */
static void fiber_start(unsigned hi, unsigned lo) {
    sched_fiber *f = (sched_fiber *)(uintptr_t)(((uint64_t)hi << 32) | (uint64_t)lo);
    f->asan_fake = sched_asan_fake_for_new_fiber(); /* taken as it starts: a fiber never run keeps none */
    sched_asan_after(f);
    sched_tsan_fiber_started(f);
    f->entry(f->arg);
    abort();
}

void sched_fiber_main(sched_fiber *f) {
    f->ctx = malloc(sizeof(ucontext_t));
    if (!f->ctx) abort();
    f->stack = NULL;
    f->stack_size = 0;
    f->asan_fake = NULL;
    f->converted = 0;
    sched_tsan_fiber_main(f);
}

void sched_fiber_main_done(sched_fiber *f) {
    free(f->ctx);
    f->ctx = NULL;
}

int sched_fiber_make(sched_fiber *f, size_t stack_size, void (*entry)(void *), void *arg) {
    ucontext_t *uc;
    uint64_t p = (uint64_t)(uintptr_t)f;
    size_t size = sched_stack_round(stack_size);
    void *stack = sched_stack_get(size);
    if (!stack) return -1;
    sched_asan_fresh_stack(stack, size);
    /* The context lives at the top of its own stack: no allocation per spawn. */
    uc = (ucontext_t *)(((uintptr_t)stack + size - sizeof(ucontext_t)) & ~(uintptr_t)63u);
    if (getcontext(uc) != 0) {
        sched_stack_put(stack, size);
        return -1;
    }
    uc->uc_stack.ss_sp = stack;
    uc->uc_stack.ss_size = (size_t)((uintptr_t)uc - (uintptr_t)stack);
    uc->uc_link = NULL;
    makecontext(uc, (void (*)(void))fiber_start, 2, (unsigned)(p >> 32), (unsigned)(p & 0xffffffffu));
    f->ctx = uc;
    f->stack = stack;
    f->stack_size = size;
    f->entry = entry;
    f->arg = arg;
    f->asan_fake = NULL;
    f->converted = 0;
    sched_tsan_fiber_make(f);
    return 0;
}

void sched_fiber_drop(sched_fiber *f) {
    sched_tsan_fiber_drop(f);
    if (f->stack) sched_stack_put(f->stack, f->stack_size);
    f->stack = NULL;
    f->ctx = NULL;
}

void sched_fiber_switch(sched_fiber *from, sched_fiber *to) {
    sched_asan_before(from, to, 0);
    sched_tsan_switch(to);
    if (swapcontext((ucontext_t *)from->ctx, (ucontext_t *)to->ctx) != 0) abort();
    sched_asan_after(from);
}

static void switch_for_good(sched_fiber *to) {
    ucontext_t dead; /* `from` may be the context we are standing on */
    sched_tsan_switch(to);
    swapcontext(&dead, (ucontext_t *)to->ctx);
    abort();
}

void sched_fiber_switch_final(sched_fiber *from, sched_fiber *to) {
    sched_asan_before(from, to, 1);
    switch_for_good(to);
}

void sched_fiber_switch_exit(sched_fiber *from, sched_fiber *to) {
    sched_asan_before_exit(from, to);
    switch_for_good(to);
}

#endif
