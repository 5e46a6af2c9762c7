/* sched_run when memory runs out: a result that says so, not a crash and not
 * a blank reason.  The test stands in for calloc through the GNU linkers'
 * --wrap (harness/tests/CMakeLists.txt): built where the linker has it. */
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

static int fail_next; /* the next calloc through the wrap returns NULL */

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_without_memory_is_misuse_named_out_of_memory),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
