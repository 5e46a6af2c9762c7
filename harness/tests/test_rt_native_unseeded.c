/* The native runtime before any run driver has run -- the state of a program
 * that links the installed library, which never calls rt_native_run.  The sim
 * draws from rt_choose there too (a timer's point in its window: the healer's
 * periodic timer on the first cancellation), and an unseeded stream made that
 * draw loop forever under the registry lock.  Its own executable, so no test
 * before it has seeded anything.  And rt_end_process there, on a thread no
 * run spawned: no run to end, so a message and an abort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rt.h"
#include "rt_native.h"
#include "test_abort_util.h"

#define DRAWS 64

static uint32_t in_run[DRAWS];
static void draw_in_run(void *arg) {
    (void)arg;
    for (int i = 0; i < DRAWS; i++) in_run[i] = rt_choose(251u + (uint32_t)i);
}

/* Every width a window can give (n = window_ms + 1) returns, in range, and
 * the stream is the one a run seeded with 0 draws: no hidden seeding step,
 * and nothing a consumer's program must call first. */
static void test_choose_before_any_run_is_the_seed_zero_stream(void **st) {
    (void)st;
    uint32_t before[DRAWS];
    int distinct = 0;
    for (int i = 0; i < DRAWS; i++) {
        before[i] = rt_choose(251u + (uint32_t)i);
        assert_true(before[i] < 251u + (uint32_t)i);
        if (i > 0 && before[i] != before[i - 1]) distinct++;
    }
    assert_true(distinct > DRAWS / 2); /* a stuck generator repeats itself */
    assert_int_equal(rt_choose(1u), 0);
    assert_int_equal(rt_choose(0u), 0);

    rt_native_options o;
    rt_native_options_default(&o); /* seed 0 */
    assert_int_equal(rt_native_run(draw_in_run, NULL, &o), 0);
    assert_memory_equal(before, in_run, sizeof before);
}

/* A consumer's own thread calling rt_end_process ends nothing the runtime
 * could report (no run driver waits for it): the process must abort, and
 * stderr is the only place the reason can go, so it is written before the
 * abort.  In a forked child with stderr a pipe; first in this executable,
 * so the fork copies a process with no other thread (no lock left held). */
static void end_process_from_a_stranger(void) {
    rt_end_process("from a stranger");
}
static void test_end_process_outside_a_run_says_so_then_aborts(void **st) {
    (void)st;
    expect_abort(end_process_from_a_stranger, "rt_native: rt_end_process(from a stranger) outside a run thread\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_end_process_outside_a_run_says_so_then_aborts),
        cmocka_unit_test(test_choose_before_any_run_is_the_seed_zero_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
