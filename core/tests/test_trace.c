/* The trace ring: order after wrap, the dropped notice, the filter, the hook,
 * the disarmed gate, and arming before main from TPHEAL_TRACE. */
/* popen, for the before-main arming check. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tph_test.h"
#include "trace_point.h"

#ifdef _MSC_VER
/* MSVC spells them _popen/_pclose and deprecates the POSIX names (C4996,
 * an error under /W4 /WX); the body that calls them is skipped on Windows,
 * but it still compiles. */
#define popen _popen
#define pclose _pclose
#endif

static const char *self_path;

/* Every body runs inside a simulated process (the trace reads the seam's
 * clock, thread id and mutex); tph_test installs its own hook, which these
 * tests remove so they observe the trace alone. */
static void quiet(void) { tph_trace_set_hook(NULL, NULL); }

static void body_order_after_wrap(void *ctx) {
    tph_trace_record recs[16];
    uint64_t dropped = 99;
    size_t n, i;
    (void)ctx;
    quiet();
    tph_trace_set_capacity(8);
    tph_trace_arm("*");
    tph_trace_clear();
    for (i = 0; i < 20; i++) TPH_TRACE("t", "e", i, 0);
    n = tph_trace_snapshot(recs, 16, &dropped);
    TPH_CHECK_EQ(n, 8);
    TPH_CHECK_EQ(dropped, 12);
    /* Oldest first, contiguous: a ring read from index 0 after a wrap would
     * start at 16, not 12. */
    for (i = 0; i < n; i++) {
        TPH_CHECK_EQ(recs[i].a, 12 + i);
        TPH_CHECK_EQ(recs[i].seq, 12 + i);
    }
    /* A smaller buffer gets the oldest `max`, and nothing past them. */
    memset(recs, 0xA5, sizeof recs);
    n = tph_trace_snapshot(recs, 3, NULL);
    TPH_CHECK_EQ(n, 3);
    TPH_CHECK_EQ(recs[2].a, 14);
    {
        tph_trace_record untouched;
        memset(&untouched, 0xA5, sizeof untouched);
        TPH_CHECK(memcmp(&recs[3], &untouched, sizeof untouched) == 0);
    }
    /* Not wrapped yet: all kept, none dropped. */
    tph_trace_clear();
    for (i = 0; i < 5; i++) TPH_TRACE("t", "e", i, 0);
    n = tph_trace_snapshot(recs, 16, &dropped);
    TPH_CHECK_EQ(n, 5);
    TPH_CHECK_EQ(dropped, 0);
    TPH_CHECK_EQ(recs[0].a, 0);
    TPH_CHECK_EQ(recs[4].a, 4);
}

/* A record carries the interrupt time of its emission (the seam's clock,
 * tick-rounded), and a new process numbers its records from 0 whatever the
 * previous one recorded. */
static void body_time_and_fresh_numbering(void *ctx) {
    tph_trace_record recs[8], rec;
    uint64_t before;
    (void)ctx;
    quiet();
    tph_trace_arm("*");
    tph_test_sleep(3 * TPH_TEST_TICK);
    before = tph_os_interrupt_time();
    TPH_TRACE("t", "e", 1, 2);
    /* Only this process's record: none left over from the last one. */
    TPH_CHECK_EQ(tph_trace_snapshot(recs, 8, NULL), 1);
    rec = recs[0];
    TPH_CHECK_EQ(rec.seq, 0);
    TPH_CHECK(rec.time != 0);
    TPH_CHECK(rec.time >= before && rec.time <= tph_os_interrupt_time());
    TPH_CHECK_EQ(rec.a, 1);
    TPH_CHECK_EQ(rec.b, 2);
    TPH_CHECK_EQ(rec.thread, tph_os_thread_id());
    TPH_CHECK(strcmp(rec.target, "t") == 0 && strcmp(rec.event, "e") == 0);
    /* More records, left for the next process to forget.  Arming again
     * keeps what the ring holds (only a clear or a new capacity empties it). */
    TPH_TRACE("t", "e", 3, 4);
    tph_trace_arm("*");
    TPH_TRACE("t", "e", 5, 6);
    TPH_CHECK_EQ(tph_trace_snapshot(recs, 8, NULL), 3);
    /* A new capacity starts a new ring, numbered from 0. */
    tph_trace_set_capacity(5);
    tph_trace_arm("*");
    TPH_TRACE("t", "e", 7, 8);
    TPH_CHECK_EQ(tph_trace_snapshot(recs, 8, NULL), 1);
    TPH_CHECK_EQ(recs[0].seq, 0);
    TPH_CHECK_EQ(recs[0].a, 7);
    /* Back to the default ring, holding records the next process must not
     * see: its ring is this one, reused, so only the reset empties it. */
    tph_trace_set_capacity(0);
    tph_trace_arm("*");
    TPH_TRACE("t", "e", 9, 10);
    TPH_TRACE("t", "e", 11, 12);
}

