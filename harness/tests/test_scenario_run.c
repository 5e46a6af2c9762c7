/* The scenario runner: verdicts, holds, awaits, determinism and replay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rt_sched.h"
#include "scn_ast.h"
#include "scn_report.h"
#include "scn_run.h"
#include "scn_text.h"

static scn_scenario *parse(const char *text) {
    scn_error e;
    scn_scenario *s = scn_parse("t.scn", text, strlen(text), &e);
    if (!s) fail_msg("%d:%d: %s", e.line, e.col, e.msg);
    return s;
}

static void run(const scn_scenario *s, uint64_t seed, int strategy, const char *schedule, scn_run_out *out) {
    scn_run_opts o;
    memset(&o, 0, sizeof o);
    o.seed = seed;
    o.strategy = strategy;
    o.depth = 3;
    o.schedule = schedule;
    assert_int_equal(scn_run(s, &o, out), 0);
}

/* Parses text, runs it once (seed 1, random) and fails with its report
 * unless the run passed. */
static void run_passes(const char *text) {
    scn_scenario *s = parse(text);
    scn_run_out r;
    run(s, 1, 0, NULL, &r);
    if (!r.passed) fail_msg("%s", r.failures);
    scn_run_out_free(&r);
    scn_free(s);
}

static const char cancel_and_heal[] =
    "# purpose: a cancellation on the default pool is repaired\n"
    "event E manual\n"
    "event F manual set\n"
    "wait X event E\n"
    "wait Y event F\n"
    "thread A\n"
    "  arm X\n"
    "  signal E\n"
    "  try_cancel_pending X\n"
    "  arm Y\n"
    "  wait Y as w\n"
    "end\n"
    "expect calls(Y) == 1\n"
    "expect count(cancelled, default) == 1\n"
    "expect blocked(w) < 600ms\n";

static void a_true_scenario_passes(void **state) {
    scn_scenario *s = parse(cancel_and_heal);
    scn_run_out r;
    (void)state;
    run(s, 1, 0, NULL, &r);
    if (!r.passed) fail_msg("%s", r.failures);
    assert_int_equal(r.status, SCHED_OK);
    assert_non_null(r.schedule);
    /* the scheduler's tally reaches the result: every choice point is a step */
    assert_true(r.steps > 0);
    assert_true(r.steps >= r.choice_points);
    assert_non_null(strstr(r.trace_tail, "heal/cancelled pool=default"));
    scn_run_out_free(&r);
    scn_free(s);
}

static void a_false_expectation_fails_with_its_line(void **state) {
    scn_scenario *s = parse("# purpose: false\nwork W\nthread A\n  submit W\n  wait W\nend\n"
                            "expect calls(W) == 2\n");
    scn_run_out r;
    (void)state;
    run(s, 1, 1, NULL, &r);
    assert_false(r.passed);
    assert_non_null(strstr(r.failures, "line 7: expect `calls ( W ) == 2` failed (left 1, right 2)"));
    scn_run_out_free(&r);
    scn_free(s);
}

/* The first 20 failed checks are listed, then one line says more were not
 * shown, and a repeat stops once past 20 (scn_run_fail, scn_exec.c). */
static void failures_are_capped_at_twenty(void **state) {
    scn_scenario *s = parse("# purpose: x\nthread A\n  repeat 30\n    assert 1 == 2\n  end\nend\n");
    scn_run_out r;
    const char *q;
    int listed = 0;
    (void)state;
    run(s, 1, 0, NULL, &r);
    assert_false(r.passed);
    for (q = r.failures; (q = strstr(q, "line 4: assert `1 == 2` failed")) != NULL; q++) listed++;
    assert_int_equal(listed, 20);
    q = strstr(r.failures, "(more failures not shown)\n");
    assert_non_null(q);
    assert_null(strstr(q + 1, "(more failures not shown)"));
    scn_run_out_free(&r);
    scn_free(s);
}

/* A failure is data: its kind and its check's identity (scenario line,
 * subject) come with the message, in report order, and the report's text is
 * the messages joined; scn_failure_same reads the kind and identity only. */
