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
#include <stdio.h>
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

/* So does every other call of the model, each by its own name, before it
 * touches the process (a call that took the model's lock first would
 * crash on the missing process instead of saying which call it was). */
#define BOGUS(kind) ((kind *)(uintptr_t)0x10)
static const int64_t soon = -1;
static sim_object_stats obj_stats;
static sim_pool_stats pool_stats;
static sim_misuse one_misuse;
static sim_fault no_fault;
static sim_stall never;
static void c_event_create(void) { (void)tph_os_event_create(false, false); }
static void c_event_set(void) { tph_os_event_set(BOGUS(tph_os_event)); }
static void c_event_reset(void) { tph_os_event_reset(BOGUS(tph_os_event)); }
static void c_event_wait(void) { (void)tph_os_event_wait(BOGUS(tph_os_event), 0); }
static void c_event_close(void) { tph_os_event_close(BOGUS(tph_os_event)); }
static void c_event_is_set(void) { (void)sim_event_is_set(BOGUS(tph_os_event)); }
static void c_group_create(void) { (void)tph_os_group_create(); }
static void c_group_close_members(void) { tph_os_group_close_members(BOGUS(tph_os_group), false, NULL); }
static void c_group_close(void) { tph_os_group_close(BOGUS(tph_os_group)); }
static void c_file_create(void) { (void)sim_file_create(); }
static void c_io_create(void) { (void)tph_os_io_create(NULL, NULL, NULL, NULL); }
static void c_io_start(void) { tph_os_io_start(BOGUS(tph_os_io)); }
static void c_io_cancel(void) { tph_os_io_cancel(BOGUS(tph_os_io)); }
static void c_io_complete(void) { (void)sim_io_complete(NULL, NULL, 0, 0); }
static void c_io_wait(void) { tph_os_io_wait(BOGUS(tph_os_io), false); }
static void c_io_close(void) { tph_os_io_close(BOGUS(tph_os_io)); }
static void c_object_stats(void) { (void)sim_object_stats_get(NULL, &obj_stats); }
static void c_object_handle(void) { (void)sim_object_handle(SIM_OBJ_WORK, 1); }
static void c_pool_create(void) { (void)tph_os_pool_create(); }
static void c_pool_set_max(void) { tph_os_pool_set_max(BOGUS(tph_os_pool), 1); }
static void c_pool_set_min(void) { (void)tph_os_pool_set_min(BOGUS(tph_os_pool), 1); }
static void c_pool_close(void) { tph_os_pool_close(BOGUS(tph_os_pool)); }
static void c_pool_stats(void) { (void)sim_pool_stats_get(NULL, &pool_stats); }
static void c_pool_count(void) { (void)sim_pool_count(); }
static void c_pool_at(void) { (void)sim_pool_at(0); }
static void c_severed(void) { (void)sim_any_pool_severed_with_queued(); }
static void c_set_stall(void) { sim_set_stall(NULL, never); }
static void c_start_delay(void) { sim_pool_set_start_delay(NULL, 1); }
static void c_private_stall(void) { sim_set_private_stall(never); }
static void c_hold_factory(void) { sim_pool_hold_factory(NULL, true); }
static void c_retire(void) { sim_pool_retire_idle_workers(NULL); }
static void c_misuse_count(void) { (void)sim_misuse_count(); }
static void c_misuse_get(void) { (void)sim_misuse_get(0, &one_misuse); }
static void c_fault_arm(void) { sim_fault_arm(&no_fault); }
static void c_fault_disarm(void) { sim_fault_disarm_all(); }
static void c_fault_calls(void) { (void)sim_fault_calls(SIM_FAULT_WORK_CREATE); }
static void c_fault_matching(void) { (void)sim_fault_matching_calls(SIM_FAULT_WORK_CREATE); }
static void c_fault_fired(void) { (void)sim_fault_fired(SIM_FAULT_WORK_CREATE); }
static void c_timer_create(void) { (void)tph_os_timer_create(NULL, NULL, NULL); }
static void c_timer_set(void) { tph_os_timer_set(BOGUS(tph_os_timer), &soon, 0, 0); }
static void c_timer_is_set(void) { (void)tph_os_timer_is_set(BOGUS(tph_os_timer)); }
static void c_timer_wait(void) { tph_os_timer_wait(BOGUS(tph_os_timer), false); }
static void c_timer_close(void) { tph_os_timer_close(BOGUS(tph_os_timer)); }
static void c_wait_create(void) { (void)tph_os_wait_create(NULL, NULL, NULL); }
static void c_wait_set(void) { tph_os_wait_set(BOGUS(tph_os_wait), NULL, 0); }
static void c_wait_wait(void) { tph_os_wait_wait(BOGUS(tph_os_wait), false); }
static void c_wait_close(void) { tph_os_wait_close(BOGUS(tph_os_wait)); }
static void c_work_create(void) { (void)tph_os_work_create(NULL, NULL, NULL); }
static void c_work_submit(void) { tph_os_work_submit(BOGUS(tph_os_work)); }
static void c_work_wait(void) { tph_os_work_wait(BOGUS(tph_os_work), false); }
static void c_work_close(void) { tph_os_work_close(BOGUS(tph_os_work)); }

