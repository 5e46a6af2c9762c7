/* What the bounded search orders among a scenario's trace records
 * (scn_hook_observe): the count slots a verdict reads while the run goes on
 * (await, assert, `before`) and the points of holds and their until-events.
 * A record writes a slot missing here without announcing it, so a slot
 * missing would let the reduction skip an order some verdict depends on;
 * a slot here that nothing reads mid-run (an `expect` or `require`, read
 * after the settle) costs traces for nothing.  Each construct names a point
 * no other construct names. */
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
    "pool P private\n"
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
    "    await entry-retired pool P\n"
    "    assert count(released) >= 0\n"
    "  end\n"
    "end\n"
    "expect count(registered) >= 0\n"
    "expect repair-submitted before repair-ran\n"
    "require trace healer-tick\n"
    "require hold repair-closed\n"
    "require count(entry-created) >= 1\n";

typedef struct slot_want {
    const char *point;
    int pool; /* -1: the total; else the scenario's pool index (P is 1) */
} slot_want;

static const slot_want watched[] = {
    {"drain-owed", -1},       /* a callback's await */
    {"entry-retired", 1},     /* an await in a repeat, on one pool */
    {"released", -1},         /* an assert in a repeat */
    {"repair-submitted", -1}, /* `before`: both sides */
    {"repair-ran", -1},
};
static const char *const held[] = {"repair-overdue", "repair-in-flight", "repair-closed"};

static void watches_exactly_the_slots_read_mid_run(void **state) {
    scn_error e;
    scn_scenario *s = scn_parse("t.scn", text, strlen(text), &e);
    run_state run;
    size_t i, n = scn_trace_point_count(), seen = 0, nslots;
    (void)state;
    if (!s) fail_msg("%d:%d: %s", e.line, e.col, e.msg);
    memset(&run, 0, sizeof run);
    run.s = s;
    run.npoints = n;
    nslots = n * (s->npools + 1);
    run.watched = calloc(nslots, sizeof *run.watched);
    run.held = calloc(n, sizeof *run.held);
    assert_true(run.watched && run.held);
    scn_hook_observe(&run);
    for (i = 0; i < sizeof watched / sizeof *watched; i++) {
        int p = scn_trace_point_find(watched[i].point);
        assert_true(p >= 0);
        if (!run.watched[count_slot(&run, p, watched[i].pool)])
            fail_msg("%s (pool %d) is read mid-run but not watched", watched[i].point, watched[i].pool);
    }
    for (i = 0; i < nslots; i++) seen += run.watched[i];
    assert_int_equal(seen, sizeof watched / sizeof *watched);
    seen = 0;
    for (i = 0; i < sizeof held / sizeof *held; i++) {
        int p = scn_trace_point_find(held[i]);
        assert_true(p >= 0);
        if (!run.held[p]) fail_msg("%s is a hold's point but not held", held[i]);
    }
    for (i = 0; i < n; i++) seen += run.held[i];
    assert_int_equal(seen, sizeof held / sizeof *held);
    free(run.watched);
    free(run.held);
    scn_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(watches_exactly_the_slots_read_mid_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
