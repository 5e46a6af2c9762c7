/* Which trace points a scenario's verdicts read (scn_hook_observe): a
 * record of any other point is a diagnostic section, which the bounded
 * search does not order, so a point missing here would let the reduction
 * skip an order some verdict depends on.  Each construct that reads a
 * point -- expect count(...) and `before`, holds and their until-events,
 * await, assert, require trace / hold / expression, inside repeat and
 * callback bodies -- names one point no other construct names, and the set
 * is exactly those plus the built-in oracles' three. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scn_ast.h"
#include "scn_run_internal.h"

static const char text[] =
    "# purpose: one point per construct\n"
    "hold repair-overdue nth 1 until repair-in-flight count 1\n"
    "hold repair-closed pool default for 1ms\n"
    "event E manual\n"
    "wait X event E\n"
    "work W\n"
    "callback W\n"
    "  await drain-owed\n"
    "end\n"
    "thread A\n"
    "  arm X\n"
    "  repeat 2\n"
    "    await entry-retired\n"
    "    assert count(released) >= 0\n"
    "  end\n"
    "end\n"
    "expect count(registered) >= 0\n"
    "expect repair-submitted before repair-ran\n"
    "require trace healer-tick\n"
    "require hold repair-closed\n"
    "require count(entry-created) >= 1\n";

static const char *const want[] = {
    "cancelled",        "repair-started",    "healer-started", /* the built-in oracles */
    "repair-overdue",   "repair-in-flight",  "repair-closed",  /* holds */
    "drain-owed",       "entry-retired",     "released",       /* callback await, repeat's await and assert */
    "registered",       "repair-submitted",  "repair-ran",     /* expects */
    "healer-tick",      "entry-created",                       /* requires */
};

static void observes_exactly_the_points_some_verdict_reads(void **state) {
    scn_error e;
    scn_scenario *s = scn_parse("t.scn", text, strlen(text), &e);
    run_state run;
    size_t i, n = scn_trace_point_count(), seen = 0;
    (void)state;
    if (!s) fail_msg("%d:%d: %s", e.line, e.col, e.msg);
    memset(&run, 0, sizeof run);
    run.s = s;
    run.npoints = n;
    run.observed = calloc(n, sizeof *run.observed);
    assert_non_null(run.observed);
    scn_hook_observe(&run);
    for (i = 0; i < sizeof want / sizeof *want; i++) {
        int p = scn_trace_point_find(want[i]);
        assert_true(p >= 0);
        if (!run.observed[p]) fail_msg("%s is read by a verdict but not observed", want[i]);
    }
    for (i = 0; i < n; i++) seen += run.observed[i];
    assert_int_equal(seen, sizeof want / sizeof *want);
    free(run.observed);
    scn_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(observes_exactly_the_points_some_verdict_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
