/* Which statements a pool backend must decline (scn_features.c): the real
 * pool (pool/win32.c) declines a scenario by scn_features_first's answer, and
 * native mode (scn_run.c) by its deadlock and same-tick bits, so each feature
 * is found at the line of its first use, and nothing else is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scn_ast.h"
#include "scn_features.h"

typedef struct feature_case {
    const char *text; /* a whole scenario; line 1 is its purpose */
    int want;         /* scn_feature_line's answer */
} feature_case;

static scn_scenario *parse_or_fail(const char *text) {
    scn_error e;
    scn_scenario *s = scn_parse("t.scn", text, strlen(text), &e);
    if (!s) fail_msg("%s\n%d:%d: %s", text, e.line, e.col, e.msg);
    return s;
}

static void check(scn_feature f, const feature_case *cases, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        scn_scenario *s = parse_or_fail(cases[i].text);
        int got = scn_feature_line(s, f);
        scn_free(s);
        if (got != cases[i].want)
            fail_msg("%s\n%s: feature line %d, expected %d", cases[i].text, scn_feature_text(f), got, cases[i].want);
    }
}

#define CHECK(f, cases) check((f), (cases), sizeof(cases) / sizeof(cases)[0])
#define A "thread A\n  tick\nend\n" /* three lines */

/* The first fault's line, whatever its kind; none, none. */
static void a_fault_is_found_at_the_first_fault(void **state) {
    static const feature_case cases[] = {
        {"# purpose: x\n" A, 0},
        {"# purpose: x\n" A "fault alloc nth 3\nfault work-create\n", 5},
        {"# purpose: x\n\nfault event-create\n" A, 3},
    };
    (void)state;
    CHECK(SCN_FEATURE_FAULT, cases);
}

/* A stall setting on any pool, at that pool's line: never and always are
 * knobs as much as a percentage is; a pool without one is the sim's default
 * and runs anywhere. */
static void a_stall_is_found_at_its_pool(void **state) {
    static const feature_case cases[] = {
        {"# purpose: x\npool P private min 1 max 2\n" A, 0},
        {"# purpose: x\npool default stall never\n" A, 2},
        {"# purpose: x\npool P private\npool Q private stall always\n" A, 3},
        {"# purpose: x\npool P private start-delay 1ms\n\npool Q private stall 25%\n" A, 4},
    };
    (void)state;
    CHECK(SCN_FEATURE_STALL, cases);
}

/* retire_workers in a thread, in a repeat's body, or in a callback; the
 * first in file order of the threads, then the callbacks. */
static void retire_workers_is_found_in_any_block(void **state) {
    static const feature_case cases[] = {
        {"# purpose: x\nthread A\n  retire_idle\n  tick\nend\n", 0},
        {"# purpose: x\nthread A\n  tick\n  retire_workers\nend\n", 4},
        {"# purpose: x\nthread A\n  tick\n  repeat 2\n    yield\n    retire_workers default\n  end\nend\n", 6},
        {"# purpose: x\nwork W\nthread A\n  submit W\nend\ncallback W\n  retire_workers\nend\n", 7},
        {"# purpose: x\nthread A\n  repeat 2\n    tick\n  end\nend\n", 0},
    };
    (void)state;
    CHECK(SCN_FEATURE_RETIRE_WORKERS, cases);
}

/* severed(P) read anywhere an expression is: either side of an expect, an
 * assert in a thread or a callback, a requirement's expression.  `require
 * severed P` is a reach goal (read 0 on the real pool, reported, not
 * enforced) and `expect severed P` an outcome about the model's pool, and
 * neither is the severed term. */
static void severed_is_found_where_it_is_read(void **state) {
    static const feature_case cases[] = {
        {"# purpose: x\n" A "expect severed(default) == 0\n", 5},
        {"# purpose: x\n" A "expect count(cancelled) == 0\nexpect 0 == severed(default)\n", 6},
        {"# purpose: x\nthread A\n  tick\n  assert severed(default) == 0\nend\n", 4},
        {"# purpose: x\nwork W\nthread A\n  assert calls(W) == 0\nend\n", 0},
        {"# purpose: x\nwork W\nthread A\n  submit W\nend\ncallback W\n  repeat 2\n    assert severed(default) == 0\n"
         "  end\nend\n",
         8},
        {"# purpose: x\n" A "require 0 == severed(default)\n", 5},
        {"# purpose: x\n" A "require severed default\n", 0},
        {"# purpose: x\n" A "require entries >= 0\n", 0},
    };
    (void)state;
    CHECK(SCN_FEATURE_SEVERED, cases);
}