static void test_record_time_and_fresh_numbering(void **state) {
    (void)state;
    tph_test_run_controlled(body_time_and_fresh_numbering, NULL, NULL, 1);
    tph_test_run_controlled(body_time_and_fresh_numbering, NULL, NULL, 2);
}

static void test_order_after_wrap(void **state) {
    (void)state;
    tph_test_run_controlled(body_order_after_wrap, NULL, NULL, 1);
}

/* Dumps a ring of `ring` records after `n` records into buf. */
static void dump_ring_after(size_t ring, size_t n, char *buf, size_t cap) {
    FILE *f = tmpfile();
    size_t len, i;
    TPH_CHECK(f != NULL);
    tph_trace_set_capacity(ring);
    tph_trace_arm("*");
    tph_trace_clear();
    for (i = 0; i < n; i++) TPH_TRACE("heal", "repair-submitted", 100 + i, 7);
    tph_trace_dump(f);
    rewind(f);
    len = fread(buf, 1, cap - 1, f);
    buf[len] = '\0';
    fclose(f);
}

static void dump_after(size_t n, char *buf, size_t cap) { dump_ring_after(4, n, buf, cap); }

static void body_dump(void *ctx) {
    char buf[4096];
    (void)ctx;
    quiet();
    dump_after(10, buf, sizeof buf);
    TPH_CHECK(strstr(buf, "# 6 earlier records dropped (ring capacity 4)\n") == buf);
    /* The dropped line comes first, then the oldest kept record (a = 106). */
    TPH_CHECK(strstr(buf, "dropped") < strstr(buf, " 106 7"));
    /* Oldest first and contiguous, as the snapshot gives them. */
    TPH_CHECK(strstr(buf, " 106 7") < strstr(buf, " 107 7"));
    TPH_CHECK(strstr(buf, " 107 7") < strstr(buf, " 108 7"));
    TPH_CHECK(strstr(buf, " 108 7") < strstr(buf, " 109 7"));
    TPH_CHECK(strstr(buf, " 105 7") == NULL);
    TPH_CHECK(strstr(buf, "heal repair-submitted") != NULL);
    /* The boundary both ways: one record past the capacity says so; a full
     * ring that lost nothing has no notice. */
    dump_after(5, buf, sizeof buf);
    TPH_CHECK(strstr(buf, "# 1 earlier records dropped (ring capacity 4)\n") == buf);
    TPH_CHECK(strstr(buf, " 104 7") != NULL && strstr(buf, " 100 7") == NULL);
    dump_after(4, buf, sizeof buf);
    TPH_CHECK(strstr(buf, "dropped") == NULL);
    /* The smallest ring keeps the newest record, in the dump and the snapshot. */
    dump_ring_after(1, 3, buf, sizeof buf);
    {
        tph_trace_record one;
        TPH_CHECK_EQ(tph_trace_snapshot(&one, 1, NULL), 1);
        TPH_CHECK_EQ(one.a, 102);
    }
    TPH_CHECK(strstr(buf, "# 2 earlier records dropped (ring capacity 1)\n") == buf);
    TPH_CHECK(strstr(buf, " 102 7") != NULL && strstr(buf, " 101 7") == NULL);
    dump_after(4, buf, sizeof buf);
    /* Exactly the kept records, each once. */
    {
        size_t lines = 0;
        const char *q;
        for (q = buf; *q != '\0'; q++) lines += *q == '\n';
        TPH_CHECK_EQ(lines, 4);
    }
    TPH_CHECK(strstr(buf, " 100 7") != NULL && strstr(buf, " 103 7") != NULL);
}

