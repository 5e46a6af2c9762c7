/* The scenario language's parser: what a file turns into, and where each kind
 * of bad input is reported (docs/scenarios.md). */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen: a file of an exact size to parse */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scn_ast.h"
#include "scn_features.h"
#include "scn_lex.h"
#include "scn_suggest.h"

static scn_scenario *parse(const char *text, scn_error *e) {
    return scn_parse("t.scn", text, strlen(text), e);
}

/* Parses a text that must parse; a failure names the error's place. */
static scn_scenario *parse_ok(const char *text) {
    scn_error e;
    scn_scenario *s = parse(text, &e);
    if (!s) fail_msg("%d:%d: %s", e.line, e.col, e.msg);
    return s;
}

static void expect_error(const char *text, int line, int col, const char *words) {
    scn_error e;
    scn_scenario *s = parse(text, &e);
    if (s) {
        scn_free(s);
        fail_msg("parsed, expected an error at %d:%d (%s)", line, col, words);
    }
    if (e.line != line || e.col != col || strstr(e.msg, words) == NULL)
        fail_msg("got %d:%d: %s; expected %d:%d: ...%s...", e.line, e.col, e.msg, line, col, words);
}

static const char full[] =
    "# purpose: everything once\n"
    "build fail-fast\n"
    "settle 12s\n"
    "pool default stall always\n"
    "pool P private min 1 max 3 stall 25%\n"
    "fault work-create pool P nth 2 onward\n"
    "hold repair-started pool P nth 2 until cancelled pool default count 3\n"
    "event E manual set\n"
    "group G on P cancel-callback\n"
    "wait X event E in G\n"
    "periodic R period 10ms on P\n"
    "timer T\n"
    "io I on P\n"
    "work W\n"
    "callback W\n"
    "  sleep 1ms\n"
    "end\n"
    "thread A\n"
    "  create T\n"
    "  arm X timeout 5ms\n"
    "  arm T after 2ms window 1ms as armt\n"
    "  repeat 3\n"
    "    submit W => any\n"
    "    repeat 2\n"
    "      tick\n"
    "    end\n"
    "  end\n"
    "  release G cancelling\n"
    "  await repair-ran pool P count 2\n"
    "  assert P.outstanding <= 2\n"
    "  close I => EBUSY\n"
    "end\n"
    "expect count(repair-started, P) >= 1\n"
    "expect blocked(armt) < 1s\n"
    "expect repair-ran before repair-closed pool P\n"
    "expect entry P absent\n"
    "expect fail-fast\n";

static void parses_every_construct(void **state) {
    scn_scenario *s = parse_ok(full);
    const scn_op *ops;
    (void)state;
    assert_string_equal(s->purpose, "everything once");
    assert_true(s->fail_fast_build);
    assert_int_equal(s->settle, 12000 * SCN_MS);
    assert_int_equal(s->outcome, SCN_OUTCOME_FAIL_FAST);
    assert_int_equal(s->npools, 2);
    assert_int_equal(s->pools[0].stall, SCN_STALL_ALWAYS);
    assert_int_equal(s->pools[1].stall, SCN_STALL_PERCENT);
    assert_int_equal(s->pools[1].stall_percent, 25);
    assert_int_equal(s->pools[1].min, 1);
    assert_int_equal(s->pools[1].max, 3);
    assert_int_equal(s->nfaults, 1);
    assert_int_equal(s->faults[0].kind, SCN_FAULT_WORK_CREATE);
    assert_int_equal(s->faults[0].pool, 1);
    assert_int_equal(s->faults[0].nth, 2);
    assert_true(s->faults[0].onward);
    assert_int_equal(s->nholds, 1);
    assert_int_equal(s->holds[0].nth, 2);
    assert_int_equal(s->holds[0].release, SCN_HOLD_UNTIL);
    assert_int_equal(s->holds[0].until_pool, 0);
    assert_int_equal(s->holds[0].until_count, 3);
    assert_int_equal(s->nobjs, 7);
    /* E G X R T I W */
    assert_int_equal(s->objs[2].kind, SCN_OBJ_WAIT);   /* X */
    assert_int_equal(s->objs[2].group, 1);             /* in G */
    assert_int_equal(s->objs[2].pool, 1);              /* G's pool */
    assert_int_equal(s->objs[2].event, 0);
    assert_true(s->objs[1].cancel_callback);
    assert_int_equal(s->objs[3].period, 10 * SCN_MS);
    assert_true(s->objs[4].created_by_thread);         /* T */
    assert_false(s->objs[6].created_by_thread);
    assert_int_equal(s->objs[6].callback, 0);          /* W */
    assert_int_equal(s->nthreads, 1);
    ops = s->threads[0].body.ops;
    assert_int_equal(s->threads[0].body.n, 8);
    assert_int_equal(ops[1].kind, SCN_OP_ARM);
    assert_int_equal(ops[1].time, 5 * SCN_MS);
    assert_false(ops[1].forever);
    assert_int_equal(ops[2].window, 1 * SCN_MS);
    assert_int_equal(ops[2].label, 0);
    assert_int_equal(ops[3].kind, SCN_OP_REPEAT);
    assert_int_equal(ops[3].count, 3);
    assert_int_equal(ops[3].body->n, 2);
    assert_int_equal(ops[3].body->ops[0].expect, SCN_RESULT_ANY);
    assert_int_equal(ops[3].body->ops[1].body->ops[0].kind, SCN_OP_TICK);
    assert_int_equal(ops[4].release, SCN_RELEASE_CANCELLING);
    assert_int_equal(ops[5].kind, SCN_OP_AWAIT);
    assert_int_equal(ops[5].count, 2);
    assert_int_equal(ops[6].expr->lhs.kind, SCN_TERM_FIELD);
    assert_int_equal(ops[6].expr->lhs.field, SCN_FIELD_OUTSTANDING);
    assert_int_equal(ops[7].expect, 3); /* EBUSY */
    assert_int_equal(s->nexpects, 3);
    assert_int_equal(s->expects[0].lhs.kind, SCN_TERM_COUNT);
    assert_int_equal(s->expects[0].cmp, SCN_GE);
    assert_int_equal(s->expects[1].lhs.kind, SCN_TERM_BLOCKED);
    assert_int_equal(s->expects[1].lhs.label, 0);
    assert_int_equal(s->expects[1].rhs.number, 1000 * SCN_MS);
    assert_int_equal(s->norders, 1);
    scn_free(s);
}