/* The healer starts once per process: `healer`, and the two trace points of
 * its start counted, awaited, held on, held until, or ordered.  Other trace
 * points, and a hold on one for a duration, are per run. */
static void the_healer_is_found_wherever_its_start_is_named(void **state) {
    static const feature_case cases[] = {
        {"# purpose: x\n" A "expect healer == 1\n", 5},
        {"# purpose: x\n" A "expect 1 == healer\n", 5},
        {"# purpose: x\n" A "expect count(healer-started) == 1\n", 5},
        {"# purpose: x\n" A "expect 0 == count(healer-start-failed)\n", 5},
        {"# purpose: x\n" A "expect count(cancelled) == 0\n", 0},
        {"# purpose: x\nthread A\n  tick\n  await healer-started\nend\n", 4},
        {"# purpose: x\nthread A\n  tick\n  await healer-start-failed\nend\n", 4},
        {"# purpose: x\nthread A\n  tick\n  await cancelled\nend\n", 0},
        {"# purpose: x\nthread A\n  assert healer == 0\nend\n", 3},
        {"# purpose: x\n" A "require count(healer-started) >= 1\n", 5},
        {"# purpose: x\n" A "hold healer-started for 1ms\n", 5},
        {"# purpose: x\n" A "hold cancelled until healer-start-failed\n", 5},
        {"# purpose: x\n" A "hold cancelled until repair-started\n", 0},
        {"# purpose: x\n" A "hold cancelled for 1ms\n", 0},
        {"# purpose: x\n" A "expect healer-started before cancelled\n", 5},
        {"# purpose: x\n" A "expect cancelled before healer-start-failed\n", 5},
        {"# purpose: x\n" A "expect cancelled before repair-started\n", 0},
    };
    (void)state;
    CHECK(SCN_FEATURE_HEALER, cases);
}

/* The holds and orders name the healer only: a hold or an order on its
 * start declines nothing else. */
static void holds_and_orders_decline_the_healer_only(void **state) {
    static const feature_case cases[] = {
        {"# purpose: x\n" A "hold healer-started for 1ms\nexpect healer-started before cancelled\n", 0},
    };
    (void)state;
    CHECK(SCN_FEATURE_SEVERED, cases);
    CHECK(SCN_FEATURE_RETIRE_WORKERS, cases);
}

/* The outcomes have no line of their own: -1 when the scenario expects it. */
static void an_outcome_is_used_without_a_line(void **state) {
    static const feature_case deadlock[] = {
        {"# purpose: x\n" A, 0},
        {"# purpose: x\n" A "expect deadlock\n", -1},
        {"# purpose: x\n" A "expect misuse\n", 0},
    };
    static const feature_case misuse[] = {
        {"# purpose: x\n" A, 0},
        {"# purpose: x\n" A "expect misuse\n", -1},
        {"# purpose: x\n" A "expect deadlock\n", 0},
    };
    (void)state;
    CHECK(SCN_FEATURE_DEADLOCK, deadlock);
    CHECK(SCN_FEATURE_MISUSE, misuse);
}

/* Each feature's reason, word for word (the real pool's NOT-RUN line), and
 * "?" past the table. */
static void each_feature_has_its_reason(void **state) {
    static const char *const want[SCN_FEATURE_COUNT] = {
        "a fault counts the Nth call from a fresh process (the healer's start included)",
        "a stall setting is a knob of the model of the pool",
        "retire_workers forces the model's idle timeout",
        "severed() reads the model's state of the pool",
        "the healer starts once per process (`healer`, healer-started, healer-start-failed), and here the "
        "process outlives a run",
        "a fail-fast ends the real process (RaiseFailFastException)",
        "a deadlock on OS threads hangs for good",
        "misuse is reported by the model; the real pool may corrupt memory",
        "`expect unhealed` shows a repair starting in its cancellation's clock tick, which virtual time makes "
        "certain and real time rare",
    };
    int f;
    (void)state;
    for (f = 0; f < SCN_FEATURE_COUNT; f++) assert_string_equal(scn_feature_text((scn_feature)f), want[f]);
    assert_string_equal(scn_feature_text(SCN_FEATURE_COUNT), "?");
    assert_string_equal(scn_feature_text((scn_feature)-1), "?");
}