static void test_dump_reports_dropped(void **state) {
    (void)state;
    tph_test_run_controlled(body_dump, NULL, NULL, 1);
}

static void body_filter(void *ctx) {
    tph_trace_record recs[16];
    size_t n;
    (void)ctx;
    quiet();
    tph_trace_arm("heal");
    tph_trace_clear();
    TPH_TRACE("heal", "a", 1, 0);
    TPH_TRACE("api", "b", 2, 0);
    TPH_TRACE("obligation", "c", 3, 0);
    n = tph_trace_snapshot(recs, 16, NULL);
    TPH_CHECK_EQ(n, 1);
    TPH_CHECK_EQ(recs[0].a, 1);
    /* Comma-separated substrings. */
    tph_trace_arm("pi,blig");
    tph_trace_clear();
    TPH_TRACE("heal", "a", 1, 0);
    TPH_TRACE("api", "b", 2, 0);
    TPH_TRACE("obligation", "c", 3, 0);
    n = tph_trace_snapshot(recs, 16, NULL);
    TPH_CHECK_EQ(n, 2);
    TPH_CHECK_EQ(recs[0].a, 2);
    TPH_CHECK_EQ(recs[1].a, 3);
    /* A one-letter part right after a comma is a part too. */
    tph_trace_arm("x,t");
    tph_trace_clear();
    TPH_TRACE("t", "d", 4, 0);
    TPH_TRACE("heal", "a", 5, 0);
    n = tph_trace_snapshot(recs, 16, NULL);
    TPH_CHECK_EQ(n, 1);
    TPH_CHECK_EQ(recs[0].a, 4);
    /* At most 16 parts: the rest are ignored (never written past the table). */
    tph_trace_arm("p1,p2,p3,p4,p5,p6,p7,p8,p9,p10,p11,p12,p13,p14,p15,q16,r17,s18");
    tph_trace_clear();
    TPH_TRACE("q16", "e", 6, 0);
    TPH_TRACE("r17", "e", 7, 0);
    TPH_TRACE("s18", "e", 8, 0);
    n = tph_trace_snapshot(recs, 16, NULL);
    TPH_CHECK_EQ(n, 1);
    TPH_CHECK_EQ(recs[0].a, 6);
    /* Everything. */
    tph_trace_arm("*");
    tph_trace_clear();
    TPH_TRACE("heal", "a", 1, 0);
    TPH_TRACE("api", "b", 2, 0);
    n = tph_trace_snapshot(recs, 16, NULL);
    TPH_CHECK_EQ(n, 2);
}

static void test_filter(void **state) {
    (void)state;
    tph_test_run_controlled(body_filter, NULL, NULL, 1);
}

typedef struct hook_seen {
    uint64_t calls;
    uint64_t stored_when_called; /* records in the ring when the hook ran */
    uint64_t last_a;
} hook_seen;

static void counting_hook(const tph_trace_record *rec, void *ctx) {
    hook_seen *s = (hook_seen *)ctx;
    tph_trace_record tmp[4];
    s->calls++;
    s->last_a = rec->a;
    s->stored_when_called = tph_trace_snapshot(tmp, 4, NULL);
}

static void body_hook(void *ctx) {
    hook_seen seen;
    (void)ctx;
    memset(&seen, 0, sizeof seen);
    quiet();
    tph_trace_arm("heal");
    tph_trace_clear();
    tph_trace_set_hook(counting_hook, &seen);
    TPH_TRACE("heal", "x", 41, 0);
    TPH_CHECK_EQ(seen.calls, 1);
    TPH_CHECK_EQ(seen.last_a, 41);
    /* After storing: the record is already in the ring when the hook runs. */
    TPH_CHECK_EQ(seen.stored_when_called, 1);
    /* A record the armed filter rejects does not reach the hook. */
    TPH_TRACE("api", "y", 42, 0);
    TPH_CHECK_EQ(seen.calls, 1);
    /* Unarmed, the hook still sees every record (holds must not depend on
     * arming), and nothing is stored. */
    tph_trace_arm(NULL);
    tph_trace_clear();
    TPH_TRACE("api", "y", 43, 0);
    TPH_CHECK_EQ(seen.calls, 2);
    TPH_CHECK_EQ(seen.last_a, 43);
    TPH_CHECK_EQ(seen.stored_when_called, 0);
    tph_trace_set_hook(NULL, NULL);
    TPH_TRACE("heal", "x", 44, 0);
    TPH_CHECK_EQ(seen.calls, 2);
}