static void keywords_accept_dash_or_underscore(void **state) {
    scn_error e;
    scn_scenario *s = parse("# purpose: x\nevent E\nwait X event E\nthread A\n  try-cancel-pending X\n"
                            "  retire-idle\n  stop_and_drain X\nend\n", &e);
    (void)state;
    assert_non_null(s);
    assert_int_equal(s->threads[0].body.ops[0].kind, SCN_OP_TRY_CANCEL);
    assert_int_equal(s->threads[0].body.ops[1].kind, SCN_OP_RETIRE_IDLE);
    scn_free(s);
}

static void same_text_same_hash_other_text_other_hash(void **state) {
    scn_error e;
    scn_scenario *a = parse("# purpose: x\nthread A\n  tick\nend\n", &e);
    scn_scenario *b = parse("# purpose: x\nthread A\n  tick\nend\n", &e);
    scn_scenario *c = parse("# purpose: x\nthread A\n  tick\n  tick\nend\n", &e);
    (void)state;
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_true(a->content_hash == b->content_hash);
    assert_true(a->content_hash != c->content_hash);
    scn_free(a);
    scn_free(b);
    scn_free(c);
}

static void bad_input_is_located(void **state) {
    (void)state;
    expect_error("thread A\n  tick\nend\n", 1, 1, "purpose");
    expect_error("# purpose:\n", 1, 11, "says nothing");
    expect_error("# purpose: x\nfrob\n", 2, 1, "unknown word");
    expect_error("# purpose: x\nthread A\n  frob\nend\n", 3, 3, "unknown operation");
    expect_error("# purpose: x\nthread A\n  sleep 5\nend\n", 3, 9, "unit");
    expect_error("# purpose: x\nthread A\n  sleep 5h\nend\n", 3, 9, "unit");
    expect_error("# purpose: x\nthread A\n  sleep 99999999999999999ms\nend\n", 3, 9, "too large");
    expect_error("# purpose: x\nthread A\n  repeat -1\n  end\nend\n", 3, 10, "bad number");
    /* a number has at most 15 digits (below 10^15 nothing overflows): the
     * 16th makes it no number, not a number out of range */
    expect_error("# purpose: x\nthread A\n  repeat 999999999999999\n  end\nend\n", 3, 10, "out of range");
    expect_error("# purpose: x\nthread A\n  repeat 1000000000000000\n  end\nend\n", 3, 10,
                 "bad number '1000000000000000' for repeat count");
    expect_error("# purpose: x\nthread A\n  submit W\nend\n", 3, 10, "undefined object");
    expect_error("# purpose: x\nwork W on Q\n", 2, 11, "undefined pool");
    expect_error("# purpose: x\nwork W\nwork W\n", 3, 6, "duplicate name");
    expect_error("# purpose: x\npool W private\nwork W\n", 3, 6, "duplicate name");
    expect_error("# purpose: x\nwork W\nthread A\n  signal W\nend\n", 4, 10, "needs a event");
    expect_error("# purpose: x\nevent E\nthread A\n  try_cancel_pending E\nend\n", 4, 22, "needs a wait");
    expect_error("# purpose: x\nhold nope for 1ms\n", 2, 6, "unknown trace point");
    expect_error("# purpose: x\nhold cancelled\n", 2, 15, "needs `for");
    expect_error("# purpose: x\nthread A\n  await nope\nend\n", 3, 9, "unknown trace point");
    expect_error("# purpose: x\nthread A\n  tick\n", 2, 1, "not closed");
    expect_error("# purpose: x\nthread A\n  repeat 2\n    tick\nend\n", 2, 1, "thread is not closed");
    expect_error("# purpose: x\nthread A\n  repeat 2\n    tick\n", 3, 3, "repeat is not closed");
    expect_error("# purpose: x\nthread A\nend\n", 2, 1, "empty thread");
    expect_error("# purpose: x\nend\n", 2, 1, "`end`");
    expect_error("# purpose: x\nthread A\n  tick $\nend\n", 3, 8, "unexpected character");
    expect_error("# purpose: x\nwork W\nthread A\n  submit W extra\nend\n", 4, 12, "unexpected 'extra'");
    expect_error("# purpose: x\nthread A\n  tick\nend\nexpect blocked(nope) > 1ms\n", 5, 16, "undefined label");
    expect_error("# purpose: x\nthread A\n  tick\nend\nexpect count(healer-tick, default) > 1\n", 5, 27,
                 "carries no pool");
    expect_error("# purpose: x\nthread A\n  tick\nend\nexpect default.colour == 1\n", 5, 8, "unknown entry field");
    expect_error("# purpose: x\nthread A\n  tick\nend\nexpect 1 = 1\n", 5, 10, "expected ==");
    expect_error("# purpose: x\nthread A\n  tick\nend\nexpect deadlock\nexpect fail-fast\n", 6, 8, "one outcome");
    expect_error("# purpose: x\nwork W\n", 2, 1, "at least one thread");
    expect_error("# purpose: x\npool default min 1\n", 2, 14, "no thread limits");
    expect_error("# purpose: x\npool P private max 0\n", 2, 20, "at least 1");
    expect_error("# purpose: x\npool P\n", 2, 7, "private");
    expect_error("# purpose: x\nfault alloc pool default\n", 2, 13, "names no pool");
    expect_error("# purpose: x\nthread A\n  create W\nend\n", 3, 10, "undefined object");
    expect_error("# purpose: x\nwork W\nthread A\n  repeat 2\n    create W\n  end\nend\n", 5, 5, "create");
    expect_error("# purpose: x\nwork end\n", 2, 6, "reserved");
    expect_error("# purpose: x\nperiodic R\n", 2, 11, "period");
    expect_error("# purpose: x\nwait X\n", 2, 7, "event NAME");
    /* the word that is no value, not the one after it */
    expect_error("# purpose: x\nthread A\n  tick\nend\nexpect frob == 1\n", 5, 8, "unknown value 'frob'");
    /* a name is at most SCN_NAME_MAX - 1 = 31 characters, and the message says so */
    expect_error("# purpose: x\nwork W2345678901234567890123456789012\n", 2, 6, "at most 31)");
    expect_error("# purpose: x\nwork 9W\n", 2, 6, "bad name '9W' for work (letters, digits, _; at most 31)");
    expect_error("# purpose: x\nbuild turbo\nthread A\n  tick\nend\n", 2, 7, "unknown build 'turbo'");
    expect_error("# purpose: x\npool default\npool default\n", 3, 6, "duplicate declaration of the default pool");
    expect_error("# purpose: x\nthread A\n  await repair-ran count 1000001\nend\n", 3, 26,
                 "count 1000001 is out of range (at most 1000000)");
    /* `window` is an option of arming a timer or a periodic only: on a wait or
     * an io it is the unknown option, at the word (docs/scenarios.md's table) */
    expect_error("# purpose: x\nevent E\nwait X event E\nthread A\n  arm X window 1ms\nend\n", 5, 9,
                 "unknown option 'window' for arming a wait");
    expect_error("# purpose: x\nio I\nthread A\n  start I window 1ms\nend\n", 4, 11,
                 "unknown option 'window' for arming a io");
    /* a word is at most SCN_TOK_LEN - 1 = 63 characters (the token keeps its
     * NUL): 63 reach the parser, which names the bad name; 64 are refused by
     * the lexer, at the word */
    expect_error("# purpose: x\nwork W23456789012345678901234567890123456789012345678901234567890123\n", 2, 6,
                 "bad name 'W23456789012345678901234567890123456789012345678901234567890123' for work");
    expect_error("# purpose: x\nwork W234567890123456789012345678901234567890123456789012345678901234\n", 2, 6,
                 "word too long");
    /* a second release is reported at its own keyword, not at the first's value */
    expect_error("# purpose: x\nhold cancelled for 1ms until cancelled\n", 2, 24,
                 "a hold has one `for` or one `until`");
    expect_error("# purpose: x\nhold cancelled until repair-ran for 1ms\n", 2, 33,
                 "a hold has one `for` or one `until`");
    /* an operation at the top level is named as one, whichever op it is: `create`
     * is the first row of the op table */
    expect_error("# purpose: x\ncreate W\n", 2, 1, "operation 'create' outside a thread or callback block");
    expect_error("# purpose: x\nsubmit W\n", 2, 1, "operation 'submit' outside a thread or callback block");
}