static void failures_carry_their_kind_and_check(void **state) {
    scn_scenario *s = parse("# purpose: x\nwork W\nwork V\nthread A\n  submit W\n  wait W\n"
                            "  close V => EINVAL\n  assert 1 == 2\nend\nexpect calls(W) == 2\n");
    scn_run_out r, again;
    scn_failure other;
    char *text;
    (void)state;
    run(s, 1, 0, NULL, &r);
    assert_false(r.passed);
    assert_int_equal(r.failure_list.n, 3);
    assert_int_equal(r.kind, SCN_FAILURE_OP_RESULT);
    assert_int_equal(r.failure_list.v[0].kind, SCN_FAILURE_OP_RESULT);
    assert_int_equal(r.failure_list.v[0].line, 7);
    assert_int_equal(r.failure_list.v[0].subject, 1); /* V */
    assert_int_equal(r.failure_list.v[1].kind, SCN_FAILURE_ASSERT_FAILED);
    assert_int_equal(r.failure_list.v[1].line, 8);
    assert_int_equal(r.failure_list.v[2].kind, SCN_FAILURE_EXPECT_FAILED);
    assert_int_equal(r.failure_list.v[2].line, 10);
    assert_string_equal(scn_failure_kind_name(r.kind), "op-result");
    text = scn_failures_text(&r.failure_list);
    assert_string_equal(text, r.failures);
    free(text);
    /* another seed fails the same checks the same way */
    run(s, 2, 0, NULL, &again);
    assert_true(scn_failures_same(&r.failure_list, &again.failure_list));
    assert_true(scn_failure_same(&r.failure_list.v[2], &again.failure_list.v[2]));
    /* the message is not read; the kind, the line and the subject are */
    other = r.failure_list.v[2];
    other.message = "reworded\n";
    assert_true(scn_failure_same(&other, &r.failure_list.v[2]));
    other.line = 9;
    assert_false(scn_failure_same(&other, &r.failure_list.v[2]));
    other = r.failure_list.v[0];
    other.subject = 0;
    assert_false(scn_failure_same(&other, &r.failure_list.v[0]));
    other = r.failure_list.v[1];
    other.kind = SCN_FAILURE_EXPECT_FAILED;
    assert_false(scn_failure_same(&other, &r.failure_list.v[1]));
    assert_false(scn_failures_same(&r.failure_list, &(scn_failures){r.failure_list.v, 2, 2, 0}));
    scn_run_out_free(&again);
    scn_run_out_free(&r);
    scn_free(s);
}

/* The run's outcome is a failure of its own kind: a deadlock nothing in the
 * script waits in is `deadlock`; one where the script's own `await` waits
 * and no thread wants a lock is `script-wait-deadlock`, the one an injected
 * fault may cause. */
static void a_deadlock_says_whether_the_script_waits_in_it(void **state) {
    scn_scenario *own = parse("# purpose: x\nwork W\ncallback W\n  wait W\nend\n"
                              "thread A\n  submit W\n  wait W\nend\n");
    scn_scenario *script = parse("# purpose: x\nthread A\n  await repair-ran\nend\n");
    scn_run_out r;
    (void)state;
    run(own, 1, 0, NULL, &r);
    assert_int_equal(r.status, SCHED_DEADLOCK);
    assert_int_equal(r.kind, SCN_FAILURE_DEADLOCK);
    assert_false(scn_failure_fault_may_cause(r.kind));
    scn_run_out_free(&r);
    run(script, 1, 0, NULL, &r);
    assert_int_equal(r.status, SCHED_DEADLOCK);
    assert_int_equal(r.kind, SCN_FAILURE_SCRIPT_WAIT_DEADLOCK);
    assert_true(scn_failure_fault_may_cause(r.kind));
    scn_run_out_free(&r);
    scn_free(own);
    scn_free(script);
}

/* The teardown cancels every start an io still has open, then runs it
 * down: the io oracle then finds each start completed or cancelled. */
static void the_teardown_cancels_open_starts(void **state) {
    (void)state;
    run_passes("# purpose: x\nio I\nthread A\n  start I\n  start I\nend\n");
}

/* `require overlap A W`: A's wait is in flight while W's callback runs, and
 * the run reports the requirement reached (scn_reach.c; ASan also watches
 * the walk over the requirements). */
