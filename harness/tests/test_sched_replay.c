/* Replay by schedule string: exact, independent of the seed, and a replay
 * that does not fit the program is reported, never silently re-randomised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sched_internal.h"
#include "test_sched_util.h"

static void replay_reproduces_the_run_whatever_the_seed(void **state) {
    uint64_t seed;
    unsigned with_choose = 0;
    (void)state;
    for (seed = 0; seed < 300; seed++) {
        counter_prog a, b;
        sched_result ra, rb;
        counter_init(&a, 3, 8);
        counter_init(&b, 3, 8);
        ra = run_counter(seed, NULL, &a);
        assert_int_equal(ra.status, SCHED_OK);
        /* a different seed: the schedule alone must decide */
        rb = run_counter(seed + 7777, ra.schedule, &b);
        assert_int_equal(rb.status, SCHED_OK);
        assert_int_equal(ra.interleaving_hash, rb.interleaving_hash);
        assert_int_equal(ra.choice_hash, rb.choice_hash);
        assert_int_equal(ra.steps, rb.steps);
        assert_int_equal(ra.virtual_time, rb.virtual_time);
        assert_int_equal(a.order, b.order);
        assert_string_equal(ra.schedule, rb.schedule);
        with_choose += strchr(ra.schedule, '=') != NULL;
        sched_result_free(&ra);
        sched_result_free(&rb);
    }
    assert_int_equal(with_choose, 300); /* rt_choose values are in the string */
}

static void replay_of_a_deadlock_deadlocks_again(void **state) {
    /* the abba program lives in test_sched.c; a counter run is cut short by
     * a step bound instead: replaying a livelock reproduces it */
    counter_prog a, b;
    sched_options o;
    sched_result ra, rb;
    (void)state;
    counter_init(&a, 4, 50);
    counter_init(&b, 4, 50);
    sched_options_default(&o);
    o.seed = 5;
    o.max_steps = 100;
    sched_run(&o, counter_main, &a, &ra);
    assert_int_equal(ra.status, SCHED_LIVELOCK);
    o.seed = 6;
    o.schedule = ra.schedule;
    sched_run(&o, counter_main, &b, &rb);
    assert_int_equal(rb.status, SCHED_LIVELOCK);
    assert_int_equal(ra.interleaving_hash, rb.interleaving_hash);
    assert_int_equal(a.order, b.order);
    sched_result_free(&ra);
    sched_result_free(&rb);
}

static void yielder(void *p) {
    int i;
    (void)p;
    for (i = 0; i < 30; i++) rt_yield();
}

static void yielders_main(void *p) {
    rt_thread *a = rt_spawn("a", yielder, p, false);
    rt_thread *b = rt_spawn("b", yielder, p, false);
    rt_join(a);
    rt_join(b);
}

static void schedule_string_is_run_length_coded(void **state) {
    sched_options o;
    sched_result r;
    unsigned long long sum = 0;
    const char *p;
    (void)state;
    sched_options_default(&o);
    o.seed = 3;
    sched_run(&o, yielders_main, NULL, &r);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(strncmp(r.schedule, "T1:", 3), 0);
    assert_non_null(strchr(r.schedule, '*')); /* some thread kept running */
    /* the run lengths add up to the choice points */
    for (p = r.schedule + 3; *p;) {
        unsigned long long id = strtoull(p, (char **)&p, 32), run = 1;
        assert_true(id >= 1 && id <= 3);
        if (*p == '*') run = strtoull(p + 1, (char **)&p, 32);
        sum += run;
        if (*p == '.') p++;
    }
    assert_int_equal(sum, r.choice_points);
    assert_true(strlen(r.schedule) < r.choice_points * 2);
    sched_result_free(&r);
}

