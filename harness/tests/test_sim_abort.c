/* The sim's harness-bug stops: misuse of the model by the harness itself
 * (not by the core, whose misuse is recorded and survived) has nobody to
 * report to, so the process writes one line to stderr and aborts -- a free
 * of a block the simulated process never allocated, the model out of
 * memory, a pool call under the controlled scheduler before
 * sim_process_begin, a second sim_process_begin -- and rt_end_process
 * aborts when the installed runtime's end_process breaks its contract and
 * returns.  Each in a forked child with stderr a pipe, as
 * test_rt_native_unseeded.c does: no test here starts a thread in the
 * parent, so every fork copies a process with one thread (no lock left
 * held). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "os.h"
#include "rt.h"
#include "rt_impl.h"
#include "rt_sched.h"
#include "sim.h"
#include "sim_model.h"
#include "test_abort_util.h"

/* ASan builds: an impossible malloc returns NULL, as the C library's does,
 * instead of ending the process with ASan's own report (the out-of-memory
 * stop below is the sim's answer to that NULL). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
/* The race build's options are the runtime's (harness/sched/sched_race.c),
 * which ask the same of its allocator. */

/* A block whose header is not the sim's: zeroes where the magic would be
 * (well inside a buffer of ours, so the check reads memory we own). */
static void free_foreign_block(void) {
    static uint64_t buf[32];
    tph_os_free(&buf[16]); /* no process: the untracked path */
}
static void test_free_of_a_foreign_block_aborts(void **st) {
    (void)st;
    expect_abort(free_foreign_block, "sim: free of a block the simulated process did not allocate\n");
}

static void zalloc_the_impossible(void) {
    sim_process_begin(NULL);
    (void)sim_zalloc(SIZE_MAX / 2);
}
static void test_model_out_of_memory_aborts(void **st) {
    (void)st;
    expect_abort(zalloc_the_impossible, "sim: out of memory\n");
}

/* Under the controlled scheduler a missing sim_process_begin is a harness
 * bug, named by the call that found it (on the native runtime the first
 * call would begin a default process instead). */
static void TPH_OS_CALLBACK nop_work(tph_os_instance *i, void *c, tph_os_work *w) { (void)i, (void)c, (void)w; }
static void create_without_process(void *arg) {
    (void)arg;
    (void)tph_os_work_create(nop_work, NULL, NULL);
}
static void run_without_process(void) {
    sched_options o;
    sched_result r;
    sched_options_default(&o);
    (void)sched_run(&o, create_without_process, NULL, &r);
}
static void test_pool_call_without_process_under_the_scheduler_aborts(void **st) {
    (void)st;
    expect_abort(run_without_process,
                 "sim: CreateThreadpoolWork called with no simulated process (sim_process_begin missing)\n");
}

static void begin_twice(void) {
    sim_process_begin(NULL);
    sim_process_begin(NULL);
}
static void test_second_process_begin_aborts(void **st) {
    (void)st;
    expect_abort(begin_twice, "sim: sim_process_begin while a process is active\n");
}

/* A runtime whose end_process returns: rt_end_process must still not
 * return to a caller that relies on it never doing so. */
static rt_ops returning_ops;
static void end_process_returns(const char *reason) { (void)reason; }
static void end_through_a_returning_runtime(void) {
    returning_ops = *rt_installed();
    returning_ops.end_process = end_process_returns;
    rt_install(&returning_ops);
    rt_end_process("contract broken");
}
static void test_end_process_that_returns_aborts(void **st) {
    (void)st;
    expect_abort(end_through_a_returning_runtime, "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_of_a_foreign_block_aborts),
        cmocka_unit_test(test_model_out_of_memory_aborts),
        cmocka_unit_test(test_pool_call_without_process_under_the_scheduler_aborts),
        cmocka_unit_test(test_second_process_begin_aborts),
        cmocka_unit_test(test_end_process_that_returns_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
