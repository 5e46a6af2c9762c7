/* Fiber stacks (harness/sched/fiber_stack.c): the cache sched_release_cache
 * empties gives back every byte it mapped, a stack abandoned mid-call
 * is recycled clean under AddressSanitizer, and a stack size is rounded up,
 * never down.  POSIX backends only: the win32
 * backend pools its own fibers. */
#if !defined(_WIN32)
#define _DEFAULT_SOURCE 1 /* mincore under -std=c11 */
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#if !defined(_WIN32)
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#if defined(TPHEAL_ASAN)
#include <sanitizer/asan_interface.h>
#endif

#include "fiber.h" /* sched_stack_round */
#include "test_sched_util.h"

#define STACK (64u * 1024u) /* a multiple of every page size */

/* Where a thread's stack is: the frame of the function it runs, a few
 * hundred bytes below the top of its stack, in the stack's top page. */
static void note_frame(void *p) { *(uintptr_t *)p = (uintptr_t)__builtin_frame_address(0); }

static void stacks_are_unmapped_whole_on_release(void **state) {
#if defined(_WIN32) || !defined(__linux__)
    (void)state;
    (void)note_frame;
    skip();
#else
    uintptr_t frame = 0, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    unsigned char vec[1];
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.stack_size = STACK;
    assert_int_equal(sched_run(&o, note_frame, &frame, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    sched_result_free(&r);
    assert_true(frame != 0);
    /* After the run the stack is cached, still mapped ... */
    assert_int_equal(mincore((void *)(frame & ~(page - 1)), page, vec), 0);
    /* ... and once the cache is released no page of it is: mincore fails
     * with ENOMEM on an unmapped page. */
    sched_release_cache();
    errno = 0;
    assert_int_equal(mincore((void *)(frame & ~(page - 1)), page, vec), -1);
    assert_int_equal(errno, ENOMEM);
#endif
}

#if defined(TPHEAL_ASAN)
/* A daemon abandoned mid-call leaves its frames' redzones poisoned, down to
 * the lowest bytes of its stack if its calls went that deep -- the bytes
 * where the free stack keeps its free-list link.  Poisoned here by hand,
 * exactly there, and the daemon then blocks for good: the run ends, the
 * fiber is dropped and its stack goes back to the cache, which must clear
 * the poison before it writes the link (an instrumented write into poison
 * is a report, fatal in this build). */
typedef struct abandoned {
    rt_lock lock;
    rt_waitq q;
} abandoned;

static void poison_bottom_and_block(void *p) {
    abandoned *a = (abandoned *)p;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t top = ((uintptr_t)__builtin_frame_address(0) + page - 1) & ~(page - 1);
    __asan_poison_memory_region((void *)(top - STACK), 64);
    rt_lock_acquire(&a->lock);
    rt_wait(&a->q, &a->lock, RT_FOREVER, "nobody");
}

/* Main sleeps: the daemon, alone runnable, runs until it blocks. */
static void abandon_main(void *p) {
    (void)rt_spawn("abandoned", poison_bottom_and_block, p, true);
    rt_sleep_until(rt_now() + 10000000ull);
}
#endif

static void a_stack_abandoned_mid_call_is_recycled_clean(void **state) {
#if !defined(TPHEAL_ASAN) || defined(_WIN32)
    (void)state;
    skip();
#else
    uint64_t seed;
    (void)state;
    for (seed = 0; seed < 8; seed++) {
        abandoned a;
        sched_options o;
        sched_result r;
        memset(&a, 0, sizeof a);
        sched_options_default(&o);
        o.seed = seed;
        o.stack_size = STACK;
        assert_int_equal(sched_run(&o, abandon_main, &a, &r), 0);
        assert_int_equal(r.status, SCHED_OK);
        sched_result_free(&r);
    }
#endif
}

/* A thread whose stack cannot be mapped is not made: the run says so and
 * gives back what it had taken for the thread (the ASan build's leak check
 * sees a thread record kept after its fiber failed).  Half the address
 * space is more than any mmap can give, on every POSIX target. */
static void nop_main(void *p) { *(int *)p = 1; }

static void a_stack_that_cannot_be_mapped_fails_the_run_cleanly(void **state) {
#if defined(_WIN32)
    (void)state;
    (void)nop_main;
    skip();
#else
    int ran = 0;
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.stack_size = SIZE_MAX / 2;
    assert_int_equal(sched_run(&o, nop_main, &ran, &r), -1);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_string_equal(r.reason, "out of memory (thread or fiber stack)");
    assert_int_equal(ran, 0);
    sched_result_free(&r);
    /* and the next run, with a stack that fits, is whole */
    o.stack_size = STACK;
    assert_int_equal(sched_run(&o, nop_main, &ran, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(ran, 1);
    sched_result_free(&r);
#endif
}

/* sched_options.stack_size is rounded up to pages (rt_sched.h), with a 16 KiB
 * floor: a thread never gets fewer bytes than it asked for.  Sizes just past
 * the floor are the ones a floor test can get wrong (16 KiB + 1 clamped back
 * down to 16 KiB would be a stack smaller than the request). */
static void a_stack_is_never_smaller_than_asked(void **state) {
#if defined(_WIN32)
    (void)state;
    skip();
#else
    static const size_t asked[] = {0,
                                   1,
                                   16u * 1024u - 1u,
                                   16u * 1024u,
                                   16u * 1024u + 1u,
                                   16u * 1024u + 512u,
                                   17u * 1024u - 1u,
                                   17u * 1024u,
                                   64u * 1024u + 1u};
    size_t page = (size_t)sysconf(_SC_PAGESIZE), i;
    (void)state;
    for (i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        size_t want = asked[i] < 16u * 1024u ? 16u * 1024u : asked[i];
        size_t got = sched_stack_round(asked[i]);
        if (got < want || got % page != 0 || got >= want + page)
            fail_msg("stack_size %lu: rounded to %lu, want the first page multiple >= %lu", (unsigned long)asked[i],
                     (unsigned long)got, (unsigned long)want);
    }
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stacks_are_unmapped_whole_on_release),
        cmocka_unit_test(a_stack_abandoned_mid_call_is_recycled_clean),
        cmocka_unit_test(a_stack_that_cannot_be_mapped_fails_the_run_cleanly),
        cmocka_unit_test(a_stack_is_never_smaller_than_asked),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