static void replay_on_another_program_diverges(void **state) {
    counter_prog a, b;
    sched_result ra, rb;
    (void)state;
    counter_init(&a, 3, 8);
    counter_init(&b, 2, 8); /* thread 4 never exists here */
    ra = run_counter(11, NULL, &a);
    rb = run_counter(11, ra.schedule, &b);
    assert_int_equal(rb.status, SCHED_REPLAY_DIVERGED);
    assert_non_null(strstr(rb.reason, "replay diverged"));
    sched_result_free(&ra);
    sched_result_free(&rb);
}

static void replay_of_a_non_runnable_thread_diverges(void **state) {
    counter_prog c;
    sched_result r;
    (void)state;
    counter_init(&c, 2, 3);
    r = run_counter(0, "T1:9", &c);
    assert_int_equal(r.status, SCHED_REPLAY_DIVERGED);
    assert_non_null(strstr(r.reason, "recorded thread 9 is not runnable"));
    /* and names the threads runnable where the schedule stopped fitting: at
     * the counter program's first choice point (main's first spawn), main
     * and worker 2 */
    assert_non_null(strstr(r.reason, "(runnable: 1 2)"));
    sched_result_free(&r);
}

static void replay_with_unused_items_diverges(void **state) {
    counter_prog a, b;
    sched_result ra, rb;
    char *longer;
    (void)state;
    counter_init(&a, 2, 3);
    counter_init(&b, 2, 3);
    ra = run_counter(4, NULL, &a);
    longer = malloc(strlen(ra.schedule) + 8);
    sprintf(longer, "%s%s=0", ra.schedule, ra.schedule[3] ? "." : "");
    rb = run_counter(4, longer, &b);
    assert_int_equal(rb.status, SCHED_REPLAY_DIVERGED);
    assert_non_null(strstr(rb.reason, "unused"));
    free(longer);
    sched_result_free(&ra);
    sched_result_free(&rb);
}

static sched_result run_counter_continued(uint64_t seed, const char *schedule, counter_prog *c) {
    sched_options o;
    sched_result r;
    sched_options_default(&o);
    o.seed = seed;
    o.schedule = schedule;
    o.replay_continue = true;
    sched_run(&o, counter_main, c, &r);
    return r;
}

/* replay_continue on a changed program: the schedule's prefix that fits is
 * replayed, then the run goes on seeded to its end instead of diverging,
 * and says where the two parted; the run's own schedule replays it
 * exactly, and a schedule that fits whole is the recorded run. */
static void continued_replay_goes_on_seeded_where_the_schedule_stops_fitting(void **state) {
    counter_prog a, b, c, d;
    sched_result ra, rb, rc, rd;
    (void)state;
    counter_init(&a, 3, 8);
    ra = run_counter(11, NULL, &a);
    counter_init(&b, 2, 8); /* thread 4 never exists here */
    rb = run_counter_continued(5, ra.schedule, &b);
    assert_int_equal(rb.status, SCHED_OK);
    assert_int_equal(b.counter, 2 * 8);
    assert_true(rb.diverged_at >= 1);
    assert_non_null(strstr(rb.diverged, "recorded thread 4 is not runnable"));
    /* what it ran replays exactly, as an ordinary replay */
    counter_init(&c, 2, 8);
    rc = run_counter(0, rb.schedule, &c);
    assert_int_equal(rc.status, SCHED_OK);
    assert_int_equal(rc.interleaving_hash, rb.interleaving_hash);
    /* the same program: the whole schedule fits, and the run is the recorded one */
    counter_init(&d, 3, 8);
    rd = run_counter_continued(99, ra.schedule, &d);
    assert_int_equal(rd.status, SCHED_OK);
    assert_int_equal(rd.diverged_at, 0);
    assert_string_equal(rd.diverged, "");
    assert_int_equal(rd.interleaving_hash, ra.interleaving_hash);
    sched_result_free(&ra);
    sched_result_free(&rb);
    sched_result_free(&rc);
    sched_result_free(&rd);
}

/* A run that ends before its schedule does, continued: no divergence
 * status, but where the schedule was left unused. */