static void test_hook_runs_after_storing(void **state) {
    (void)state;
    tph_test_run_controlled(body_hook, NULL, NULL, 1);
}

static void body_disarmed(void *ctx) {
    tph_trace_record recs[4];
    uint64_t dropped = 5;
    (void)ctx;
    quiet();
    tph_trace_arm("");
    tph_trace_clear();
    TPH_CHECK(!tph_trace_armed());
    /* The gate every trace point reads is closed: one load, no call. */
    TPH_CHECK_EQ(tph_trace_on, 0);
    TPH_TRACE("heal", "x", 1, 0);
    TPH_CHECK_EQ(tph_trace_snapshot(recs, 4, &dropped), 0);
    TPH_CHECK_EQ(dropped, 0);
    tph_trace_arm("*");
    TPH_CHECK(tph_trace_armed());
    TPH_CHECK(tph_trace_on != 0);
}

static void test_disarmed_records_nothing(void **state) {
    (void)state;
    tph_test_run_controlled(body_disarmed, NULL, NULL, 1);
}

/* Threads recording at once: every record lands exactly once. */
typedef struct many_ctx {
    int dummy;
} many_ctx;

static void recorder(void *arg) {
    int i;
    (void)arg;
    for (i = 0; i < 50; i++) TPH_TRACE("heal", "many", rt_thread_id(), (uint64_t)i);
}

static void body_many_threads(void *ctx) {
    rt_thread *t[4];
    tph_trace_record *recs;
    uint64_t dropped = 1;
    size_t n, i;
    uint64_t seqsum = 0;
    (void)ctx;
    quiet();
    tph_trace_arm("heal");
    tph_trace_clear();
    for (i = 0; i < 4; i++) t[i] = tph_test_spawn("recorder", recorder, NULL);
    for (i = 0; i < 4; i++) rt_join(t[i]);
    recs = (tph_trace_record *)calloc(256, sizeof *recs);
    TPH_CHECK(recs != NULL);
    n = tph_trace_snapshot(recs, 256, &dropped);
    TPH_CHECK_EQ(n, 200);
    TPH_CHECK_EQ(dropped, 0);
    for (i = 0; i < n; i++) {
        TPH_CHECK_EQ(recs[i].seq, i);
        seqsum += recs[i].b;
    }
    TPH_CHECK_EQ(seqsum, 4 * (49 * 50 / 2));
    free(recs);
}

static void test_many_threads(void **state) {
    (void)state;
    tph_test_run_both(body_many_threads, NULL, NULL, 3);
}

/* Threads reconfiguring the trace while others record: every configuration
 * call does its work under the trace's own lock.  In the race build that is
 * what makes two configurers no race (controlled: the lock gives no edge and
 * its holder is unchecked, so only work moved outside it is seen, when two
 * threads do it at once) and a configurer and a recorder no race (native:
 * the lock is a real mutex there, and work moved outside it races the other
 * side's work inside it). */
static void noop_hook(const tph_trace_record *rec, void *ctx) { (void)rec, (void)ctx; }

static void configurer(void *arg) {
    FILE *sink = (FILE *)arg;
    tph_trace_record recs[8];
    uint64_t dropped;
    int i;
    for (i = 0; i < 100; i++) {
        tph_trace_arm((i & 1) ? "heal" : "*");
        tph_trace_set_capacity((i & 2) ? 8 : 16);
        tph_trace_clear();
        tph_trace_set_hook((i & 1) ? noop_hook : NULL, NULL);
        (void)tph_trace_snapshot(recs, 8, &dropped);
        if (sink != NULL) tph_trace_dump(sink);
    }
}

static void body_configure_while_recording(void *ctx) {
    rt_thread *t[4];
    FILE *sink = tmpfile();
    size_t i;
    (void)ctx;
    quiet();
    tph_trace_arm("heal");
    for (i = 0; i < 2; i++) t[i] = tph_test_spawn("recorder", recorder, NULL);
    for (i = 2; i < 4; i++) t[i] = tph_test_spawn("configurer", configurer, sink);
    for (i = 0; i < 4; i++) rt_join(t[i]);
    if (sink != NULL) fclose(sink);
    quiet();
    tph_trace_set_capacity(0);
    tph_trace_arm(NULL);
}