/* Messages no edit of the corpus reaches (test_scenario_edits.c derives its
 * inputs from scenarios/, whose files never name a pool twice, nest a group,
 * and so on): each one here, at its word. */
/* blocked(LABEL) is bound once the whole file is read, in every block that
 * holds an expression: the first thread's too, where an undefined label is
 * refused like anywhere else and a label defined by a later thread binds. */
static void a_label_in_the_first_thread_is_resolved(void **state) {
    scn_error e;
    scn_scenario *s;
    (void)state;
    expect_error("# purpose: x\nthread A\n  assert blocked(nope) < 1s\nend\n", 3, 18, "undefined label");
    s = parse("# purpose: x\nthread A\n  assert blocked(w) < 1s\nend\nthread B\n  sleep 1ms as w\nend\n", &e);
    assert_non_null(s);
    assert_non_null(s->threads[0].body.ops[0].expr);
    assert_int_equal(s->nlabels, 1); /* w, label 0 */
    assert_int_equal(s->threads[0].body.ops[0].expr->lhs.label, 0);
    scn_free(s);
}

static void rare_bad_input_is_located(void **state) {
    static const char thread[] = "thread A\n  tick\nend\n";
    char text[512];
    (void)state;
    expect_error("# purpose: x\nevent E\ncallback E\n  tick\nend\n", 3, 10, "a event has no callback");
    expect_error("# purpose: x\nwork W\ncallback W\n  tick\nend\ncallback W\n  tick\nend\n", 6, 10,
                 "W already has a callback block");
    expect_error("# purpose: x\nwork W\nthread A\n  tick\nend\nexpect calls(W\n", 6, 15,
                 "expected ')' before the end of the line");
    expect_error("# purpose: x\nwork W\nwork V on W\n", 3, 11, "'W' is not a pool");
    expect_error("# purpose: x\nthread A\n  await api/cancelled\nend\n", 3, 9,
                 "trace point 'api/cancelled' is heal/cancelled");
    expect_error("# purpose: x\npool P private min 3 max 2\n", 2, 1, "pool P: min 3 is above max 2");
    expect_error("# purpose: x\npool P private\nwork W on P on P\n", 3, 13, "W is already placed");
    expect_error("# purpose: x\ngroup G\nwork W on default in G\n", 3, 19, "W is already placed");
    expect_error("# purpose: x\ngroup G\ngroup H in G\n", 3, 9, "a group cannot be in a group");
    expect_error("# purpose: x\nwork V\nwork W in V\n", 3, 11, "'V' is a work, not a group");
    expect_error("# purpose: x\nwork V\nwait X event V\n", 3, 14, "'V' is a work, not an event");
    expect_error("# purpose: x\nperiodic R period 999us\n", 2, 19, "period must be at least 1ms");
    expect_error("# purpose: x\ngroup G\nwork W in G\nthread A\n  create G\n  create W\nend\n", 6, 10,
                 "W's group is created by a thread: create W in main");
    expect_error("# purpose: x\nthread A\nrepeat 1\nrepeat 1\nrepeat 1\nrepeat 1\nrepeat 1\nrepeat 1\nrepeat 1\n"
                 "repeat 1\n",
                 10, 1, "repeat nested too deeply (at most 7)");
    expect_error("# purpose: x\nthread A\n  await healer-tick pool default\nend\n", 3, 21,
                 "trace point healer-tick carries no pool");
    expect_error("# purpose: x\nthread A\n  tick as a as b\nend\n", 3, 13, "an operation has one label");
    expect_error("# purpose: x\nevent E\nthread A\n  tick\nend\nexpect calls(E) == 1\n", 6, 14,
                 "a event has no callback to count");
    expect_error("# purpose: x\nwork W\nthread A\n  tick\nend\nexpect outstanding(W) == 0\n", 6, 20,
                 "outstanding(..) counts an io's open starts, and W is a work");
    snprintf(text, sizeof text, "# purpose: x\n%sexpect Q.outstanding == 0\n", thread);
    expect_error(text, 5, 8, "undefined pool 'Q'");
    snprintf(text, sizeof text, "# purpose: x\n%sexpect healer-tick before cancelled pool default\n", thread);
    expect_error(text, 5, 37, "both trace points must carry a pool to filter by one");
    expect_error("# purpose: x\nhold healer-tick pool default for 1ms\n", 2, 18,
                 "trace point healer-tick carries no pool");
    expect_error("# purpose: x\nhold cancelled until healer-tick pool default\n", 2, 34,
                 "trace point healer-tick carries no pool");
    snprintf(text, sizeof text, "# purpose: x\nevent E\n%srequire overlap A E\n", thread);
    expect_error(text, 6, 19, "a event runs no callback to overlap with");
    snprintf(text, sizeof text, "# purpose: x\n%srequire hold cancelled\n", thread);
    expect_error(text, 5, 14, "no hold on cancelled is declared above");
    expect_error("# purpose: x\nwork W\xc3\xa9\n", 2, 7, "unexpected character (not printable ASCII)");
    expect_error("# purpose: x\nthread A\n  sleep 3601s\nend\n", 3, 9,
                 "bad duration '3601s' for sleep: duration longer than one virtual hour");
}

