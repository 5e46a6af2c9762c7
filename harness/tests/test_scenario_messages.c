/* What a report says, in the user's terms: durations in ms/us, the record a
 * broken `before` failed at, a name for every pool, and a record where the
 * model severs a pool and where a submit heals it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rt_sched.h"
#include "scn_ast.h"
#include "scn_run.h"
#include "scn_text.h"

static scn_scenario *parse(const char *text) {
    scn_error e;
    scn_scenario *s = scn_parse("t.scn", text, strlen(text), &e);
    if (!s) fail_msg("%d:%d: %s", e.line, e.col, e.msg);
    return s;
}

static void run_traced(const scn_scenario *s, uint64_t seed, scn_run_out *out) {
    scn_run_opts o;
    memset(&o, 0, sizeof o);
    o.seed = seed;
    o.strategy = SCHED_STRATEGY_RANDOM;
    o.full_trace = true;
    memset(out, 0, sizeof *out);
    assert_int_equal(scn_run(s, &o, out), 0);
    assert_non_null(out->trace_full);
}

/* Whether the line starting at p holds needle. */
static bool line_has(const char *p, const char *needle) {
    const char *hit = strstr(p, needle), *nl = strchr(p, '\n');
    return hit && (!nl || hit < nl);
}

/* The default pool severs on the cancellation (a cold pool, start-delay),
 * and the healer's repair submit releases it. */
static const char stall_healed[] =
    "# purpose: the default pool severs and the repair heals it\n"
    "pool default start-delay 1ms\n"
    "event E manual\n"
    "event F manual set\n"
    "wait X event E\n"
    "wait Y event F\n"
    "thread A\n"
    "  arm X\n"
    "  signal E\n"
    "  try_cancel_pending X\n"
    "  arm Y\n"
    "  wait Y as healed\n"
    "end\n";

static void durations_print_in_ms_and_us(void **state) {
    char b[32];
    (void)state;
    assert_string_equal(scn_duration(b, sizeof b, 860), "86\xc2\xb5" "s");
    assert_string_equal(scn_duration(b, sizeof b, 20000), "2ms");
    assert_string_equal(scn_duration(b, sizeof b, 156250), "15.625ms");
    assert_string_equal(scn_duration(b, sizeof b, 3), "0.3\xc2\xb5" "s");
    assert_string_equal(scn_duration(b, sizeof b, 10001), "1.0001ms");
    assert_string_equal(scn_duration(b, sizeof b, 0), "0ms");
}

/* A failed comparison of a time prints both sides in ms/us; a count stays
 * a count. */
static void a_failed_time_expectation_reads_in_ms(void **state) {
    char text[1024];
    scn_scenario *s;
    scn_run_out r;
    (void)state;
    snprintf(text, sizeof text, "%s%s", stall_healed,
             "expect blocked(healed) >= 2s\nexpect calls(Y) == 2\nexpect now < 1ms\n");
    s = parse(text);
    run_traced(s, 1, &r);
    assert_false(r.passed);
    assert_non_null(strstr(r.failures, "expect `blocked ( healed ) >= 2s` failed (left 4"));
    assert_non_null(strstr(r.failures, "ms, right 2000ms)"));
    assert_non_null(strstr(r.failures, "expect `calls ( Y ) == 2` failed (left 1, right 2)"));
    assert_non_null(strstr(r.failures, "expect `now < 1ms` failed (left "));
    assert_null(strstr(r.failures, "right 20000000"));
    assert_null(strstr(r.failures, "right 10000)"));
    scn_run_out_free(&r);
    scn_free(s);
}

/* `A before B` broken: the message names the first B that broke it by its
 * record number, which is that B's line in the trace, and the counts. */
static void a_broken_order_names_its_record_and_counts(void **state) {
    char text[1024], want[64];
    const char *m, *rec;
    unsigned long long n;
    scn_scenario *s;
    scn_run_out r;
    (void)state;
    snprintf(text, sizeof text, "%s%s", stall_healed, "expect repair-started before cancelled\n");
    s = parse(text);
    run_traced(s, 1, &r);
    assert_false(r.passed);
    m = strstr(r.failures, "expect `repair-started before cancelled`: the 1st cancelled (trace record #");
    if (!m) fail_msg("%s", r.failures);
    assert_non_null(strstr(m, ") came when 0 repair-started had been recorded (each cancelled needs as many "
                              "repair-started before it)"));
    rec = strchr(m, '#');
    assert_int_equal(sscanf(rec, "#%llu", &n), 1);
    snprintf(want, sizeof want, "#%llu ", n);
    rec = strstr(r.trace_full, want);
    assert_non_null(rec);
    assert_true(line_has(rec, "heal/cancelled pool=default"));
    scn_run_out_free(&r);
    scn_free(s);
}

/* The pools the scenario did not declare are named: the healer's by its
 * role, and, before its start is announced, by who made it. */
static void undeclared_pools_are_named_by_role_and_maker(void **state) {
    scn_scenario *s = parse(stall_healed);
    scn_run_out r;
    (void)state;
    run_traced(s, 1, &r);
    assert_true(r.passed);
    assert_non_null(strstr(r.trace_full, "heal/healer-started pool='healer pool'"));
    assert_non_null(strstr(r.trace_full, "heal/entry-created pool='pool made by X on thread A'"));
    assert_null(strstr(r.trace_full, "unnamed"));
    scn_run_out_free(&r);
    scn_free(s);
}

/* The model's sever and the release by the repair's submit are records of
 * the run's trace, in order: severed on A's cancellation, healed right
 * after the healer's SubmitThreadpoolWork. */
static void severing_and_healing_are_trace_records(void **state) {
    scn_scenario *s = parse(stall_healed);
    scn_run_out r;
    const char *sev, *heal, *submit;
    (void)state;
    run_traced(s, 1, &r);
    sev = strstr(r.trace_full, " A sim/pool-severed pool=default");
    heal = strstr(r.trace_full, " sim/pool-healed pool=default");
    submit = strstr(r.trace_full, " api/SubmitThreadpoolWork\n");
    assert_non_null(sev);
    assert_non_null(heal);
    assert_non_null(submit);
    assert_true(sev < submit && submit < heal);
    assert_true(line_has(strchr(submit, '\n') + 1, "sim/pool-healed pool=default"));
    scn_run_out_free(&r);
    scn_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations_print_in_ms_and_us),
        cmocka_unit_test(a_failed_time_expectation_reads_in_ms),
        cmocka_unit_test(a_broken_order_names_its_record_and_counts),
        cmocka_unit_test(undeclared_pools_are_named_by_role_and_maker),
        cmocka_unit_test(severing_and_healing_are_trace_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
