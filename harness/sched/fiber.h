/* Fibers: the execution contexts the controlled scheduler switches between.
 * One backend is compiled per target:
 *   fiber_x86_64.c   hand-written switch saving only callee-saved registers
 *                    and rsp (x86-64 SysV): ~25 ns round trip here, against
 *                    ~450 ns for swapcontext, which makes a signal-mask
 *                    system call each way (docs/toolchain.md).
 *   fiber_ucontext.c other Unix targets (or -DTPHEAL_FIBER_UCONTEXT=1).
 *   fiber_win32.c    Windows fibers (CreateFiberEx / SwitchToFiber).
 * Under TPHEAL_ASAN every switch is announced to AddressSanitizer
 * (fiber_asan.h), or it reports the foreign stack as an overflow; under
 * TPHEAL_TSAN every fiber is a ThreadSanitizer fiber and every switch is
 * announced as one that synchronises nothing (fiber_tsan.h).  The win32
 * backend has neither sanitizer. */
#ifndef TPHEAL_FIBER_H
#define TPHEAL_FIBER_H

#include <stddef.h>

/* Not with CET shadow stacks (-fcf-protection=return/full): the switch
 * `ret`s onto another stack, which a shadow stack rejects; glibc's
 * swapcontext knows how to switch those. */
#if defined(_WIN32)
#define SCHED_FIBER_WIN32 1
#elif defined(__x86_64__) && !defined(TPHEAL_FIBER_UCONTEXT) && !(defined(__CET__) && (__CET__ & 2))
#define SCHED_FIBER_X86_64 1
#else
#define SCHED_FIBER_UCONTEXT 1
#endif

typedef struct sched_fiber {
    void *ctx;          /* x86-64: saved rsp; win32: fiber handle; ucontext: ucontext_t* */
    void *stack;        /* lowest usable byte of the stack (NULL: the OS thread's own) */
    size_t stack_size;  /* usable bytes */
    void (*entry)(void *);
    void *arg;
    void *asan_fake;    /* ASan fake-stack handle while switched out */
    void *tsan_fiber;   /* TSan's context of this fiber (fiber_tsan.h) */
    int converted;      /* win32 main fiber: this thread was converted by us */
} sched_fiber;

/* Wraps the calling OS thread's context as the fiber to return to. */
void sched_fiber_main(sched_fiber *);
void sched_fiber_main_done(sched_fiber *);

/* Prepares a fiber that will run entry(arg) when first switched to; entry
 * must never return.  Returns 0, or -1 when no stack could be had. */
int sched_fiber_make(sched_fiber *, size_t stack_size, void (*entry)(void *), void *arg);
/* Gives a fiber's resources back (to the stack pool); it must not be running
 * and is never resumed again (abandoned mid-run fibers included). */
void sched_fiber_drop(sched_fiber *);

/* Saves the running context into `from` and resumes `to`. */
void sched_fiber_switch(sched_fiber *from, sched_fiber *to);
/* The same for a fiber that will never be resumed (finished, or the run is
 * over): lets ASan free its fake stack. */
void sched_fiber_switch_final(sched_fiber *from, sched_fiber *to);
/* The final switch of a fiber whose entry has unwound to its exit (no frame
 * of it is live but the exit path's): under ASan its fake stack is kept for
 * the next fiber instead of unmapped (fiber_asan.h). */
void sched_fiber_switch_exit(sched_fiber *from, sched_fiber *to);

/* Stack pool (fiber_stack.c, not used by the win32 backend): stacks are
 * mmap'd with a guard page below, and cached across runs because an mmap per
 * spawn would dominate a run of a few hundred scheduling points. */
void *sched_stack_get(size_t size);
void sched_stack_put(void *stack, size_t size);
void sched_stack_release_all(void);
/* A run is over: the stacks (and, under TPHEAL_TSAN, the TSan fibers)
 * dropped since the last call may be handed out again.  Under TSan nothing
 * dropped is reused in the run that dropped it (fiber_stack.c). */
void sched_fiber_recycle(void);
size_t sched_stack_round(size_t size);

#endif
