/* The native runtime's lock discipline on real threads: every mutex it
 * releases, and every mutex a condition wait gives up, is held by the
 * calling thread, and no thread takes a mutex it already holds.  A release
 * of a mutex nobody holds passes silently with glibc's default mutex (and a
 * condition wait on one opens a lost wake-up: the driver could wait for a
 * run that already ended), so the test stands in for pthread's calls
 * through the linker's --wrap and keeps each thread's held set.  Any breach
 * is printed and aborts the executable, at the call that made it.
 * No real-time bound: every wait below loops on its condition, and an ended
 * run returns whether or not its threads left within the driver's 2 s. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "rt.h"
#include "rt_native.h"
#include "test_abort_util.h"

#define MAX_HELD 8

static _Thread_local pthread_mutex_t *held[MAX_HELD];
static _Thread_local int nheld;

static int held_at(pthread_mutex_t *m) {
    for (int i = 0; i < nheld; i++)
        if (held[i] == m) return i;
    return -1;
}

static void breach(const char *what, pthread_mutex_t *m) {
    fprintf(stderr, "lock discipline: %s (mutex %p)\n", what, (void *)m);
    abort();
}

static void note_taken(pthread_mutex_t *m) {
    if (nheld == MAX_HELD) breach("more mutexes held at once than the test tracks", m);
    held[nheld++] = m;
}

static void note_given(pthread_mutex_t *m, const char *what) {
    int i = held_at(m);
    if (i < 0) breach(what, m);
    held[i] = held[--nheld];
}

int __real_pthread_mutex_lock(pthread_mutex_t *);
int __real_pthread_mutex_timedlock(pthread_mutex_t *, const struct timespec *);
int __real_pthread_mutex_unlock(pthread_mutex_t *);
int __real_pthread_cond_wait(pthread_cond_t *, pthread_mutex_t *);
int __real_pthread_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

int __wrap_pthread_mutex_lock(pthread_mutex_t *m) {
    if (held_at(m) >= 0) breach("a thread takes a mutex it holds (a self-deadlock)", m);
    int r = __real_pthread_mutex_lock(m);
    if (r == 0) note_taken(m);
    return r;
}

int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t) {
    if (held_at(m) >= 0) breach("a thread takes a mutex it holds (a self-deadlock)", m);
    int r = __real_pthread_mutex_timedlock(m, t);
    if (r == 0) note_taken(m);
    return r;
}

int __wrap_pthread_mutex_unlock(pthread_mutex_t *m) {
    note_given(m, "a thread releases a mutex it does not hold");
    return __real_pthread_mutex_unlock(m);
}

/* A condition wait gives the mutex up and has it again when it returns,
 * whatever it returns (a timeout included). */
int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    if (held_at(m) < 0) breach("a condition wait on a mutex the thread does not hold", m);
    return __real_pthread_cond_wait(c, m);
}

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t) {
    if (held_at(m) < 0) breach("a condition wait on a mutex the thread does not hold", m);
    return __real_pthread_cond_timedwait(c, m, t);
}

/* ---- a program that reaches every lock of the runtime ---- */

typedef struct shared {
    rt_lock lock;
    rt_waitq q;
    int arrived;
    int stop;
    int daemon_woken;
} shared;

/* Meets the others under the lock (timed waits that may time out, wake-ups
 * of both kinds), then draws, sleeps and yields outside it. */
static void worker(void *arg) {
    shared *s = arg;
    rt_lock_acquire(&s->lock);
    s->arrived++;
    rt_wake_all(&s->q);
    while (s->arrived < 3) rt_wait(&s->q, &s->lock, rt_now() + 2000u, "the others");
    rt_wake_one(&s->q);
    rt_lock_release(&s->lock);
    (void)rt_choose(7);
    rt_sleep_until(rt_now() + 100u);
    rt_yield();
}

static void daemon_fn(void *arg) {
    shared *s = arg;
    rt_lock_acquire(&s->lock);
    while (!s->stop) rt_wait(&s->q, &s->lock, RT_FOREVER, "stop");
    s->daemon_woken = 1;
    rt_lock_release(&s->lock);
}

