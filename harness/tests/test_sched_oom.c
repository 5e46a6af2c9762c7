/* sched_run and memory: a run that cannot allocate says so (not a crash,
 * not a blank reason), and the schedule string grows geometrically.  The
 * test stands in for calloc and realloc through the GNU linkers' --wrap
 * (harness/tests/CMakeLists.txt): built where the linker has it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sched_dfs.h"
#include "test_sched_util.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);

static int fail_next; /* the next calloc through the wrap returns NULL */
static unsigned reallocs; /* reallocs through the wrap */
static int fail_next_realloc; /* the next realloc through the wrap returns NULL */
static size_t fail_realloc_of; /* a realloc of this many bytes returns NULL... */
static unsigned fail_realloc_skip; /* ...after this many of them went through */

void *__wrap_realloc(void *p, size_t size) {
    reallocs++;
    if (fail_realloc_of && size == fail_realloc_of && fail_realloc_skip) {
        fail_realloc_skip--;
    } else if (fail_next_realloc || (fail_realloc_of && size == fail_realloc_of)) {
        fail_next_realloc = 0;
        fail_realloc_of = 0;
        return NULL;
    }
    return __real_realloc(p, size);
}

static size_t fail_calloc_n, fail_calloc_size; /* the next calloc(n, size) of exactly these returns NULL */
void *__wrap_calloc(size_t n, size_t size) {
    if (fail_next) {
        fail_next = 0;
        return NULL;
    }
    if (fail_calloc_n && n == fail_calloc_n && size == fail_calloc_size) {
        fail_calloc_n = fail_calloc_size = 0;
        return NULL;
    }
    return __real_calloc(n, size);
}

static int ran;
static void main_fn(void *p) {
    (void)p;
    ran = 1;
}

/* The run's own state is sched_run's first allocation: without it no run
 * starts, and the result names the cause. */
static void a_run_without_memory_is_misuse_named_out_of_memory(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    ran = 0;
    fail_next = 1;
    assert_int_equal(sched_run(&o, main_fn, NULL, &r), -1);
    assert_int_equal(fail_next, 0);
    assert_int_equal(ran, 0);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_string_equal(r.reason, "out of memory");
    sched_result_free(&r);
    /* and the next run is whole */
    assert_int_equal(sched_run(&o, main_fn, NULL, &r), 0);
    assert_int_equal(r.status, SCHED_OK);
    assert_int_equal(ran, 1);
    sched_result_free(&r);
}

/* The schedule string grows geometrically: a run recording some thousand
 * characters of it reallocates a handful of times, not once an item. */
static void the_schedule_grows_geometrically(void **state) {
    counter_prog c;
    sched_result r;
    (void)state;
    counter_init(&c, 3, 200);
    reallocs = 0;
    r = run_counter(1, NULL, &c);
    assert_int_equal(r.status, SCHED_OK);
    assert_non_null(r.schedule);
    /* 4532 characters: 256 doubled 5 times; the rest is the run's tables */
    assert_true(strlen(r.schedule) > 4000);
    assert_true(reallocs <= 16);
    sched_result_free(&r);
}

/* A thread the run cannot allocate ends the run as misuse, named (not a
 * crash on a NULL thread): main's spawn finds calloc failing; the thread
 * never runs and main never gets past the spawn. */
static int spawned_ran, main_after;
static void spawned(void *p) {
    (void)p;
    spawned_ran = 1;
}
static void spawn_without_memory(void *p) {
    (void)p;
    fail_next = 1;
    (void)rt_spawn("starved", spawned, NULL, false);
    main_after = 1;
}

static void spawn_then_log(void *p) {
    (void)p;
    (void)rt_spawn("second", spawned, NULL, false);
    main_after = 1;
}

static void a_spawn_without_memory_ends_the_run_named(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    spawned_ran = main_after = 0;
    assert_int_equal(sched_run(&o, spawn_without_memory, NULL, &r), 0);
    assert_int_equal(fail_next, 0);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_string_equal(r.reason, "out of memory (thread or fiber stack)");
    assert_int_equal(r.threads, 1);
    assert_int_equal(spawned_ran, 0);
    assert_int_equal(main_after, 0);
    sched_result_free(&r);
}

/* The schedule string failing to grow loses the schedule, not the run: the
 * run ends as it would, with no schedule -- never one with a hole where
 * the failed growth was (the 256-byte start becomes 512 at its first
 * growth, which fails once here; a later growth that worked would record
 * the rest after the gap). */
