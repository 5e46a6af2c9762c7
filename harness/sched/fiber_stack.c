/* Fiber stacks for the x86-64 and ucontext backends: mmap'd with a
 * PROT_NONE guard page below (an overflow faults instead of silently
 * corrupting the next stack) and cached across runs.  A free stack holds
 * the free-list link in its own lowest bytes. */
#if !defined(_WIN32)
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS under -std=c11 */
#endif

#include "fiber.h"

#if !defined(SCHED_FIBER_WIN32)

#include <stdint.h>
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

/* Under TSan a stack is never reused: its shadow still holds the accesses
 * of the fiber that had it, which no edge orders before the next one's, so
 * the first frame of every reused stack was a race on the stack (measured).
 * An munmap clears the shadow; the mmap is made with the calling fiber's
 * accesses ignored, because TSan records an mmap as a write of the whole
 * mapping by its caller -- the spawning fiber, which the new one is not
 * ordered after either. */
#if defined(TPHEAL_TSAN)
void *sched_stack_get(size_t size) {
    size_t guard = page_size();
    char *base;
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
    size_t guard = page_size();
    munmap((char *)stack - guard, size + guard);
}

void sched_stack_release_all(void) {}
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
#endif

#endif /* the win32 backend pools its own fibers (fiber_win32.c) */