/* `head`, then `line` n times, then `tail`: `line` is a format given the
 * line's index, which it may leave unused (C11 7.21.6.1: ignored). */
static void build_repeated(char *buf, size_t size, const char *head, const char *line, int n, const char *tail) {
    size_t at = (size_t)snprintf(buf, size, "%s", head);
    int i;
    for (i = 0; i < n && at < size; i++) at += (size_t)snprintf(buf + at, size - at, line, i);
    if (at < size) at += (size_t)snprintf(buf + at, size - at, "%s", tail);
    assert_true(at < size);
}

/* Every bound of scn_parse_internal.h (and the lexer's words per line) is
 * reported at the first line past it, at the word that goes over. */
static void each_limit_is_reported_at_the_first_line_past_it(void **state) {
    static char text[40000];
    static const char thread[] = "thread A\n  tick\nend\n";
    (void)state;
    build_repeated(text, sizeof text, "# purpose: x\n", "thread T%d\n  tick\nend\n", 33, "");
    expect_error(text, 98, 8, "too many threads (at most 32)");
    build_repeated(text, sizeof text, "# purpose: x\n", "pool P%d private\n", 32, thread);
    expect_error(text, 33, 6, "too many pools (at most 32)");
    build_repeated(text, sizeof text, "# purpose: x\n", "work W%d\n", 257, thread);
    expect_error(text, 258, 6, "too many objects (at most 256)");
    build_repeated(text, sizeof text, "# purpose: x\nthread A\n", "  tick\n", 4097, "end\n");
    expect_error(text, 4099, 3, "too many operations (at most 4096)");
    build_repeated(text, sizeof text, "# purpose: x\nthread A\n  tick\nend\n", "require trace cancelled\n", 33, "");
    expect_error(text, 37, 1, "too many requirements (at most 32)");
    build_repeated(text, sizeof text, "# purpose: x\n", "a ", 49, "\n");
    expect_error(text, 2, 97, "too many words on one line");
}

/* `timeout` and `forever` together is reported at the operation however the
 * line is indented: the column once came from the op's column read as a
 * token index, so six spaces of indent moved it to the end of the line. */
static void timeout_and_forever_are_located_at_the_operation(void **state) {
    (void)state;
    expect_error("# purpose: x\nevent E\nwait X event E\nthread A\n  arm X timeout 1ms forever\nend\n", 5, 3,
                 "`timeout` and `forever` together");
    expect_error("# purpose: x\nevent E\nwait X event E\nthread A\n      arm X forever timeout 1ms\nend\n", 5, 7,
                 "`timeout` and `forever` together");
}

/* `arm R [after D] [window D]`: a periodic takes a window as a timer does */
static void a_periodic_is_armed_with_a_window(void **state) {
    scn_scenario *s = parse_ok("# purpose: x\nperiodic R period 10ms\nthread A\n  arm R after 2ms window 3ms\nend\n");
    (void)state;
    assert_int_equal(s->threads[0].body.ops[0].kind, SCN_OP_ARM);
    assert_int_equal(s->threads[0].body.ops[0].time, 2 * SCN_MS);
    assert_int_equal(s->threads[0].body.ops[0].window, 3 * SCN_MS);
    scn_free(s);
}

/* Fills the stack below the caller's frame with one byte, so that a table the
 * next call leaves unset reads as that byte, not as whatever ran before. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void paint_stack(unsigned char v) {
    volatile unsigned char area[256 * 1024];
    size_t i;
    for (i = 0; i < sizeof area; i++) area[i] = v;
}

/* "Did you mean" (scn_suggest.h): at most 2 edits and fewer than half the
 * word's letters.  Both cases below delete letters from the front of the
 * word, so they read the distance table's first column (a deletion of i
 * letters costs i): set on every call, whatever the stack held before. */
static void a_suggestion_counts_the_letters_deleted_from_the_front(void **state) {
    static const char *const sleep_[] = {"sleep"}, *const ab[] = {"ab"};
    static const unsigned char paints[] = {0x00, 0x01, 0x55, 0xff};
    size_t k;
    (void)state;
    for (k = 0; k < sizeof paints; k++) {
        const char *got;
        paint_stack(paints[k]);
        got = scn_suggest("xxxsleep", sleep_, 1); /* 3 deletions: too far */
        if (got) fail_msg("stack 0x%02x: 'xxxsleep' -> '%s', expected no suggestion", paints[k], got);
        paint_stack(paints[k]);
        got = scn_suggest("xab", ab, 1); /* 1 deletion of 3 letters */
        if (!got || strcmp(got, "ab") != 0)
            fail_msg("stack 0x%02x: 'xab' -> %s, expected 'ab'", paints[k], got ? got : "(none)");
        paint_stack(paints[k]);
        got = scn_suggest("x-sleep", sleep_, 1); /* 2 deletions of 7 letters */
        if (!got || strcmp(got, "sleep") != 0)
            fail_msg("stack 0x%02x: 'x-sleep' -> %s, expected 'sleep'", paints[k], got ? got : "(none)");
    }
}