static void a_schedule_without_memory_is_dropped_whole(void **state) {
    counter_prog c, d;
    sched_result r, whole;
    (void)state;
    counter_init(&c, 3, 40);
    whole = run_counter(5, NULL, &c);
    assert_int_equal(whole.status, SCHED_OK);
    assert_true(strlen(whole.schedule) > 600); /* past the first growth, and the second */
    counter_init(&d, 3, 40);
    fail_realloc_of = 512;
    r = run_counter(5, NULL, &d);
    assert_int_equal(fail_realloc_of, 0); /* the growth was tried, and failed */
    assert_int_equal(r.status, SCHED_OK);
    assert_null(r.schedule);
    assert_int_equal(r.interleaving_hash, whole.interleaving_hash); /* the same run */
    assert_int_equal(d.counter, 120);
    sched_result_free(&r);
    sched_result_free(&whole);
}

/* A schedule to replay that cannot be stored is refused before anything
 * runs, at the column of the item that could not be stored (the first
 * item's, column 4) -- the parser's first allocation. */
static void a_schedule_to_replay_without_memory_is_refused(void **state) {
    sched_options o;
    sched_result r;
    (void)state;
    sched_options_default(&o);
    o.schedule = "T1:2.=0";
    ran = 0;
    fail_next_realloc = 1;
    assert_int_equal(sched_run(&o, main_fn, NULL, &r), -1);
    assert_int_equal(fail_next_realloc, 0);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_string_equal(r.reason, "schedule:1:4: out of memory");
    assert_int_equal(ran, 0);
    sched_result_free(&r);
}

/* The DFS search's fairness tables fail to grow when the run's first
 * thread is spawned -- before the run has a fiber to end -- and the run's
 * first pick ends it, named.  The tables' first size is 32 ids of 8 bytes,
 * 256 bytes, as is the schedule string's start, which sched_run allocates
 * first: the second realloc of 256 bytes is the fairness table's. */
static void dfs_tables_without_memory_end_the_run_at_its_first_pick(void **state) {
    sched_dfs *d = sched_dfs_new(0);
    sched_options o;
    sched_result r;
    (void)state;
    assert_non_null(d);
    sched_options_default(&o);
    o.strategy = SCHED_STRATEGY_DFS;
    o.dfs = d;
    spawned_ran = main_after = 0;
    fail_realloc_of = 256;
    fail_realloc_skip = 1;
    assert_int_equal(sched_run(&o, spawn_then_log, NULL, &r), 0);
    assert_int_equal(fail_realloc_of, 0);
    assert_int_equal(r.status, SCHED_MISUSE);
    assert_string_equal(r.reason, "out of memory (dfs)");
    assert_int_equal(spawned_ran, 0);
    assert_int_equal(main_after, 0);
    sched_result_free(&r);
    sched_dfs_free(d);
}

/* The reduction's object tables are allocated at the first run's start,
 * before any thread exists: a failure there is the first pick's to report,
 * named, as the fairness tables' is (it once crashed on the run's NULL
 * current thread).  Each of the four first allocations in turn -- the
 * address table's keys (1024 words) and numbers, the objects' last writers
 * (256) and readers (256 x 64) -- fails the run without running main; a new
 * search then runs whole. */
static void por_tables_without_memory_end_the_run_at_its_first_pick(void **state) {
    static const struct { size_t n, size; } tables[] = {
        {1024, sizeof(uintptr_t)}, {1024, sizeof(uint32_t)}, {256, sizeof(uint32_t)}, {256u * 64u, sizeof(uint32_t)},
    };
    sched_options o;
    sched_result r;
    size_t i;
    (void)state;
    for (i = 0; i <= sizeof tables / sizeof tables[0]; i++) {
        sched_dfs *d = sched_dfs_new(0);
        assert_non_null(d);
        sched_dfs_set_por(d, true);
        sched_options_default(&o);
        o.strategy = SCHED_STRATEGY_DFS;
        o.dfs = d;
        spawned_ran = main_after = 0;
        if (i < sizeof tables / sizeof tables[0]) {
            fail_calloc_n = tables[i].n;
            fail_calloc_size = tables[i].size;
        }
        assert_int_equal(sched_run(&o, spawn_then_log, NULL, &r), 0);
        if (i < sizeof tables / sizeof tables[0]) {
            assert_int_equal(fail_calloc_n, 0);
            assert_int_equal(r.status, SCHED_MISUSE);
            assert_string_equal(r.reason, "out of memory (dfs)");
            assert_int_equal(main_after, 0);
        } else {
            assert_int_equal(r.status, SCHED_OK);
            assert_int_equal(main_after, 1);
            assert_int_equal(spawned_ran, 1);
        }
        sched_result_free(&r);
        sched_dfs_free(d);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_without_memory_is_misuse_named_out_of_memory),
        cmocka_unit_test(the_schedule_grows_geometrically),
        cmocka_unit_test(a_spawn_without_memory_ends_the_run_named),
        cmocka_unit_test(a_schedule_without_memory_is_dropped_whole),
        cmocka_unit_test(a_schedule_to_replay_without_memory_is_refused),
        cmocka_unit_test(dfs_tables_without_memory_end_the_run_at_its_first_pick),
        cmocka_unit_test(por_tables_without_memory_end_the_run_at_its_first_pick),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return failed;
}