static void continued_replay_says_when_the_run_ended_first(void **state) {
    counter_prog a, b;
    sched_result ra, rb;
    char *longer;
    (void)state;
    counter_init(&a, 2, 3);
    counter_init(&b, 2, 3);
    ra = run_counter(4, NULL, &a);
    longer = malloc(strlen(ra.schedule) + 8);
    sprintf(longer, "%s%s=0", ra.schedule, ra.schedule[3] ? "." : "");
    rb = run_counter_continued(4, longer, &b);
    assert_int_equal(rb.status, SCHED_OK);
    assert_true(rb.diverged_at >= 1);
    assert_non_null(strstr(rb.diverged, "1 schedule item(s) unused"));
    free(longer);
    sched_result_free(&ra);
    sched_result_free(&rb);
}

/* The divergence message lists the runnable threads in a 96-byte buffer,
 * one more id only while 12 bytes are left (the widest, " 4294967295",
 * and its NUL), so a long list stops short rather than overflowing.  Main
 * spawns and joins threads 2 and 3 (they end at once), then spawns 4..36
 * while a schedule of 34 picks of main lasts; it runs out at the spawn of
 * 36, with 1 4 5 ... 36 runnable in that order.  " 1 4 5 6 7 8 9" is 14
 * bytes and " 10" .. " 32" 69 more: 83, 83 + 12 < 96, so " 33" still fits
 * (86) and is the last.  The ids are chosen so the list reaches exactly
 * 83: with 1..9 all present the length runs 18, 21, ... and never does. */
static void nothing(void *p) { (void)p; }

/* Main spawns and joins *p early threads (2 if p is NULL), then spawns
 * late ones up to id 36. */
static void many_main(void *p) {
    uint32_t i, early = p ? *(const uint32_t *)p : 2u;
    for (i = 0; i < early; i++) rt_join(rt_spawn("early", nothing, NULL, false));
    for (i = early + 2; i <= 36; i++) rt_spawn("late", nothing, NULL, false);
}

static void divergence_lists_runnable_threads_up_to_the_buffer_edge(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    /* 34 picks of main (34 is "12" in base 32): the spawns of 2 and 3, and
     * of 4..35; joins of 2 and 3 are no choice (main blocks, one runnable) */
    o.schedule = "T1:1*12";
    sched_run(&o, many_main, NULL, &r);
    assert_int_equal(r.status, SCHED_REPLAY_DIVERGED);
    assert_string_equal(r.reason,
                        "replay diverged at item 2 of the schedule: the schedule has no more choices "
                        "(runnable: 1 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 "
                        "28 29 30 31 32 33)");
    sched_result_free(&r);
}

/* The list stops while a 10-digit id still fits (11 bytes and the NUL of
 * 96): with ids 1, 5..9 and 10..33 it is 84 bytes long, where one more
 * byte of margin taken away would let " 34" in. */
static void divergence_list_stops_with_room_for_the_longest_id(void **state) {
    uint32_t early = 3;
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.schedule = "T1:1*12"; /* 34 picks: the spawns of 2, 3, 4 and of 5..35 */
    sched_run(&o, many_main, &early, &r);
    assert_int_equal(r.status, SCHED_REPLAY_DIVERGED);
    assert_string_equal(r.reason,
                        "replay diverged at item 2 of the schedule: the schedule has no more choices "
                        "(runnable: 1 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 "
                        "28 29 30 31 32 33)");
    sched_result_free(&r);
}