static void an_overlap_requirement_is_reached(void **state) {
    scn_scenario *s = parse("# purpose: x\nwork W\ncallback W\n  tick\nend\n"
                            "thread A\n  submit W\n  wait W\nend\nrequire overlap A W\n");
    scn_run_out r;
    (void)state;
    run(s, 1, 0, NULL, &r);
    if (!r.passed) fail_msg("%s", r.failures);
    assert_true(r.reached == 1);
    scn_run_out_free(&r);
    scn_free(s);
}

static void a_wrong_result_fails(void **state) {
    /* a cancel with nothing started is refused (it would unbalance the pool's count) */
    scn_scenario *s = parse("# purpose: x\nio I\nthread A\n  io_cancel I\nend\n");
    scn_run_out r;
    (void)state;
    run(s, 1, 0, NULL, &r);
    assert_false(r.passed);
    /* the op's own line and actor: where to look in the scenario */
    assert_non_null(strstr(r.failures, "line 4: A: `io_cancel I` returned EINVAL, expected ok"));
    scn_run_out_free(&r);
    scn_free(s);
}

static void same_seed_same_run_and_schedule_replays_it(void **state) {
    scn_scenario *s = parse(cancel_and_heal);
    scn_run_out a, b, c, d;
    (void)state;
    run(s, 42, 1, NULL, &a);
    run(s, 42, 1, NULL, &b);
    run(s, 43, 1, NULL, &d);
    assert_true(a.interleaving_hash == b.interleaving_hash);
    assert_string_equal(a.schedule, b.schedule);
    assert_string_equal(a.trace_tail, b.trace_tail);
    run(s, 0, 0, a.schedule, &c);
    assert_true(c.interleaving_hash == a.interleaving_hash);
    /* a different seed is a different interleaving (almost surely) */
    assert_true(d.interleaving_hash != a.interleaving_hash);
    scn_run_out_free(&a);
    scn_run_out_free(&b);
    scn_run_out_free(&c);
    scn_run_out_free(&d);
    scn_free(s);
}

static void a_hold_parks_the_thread_for_its_duration(void **state) {
    /* the canceller is parked at its own `cancelled` record for 80 ms */
    scn_scenario *s = parse("# purpose: x\nhold cancelled pool default for 80ms\n"
                            "event E manual\nwait X event E\n"
                            "thread A\n  arm X\n  signal E\n  try_cancel_pending X as c\nend\n"
                            "expect blocked(c) >= 80ms\nexpect blocked(c) < 90ms\n");
    scn_run_out r;
    (void)state;
    run(s, 3, 0, NULL, &r);
    if (!r.passed) fail_msg("%s", r.failures);
    scn_run_out_free(&r);
    scn_free(s);
}

static void an_until_hold_waits_for_the_other_event(void **state) {
    /* A is parked at its cancellation until B's tick has been recorded; B
     * ticks only after 30 ms, so A's cancel blocks at least that long. */
    scn_scenario *s = parse("# purpose: x\nhold cancelled until healer-tick\n"
                            "event E manual\nwait X event E\n"
                            "thread A\n  arm X\n  signal E\n  try_cancel_pending X as c\nend\n"
                            "thread B\n  sleep 30ms\n  tick\nend\n"
                            "expect blocked(c) >= 29ms\nexpect cancelled before repair-started\n");
    scn_run_out r;
    (void)state;
    run(s, 5, 1, NULL, &r);
    if (!r.passed) {
        fprintf(stderr, "%s\n%s", r.failures, r.trace_tail);
        fail();
    }
    scn_run_out_free(&r);
    scn_free(s);
}

static void a_broken_order_is_reported(void **state) {
    scn_scenario *s = parse("# purpose: x\nevent E manual\nwait X event E\n"
                            "thread A\n  arm X\n  signal E\n  try_cancel_pending X\nend\n"
                            "expect repair-started before cancelled\n");
    scn_run_out r;
    (void)state;
    run(s, 1, 0, NULL, &r);
    assert_false(r.passed);
    assert_non_null(strstr(r.failures, "expect `repair-started before cancelled`"));
    scn_run_out_free(&r);
    scn_free(s);
}

