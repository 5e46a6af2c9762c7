/* Windows fiber backend (mingw and MSVC): CreateFiberEx / SwitchToFiber.
 *
 * Windows fibers are pooled across runs like the POSIX stacks: creating and
 * deleting one per spawn cost ~120 us under Wine (1,500 schedules/s on a
 * 3-thread run).  A Windows fiber cannot be reset to a fresh start, so each
 * pooled one runs fiber_proc, which marks its top with setjmp: a fiber
 * handed out again is flagged `restart`, and when it is next resumed --
 * inside a switch, wherever it was parked (finished, or abandoned mid-run
 * like a daemon) -- it jumps back to that mark and runs its new entry. */
#include "fiber.h"

#if defined(SCHED_FIBER_WIN32)

#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0600 /* IsThreadAFiber */
#endif
#include <setjmp.h>
#include <stdlib.h>
#include <windows.h>

/* GCC's builtins jump without SEH unwinding of the abandoned frames. */
#if defined(__GNUC__)
typedef void *fiber_jmp[5];
#define FIBER_SETJMP(b) __builtin_setjmp(b)
#define FIBER_LONGJMP(b) __builtin_longjmp(b, 1)
#else
typedef jmp_buf fiber_jmp;
#define FIBER_SETJMP(b) setjmp(b)
#define FIBER_LONGJMP(b) longjmp(b, 1)
#endif

/* MSVC x64's jmp_buf is 16-byte aligned: the struct is padded for it, which
 * /W4 reports (C4324, an error with /WX).  The padding is what the alignment
 * asks for; nothing to change but the report. */
#if defined(_MSC_VER) && !defined(__clang__)
#pragma warning(push)
#pragma warning(disable : 4324)
#endif
typedef struct win_fiber {
    void *handle;
    size_t size;
    sched_fiber *owner; /* the sched_fiber it currently runs */
    volatile int restart;
    fiber_jmp top;
    struct win_fiber *next; /* pool link */
} win_fiber;
#if defined(_MSC_VER) && !defined(__clang__)
#pragma warning(pop)
#endif

static win_fiber *pool;

static void WINAPI fiber_proc(void *p) {
    win_fiber *volatile w = (win_fiber *)p;
    (void)FIBER_SETJMP(w->top);
    w->restart = 0;
    w->owner->entry(w->owner->arg);
    abort(); /* entry functions never return */
}

/* GCC 12 flags mingw's inline __readgsqword (behind GetCurrentFiber) with
 * -Warray-bounds at -O2: a false positive in the system header. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
void sched_fiber_main(sched_fiber *f) {
    win_fiber *w = (win_fiber *)calloc(1, sizeof *w);
    if (!w) abort();
    f->stack = NULL;
    f->stack_size = 0;
    f->asan_fake = NULL;
    if (IsThreadAFiber()) {
        w->handle = GetCurrentFiber();
        f->converted = 0;
    } else {
        w->handle = ConvertThreadToFiberEx(NULL, FIBER_FLAG_FLOAT_SWITCH);
        if (!w->handle) abort();
        f->converted = 1;
    }
    w->owner = f;
    f->ctx = w;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void sched_fiber_main_done(sched_fiber *f) {
    if (f->converted) ConvertFiberToThread();
    free(f->ctx);
    f->ctx = NULL;
    f->converted = 0;
}

int sched_fiber_make(sched_fiber *f, size_t stack_size, void (*entry)(void *), void *arg) {
    win_fiber **link, *w = NULL;
    for (link = &pool; *link; link = &(*link)->next) {
        if ((*link)->size == stack_size) {
            w = *link;
            *link = w->next;
            w->restart = 1;
            break;
        }
    }
    if (!w) {
        w = (win_fiber *)calloc(1, sizeof *w);
        if (!w) return -1;
        w->size = stack_size;
        w->handle = CreateFiberEx(stack_size, stack_size, FIBER_FLAG_FLOAT_SWITCH, fiber_proc, w);
        if (!w->handle) {
            free(w);
            return -1;
        }
    }
    w->owner = f;
    f->ctx = w;
    f->entry = entry;
    f->arg = arg;
    f->stack = NULL;
    f->stack_size = stack_size;
    f->asan_fake = NULL;
    f->converted = 0;
    return 0;
}

void sched_fiber_drop(sched_fiber *f) {
    win_fiber *w = (win_fiber *)f->ctx;
    if (!w) return;
    w->owner = NULL;
    w->next = pool;
    pool = w;
    f->ctx = NULL;
}

/* After resuming: a fiber that was handed out again starts over.  `self` is
 * read before the switch: the sched_fiber that parked here may be freed. */
static void resumed(win_fiber *self) {
    if (self->restart) FIBER_LONGJMP(self->top);
}

void sched_fiber_switch(sched_fiber *from, sched_fiber *to) {
    win_fiber *self = (win_fiber *)from->ctx;
    SwitchToFiber(((win_fiber *)to->ctx)->handle);
    resumed(self);
}

void sched_fiber_switch_final(sched_fiber *from, sched_fiber *to) {
    win_fiber *self = (win_fiber *)from->ctx;
    SwitchToFiber(((win_fiber *)to->ctx)->handle);
    resumed(self);
    abort(); /* only a restart may resume a final switch */
}

/* No sanitizer here: an exit is a final switch. */
void sched_fiber_switch_exit(sched_fiber *from, sched_fiber *to) { sched_fiber_switch_final(from, to); }

void *sched_stack_get(size_t size) { (void)size; return NULL; }
void sched_stack_put(void *stack, size_t size) { (void)stack; (void)size; }
size_t sched_stack_round(size_t size) { return size; }

void sched_fiber_recycle(void) {}

void sched_stack_release_all(void) {
    while (pool) {
        win_fiber *w = pool;
        pool = w->next;
        DeleteFiber(w->handle);
        free(w);
    }
}

#endif
