/* The scenario runner's oracles must fire on a process that breaks them.
 *
 * A correct core never trips them, so the corpus alone cannot tell an oracle
 * that works from one that was skipped: every scenario would pass either way
 * (the sabotage manifest's `scenario-unhealed-oracle-skipped` is that defect).
 * Each case here builds a run that really does break one rule -- with a hold
 * or a false expectation, not with a broken core -- and asserts the runner
 * reports exactly that, on every seed tried. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scn_ast.h"
#include "scn_run.h"

#define SEEDS 5

/* Runs `text` for SEEDS seeds of each strategy; every run must fail and its
 * failures must mention `needle`. */
static void expect_every_run_reports(const char *text, const char *needle) {
    scn_error err;
    scn_scenario *s;
    uint64_t seed;
    int strategy;
    memset(&err, 0, sizeof err);
    s = scn_parse("oracle-self-test.scn", text, strlen(text), &err);
    if (s == NULL) fail_msg("self-test scenario does not parse: %d:%d: %s", err.line, err.col, err.msg);
    for (strategy = 0; strategy < 2; strategy++) {
        for (seed = 0; seed < SEEDS; seed++) {
            scn_run_opts o;
            scn_run_out r;
            memset(&o, 0, sizeof o);
            o.seed = seed;
            o.strategy = strategy;
            o.depth = 3;
            assert_int_equal(scn_run(s, &o, &r), 0);
            if (r.passed || r.failures == NULL || strstr(r.failures, needle) == NULL) {
                print_error("seed %llu strategy %d: expected a failure mentioning '%s', got: %s\n",
                            (unsigned long long)seed, strategy, needle,
                            r.passed ? "(the run passed)" : r.failures);
                scn_run_out_free(&r);
                scn_free(s);
                fail();
            }
            scn_run_out_free(&r);
        }
    }
    scn_free(s);
}

/* The healer's repair is parked before it is even submitted, for longer than
 * the run settles: at quiescence the default pool was cancelled and nothing
 * has started since.  The report names the pool: the default pool is the
 * scenario's pool 0, which the oracle must name like any other. */
static void unhealed_pool_at_quiescence_is_reported(void **state) {
    (void)state;
    expect_every_run_reports(
        "# purpose: self-test: a repair held past quiescence trips the unhealed oracle\n"
        "hold repair-submitted pool default for 30s\n"
        "event E manual\n"
        "wait X event E\n"
        "thread A\n"
        "  arm X\n"
        "  signal E\n"
        "  try_cancel_pending X\n"
        "end\n",
        "oracle: pool default was cancelled and no repair started after its last cancellation");
}

/* The same held repair leaves the default pool's entry in the registry after
 * teardown (it stays while unhealed), and the after-teardown oracle names it.
 * That entry is the registry's first -- created by main before any
 * cancellation starts the healer, whose own pool's entry comes after it -- so
 * the oracle must walk the registry from its first entry. */
static void an_entry_left_after_teardown_is_reported(void **state) {
    (void)state;
    expect_every_run_reports(
        "# purpose: self-test: an entry left after teardown trips the registry oracle\n"
        "hold repair-submitted pool default for 30s\n"
        "event E manual\n"
        "wait X event E\n"
        "thread A\n"
        "  arm X\n"
        "  signal E\n"
        "  try_cancel_pending X\n"
        "end\n",
        "oracle: registry entry for pool default remains after every object was closed");
}

/* A scenario's own expectation that does not hold is a failure. */
static void a_false_expectation_is_reported(void **state) {
    (void)state;
    expect_every_run_reports(
        "# purpose: self-test: a false expect line fails the run\n"
        "work W\n"
        "thread A\n"
        "  submit W\n"
        "  wait W\n"
        "end\n"
        "expect calls(W) == 2\n",
        "expect");
}

/* P's one worker is busy in W's callback past the settle, so the repair the
 * cancellation on P submitted is still queued behind it at quiescence. */
static void an_outstanding_repair_at_quiescence_is_reported(void **state) {
    (void)state;
    expect_every_run_reports(
        "# purpose: self-test: a repair queued past quiescence trips the outstanding oracle\n"
        "pool P private max 1\n"
        "work W on P\n"
        "callback W\n"
        "  sleep 30s\n"
        "end\n"
        "event E manual\n"
        "wait X event E on P\n"
        "thread A\n"
        "  submit W\n"
        "  sleep 1ms\n"
        "  arm X\n"
        "  signal E\n"
        "  try_cancel_pending X\n"
        "end\n",
        "oracle: pool P has 1 repairs outstanding at quiescence");
}

/* The default pool severs (its worker starts late, the cancellation lands
 * first) and its repair is held: Y's packet is still queued on the severed
 * pool at quiescence. */
static void a_severed_pool_with_queued_callbacks_is_reported(void **state) {
    (void)state;
    expect_every_run_reports(
        "# purpose: self-test: a severed pool never repaired trips the severed-pool oracle\n"
        "pool default start-delay 1ms\n"
        "hold repair-submitted pool default for 30s\n"
        "event E manual\n"
        "event F manual set\n"
        "wait X event E\n"
        "wait Y event F\n"
        "thread A\n"
        "  arm X\n"
        "  signal E\n"
        "  try_cancel_pending X\n"
        "  arm Y\n"
        "end\n",
        "oracle: a pool is severed with callbacks queued at quiescence");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unhealed_pool_at_quiescence_is_reported),
        cmocka_unit_test(an_entry_left_after_teardown_is_reported),
        cmocka_unit_test(a_false_expectation_is_reported),
        cmocka_unit_test(an_outstanding_repair_at_quiescence_is_reported),
        cmocka_unit_test(a_severed_pool_with_queued_callbacks_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