static void deadlock_is_reported_and_can_be_expected(void **state) {
    static const char body[] = "work W\ncallback W\n  wait W\nend\nthread A\n  submit W\n  wait W\nend\n";
    char text[512];
    scn_scenario *s;
    scn_run_out r;
    (void)state;
    snprintf(text, sizeof text, "# purpose: x\n%s", body);
    s = parse(text);
    run(s, 1, 0, NULL, &r);
    assert_false(r.passed);
    assert_int_equal(r.status, SCHED_DEADLOCK);
    assert_non_null(r.blocked_report);
    scn_run_out_free(&r);
    scn_free(s);
    snprintf(text, sizeof text, "# purpose: x\n%sexpect deadlock\n", body);
    s = parse(text);
    run(s, 1, 0, NULL, &r);
    assert_true(r.passed);
    scn_run_out_free(&r);
    scn_free(s);
}

static void an_op_on_a_closed_object_is_a_scenario_error(void **state) {
    scn_scenario *s = parse("# purpose: x\nwork W\nthread A\n  close W\n  submit W\nend\n");
    scn_run_out r;
    (void)state;
    run(s, 1, 0, NULL, &r);
    assert_false(r.passed);
    assert_non_null(strstr(r.failures, "`submit W` on an object that is closed"));
    scn_run_out_free(&r);
    scn_free(s);
}

/* The full trace (replay --trace) shows each callback's run as a start line
 * and a return line around its body, with the calls and running counts at
 * each, so a reader sees which records are the callback's body. */
static void the_full_trace_brackets_a_callback(void **state) {
    scn_scenario *s = parse("# purpose: x\nwork W\ncallback W\n  tick\nend\n"
                            "thread A\n  submit W\n  wait W\nend\n");
    scn_run_opts o;
    scn_run_out r;
    const char *start, *ret;
    (void)state;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.full_trace = true;
    assert_int_equal(scn_run(s, &o, &r), 0);
    if (!r.passed) fail_msg("%s", r.failures);
    assert_non_null(r.trace_full);
    start = strstr(r.trace_full, " scenario/callback-start obj=W calls=1 running=1\n");
    ret = strstr(r.trace_full, " scenario/callback-return obj=W calls=1 running=0\n");
    if (!start || !ret || start > ret) fail_msg("no start line before the return line in:\n%s", r.trace_full);
    scn_run_out_free(&r);
    scn_free(s);
}

/* A fault with no `pool P` fails the nth matching call on any pool
 * (scn_fault.pool -1), a private pool's included: not only the default
 * pool, which is pools[0]. */
static void a_fault_without_a_pool_fails_a_create_on_any_pool(void **state) {
    (void)state;
    run_passes("# purpose: x\npool P private\nfault work-create nth 1\nwork W on P\n"
               "thread A\n  create W => ENOMEM\nend\nrequire fault work-create\n");
}

/* A replay command's words go bare when they hold only [A-Za-z0-9_./:+,@%-]
 * (scn_report.h), each range's ends included, and single-quoted otherwise:
 * the characters just outside each range ('`' '{' '[' and the rest). */