static void test_configure_while_recording(void **state) {
    (void)state;
    tph_test_run_both(body_configure_while_recording, NULL, NULL, 6);
}

static void test_process_reset_returns_to_env_arming(void **state) {
    (void)state;
    /* This binary runs without TPHEAL_TRACE (ctest does not set it): after a
     * run that armed the trace, the next process starts disarmed. */
    if (getenv("TPHEAL_TRACE") != NULL) skip();
    tph_test_run_controlled(body_filter, NULL, NULL, 1);
    assert_false(tph_trace_armed());
    assert_int_equal(tph_trace_on, 0);
}

/* A process that ends abruptly (here: ended with its hook still set, as a
 * failed check or a fail-fast ends one) leaves the next one no hook: the
 * gate is off again once the per-process reset ran. */
static void body_end_with_hook(void *ctx) {
    (void)ctx;
    rt_end_process("ended with the hook set");
}

static void test_abrupt_end_leaves_no_hook(void **state) {
    tph_test_outcome o;
    (void)state;
    if (getenv("TPHEAL_TRACE") != NULL) skip();
    o = tph_test_run_controlled_outcome(body_end_with_hook, NULL, NULL, 1, NULL);
    assert_true(o.ended);
    assert_int_equal(tph_trace_on, 0);
}

/* Armed before main: a child started with TPHEAL_TRACE set reports armed on
 * its very first line of main. */
static void test_armed_before_main(void **state) {
    char cmd[1024];
    FILE *p;
    char line[64] = {0};
    (void)state;
    if (self_path == NULL || !TPH_TEST_HAVE_FORK) skip();
    snprintf(cmd, sizeof cmd, "TPHEAL_TRACE=heal '%s' --report-armed", self_path);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof line, p));
    pclose(p);
    assert_string_equal(line, "armed=1 on=1\n");
    snprintf(cmd, sizeof cmd, "env -u TPHEAL_TRACE '%s' --report-armed", self_path);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof line, p));
    pclose(p);
    assert_string_equal(line, "armed=0 on=0\n");
}

/* A process that never armed the trace dumps nothing (and does not fault
 * on the ring it never made). */
static void test_unarmed_dump_is_empty(void **state) {
    char cmd[1024];
    FILE *p;
    char line[64] = {0};
    (void)state;
    if (self_path == NULL || !TPH_TEST_HAVE_FORK) skip();
    snprintf(cmd, sizeof cmd, "env -u TPHEAL_TRACE '%s' --dump-unarmed", self_path);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof line, p));
    assert_int_equal(pclose(p), 0);
    assert_string_equal(line, "end 0 0\n");
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_after_wrap),
        cmocka_unit_test(test_record_time_and_fresh_numbering),
        cmocka_unit_test(test_unarmed_dump_is_empty),
        cmocka_unit_test(test_abrupt_end_leaves_no_hook),
        cmocka_unit_test(test_dump_reports_dropped),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_hook_runs_after_storing),
        cmocka_unit_test(test_disarmed_records_nothing),
        cmocka_unit_test(test_many_threads),
        cmocka_unit_test(test_configure_while_recording),
        cmocka_unit_test(test_process_reset_returns_to_env_arming),
        cmocka_unit_test(test_armed_before_main),
    };
    if (argc > 1 && strcmp(argv[1], "--dump-unarmed") == 0) {
        /* A process that never armed has no ring: the dump is empty, and
         * so is a snapshot. */
        tph_trace_record rec;
        uint64_t dropped = 7;
        size_t n;
        tph_trace_dump(stdout);
        n = tph_trace_snapshot(&rec, 1, &dropped);
        printf("end %u %u\n", (unsigned)n, (unsigned)dropped);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--report-armed") == 0) {
        /* Nothing may arm the trace before this line except the
         * before-main initialiser. */
        printf("armed=%d on=%d\n", tph_trace_armed() ? 1 : 0, tph_trace_on ? 1 : 0);
        return 0;
    }
    self_path = argv[0];
    return cmocka_run_group_tests(tests, NULL, NULL);
}
