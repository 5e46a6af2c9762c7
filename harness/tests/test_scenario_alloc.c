/* The scenario engine and memory.  The parser: a scenario whose parse cannot
 * allocate is refused with "out of memory" at the line that needed the
 * memory, its first column (scn_error_tok(p, 0, ...): the line, not one of
 * its words, is what could not be kept), never parsed short and never
 * crashed on.  The runner: what a run allocates it gives back, on its error
 * paths too, and scn_run_out_free frees every string of a result.  The test
 * stands in for malloc, calloc, realloc and free through the GNU linkers'
 * --wrap (harness/tests/CMakeLists.txt), so it fails allocations and counts
 * the live ones itself, in every build: a leak on a path only this test
 * takes is no job for LeakSanitizer's conservative scan of the stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scn_ast.h"
#include "scn_run.h"

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __real_free(void *p);
void __wrap_free(void *p);

/* Armed (> 0): the allocation this many calls on returns NULL, once. */
static unsigned fail_in;
static bool failed;

static bool fail_this_one(void) {
    if (fail_in == 0) return false;
    if (--fail_in > 0) return false;
    failed = true;
    return true;
}

/* Blocks handed out through the wraps and not yet freed.  A free the wrap
 * sees of a block it did not hand out (libc's own, as fopen's) would make
 * this drift, so the tests compare it only across calls that allocate
 * through the engine's own malloc, calloc and realloc.  Volatile: the
 * compiler takes malloc for the builtin, which writes no global, and would
 * fold a count read across this file's own malloc calls. */
static volatile long live;

void *__wrap_malloc(size_t size) {
    void *p = fail_this_one() ? NULL : __real_malloc(size);
    if (p) live++;
    return p;
}
void *__wrap_calloc(size_t n, size_t size) {
    void *p = fail_this_one() ? NULL : __real_calloc(n, size);
    if (p) live++;
    return p;
}
void *__wrap_realloc(void *p, size_t size) {
    void *q;
    if (fail_this_one()) return NULL; /* p stays the caller's */
    q = __real_realloc(p, size);
    if (q && !p) live++;
    return q;
}
void __wrap_free(void *p) {
    if (p) live--;
    __real_free(p);
}

/* Every line kind that grows a list of the scenario: a hold, a fault, a
 * requirement, an order, an expectation; in a thread an operation (its
 * block's ops), a repeat (its body), an assert (its expression) and a label
 * (`as`).  The thread's lines are indented, so their first word is not in
 * column 1 and a column off by a word shows. */
static const char text[] =
    "# purpose: every allocation the parser makes\n"   /* 1 */
    "hold cancelled for 1ms\n"                          /* 2 */
    "fault alloc nth 2\n"                               /* 3 */
    "require trace cancelled\n"                         /* 4 */
    "event E manual\n"                                  /* 5 */
    "wait X event E\n"                                  /* 6 */
    "thread A\n"                                        /* 7 */
    "  arm X\n"                                         /* 8 */
    "  repeat 2\n"                                      /* 9 */
    "    signal E\n"                                    /* 10 */
    "  end\n"                                           /* 11 */
    "  try_cancel_pending X as t\n"                     /* 12 */
    "  assert calls(X) >= 0\n"                          /* 13 */
    "end\n"                                             /* 14 */
    "expect cancelled before repair-started\n"          /* 15 */
    "expect calls(X) >= 0\n";                           /* 16 */

/* The column of line `line`'s first word (1-based; the text indents with
 * spaces only). */
static int first_word_col(int line) {
    const char *c = text;
    int l = 1, col = 1;
    while (*c && l < line) {
        if (*c++ == '\n') l++;
    }
    while (c[col - 1] == ' ') col++;
    return col;
}