static void shell_words_are_quoted_only_when_needed(void **state) {
    static const char *const bare[] = {"azAZ09", "z", "Z", "9", "a", "A", "0", "_./:+,@%-", "some/zz.scn"};
    static const struct {
        const char *w, *quoted;
    } quoted[] = {
        {"", "''"},
        {"`", "'`'"},
        {"{", "'{'"},
        {"[", "'['"},
        {"zz z", "'zz z'"},
        {"x=1", "'x=1'"},
        {"it's", "'it'\\''s'"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bare / sizeof bare[0]; i++) {
        scn_text t = {0};
        scn_shell_word(&t, bare[i]);
        if (!t.s || strcmp(t.s, bare[i]) != 0)
            fail_msg("'%s' printed as %s, expected bare", bare[i], t.s ? t.s : "(nothing)");
        scn_text_free(&t);
    }
    for (i = 0; i < sizeof quoted / sizeof quoted[0]; i++) {
        scn_text t = {0};
        scn_shell_word(&t, quoted[i].w);
        if (!t.s || strcmp(t.s, quoted[i].quoted) != 0)
            fail_msg("'%s' printed as %s, expected %s", quoted[i].w, t.s ? t.s : "(nothing)", quoted[i].quoted);
        scn_text_free(&t);
    }
}

/* Parses text, runs it once (seed 1, random) and fails unless the run failed
 * with `needle` in its report. */
static void run_fails_with(const char *text, const char *needle) {
    scn_scenario *s = parse(text);
    scn_run_out r;
    run(s, 1, 0, NULL, &r);
    if (r.passed || !r.failures || !strstr(r.failures, needle))
        fail_msg("expected a failure mentioning '%s', got: %s", needle, r.passed ? "(passed)" : r.failures);
    scn_run_out_free(&r);
    scn_free(s);
}

/* A pool's stall setting reaches the model (pool/model.c): the same
 * cancellation on a cold pool (its worker starts 1 ms late) severs a pool
 * set `always` and never one set `never` -- the default pool's own default
 * is `always`, a private pool's `never`, so each is set against its
 * default.  `!=` and `==` read severed() both ways. */
static void a_stall_setting_decides_whether_a_cold_pool_severs(void **state) {
    (void)state;
    run_passes("# purpose: x\npool default stall never start-delay 1ms\nevent E manual\nwait X event E\n"
               "thread A\n  arm X\n  signal E\n  try_cancel_pending X\n  assert severed(default) == 0\nend\n"
               "expect severed(default) == 0\n");
    run_passes("# purpose: x\npool P private stall always start-delay 1ms\nevent E manual\nwait X event E on P\n"
               "thread A\n  arm X\n  signal E\n  try_cancel_pending X\n  assert severed(P) != 0\nend\n");
    run_fails_with("# purpose: x\npool P private stall always start-delay 1ms\nevent E manual\nwait X event E on P\n"
                   "thread A\n  arm X\n  signal E\n  try_cancel_pending X\n  assert severed(P) != 1\nend\n",
                   "line 9: assert `severed ( P ) != 1` failed (left 1, right 1)");
}

/* `now` is the run's virtual time: a thread that slept 10 ms reads at least
 * that, and virtual time moves 1 us a scheduling point, not a second. */
static void now_is_virtual_time(void **state) {
    (void)state;
    run_passes("# purpose: x\nthread A\n  sleep 10ms\n  assert now >= 10ms\n  assert now < 1s\nend\n");
}

/* An event lent to an open wait cannot be closed (the wait would arm on a
 * dead handle): reported at the close's line, and the close not performed.
 * Once the wait is closed, or when the open wait watches another event, the
 * close goes through. */
static void an_event_under_an_open_wait_stays_open(void **state) {
    (void)state;
    run_fails_with("# purpose: x\nevent E\nwait X event E\nthread A\n  close E\nend\n",
                   "line 5: A: `close E` while a wait on it is still open");
    run_passes("# purpose: x\nevent E\nwait X event E\nthread A\n  close X\n  close E\nend\n");
    run_passes("# purpose: x\nevent E\nevent F\nwait X event F\nthread A\n  close E\nend\n");
}

/* A wait created after its event was closed is refused, naming the wait's
 * declaration and the event: the core is never handed the dead handle. */
static void a_wait_on_a_closed_event_is_not_created(void **state) {
    (void)state;
    run_fails_with("# purpose: x\nevent E\nwait X event E\nthread A\n  close E\n  create X => EINVAL\nend\n",
                   "line 3: wait X: its event E is not open");
}

/* The untracked cancel removes the queued callback as the tracked one does,
 * and records no cancellation for the healer. */
static void cancel_untracked_cancels_without_a_record(void **state) {
    (void)state;
    run_passes("# purpose: x\npool default stall never start-delay 1ms\nevent E manual\nwait X event E\n"
               "thread A\n  arm X\n  signal E\n  cancel_untracked X\n  sleep 10ms\nend\n"
               "expect calls(X) == 0\nexpect count(cancelled) == 0\n");
}

/* A disarmed wait does not run when its event is signalled after. */
static void a_disarmed_wait_does_not_run(void **state) {
    (void)state;
    run_passes("# purpose: x\nevent E manual\nwait X event E\nthread A\n  arm X\n  disarm X\n  signal E\n"
               "  sleep 10ms\nend\nexpect calls(X) == 0\n");
}

/* `wait T` drains the timer's running callback: it blocks until the
 * callback's 20 ms sleep is over. */
static void waiting_on_a_timer_drains_its_callback(void **state) {
    (void)state;
    run_passes("# purpose: x\ntimer T\ncallback T\n  sleep 20ms\nend\nthread A\n  arm T after 1ms\n"
               "  sleep 5ms\n  wait T as w\n  assert calls(T) == 1\nend\nexpect blocked(w) >= 15ms\n");
}

/* A periodic armed with a window starts after its period when no `after`
 * is given, after `after` when one is: in 35 ms of a 10 ms period with a 1 ms
 * window, 3 callbacks either way (10, 20, 30 ms; 5, 15, 25 ms).  Stopped
 * (`disarm`), drained (`wait`), or left running for the teardown to stop. */
static void a_periodic_with_a_window_keeps_its_period(void **state) {
    (void)state;
    run_passes("# purpose: x\nperiodic R period 10ms\nthread A\n  arm R window 1ms\n  sleep 35ms\n  disarm R\n"
               "  wait R\nend\nexpect calls(R) == 3\n");
    run_passes("# purpose: x\nperiodic R period 10ms\nthread A\n  arm R after 5ms window 1ms\n  sleep 28ms\n"
               "  disarm R\n  wait R\nend\nexpect calls(R) == 3\n");
    run_passes("# purpose: x\nperiodic R period 10ms\nthread A\n  arm R window 1ms\n  sleep 35ms\nend\n"
               "expect calls(R) >= 3\n");
}

/* A timer armed `after 10ms window 5ms` fires once, 10 to 15 ms in
 * (tph_timer_set_after takes the window in ms): not before 9 ms, and by
 * 30 ms.  Virtual time, so the bounds are exact, not timing. */
static void a_timer_fires_inside_its_window(void **state) {
    uint64_t seed;
    (void)state;
    for (seed = 1; seed <= 8; seed++) {
        scn_scenario *s = parse("# purpose: x\ntimer T\nthread A\n  arm T after 10ms window 5ms\n  sleep 9ms\n"
                                "  assert calls(T) == 0\n  sleep 21ms\n  assert calls(T) == 1\nend\n"
                                "expect calls(T) == 1\n");
        scn_run_out r;
        run(s, seed, 0, NULL, &r);
        if (!r.passed) fail_msg("seed %lu: %s", (unsigned long)seed, r.failures);
        scn_run_out_free(&r);
        scn_free(s);
    }
}

/* A scenario with as many objects as the parser takes (its objects array
 * full, no spare row past the last) runs and tears down every one: the
 * teardown's walks stay inside the array (the ASan build sees a read one
 * past it).  One more object is refused, so the array here is exactly full. */
static void a_scenario_with_the_most_objects_tears_down(void **state) {
    enum { MOST = 256 }; /* SCN_MAX_OBJS */
    static char text[MOST * 24 + 128];
    size_t n = 0;
    int i;
    scn_error e;
    scn_scenario *s;
    scn_run_out r;
    (void)state;
    n += (size_t)snprintf(text + n, sizeof text - n, "# purpose: x\n");
    for (i = 0; i < MOST; i++) n += (size_t)snprintf(text + n, sizeof text - n, "event E%d manual\n", i);
    n += (size_t)snprintf(text + n, sizeof text - n, "thread A\n  signal E%d\nend\n", MOST - 1);
    assert_true(n < sizeof text);
    s = parse(text);
    assert_int_equal(s->nobjs, MOST);
    run(s, 1, 0, NULL, &r);
    if (!r.passed) fail_msg("%s", r.failures);
    scn_run_out_free(&r);
    scn_free(s);
    /* one more is past the parser's limit */
    n = (size_t)snprintf(text, sizeof text, "# purpose: x\n");
    for (i = 0; i <= MOST; i++) n += (size_t)snprintf(text + n, sizeof text - n, "event E%d manual\n", i);
    n += (size_t)snprintf(text + n, sizeof text - n, "thread A\n  tick\nend\n");
    s = scn_parse("t.scn", text, n, &e);
    assert_null(s);
    assert_non_null(strstr(e.msg, "too many objects"));
}

/* Members a scenario leaves in a group are released through the group at
 * teardown, and then not closed again one by one. */
static void the_teardown_releases_a_groups_members(void **state) {
    (void)state;
    run_passes("# purpose: x\ngroup G\nwork W in G\ntimer T in G\nthread A\n  submit W\n  wait W\nend\n"
               "expect calls(W) == 1\n");
}

/* Native mode declines what only the controlled scheduler can run: an
 * expected deadlock (a hang on OS threads), and `expect unhealed` (a
 * same-tick coincidence in real time), named at its line. */
static void native_mode_declines_deadlocks_and_same_tick(void **state) {
    static const struct {
        const char *text, *why;
    } cases[] = {
        {"# purpose: x\nthread A\n  tick\nend\nexpect deadlock\n", "a deadlock on OS threads hangs for good"},
        {"# purpose: x\nthread A\n  tick\nend\nexpect unhealed default\n",
         "line 5: `expect unhealed` shows a repair starting in its cancellation's clock tick, which virtual time "
         "makes certain and real time rare"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scn_scenario *s = parse(cases[i].text);
        scn_run_opts o;
        scn_run_out r;
        memset(&o, 0, sizeof o);
        o.seed = 1;
        o.native = true;
        assert_int_equal(scn_run(s, &o, &r), 0);
        assert_non_null(r.declined);
        assert_string_equal(r.declined, cases[i].why);
        assert_null(r.failures);
        assert_null(r.schedule);
        scn_run_out_free(&r);
        scn_free(s);
    }
}

/* `expect misuse WORD`: a misuse report without WORD fails the run, a word
 * of one letter as much as a longer one. */
static void a_misuse_without_its_word_fails(void **state) {
    static const char text[] = "# purpose: x\nio I\nthread A\n  complete I => EINVAL\nend\nexpect misuse %s\n";
    static const char *const words[] = {"no-such-word", "Z"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        char buf[256], want[64];
        snprintf(buf, sizeof buf, text, words[i]);
        snprintf(want, sizeof want, "expected a misuse report mentioning '%s'\n", words[i]);
        run_fails_with(buf, want);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_true_scenario_passes),
        cmocka_unit_test(a_false_expectation_fails_with_its_line),
        cmocka_unit_test(a_wrong_result_fails),
        cmocka_unit_test(failures_are_capped_at_twenty),
        cmocka_unit_test(failures_carry_their_kind_and_check),
        cmocka_unit_test(a_deadlock_says_whether_the_script_waits_in_it),
        cmocka_unit_test(the_teardown_cancels_open_starts),
        cmocka_unit_test(an_overlap_requirement_is_reached),
        cmocka_unit_test(same_seed_same_run_and_schedule_replays_it),
        cmocka_unit_test(a_hold_parks_the_thread_for_its_duration),
        cmocka_unit_test(an_until_hold_waits_for_the_other_event),
        cmocka_unit_test(a_broken_order_is_reported),
        cmocka_unit_test(deadlock_is_reported_and_can_be_expected),
        cmocka_unit_test(an_op_on_a_closed_object_is_a_scenario_error),
        cmocka_unit_test(the_full_trace_brackets_a_callback),
        cmocka_unit_test(a_fault_without_a_pool_fails_a_create_on_any_pool),
        cmocka_unit_test(shell_words_are_quoted_only_when_needed),
        cmocka_unit_test(a_stall_setting_decides_whether_a_cold_pool_severs),
        cmocka_unit_test(now_is_virtual_time),
        cmocka_unit_test(an_event_under_an_open_wait_stays_open),
        cmocka_unit_test(a_wait_on_a_closed_event_is_not_created),
        cmocka_unit_test(cancel_untracked_cancels_without_a_record),
        cmocka_unit_test(a_disarmed_wait_does_not_run),
        cmocka_unit_test(waiting_on_a_timer_drains_its_callback),
        cmocka_unit_test(a_periodic_with_a_window_keeps_its_period),
        cmocka_unit_test(a_timer_fires_inside_its_window),
        cmocka_unit_test(the_teardown_releases_a_groups_members),
        cmocka_unit_test(a_scenario_with_the_most_objects_tears_down),
        cmocka_unit_test(native_mode_declines_deadlocks_and_same_tick),
        cmocka_unit_test(a_misuse_without_its_word_fails),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return rc;
}