/* A swap of two neighbouring letters is one edit wherever it is, the first
 * two letters included: "usbmit" is 1 from "submit" and 2 (two changed
 * letters) from "usbmaa", listed first, so "submit" is the suggestion only if
 * the swap at the front counts as one.  And at the back: "submti". */
static void a_swap_of_two_letters_is_one_edit_at_either_end(void **state) {
    static const char *const cands[] = {"usbmaa", "submit"}, *const back[] = {"subzzt", "submit"};
    const char *got;
    (void)state;
    got = scn_suggest("usbmit", cands, 2);
    if (!got || strcmp(got, "submit") != 0) fail_msg("'usbmit' -> %s, expected 'submit'", got ? got : "(none)");
    got = scn_suggest("submti", back, 2);
    if (!got || strcmp(got, "submit") != 0) fail_msg("'submti' -> %s, expected 'submit'", got ? got : "(none)");
}

/* The same from the other side: words missing letters at the front, so the
 * alignment inserts them first and reads the table's first row (an
 * insertion of j letters costs j), set on every call too.  A row left as the
 * stack held it costs the insertions nothing (a 0 there: "sleep" is 0 from
 * "xxxsleep") or too much (a large value: "leep" is no longer 1 from
 * "sleep"), so each paint fails one of the three. */
static void a_suggestion_counts_the_letters_inserted_at_the_front(void **state) {
    static const char *const xxxsleep[] = {"xxxsleep"}, *const xxsleep[] = {"xxsleep"}, *const sleep_[] = {"sleep"};
    static const unsigned char paints[] = {0x00, 0x01, 0x55, 0xff};
    size_t k;
    (void)state;
    for (k = 0; k < sizeof paints; k++) {
        const char *got;
        paint_stack(paints[k]);
        got = scn_suggest("sleep", xxxsleep, 1); /* 3 insertions: too far */
        if (got) fail_msg("stack 0x%02x: 'sleep' -> '%s', expected no suggestion", paints[k], got);
        paint_stack(paints[k]);
        got = scn_suggest("leep", sleep_, 1); /* 1 insertion, 4 letters */
        if (!got || strcmp(got, "sleep") != 0)
            fail_msg("stack 0x%02x: 'leep' -> %s, expected 'sleep'", paints[k], got ? got : "(none)");
        paint_stack(paints[k]);
        got = scn_suggest("sleep", xxsleep, 1); /* 2 insertions, 5 letters */
        if (!got || strcmp(got, "xxsleep") != 0)
            fail_msg("stack 0x%02x: 'sleep' -> %s, expected 'xxsleep'", paints[k], got ? got : "(none)");
    }
}

/* A trace point index outside the table (scn_ast.h: the lookups over it)
 * answers "?", no pool and a plain b, rather than reading past the table:
 * the table's size, past it and far past it. */
static void a_trace_point_index_outside_the_table_names_nothing(void **state) {
    const int bad[] = {-1, (int)scn_trace_point_count(), (int)scn_trace_point_count() + 1, INT_MAX, INT_MIN};
    size_t i;
    (void)state;
    assert_true(scn_trace_point_count() > 0);
    assert_string_not_equal(scn_trace_point_target(0), "?");
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_string_equal(scn_trace_point_name(bad[i]), "?");
        assert_string_equal(scn_trace_point_target(bad[i]), "?");
        assert_false(scn_trace_point_has_pool(bad[i]));
        assert_int_equal(scn_trace_point_b_unit(bad[i]), SCN_B_PLAIN);
    }
}

/* Inside the table, each trace point's b unit is its row's in
 * SCN_TRACE_POINT_MAP, the first row and the last included. */
static void every_trace_point_has_its_rows_b_unit(void **state) {
#define ROW_B_UNIT_(target, name, has_pool, b_unit) b_unit,
    static const int want[] = {SCN_TRACE_POINT_MAP(ROW_B_UNIT_)};
#undef ROW_B_UNIT_
    size_t i;
    (void)state;
    assert_int_equal(scn_trace_point_count(), sizeof want / sizeof want[0]);
    for (i = 0; i < sizeof want / sizeof want[0]; i++)
        if (scn_trace_point_b_unit((int)i) != want[i])
            fail_msg("trace point %lu (%s): b unit %d, expected %d", (unsigned long)i, scn_trace_point_name((int)i),
                     scn_trace_point_b_unit((int)i), want[i]);
}

/* A fault kind outside the table takes no pool rather than reading past the
 * table (the ASan build sees a read of the row one past the end): the
 * table's size, past it, and a negative kind. */
static void a_fault_kind_outside_the_table_takes_no_pool(void **state) {
    (void)state;
    assert_false(scn_fault_takes_pool(SCN_FAULT_KIND_COUNT));
    assert_false(scn_fault_takes_pool((scn_fault_kind)(SCN_FAULT_KIND_COUNT + 1)));
    assert_false(scn_fault_takes_pool((scn_fault_kind)-1));
    assert_string_equal(scn_fault_name(SCN_FAULT_KIND_COUNT), "?");
}

/* An operation kind outside the table has no name and no operands rather
 * than a read past the table (the ASan build sees the row one past the
 * end): the table's size and past it. */
static void an_op_kind_outside_the_table_has_no_operands(void **state) {
    (void)state;
    assert_int_equal(scn_op_operand_kinds(SCN_OP_KIND_COUNT), 0);
    assert_int_equal(scn_op_operand_kinds((scn_op_kind)(SCN_OP_KIND_COUNT + 1)), 0);
    assert_string_equal(scn_op_name(SCN_OP_KIND_COUNT), "?");
    assert_string_equal(scn_op_name((scn_op_kind)(SCN_OP_KIND_COUNT + 1)), "?");
}

