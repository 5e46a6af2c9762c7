/* Fiber stacks for the x86-64 and ucontext backends: mmap'd with a
 * PROT_NONE guard page below (an overflow faults instead of silently
 * corrupting the next stack) and cached across runs.  A free stack holds
 * the free-list link in its own lowest bytes. */
#if !defined(_WIN32)
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS under -std=c11 */
#endif

#include "fiber.h"

#if !defined(SCHED_FIBER_WIN32)

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "fiber_asan.h"
#include <unistd.h>

#if defined(TPHEAL_TSAN)
/* ThreadSanitizer's dynamic annotations (no public header declares them). */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#endif

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

#if !defined(TPHEAL_TSAN)
typedef struct free_stack {
    struct free_stack *next;
    size_t size;
} free_stack;

static free_stack *pool;
#endif

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096u;
}

size_t sched_stack_round(size_t size) {
    size_t p = page_size();
    if (size < 16u * 1024u) size = 16u * 1024u;
    return (size + p - 1u) / p * p;
}

/* Under TSan a stack, and a TSan fiber, are reused only in a later run.  A
 * stack's shadow still holds the accesses of the fiber that had it, which
 * nothing in the same run orders before the next owner's (every reused
 * stack's first frame was a race, measured); after the run, the run's end
 * orders all of them before its caller (sched_tsan.h), which releases each
 * recycled stack's first byte, and the next owner acquires it as it starts.
 * Unmapping instead (which clears the shadow) and creating a TSan fiber per
 * thread cost 1.7 ms a run of work-cancel-pending, 70% of it in munmap's TLB
 * shootdowns (perf): recycling is what keeps the race build's rate usable.
 * A new mapping is made with the caller's accesses ignored, because TSan
 * records an mmap as a write of the whole mapping by its caller -- the
 * spawning fiber, which the new one is not ordered after. */
#if defined(TPHEAL_TSAN)
#include <sanitizer/tsan_interface.h>

typedef struct free_stack {
    struct free_stack *next;
    size_t size;
} free_stack;

/* cache: may be handed out; quarantine: dropped in the run going on */
static free_stack *pool, *quarantine;
static void **fiber_cache, **fiber_quarantine;
static size_t nfiber_cache, nfiber_quarantine, capfiber_cache, capfiber_quarantine;

void *sched_stack_get(size_t size) {
    free_stack **link;
    size_t guard = page_size();
    char *base;
    for (link = &pool; *link; link = &(*link)->next) {
        if ((*link)->size == size) {
            free_stack *st = *link;
            *link = st->next;
            return st;
        }
    }
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    base = mmap(NULL, size + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    if (base == MAP_FAILED) return NULL;
    if (mprotect(base, guard, PROT_NONE) != 0) {
        munmap(base, size + guard);
        return NULL;
    }
    return base + guard;
}

void sched_stack_put(void *stack, size_t size) {
    free_stack *st = stack;
    st->size = size;
    st->next = quarantine;
    quarantine = st;
}

static bool push(void ***a, size_t *n, size_t *cap, void *v) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        void **b = realloc(*a, c * sizeof *b);
        if (!b) return false;
        *a = b;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return true;
}

void *sched_tsan_fiber_get(void) {
    return nfiber_cache ? fiber_cache[--nfiber_cache] : __tsan_create_fiber(0);
}

void sched_tsan_fiber_put(void *fiber) {
    if (!push(&fiber_quarantine, &nfiber_quarantine, &capfiber_quarantine, fiber)) __tsan_destroy_fiber(fiber);
}

void sched_fiber_recycle(void) {
    while (quarantine) {
        free_stack *st = quarantine;
        quarantine = st->next;
        __tsan_release(st);
        st->next = pool;
        pool = st;
    }
    while (nfiber_quarantine) {
        void *f = fiber_quarantine[--nfiber_quarantine];
        if (!push(&fiber_cache, &nfiber_cache, &capfiber_cache, f)) __tsan_destroy_fiber(f);
    }
}

void sched_stack_release_all(void) {
    size_t guard = page_size();
    sched_fiber_recycle();
    while (pool) {
        free_stack *st = pool;
        pool = st->next;
        munmap((char *)st - guard, st->size + guard);
    }
    while (nfiber_cache) __tsan_destroy_fiber(fiber_cache[--nfiber_cache]);
    free(fiber_cache);
    free(fiber_quarantine);
    fiber_cache = fiber_quarantine = NULL;
    capfiber_cache = capfiber_quarantine = 0;
}
#else
void *sched_stack_get(size_t size) {
    free_stack **link;
    size_t guard = page_size();
    char *base;
    for (link = &pool; *link; link = &(*link)->next) {
        if ((*link)->size == size) {
            free_stack *s = *link;
            *link = s->next;
            return s;
        }
    }
    base = mmap(NULL, size + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    if (mprotect(base, guard, PROT_NONE) != 0) {
        munmap(base, size + guard);
        return NULL;
    }
    return base + guard;
}

void sched_stack_put(void *stack, size_t size) {
    free_stack *s = stack;
    sched_asan_fresh_stack(stack, size);
    s->size = size;
    s->next = pool;
    pool = s;
}

void sched_stack_release_all(void) {
    size_t guard = page_size();
    while (pool) {
        free_stack *s = pool;
        pool = s->next;
        munmap((char *)s - guard, s->size + guard);
    }
}

void sched_fiber_recycle(void) {}
#endif

#endif /* the win32 backend pools its own fibers (fiber_win32.c) */