static void bad_schedule_strings_are_rejected_with_a_column(void **state) {
    static const struct {
        const char *text;
        const char *where;
    } bad[] = {
        {"", "schedule:1:1:"},         {"X1:2", "schedule:1:1:"},
        {"T1:2..3", "schedule:1:6:"},  {"T1:2.x", "schedule:1:6:"},
        {"T1:0", "schedule:1:4:"},     {"T1:2*", "schedule:1:6:"},
        {"T1:2*0", "schedule:1:6:"},   {"T1:=", "schedule:1:5:"},
        {"T1:vvvvvvvv", "schedule:1:"}, {"T1:2.", "schedule:1:6:"},
        {"T1:2x", "schedule:1:5:"},    {"T1:2*3x", "schedule:1:7:"}, /* where the '.' should be */
        /* one past each field's maximum: 2^32 for a thread id and a value,
         * 2^64 + 1 for a count (2^64 itself would wrap to the refused 0) */
        {"T1:4000000", "schedule:1:4:"}, {"T1:=4000000", "schedule:1:5:"},
        {"T1:1*g000000000001", "schedule:1:6:"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        counter_prog c;
        sched_options o;
        sched_result r;
        counter_init(&c, 2, 3);
        sched_options_default(&o);
        o.schedule = bad[i].text;
        assert_int_equal(sched_run(&o, counter_main, &c, &r), -1);
        if (strncmp(r.reason, bad[i].where, strlen(bad[i].where)) != 0)
            fail_msg("\"%s\": got \"%s\", want prefix \"%s\"", bad[i].text, r.reason, bad[i].where);
        assert_int_equal(c.counter, 0); /* nothing ran */
        assert_ptr_equal(rt_installed(), &rt_native_ops);
        sched_result_free(&r);
    }
}

/* Each field's largest value is read exactly: a thread id and an rt_choose
 * value up to 2^32 - 1, a count up to 2^64 - 1 (base 32). */
static void the_largest_numbers_parse_exactly(void **state) {
    sched_item *items;
    size_t n;
    sched_time_model time = SCHED_TIME_IDLE;
    char err[160];
    (void)state;
    assert_int_equal(sched_schedule_parse("T1:=3vvvvvv.3vvvvvv*fvvvvvvvvvvvv", &items, &n, &time, err, sizeof err), 0);
    assert_int_equal(time, SCHED_TIME_STEPS);
    assert_int_equal(n, 2);
    assert_int_equal(items[0].kind, SCHED_ITEM_CHOOSE);
    assert_int_equal(items[0].value, UINT32_MAX);
    assert_int_equal(items[1].kind, SCHED_ITEM_PICK);
    assert_int_equal(items[1].value, UINT32_MAX);
    assert_true(items[1].count == UINT64_MAX);
    free(items);
}

/* A schedule read back from a file or a terminal line keeps its line end:
 * trailing newlines, carriage returns and spaces are not part of it. */
static void trailing_line_ends_are_ignored(void **state) {
    static const char *const tails[] = {"\n", "\r\n", " \n", "\n\n"};
    counter_prog a;
    sched_result ra;
    size_t i;
    (void)state;
    counter_init(&a, 3, 4);
    ra = run_counter(21, NULL, &a);
    assert_int_equal(ra.status, SCHED_OK);
    for (i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        counter_prog b;
        sched_options o;
        sched_result rb;
        size_t n = strlen(ra.schedule);
        char *text = malloc(n + strlen(tails[i]) + 1);
        assert_non_null(text);
        memcpy(text, ra.schedule, n);
        strcpy(text + n, tails[i]);
        counter_init(&b, 3, 4);
        sched_options_default(&o);
        o.seed = 99;
        o.schedule = text;
        if (sched_run(&o, counter_main, &b, &rb) != 0) fail_msg("tail %u refused: %s", (unsigned)i, rb.reason);
        assert_int_equal(rb.status, SCHED_OK);
        assert_int_equal(rb.interleaving_hash, ra.interleaving_hash);
        assert_int_equal(b.order, a.order);
        sched_result_free(&rb);
        free(text);
    }
    sched_result_free(&ra);
}

/* One rt_choose(choose_width), its value kept in chose. */
static uint32_t chose, choose_width;
static void choose_of_width(void *p) {
    (void)p;
    chose = rt_choose(choose_width);
}

/* The choice hash covers each rt_choose's width as well as its value: the
 * same value drawn from rt_choose(5) and from rt_choose(2^31 + 5) (or
 * 2^30 + 5) are different choice streams. */
static void the_choice_hash_covers_every_bit_of_the_width(void **state) {
    static const uint32_t widths[] = {5u, 0x80000005u, 0x40000005u};
    uint64_t hashes[3];
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        sched_options o;
        sched_result r;
        sched_options_default(&o);
        o.schedule = "T1:=3";
        choose_width = widths[i];
        assert_int_equal(sched_run(&o, choose_of_width, NULL, &r), 0);
        assert_int_equal(r.status, SCHED_OK);
        assert_int_equal(chose, 3);
        hashes[i] = r.choice_hash;
        sched_result_free(&r);
    }
    assert_true(hashes[0] != hashes[1]);
    assert_true(hashes[0] != hashes[2]);
    assert_true(hashes[1] != hashes[2]);
}