/* scn_result_words writes into any buffer it is given room in the longest
 * prefix of the list that fits, the shortest buffer (one byte: the empty
 * string) included, and nothing into none. */
static void result_words_fit_any_buffer(void **state) {
    char words[512], buf[512];
    size_t size, len;
    (void)state;
    scn_result_words(words, sizeof words);
    len = strlen(words);
    assert_true(len + 2 < sizeof words);
    assert_int_equal(strncmp(words, "ok, ", 4), 0);
    memset(buf, 'X', sizeof buf);
    scn_result_words(buf, 0);
    assert_int_equal(buf[0], 'X');
    for (size = 1; size <= len + 1; size++) {
        size_t want = size - 1;
        memset(buf, 'X', sizeof buf);
        buf[sizeof buf - 1] = '\0'; /* a call that wrote nothing still reads as a string */
        scn_result_words(buf, size);
        if (strlen(buf) != want || strncmp(buf, words, want) != 0 || buf[size] != 'X')
            fail_msg("size %lu: got '%.*s', expected the first %lu characters of '%s'", (unsigned long)size,
                     (int)size, buf, (unsigned long)want, words);
    }
}

/* `nth N` of a hold and of a fault: up to a million, inclusive. */
static void nth_goes_up_to_a_million(void **state) {
    scn_scenario *s = parse_ok("# purpose: x\nhold cancelled nth 1000000 for 1ms\nfault alloc nth 1000000\n"
                               "thread A\n  tick\nend\n");
    (void)state;
    assert_int_equal(s->holds[0].nth, 1000000);
    assert_int_equal(s->faults[0].nth, 1000000);
    scn_free(s);
    expect_error("# purpose: x\nhold cancelled nth 1000001 for 1ms\nthread A\n  tick\nend\n", 2, 20,
                 "nth 1000001 is out of range (at most 1000000)");
    expect_error("# purpose: x\nfault alloc nth 1000001\nthread A\n  tick\nend\n", 2, 17,
                 "nth 1000001 is out of range (at most 1000000)");
}

/* `expect fail-fast [WORD] | deadlock | misuse [WORD]`: the word, when given,
 * is kept as the part of the reason / report the run must mention. */
static void an_outcome_keeps_its_word(void **state) {
    static const struct {
        const char *line;
        scn_outcome outcome;
        const char *word;
    } cases[] = {
        {"expect fail-fast overdue\n", SCN_OUTCOME_FAIL_FAST, "overdue"},
        {"expect fail_fast\n", SCN_OUTCOME_FAIL_FAST, ""},
        {"expect misuse completion\n", SCN_OUTCOME_MISUSE, "completion"},
        {"expect misuse\n", SCN_OUTCOME_MISUSE, ""},
        {"expect deadlock\n", SCN_OUTCOME_DEADLOCK, ""},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        scn_error e;
        scn_scenario *s;
        snprintf(text, sizeof text, "# purpose: x\nthread A\n  tick\nend\n%s", cases[i].line);
        s = parse(text, &e);
        if (!s) fail_msg("%s: %d:%d: %s", cases[i].line, e.line, e.col, e.msg);
        assert_int_equal(s->outcome, cases[i].outcome);
        if (strcmp(s->outcome_text, cases[i].word) != 0)
            fail_msg("%s: outcome word '%s', expected '%s'", cases[i].line, s->outcome_text, cases[i].word);
        scn_free(s);
    }
}

/* Each text (a printf format given one thread block) parses, and `feature`
 * is found at want[i], the line scn_feature_line reports (0: none). */
static void check_feature_lines(scn_feature feature, const char *what, const char *const *texts, const int *want,
                                size_t n) {
    static const char body[] = "thread A\n  tick\nend\n";
    size_t i;
    for (i = 0; i < n; i++) {
        char text[256];
        scn_error e;
        scn_scenario *s;
        snprintf(text, sizeof text, texts[i], body);
        s = parse(text, &e);
        if (!s) {
            fail_msg("%d:%d: %s", e.line, e.col, e.msg);
            return;
        }
        if (scn_feature_line(s, feature) != want[i])
            fail_msg("%s: %s feature line %d, expected %d", text, what, scn_feature_line(s, feature), want[i]);
        scn_free(s);
    }
}

/* A scenario's fail-fast is its outcome or its build (scn_features.c): a
 * backend that cannot end the process declines either, and nothing else. */
static void fail_fast_is_the_outcome_or_the_build(void **state) {
    static const char *const texts[] = {
        "# purpose: x\n%s",
        "# purpose: x\n%sexpect deadlock\n",
        "# purpose: x\n%sexpect fail-fast\n",
        "# purpose: x\nbuild fail-fast\n%s",
    };
    static const int want[] = {0, 0, -1, -1};
    (void)state;
    check_feature_lines(SCN_FEATURE_FAIL_FAST, "fail-fast", texts, want, sizeof texts / sizeof texts[0]);
}

/* The same-tick limitation is `expect unhealed P`, the statement that opts a
 * pool out of the unhealed oracle (scn_features.c); an expression that only
 * reads P.unhealed leaves the oracle on and runs anywhere. */
static void same_tick_is_expect_unhealed_not_the_field(void **state) {
    static const char *const texts[] = {
        "# purpose: x\n%sexpect default.unhealed == 0\n",
        "# purpose: x\n%sexpect unhealed default\n",
    };
    static const int want[] = {0, 5};
    (void)state;
    check_feature_lines(SCN_FEATURE_SAME_TICK, "same-tick", texts, want, sizeof texts / sizeof texts[0]);
}

/* One callback block for each of the most objects a scenario may have:
 * every block is freed, and nothing past the last (ASan sees a read of one
 * more). */