/* The first feature of the mask in the enum's order, as "line N: why", or
 * the bare reason for an outcome; features outside the mask are passed over,
 * and a scenario that uses none of the mask's gets NULL. */
static void the_first_feature_of_the_mask_is_reported(void **state) {
    static const char text[] = "# purpose: x\n"
                               "pool P private stall never\n" /* 2: stall */
                               "thread A\n"
                               "  tick\n"
                               "  retire_workers\n" /* 5: retire */
                               "end\n"
                               "fault alloc\n" /* 7: fault */
                               "expect deadlock\n";
    scn_scenario *s = parse_or_fail(text);
    char buf[256];
    const char *r;
    (void)state;
    memset(buf, 'x', sizeof buf);
    r = scn_features_first(s, ~0u, buf, sizeof buf);
    assert_ptr_equal(r, buf);
    assert_string_equal(buf, "line 7: a fault counts the Nth call from a fresh process (the healer's start included)");
    r = scn_features_first(s, ~SCN_FEATURE_BIT(SCN_FEATURE_FAULT), buf, sizeof buf);
    assert_ptr_equal(r, buf);
    assert_string_equal(buf, "line 2: a stall setting is a knob of the model of the pool");
    r = scn_features_first(s, SCN_FEATURE_BIT(SCN_FEATURE_RETIRE_WORKERS) | SCN_FEATURE_BIT(SCN_FEATURE_DEADLOCK),
                           buf, sizeof buf);
    assert_string_equal(r, "line 5: retire_workers forces the model's idle timeout");
    r = scn_features_first(s, SCN_FEATURE_BIT(SCN_FEATURE_DEADLOCK) | SCN_FEATURE_BIT(SCN_FEATURE_SAME_TICK), buf,
                           sizeof buf);
    assert_string_equal(r, "a deadlock on OS threads hangs for good");
    /* Used, but not asked about. */
    memset(buf, 0, sizeof buf);
    r = scn_features_first(s, SCN_FEATURE_BIT(SCN_FEATURE_SEVERED) | SCN_FEATURE_BIT(SCN_FEATURE_HEALER) |
                                  SCN_FEATURE_BIT(SCN_FEATURE_MISUSE),
                           buf, sizeof buf);
    assert_null(r);
    assert_string_equal(buf, "");
    assert_null(scn_features_first(s, 0, buf, sizeof buf));
    scn_free(s);
}

/* A scenario of the core's public API alone is declined by no backend. */
static void a_plain_scenario_uses_no_feature(void **state) {
    static const char text[] = "# purpose: x\nwork W\nthread A\n  submit W\n  wait W\nend\nexpect calls(W) == 1\n";
    scn_scenario *s = parse_or_fail(text);
    char buf[64] = "";
    int f;
    (void)state;
    for (f = 0; f < SCN_FEATURE_COUNT; f++)
        if (scn_feature_line(s, (scn_feature)f) != 0) fail_msg("%s used", scn_feature_text((scn_feature)f));
    assert_null(scn_features_first(s, ~0u, buf, sizeof buf));
    scn_free(s);
}

/* A fault kind owns its own slot but healer-start, which is pool-create
 * under the healer's name; a value past the kinds is its own slot (the
 * real pool's fault front is handed what its caller has). */
static void a_fault_kind_owns_its_slot(void **state) {
    (void)state;
    assert_int_equal(scn_fault_slot(SCN_FAULT_HEALER_START), SCN_FAULT_POOL_CREATE);
    assert_int_equal(scn_fault_slot(SCN_FAULT_ALLOC), SCN_FAULT_ALLOC);
    assert_int_equal(scn_fault_slot(SCN_FAULT_KIND_COUNT), SCN_FAULT_KIND_COUNT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_fault_is_found_at_the_first_fault),
        cmocka_unit_test(a_stall_is_found_at_its_pool),
        cmocka_unit_test(retire_workers_is_found_in_any_block),
        cmocka_unit_test(severed_is_found_where_it_is_read),
        cmocka_unit_test(the_healer_is_found_wherever_its_start_is_named),
        cmocka_unit_test(holds_and_orders_decline_the_healer_only),
        cmocka_unit_test(an_outcome_is_used_without_a_line),
        cmocka_unit_test(each_feature_has_its_reason),
        cmocka_unit_test(the_first_feature_of_the_mask_is_reported),
        cmocka_unit_test(a_plain_scenario_uses_no_feature),
        cmocka_unit_test(a_fault_kind_owns_its_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