static void (*call)(void);
static void call_without_process(void *arg) {
    (void)arg;
    call();
}
static void run_call_without_process(void) {
    sched_options o;
    sched_result r;
    sched_options_default(&o);
    (void)sched_run(&o, call_without_process, NULL, &r);
}
static void test_every_model_call_without_process_aborts_naming_itself(void **st) {
    static const struct {
        void (*fn)(void);
        const char *name;
    } calls[] = {
        {c_event_create, "CreateEvent"},
        {c_event_set, "SetEvent"},
        {c_event_reset, "ResetEvent"},
        {c_event_wait, "WaitForSingleObject"},
        {c_event_close, "CloseHandle"},
        {c_event_is_set, "sim_event_is_set"},
        {c_group_create, "CreateThreadpoolCleanupGroup"},
        {c_group_close_members, "CloseThreadpoolCleanupGroupMembers"},
        {c_group_close, "CloseThreadpoolCleanupGroup"},
        {c_file_create, "sim_file_create"},
        {c_io_create, "CreateThreadpoolIo"},
        {c_io_start, "StartThreadpoolIo"},
        {c_io_cancel, "CancelThreadpoolIo"},
        {c_io_complete, "sim_io_complete"},
        {c_io_wait, "WaitForThreadpoolIoCallbacks"},
        {c_io_close, "CloseThreadpoolIo"},
        {c_object_stats, "sim_object_stats_get"},
        {c_object_handle, "sim_object_handle"},
        {c_pool_create, "CreateThreadpool"},
        {c_pool_set_max, "SetThreadpoolThreadMaximum"},
        {c_pool_set_min, "SetThreadpoolThreadMinimum"},
        {c_pool_close, "CloseThreadpool"},
        {c_pool_stats, "sim_pool_stats_get"},
        {c_pool_count, "sim_pool_count"},
        {c_pool_at, "sim_pool_at"},
        {c_severed, "sim_any_pool_severed_with_queued"},
        {c_set_stall, "sim_set_stall"},
        {c_start_delay, "sim_pool_set_start_delay"},
        {c_private_stall, "sim_set_private_stall"},
        {c_hold_factory, "sim_pool_hold_factory"},
        {c_retire, "sim_pool_retire_idle_workers"},
        {c_misuse_count, "sim_misuse_count"},
        {c_misuse_get, "sim_misuse_get"},
        {c_fault_arm, "sim_fault_arm"},
        {c_fault_disarm, "sim_fault_disarm_all"},
        {c_fault_calls, "sim_fault_*"},
        {c_fault_matching, "sim_fault_*"},
        {c_fault_fired, "sim_fault_fired"},
        {c_timer_create, "CreateThreadpoolTimer"},
        {c_timer_set, "SetThreadpoolTimer"},
        {c_timer_is_set, "IsThreadpoolTimerSet"},
        {c_timer_wait, "WaitForThreadpoolTimerCallbacks"},
        {c_timer_close, "CloseThreadpoolTimer"},
        {c_wait_create, "CreateThreadpoolWait"},
        {c_wait_set, "SetThreadpoolWait"},
        {c_wait_wait, "WaitForThreadpoolWaitCallbacks"},
        {c_wait_close, "CloseThreadpoolWait"},
        {c_work_create, "CreateThreadpoolWork"},
        {c_work_submit, "SubmitThreadpoolWork"},
        {c_work_wait, "WaitForThreadpoolWorkCallbacks"},
        {c_work_close, "CloseThreadpoolWork"},
    };
    size_t i;
    (void)st;
    for (i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char want[160];
        call = calls[i].fn;
        snprintf(want, sizeof want, "sim: %s called with no simulated process (sim_process_begin missing)\n",
                 calls[i].name);
        expect_abort(run_call_without_process, want);
    }
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
        cmocka_unit_test(test_every_model_call_without_process_aborts_naming_itself),
        cmocka_unit_test(test_second_process_begin_aborts),
        cmocka_unit_test(test_end_process_that_returns_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