static void the_most_callbacks_parse_and_free(void **state) {
    static char text[256 * 40 + 64];
    size_t n = 0;
    int i;
    scn_error e;
    scn_scenario *s;
    (void)state;
    n += (size_t)snprintf(text + n, sizeof text - n, "# purpose: x\n");
    for (i = 0; i < 256; i++) n += (size_t)snprintf(text + n, sizeof text - n, "work W%d\n", i);
    for (i = 0; i < 256; i++) n += (size_t)snprintf(text + n, sizeof text - n, "callback W%d\n  tick\nend\n", i);
    n += (size_t)snprintf(text + n, sizeof text - n, "thread A\n  tick\nend\n");
    assert_true(n < sizeof text - 1);
    s = parse(text, &e);
    if (!s) {
        fail_msg("%d:%d: %s", e.line, e.col, e.msg);
        return;
    }
    assert_int_equal(s->nobjs, 256);
    assert_int_equal(s->ncallbacks, 256);
    assert_int_equal(s->callbacks[255].obj, 255);
    assert_int_equal(s->callbacks[255].body.n, 1);
    scn_free(s);
}

static void nul_and_huge_lines_are_refused_not_crashed(void **state) {
    static char big[20000];
    scn_error e;
    scn_scenario *s;
    (void)state;
    s = scn_parse("t.scn", "# purpose: x\n\0thread", 20, &e);
    assert_null(s);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.col, 1);
    memset(big, 'a', sizeof big - 1);
    memcpy(big, "# purpose: x\n", 13);
    s = scn_parse("t.scn", big, strlen(big), &e);
    assert_null(s);
    assert_int_equal(e.line, 2);
    assert_non_null(strstr(e.msg, "too long"));
}

/* scn_parse_file stops reading at 16 MiB and reports it at line 0 rather
 * than parse it: /dev/zero, a file that never ends, without writing one. */
static void a_file_past_16_mib_is_refused_at_line_0(void **state) {
#if defined(_WIN32)
    (void)state;
    skip();
#else
    scn_error e;
    scn_scenario *s = scn_parse_file("/dev/zero", &e);
    (void)state;
    assert_null(s);
    assert_int_equal(e.line, 0);
    assert_int_equal(e.col, 0);
    assert_string_equal(e.msg, "file larger than 16 MiB");
#endif
}

/* The limit is inclusive: a file of exactly 16 MiB is read and parsed (here
 * it is blank lines, so the parser's own complaint comes back), one byte more
 * is refused.  The file is written to the temporary directory and removed. */
static void a_file_of_exactly_16_mib_is_read(void **state) {
#if defined(_WIN32)
    (void)state;
    skip();
#else
    static const size_t sizes[] = {((size_t)1 << 24) - 4095, (size_t)1 << 24, ((size_t)1 << 24) + 1};
    char path[] = "/tmp/tpheal-scn-XXXXXX";
    size_t i, chunk = 1 << 16;
    char *blank = malloc(chunk);
    (void)state;
    assert_non_null(blank);
    memset(blank, '\n', chunk);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        scn_error e;
        scn_scenario *s;
        size_t left = sizes[i];
        int fd = mkstemp(path);
        FILE *f;
        assert_true(fd >= 0);
        f = fdopen(fd, "wb");
        assert_non_null(f);
        while (left) {
            size_t k = left < chunk ? left : chunk;
            assert_int_equal(fwrite(blank, 1, k, f), k);
            left -= k;
        }
        assert_int_equal(fclose(f), 0);
        s = scn_parse_file(path, &e);
        remove(path);
        memcpy(path + sizeof path - 7, "XXXXXX", 6);
        assert_null(s);
        if (sizes[i] > ((size_t)1 << 24)) assert_string_equal(e.msg, "file larger than 16 MiB");
        else if (strcmp(e.msg, "file larger than 16 MiB") == 0 || e.line == 0)
            fail_msg("a file of %lu bytes was refused: %d: %s", (unsigned long)sizes[i], e.line, e.msg);
    }
    free(blank);
#endif
}

static void every_corpus_file_parses(void **state) {
    static const char *const names[] = {
        "retire-waits-for-running-repair.scn", "many-pools-churn.scn", "overdue-retry-two-outstanding.scn",
        "group-release-cancelling.scn", "io-run-down.scn",
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1200];
        scn_error e;
        scn_scenario *s;
        snprintf(path, sizeof path, "%s/%s", TPHEAL_SCENARIO_DIR, names[i]);
        s = scn_parse_file(path, &e);
        if (!s) {
            /* cmocka 1.1's fail_msg is not noreturn: gcc 12 -O2 sees s NULL below */
            fail_msg("%s:%d:%d: %s", path, e.line, e.col, e.msg);
            return;
        }
        assert_true(strlen(s->purpose) > 10);
        scn_free(s);
    }
}

/* `require`: each kind with its operands resolved; start-delay in rt units. */
static void parses_requirements(void **state) {
    static const char text[] =
        "# purpose: every requirement kind once\n"
        "pool P private max 2 start-delay 2ms\n"
        "pool default stall always start-delay 1ms\n"
        "fault healer-start nth 1\n"
        "hold cancelled pool P for 1ms\n"
        "work W on P\n"
        "thread A\n  submit W as s\nend\n"
        "require severed default\n"
        "require trace repair-started pool P count 2\n"
        "require hold cancelled\n"
        "require overlap A W\n"
        "require fault pool-create\n"
        "require blocked(s) >= 1ms\n";
    scn_scenario *s = parse_ok(text);
    (void)state;
    assert_int_equal(s->pools[1].start_delay, 2 * SCN_MS);
    assert_int_equal(s->pools[0].start_delay, 1 * SCN_MS);
    assert_int_equal(s->nrequires, 6);
    assert_int_equal(s->requires[0].kind, SCN_REQ_SEVERED);
    assert_int_equal(s->requires[0].pool, SCN_DEFAULT_POOL);
    assert_int_equal(s->requires[1].kind, SCN_REQ_TRACE);
    assert_int_equal(s->requires[1].pool, 1);
    assert_int_equal(s->requires[1].count, 2);
    assert_string_equal(scn_trace_point_name(s->requires[1].point), "repair-started");
    assert_int_equal(s->requires[2].kind, SCN_REQ_HOLD);
    assert_int_equal(s->requires[3].kind, SCN_REQ_OVERLAP);
    assert_int_equal(s->requires[3].a, 0);
    assert_int_equal(s->requires[3].b, SCN_REQ_OBJ_BASE + 0);
    assert_int_equal(s->requires[4].kind, SCN_REQ_FAULT);
    assert_int_equal(s->requires[4].fault, SCN_FAULT_POOL_CREATE); /* healer-start's slot */
    assert_int_equal(s->requires[5].kind, SCN_REQ_EXPR);
    assert_int_equal(s->requires[5].expr.lhs.kind, SCN_TERM_BLOCKED);
    assert_int_equal(s->requires[5].expr.lhs.label, 0);
    assert_string_equal(s->requires[1].text, "trace repair-started pool P count 2");
    assert_int_equal(s->requires[5].line, 15);
    scn_free(s);
    expect_error("# purpose: x\nthread A\n  tick\nend\nrequire severed Q\n", 5, 17, "undefined pool");
    expect_error("# purpose: x\nthread A\n  tick\nend\nrequire trace nowhere\n", 5, 15, "unknown trace point");
    expect_error("# purpose: x\nthread A\n  tick\nend\nrequire trace healer-tick pool default\n", 5, 27,
                 "carries no pool");
    expect_error("# purpose: x\nthread A\n  tick\nend\nrequire overlap A\n", 5, 18, "thread or object");
    expect_error("# purpose: x\npool default start-delay 5\n", 2, 26, "unit");
    /* at the fault kind, the word the reader has to change */
    expect_error("# purpose: x\nthread A\n  tick\nend\nrequire fault pool-create\n", 5, 15,
                 "no pool-create fault is declared above");
}