static void every_failed_allocation_is_out_of_memory_at_its_line(void **state) {
    /* the lines an out-of-memory error was reported at (by number) */
    bool at[17] = {false};
    const int grows[] = {2, 3, 4, 8, 9, 10, 12, 13, 15, 16};
    unsigned k;
    size_t i;
    (void)state;
    for (k = 1;; k++) {
        scn_error e;
        scn_scenario *s;
        failed = false;
        fail_in = k;
        s = scn_parse("oom.scn", text, sizeof text - 1, &e);
        fail_in = 0;
        if (!failed) {
            /* past the parse's last allocation: it parses whole */
            if (!s) fail_msg("%d:%d: %s", e.line, e.col, e.msg);
            assert_int_equal(s->nholds, 1);
            assert_int_equal(s->norders, 1);
            assert_int_equal(s->nexpects, 1);
            scn_free(s);
            break;
        }
        if (s) {
            scn_free(s);
            fail_msg("allocation %u failed and the scenario parsed anyway", k);
        }
        if (strcmp(e.msg, "out of memory") != 0)
            fail_msg("allocation %u: expected \"out of memory\", got %d:%d: %s", k, e.line, e.col, e.msg);
        /* scn_parse's own set-up has no line yet */
        if (e.line == 0) continue;
        assert_true(e.line > 0 && e.line <= 16);
        if (e.col != first_word_col(e.line))
            fail_msg("allocation %u: out of memory at %d:%d, expected column %d (the line's first word)", k,
                     e.line, e.col, first_word_col(e.line));
        at[e.line] = true;
    }
    /* each line that grows a list was reached by some failed allocation */
    for (i = 0; i < sizeof grows / sizeof grows[0]; i++)
        if (!at[grows[i]]) fail_msg("no allocation failed on line %d", grows[i]);
}

static scn_scenario *parse_ok(const char *src) {
    scn_error e;
    scn_scenario *s = scn_parse("t.scn", src, strlen(src), &e);
    if (!s) fail_msg("%d:%d: %s", e.line, e.col, e.msg);
    return s;
}

/* A schedule string sched_run rejects ends the run before it starts
 * (bad_options): the run state scn_run had already allocated is given back
 * with it, and the result holds only the reason, which scn_run_out_free
 * frees. */
static void a_rejected_schedule_leaks_nothing(void **state) {
    scn_scenario *s = parse_ok("# purpose: x\nwork W\nthread A\n  submit W\n  wait W\nend\n");
    scn_run_opts o;
    scn_run_out r;
    long before;
    (void)state;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.schedule = "not a schedule";
    before = live;
    assert_int_equal(scn_run(s, &o, &r), -1);
    assert_true(r.bad_options);
    assert_non_null(r.failures);
    scn_run_out_free(&r);
    if (live != before) fail_msg("%ld block(s) left allocated by a rejected run", live - before);
    scn_free(s);
}

/* A run whose state cannot be allocated -- the run itself (malloc) or any
 * of its eight tables (calloc, alloc_state) -- does not start: -1, "out of
 * memory" as its failure, and nothing left allocated. */
static void a_run_without_memory_for_its_state_does_not_start(void **state) {
    scn_scenario *s = parse_ok("# purpose: x\nwork W\nthread A\n  submit W\n  wait W\nend\n");
    unsigned k;
    (void)state;
    for (k = 1; k <= 9; k++) {
        scn_run_opts o;
        scn_run_out r;
        long before = live;
        int rc;
        memset(&o, 0, sizeof o);
        o.seed = 1;
        failed = false;
        fail_in = k;
        rc = scn_run(s, &o, &r);
        fail_in = 0;
        assert_true(failed);
        if (rc != -1 || !r.failures || strcmp(r.failures, "out of memory") != 0)
            fail_msg("allocation %u failed: rc %d, failures '%s'", k, rc, r.failures ? r.failures : "(none)");
        scn_run_out_free(&r);
        if (live != before) fail_msg("allocation %u failed: %ld block(s) left allocated", k, live - before);
    }
    scn_free(s);
}

/* scn_run_out_free owns every string of a result, the race build's report
 * included (only that build's runs fill it in, so no run here can: the
 * result is filled by hand). */
static void a_result_frees_every_string(void **state) {
    scn_run_out r;
    long before;
    (void)state;
    memset(&r, 0, sizeof r);
    before = live;
    r.declined = malloc(1);
    r.failures = malloc(1);
    r.schedule = malloc(1);
    r.blocked_report = malloc(1);
    r.race = malloc(1);
    r.trace_tail = malloc(1);
    r.misuse = malloc(1);
    r.faults = malloc(1);
    r.trace_full = malloc(1);
    assert_int_equal(live - before, 9);
    scn_run_out_free(&r);
    if (live != before) fail_msg("%ld string(s) of the result left allocated", live - before);
    assert_null(r.race);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_failed_allocation_is_out_of_memory_at_its_line),
        cmocka_unit_test(a_rejected_schedule_leaks_nothing),
        cmocka_unit_test(a_run_without_memory_for_its_state_does_not_start),
        cmocka_unit_test(a_result_frees_every_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
