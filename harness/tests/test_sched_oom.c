/* sched_run and memory: a run that cannot allocate says so (not a crash,
 * not a blank reason), and the schedule string grows geometrically.  The
 * test stands in for calloc and realloc through the GNU linkers' --wrap
 * (harness/tests/CMakeLists.txt): built where the linker has it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_sched_util.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);

static int fail_next; /* the next calloc through the wrap returns NULL */
static unsigned reallocs; /* reallocs through the wrap */

void *__wrap_realloc(void *p, size_t size) {
    reallocs++;
    return __real_realloc(p, size);
}

void *__wrap_calloc(size_t n, size_t size) {
    if (fail_next) {
        fail_next = 0;
        return NULL;
    }
    return __real_calloc(n, size);
}

static int ran;
static void main_fn(void *p) {
    (void)p;
    ran = 1;
}

/* The run's own state is sched_run's first allocation: without it no run
 * starts, and the result names the cause. */
static void a_run_without_memory_is_misuse_named_out_of_memory(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    ran = 0;
    fail_next = 1;
    assert_int_equal(sched_run(&o, main_fn, NULL, &r), -1);
    assert_int_equal(fail_next, 0);
    assert_int_equal(ran, 0);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_string_equal(r.reason, "out of memory");
    sched_result_free(&r);
    /* and the next run is whole */
    assert_int_equal(sched_run(&o, main_fn, NULL, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(ran, 1);
    sched_result_free(&r);
}

/* The schedule string grows geometrically: a run recording some thousand
 * characters of it reallocates a handful of times, not once an item. */
static void the_schedule_grows_geometrically(void **state) {
    counter_prog c;
    sched_result r;
    (void)state;
    counter_init(&c, 3, 200);
    reallocs = 0;
    r = run_counter(1, NULL, &c);
    assert_int_equal(r.status, SCHED_OK);
    assert_non_null(r.schedule);
    /* 4532 characters: 256 doubled 5 times; the rest is the run's tables */
    assert_true(strlen(r.schedule) > 4000);
    assert_true(reallocs <= 16);
    sched_result_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_without_memory_is_misuse_named_out_of_memory),
        cmocka_unit_test(the_schedule_grows_geometrically),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
