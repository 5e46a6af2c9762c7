/* Fiber stacks and the machine's page size (harness/sched/fiber_stack.c),
 * with sysconf, mmap, mprotect and munmap stood in for through the GNU
 * linkers' --wrap (CMakeLists.txt), so the test can be a machine whose page
 * is not 4 KiB (arm64 kernels use 16 and 64 KiB), one that will not say, and
 * one that refuses a guard page:
 * - a stack is rounded to the page sysconf reports, and to 4 KiB when it
 *   reports none;
 * - a stack is mapped with one guard page below it, and given back whole --
 *   stack and guard -- when the guard cannot be made and when the cache is
 *   released.
 * Linux only (the wrap), and not the race build, whose stacks are
 * recycled through TSan's annotations instead (fiber_stack.c). */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS under -std=c11 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "fiber.h"

long __real_sysconf(int name);
long __wrap_sysconf(int name);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_mprotect(void *addr, size_t len, int prot);
int __wrap_mprotect(void *addr, size_t len, int prot);
int __real_munmap(void *addr, size_t len);
int __wrap_munmap(void *addr, size_t len);

static long page = 0;         /* what sysconf(_SC_PAGESIZE) says; 0: the machine's answer */
static bool refuse_guard;     /* mprotect fails */
static void *mapped_at;       /* the last mapping */
static size_t mapped_len;
static void *unmapped_at;     /* the last unmapping */
static size_t unmapped_len;
static unsigned unmaps;

long __wrap_sysconf(int name) {
    if (name == _SC_PAGESIZE && page != 0) return page;
    return __real_sysconf(name);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    void *p = __real_mmap(addr, len, prot, flags, fd, off);
    mapped_at = p;
    mapped_len = len;
    return p;
}

int __wrap_mprotect(void *addr, size_t len, int prot) {
    if (refuse_guard) return -1;
    return __real_mprotect(addr, len, prot);
}

int __wrap_munmap(void *addr, size_t len) {
    unmapped_at = addr;
    unmapped_len = len;
    unmaps++;
    return __real_munmap(addr, len);
}

static void a_stack_is_rounded_to_the_reported_page(void **state) {
    static const struct {
        long page;
        size_t asked, want;
    } cases[] = {
        {16384, 1, 16384},          {16384, 16384, 16384},      {16384, 17 * 1024, 32768},
        {65536, 1, 65536},          {65536, 65537, 131072},     {4096, 17 * 1024, 20480},
        {-1, 17 * 1024, 20480},     {-1, 1, 16384}, /* no answer: 4 KiB pages */
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t got;
        page = cases[i].page;
        got = sched_stack_round(cases[i].asked);
        page = 0;
        if (got != cases[i].want)
            fail_msg("page %ld, %lu bytes asked: %lu, want %lu", cases[i].page, (unsigned long)cases[i].asked,
                     (unsigned long)got, (unsigned long)cases[i].want);
    }
}

/* A stack comes with one guard page below it (16 KiB pages here, so a guard
 * of 4 KiB would show); when the guard cannot be made the stack is not
 * handed out and the whole mapping is given back; a cached stack is given
 * back whole when the cache is released. */
static void a_stack_and_its_guard_are_mapped_and_unmapped_together(void **state) {
#if defined(TPHEAL_TSAN)
    (void)state;
    skip();
#else
    const size_t size = 32768;
    char *stack;
    (void)state;
    page = 16384;
    sched_stack_release_all();
    stack = sched_stack_get(size);
    assert_non_null(stack);
    assert_ptr_equal(stack, (char *)mapped_at + 16384);
    assert_int_equal(mapped_len, size + 16384);
    sched_stack_put(stack, size);
    unmaps = 0;
    sched_stack_release_all();
    assert_int_equal(unmaps, 1);
    assert_ptr_equal(unmapped_at, mapped_at);
    assert_int_equal(unmapped_len, size + 16384);

    refuse_guard = true;
    unmaps = 0;
    stack = sched_stack_get(size);
    refuse_guard = false;
    assert_null(stack);
    assert_int_equal(unmaps, 1);
    assert_ptr_equal(unmapped_at, mapped_at);
    assert_int_equal(unmapped_len, size + 16384);
    page = 0;
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_stack_is_rounded_to_the_reported_page),
        cmocka_unit_test(a_stack_and_its_guard_are_mapped_and_unmapped_together),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