static void meeting_main(void *arg) {
    shared *s = arg;
    rt_thread *d = rt_spawn("daemon", daemon_fn, s, true);
    rt_thread *w[3];
    for (int i = 0; i < 3; i++) w[i] = rt_spawn("worker", worker, s, false);
    for (int i = 0; i < 3; i++) rt_join(w[i]);
    rt_lock_acquire(&s->lock);
    s->stop = 1;
    rt_wake_all(&s->q);
    rt_lock_release(&s->lock);
    rt_join(d);
}

static void a_run_keeps_the_discipline(void **state) {
    static shared s;
    rt_native_options o;
    rt_native_result r;
    (void)state;
    rt_native_options_default(&o);
    o.seed = 5;
    o.yield_ppm = 200000; /* shake the real interleaving a little */
    o.sleep_ppm = 50000;
    assert_int_equal(rt_native_run(meeting_main, &s, &o), 0);
    rt_native_last_result(&r);
    assert_false(r.ended);
    assert_int_equal(r.threads, 5);
    assert_int_equal(s.arrived, 3);
    assert_int_equal(s.daemon_woken, 1);
    assert_int_equal(nheld, 0);
}

/* An ended run: one thread waits forever under an rt_lock and must give it
 * back as it leaves, another sleeps; main ends the process. */
static void waits_forever(void *arg) {
    shared *s = arg;
    rt_lock_acquire(&s->lock);
    rt_lock_release(&s->lock);
    rt_lock_acquire(&s->lock);
    s->arrived++;
    for (;;) rt_wait(&s->q, &s->lock, RT_FOREVER, "nothing");
}

static void sleeps(void *arg) {
    (void)arg;
    for (;;) rt_sleep_until(rt_now() + 10000u);
}

static void ending_main(void *arg) {
    shared *s = arg;
    rt_spawn("waiter", waits_forever, s, false);
    rt_spawn("sleeper", sleeps, s, false);
    for (;;) {
        rt_lock_acquire(&s->lock);
        int in = s->arrived;
        rt_lock_release(&s->lock);
        if (in) break;
        rt_yield();
    }
    rt_end_process("enough");
}

static void an_ended_run_keeps_the_discipline(void **state) {
    static shared s;
    rt_native_options o;
    rt_native_result r;
    (void)state;
    rt_native_options_default(&o);
    o.seed = 6;
    assert_int_equal(rt_native_run(ending_main, &s, &o), 1); /* ended */
    rt_native_last_result(&r);
    assert_true(r.ended);
    assert_string_equal(r.reason, "enough");
    assert_int_equal(nheld, 0);
}

/* The runtime's own check, which holds for every rt_lock whatever mutex
 * implementation is under it: a release, a wait or an rt_lock_observed by a
 * thread that does not hold the lock is the misuse the controlled scheduler
 * reports, and aborts here.  First in the executable, so the fork copies a process with one
 * thread. */
static rt_lock free_lock;
static rt_waitq some_queue;
static void release_a_free_lock(void) { rt_lock_release(&free_lock); }
static void wait_on_a_free_lock(void) { (void)rt_wait(&some_queue, &free_lock, RT_FOREVER, "never"); }
static void observe_a_free_lock(void) { rt_lock_observed(&free_lock); }

static void a_release_or_wait_without_the_lock_aborts(void **state) {
    (void)state;
    expect_abort(release_a_free_lock, "rt_native: rt_lock_release of a lock this thread does not hold\n");
    expect_abort(wait_on_a_free_lock, "rt_native: rt_wait of a lock this thread does not hold\n");
    expect_abort(observe_a_free_lock, "rt_native: rt_lock_observed of a lock this thread does not hold\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_release_or_wait_without_the_lock_aborts),
        cmocka_unit_test(a_run_keeps_the_discipline),
        cmocka_unit_test(an_ended_run_keeps_the_discipline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
