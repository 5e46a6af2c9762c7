/* The trace's own locking, on real threads, with a diagnostics lock TSan
 * sees (trace_alone_os.c): two threads record while two reconfigure the
 * filter, the ring's size and the hook.  Every record is made, filtered,
 * stored and handed to its hook under one holding of the lock, so in the
 * race build a read of the configuration moved out of it is a reported race,
 * and in any build a hook called with another hook's context is counted
 * here.  (test_trace covers the trace's behaviour over the model.)
 * No real-time bound: the four threads start together and the recorders go
 * on until the configurers are done, so they overlap on any machine that
 * runs them at all; the checks hold whatever the interleaving. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "trace_point.h"

#define RECORDS 2000 /* at least, and on until the configurers are done */
#define CONFIGS 400

typedef struct hook_side {
    int tag;
} hook_side;

static hook_side side_a = {1}, side_b = {2};
static uint32_t mismatched; /* hooks called with the other hook's context */
static uint32_t hooked;
static uint32_t started;     /* threads at the start line: all four go at once */
static uint32_t configuring; /* configurers not yet done */

static void count(uint32_t *n) { __atomic_add_fetch(n, 1, __ATOMIC_SEQ_CST); }

static void hook_a(const tph_trace_record *rec, void *ctx) {
    (void)rec;
    count(&hooked);
    if (ctx != &side_a) count(&mismatched);
}

static void hook_b(const tph_trace_record *rec, void *ctx) {
    (void)rec;
    count(&hooked);
    if (ctx != &side_b) count(&mismatched);
}

static uint32_t load(uint32_t *n) { return __atomic_load_n(n, __ATOMIC_SEQ_CST); }

static void start_together(void) {
    count(&started);
    while (load(&started) < 4) {
    }
}

static void *recorder(void *arg) {
    uint64_t i;
    (void)arg;
    start_together();
    for (i = 0; i < RECORDS || load(&configuring) != 0; i++)
        tph_trace_emit((i & 1) ? "heal" : "api", "alone", i, 0);
    return NULL;
}

static void *configurer(void *arg) {
    int i;
    FILE *sink = (FILE *)arg;
    start_together();
    for (i = 0; i < CONFIGS; i++) {
        tph_trace_arm((i & 1) ? "heal" : "heal,api");
        tph_trace_set_hook((i & 2) ? hook_a : hook_b, (i & 2) ? (void *)&side_a : (void *)&side_b);
        tph_trace_set_capacity((size_t)(8 + (i % 5) * 8));
        if (i % 7 == 0) tph_trace_clear();
        if (i % 11 == 0 && sink != NULL) tph_trace_dump(sink);
        if (i % 13 == 0) tph_trace_arm(NULL);
    }
    __atomic_sub_fetch(&configuring, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void test_configure_while_recording_on_posix_threads(void **state) {
    pthread_t t[4];
    FILE *sink = tmpfile();
    tph_trace_record snap[64];
    size_t i, n;
    uint64_t dropped = 0;
    (void)state;
    configuring = 2;
    for (i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, recorder, NULL), 0);
    for (i = 2; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, configurer, sink), 0);
    for (i = 0; i < 4; i++) pthread_join(t[i], NULL);
    if (sink != NULL) fclose(sink);
    assert_int_equal(mismatched, 0);
    /* What is left is still a ring in order. */
    tph_trace_arm("alone");
    tph_trace_set_hook(NULL, NULL);
    tph_trace_clear();
    for (i = 0; i < 3; i++) tph_trace_emit("alone", "after", i, 0);
    n = tph_trace_snapshot(snap, 64, &dropped);
    assert_int_equal(n, 3);
    for (i = 0; i < n; i++) assert_int_equal(snap[i].seq, i);
    tph_trace_arm(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configure_while_recording_on_posix_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