/* scn_lex.h promises end_col is the column just past the last token, which
 * for a line with none is its first column: an error "at the end" of such a
 * line must still name a column an editor can go to, never 0.  The parser
 * skips token-less lines today, so only the lexer itself shows it. */
static void a_line_without_tokens_ends_at_column_one(void **state) {
    static const char comment[] = "    # only a comment";
    scn_line ln;
    (void)state;
    scn_lex_line("", 0, 7, &ln);
    assert_int_equal(ln.ntok, 0);
    assert_int_equal(ln.line, 7);
    assert_int_equal(ln.end_col, 1);
    scn_lex_line(comment, sizeof comment - 1, 8, &ln);
    assert_int_equal(ln.ntok, 0);
    assert_int_equal(ln.end_col, 1);
    assert_int_equal(ln.bad_col, 0);
}

/* The cold-pool note (scn_note_severed_without_start_delay) must read both
 * sides of an expect: `0 == severed(P)` depends on P severing as much as
 * `severed(P) == 0` does.  Q's start-delay keeps the first expect from
 * drawing it, so the note has to come from P on the right of the second. */
static void a_severed_pool_on_the_right_draws_the_cold_pool_note(void **state) {
    static const char text[] =
        "# purpose: severed on the right-hand side\n"
        "pool P private max 2\n"
        "pool Q private max 2 start-delay 2ms\n"
        "work W on P\n"
        "thread A\n  submit W\nend\n"
        "expect 0 == severed(Q)\n"
        "expect 0 == severed(P)\n";
    scn_scenario *s = parse_ok(text);
    (void)state;
    assert_int_equal(s->expects[1].rhs.kind, SCN_TERM_SEVERED);
    if (!strstr(s->note, "pool P has no start-delay")) fail_msg("note: '%s'", s->note);
    assert_int_equal(s->note_line, 9);
    assert_int_equal(s->note_col, 8);
    scn_free(s);
}

/* A short form is located as a comparison is, at its first word after
 * `expect`: the note of `expect severed P` points at `severed`. */
static void a_short_form_is_located_at_its_first_word(void **state) {
    static const char text[] =
        "# purpose: the short form's column\n"
        "pool P private max 2\n"
        "work W on P\n"
        "thread A\n  submit W\nend\n"
        "expect   severed P\n";
    scn_scenario *s = parse_ok(text);
    (void)state;
    if (!strstr(s->note, "pool P has no start-delay")) fail_msg("note: '%s'", s->note);
    assert_int_equal(s->note_line, 7);
    assert_int_equal(s->note_col, 10);
    assert_int_equal(s->expects[0].col, 10);
    scn_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_requirements),
        cmocka_unit_test(a_short_form_is_located_at_its_first_word),
        cmocka_unit_test(parses_every_construct),
        cmocka_unit_test(keywords_accept_dash_or_underscore),
        cmocka_unit_test(same_text_same_hash_other_text_other_hash),
        cmocka_unit_test(bad_input_is_located),
        cmocka_unit_test(a_label_in_the_first_thread_is_resolved),
        cmocka_unit_test(rare_bad_input_is_located),
        cmocka_unit_test(each_limit_is_reported_at_the_first_line_past_it),
        cmocka_unit_test(timeout_and_forever_are_located_at_the_operation),
        cmocka_unit_test(a_periodic_is_armed_with_a_window),
        cmocka_unit_test(a_suggestion_counts_the_letters_deleted_from_the_front),
        cmocka_unit_test(a_swap_of_two_letters_is_one_edit_at_either_end),
        cmocka_unit_test(a_suggestion_counts_the_letters_inserted_at_the_front),
        cmocka_unit_test(a_trace_point_index_outside_the_table_names_nothing),
        cmocka_unit_test(every_trace_point_has_its_rows_b_unit),
        cmocka_unit_test(a_fault_kind_outside_the_table_takes_no_pool),
        cmocka_unit_test(an_op_kind_outside_the_table_has_no_operands),
        cmocka_unit_test(result_words_fit_any_buffer),
        cmocka_unit_test(nth_goes_up_to_a_million),
        cmocka_unit_test(nul_and_huge_lines_are_refused_not_crashed),
        cmocka_unit_test(every_corpus_file_parses),
        cmocka_unit_test(a_file_past_16_mib_is_refused_at_line_0),
        cmocka_unit_test(a_file_of_exactly_16_mib_is_read),
        cmocka_unit_test(fail_fast_is_the_outcome_or_the_build),
        cmocka_unit_test(same_tick_is_expect_unhealed_not_the_field),
        cmocka_unit_test(an_outcome_keeps_its_word),
        cmocka_unit_test(the_most_callbacks_parse_and_free),
        cmocka_unit_test(a_line_without_tokens_ends_at_column_one),
        cmocka_unit_test(a_severed_pool_on_the_right_draws_the_cold_pool_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