/* A recorded rt_choose value at or past the call's bound is a divergence,
 * never a value handed to the program. */
static void replay_of_an_out_of_range_choice_diverges(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.schedule = "T1:=1";
    choose_width = 3;
    chose = 99;
    assert_int_equal(sched_run(&o, choose_of_width, NULL, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(chose, 1);
    sched_result_free(&r);
    o.schedule = "T1:=5";
    sched_run(&o, choose_of_width, NULL, &r);
    assert_int_equal(r.status, SCHED_REPLAY_DIVERGED);
    assert_non_null(strstr(r.reason, "recorded rt_choose value 5 is out of range for rt_choose(3)"));
    sched_result_free(&r);
}

/* A recorded item of the other kind is a divergence naming both sides:
 * a choose value where the program is at a thread choice (main's spawn:
 * main and A runnable), and a pick where the program calls rt_choose.
 * The values recorded are ones the other kind would accept (thread 1
 * exists and is runnable, 1 < 3), so only the kind check refuses them. */
static void spawn_then_join(void *p) {
    (void)p;
    rt_join(rt_spawn("a", nothing, NULL, false));
}

static void replay_of_the_other_kind_of_item_diverges(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.schedule = "T1:=1";
    sched_run(&o, spawn_then_join, NULL, &r);
    assert_int_equal(r.status, SCHED_REPLAY_DIVERGED);
    assert_string_equal(r.reason, "replay diverged at item 1 of the schedule: recorded rt_choose value 1, "
                                  "the program is at a thread choice (runnable: 1 2)");
    sched_result_free(&r);
    o.schedule = "T1:1";
    choose_width = 3;
    chose = 99;
    sched_run(&o, choose_of_width, NULL, &r);
    assert_int_equal(r.status, SCHED_REPLAY_DIVERGED);
    assert_string_equal(r.reason, "replay diverged at item 1 of the schedule: recorded a pick of thread 1, "
                                  "the program calls rt_choose(3) (runnable: 1)");
    assert_int_equal(chose, 99); /* no value reached the program */
    sched_result_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replay_reproduces_the_run_whatever_the_seed),
        cmocka_unit_test(replay_of_a_deadlock_deadlocks_again),
        cmocka_unit_test(schedule_string_is_run_length_coded),
        cmocka_unit_test(replay_on_another_program_diverges),
        cmocka_unit_test(replay_of_a_non_runnable_thread_diverges),
        cmocka_unit_test(replay_with_unused_items_diverges),
        cmocka_unit_test(continued_replay_goes_on_seeded_where_the_schedule_stops_fitting),
        cmocka_unit_test(continued_replay_says_when_the_run_ended_first),
        cmocka_unit_test(divergence_lists_runnable_threads_up_to_the_buffer_edge),
        cmocka_unit_test(divergence_list_stops_with_room_for_the_longest_id),
        cmocka_unit_test(bad_schedule_strings_are_rejected_with_a_column),
        cmocka_unit_test(the_largest_numbers_parse_exactly),
        cmocka_unit_test(the_choice_hash_covers_every_bit_of_the_width),
        cmocka_unit_test(trailing_line_ends_are_ignored),
        cmocka_unit_test(replay_of_an_out_of_range_choice_diverges),
        cmocka_unit_test(replay_of_the_other_kind_of_item_diverges),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
