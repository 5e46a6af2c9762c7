/* Shared support for the core's cmocka tests: run a test body inside a fresh
 * simulated process, on the controlled scheduler (seeded, virtual time) or on
 * native threads, and observe or hold the core through its trace points.
 *
 * Header-only (every function static inline, so a test that uses a subset
 * compiles warning-free).  Include after <cmocka.h>'s prerequisites:
 *
 *     #include <setjmp.h>
 *     #include <stdarg.h>
 *     #include <stddef.h>
 *     #include <cmocka.h>
 *     #include "tph_test.h"
 *
 * Assertions inside a body: use TPH_CHECK / TPH_CHECK_EQ, never cmocka's
 * assert_* -- a body runs on a fiber or another OS thread, and cmocka's
 * longjmp from there would wreck the run.  A failed check ends the simulated
 * process with a "tph-test:" reason; the driver turns that into a cmocka
 * failure on the test's own thread after the run.
 *
 * Every run: sim_process_begin(cfg) on the run's main thread, the body,
 * sim_process_end, and after the run tph_process_state_reset().
 */
#ifndef TPHEAL_TPH_TEST_H
#define TPHEAL_TPH_TEST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#define TPH_TEST_HAVE_FORK 1
#else
#define TPH_TEST_HAVE_FORK 0
#endif

#include <tpheal/tpheal.h>

#include "os.h"
#include "process_state.h"
#include "rt.h"
#include "rt_native.h"
#include "rt_sched.h"
#include "sim.h"

/* One interrupt-clock tick (15.625 ms) in 100 ns units: advance virtual time
 * past this when two stamps must differ. */
#define TPH_TEST_TICK 156250ull
#define TPH_TEST_MS 10000ull
#define TPH_TEST_SECOND 10000000ull
/* The bound of every wait for something that must happen (a callback, a
 * trace record, a held thread): it returns as soon as the thing happens, so
 * passing runs never pay it.  Natively it is real time, and a loaded 2-core
 * machine stretches real time: the real-pool scenario runs went from tens of
 * milliseconds to about 2 s each under Wine at load average 8 (four copies
 * beside four other builds), so a 1 s bound on a callback's arrival is one a
 * loaded runner can miss.  Only a quiet window (something must NOT happen)
 * may be short: load delays events, it does not make them. */
#define TPH_TEST_PATIENCE (10 * TPH_TEST_SECOND)

typedef void (*tph_test_body_fn)(void *ctx);

/* ---- checks inside a body ------------------------------------------------ */

static char tph_test__failure[512];

static inline void tph_test__fail(const char *file, int line, const char *what) {
    snprintf(tph_test__failure, sizeof tph_test__failure, "tph-test: %s:%d: %s", file, line, what);
    rt_end_process(tph_test__failure);
}

static inline void tph_test__fail_u64(const char *file, int line, const char *what, uint64_t a,
                                      uint64_t b) {
    char buf[400];
    snprintf(buf, sizeof buf, "%s (%llu vs %llu)", what, (unsigned long long)a,
             (unsigned long long)b);
    tph_test__fail(file, line, buf);
}

#define TPH_CHECK(cond)                                              \
    do {                                                             \
        if (!(cond)) tph_test__fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
    } while (0)
#define TPH_CHECK_EQ(a, b)                                                                   \
    do {                                                                                     \
        uint64_t tph_a_ = (uint64_t)(a), tph_b_ = (uint64_t)(b);                             \
        if (tph_a_ != tph_b_)                                                                \
            tph_test__fail_u64(__FILE__, __LINE__, "CHECK_EQ(" #a ", " #b ")", tph_a_, tph_b_); \
    } while (0)
#define TPH_CHECK_TRUE(x) TPH_CHECK(x)
#define TPH_CHECK_FALSE(x) TPH_CHECK(!(x))

/* ---- stack contents ------------------------------------------------------------- */

/* Fills the 8 KiB of stack below the caller with `byte`, so the next call at
 * the same depth starts on known garbage: a local the core forgets to set
 * then reads `byte`s instead of whatever the run happened to leave. */
static inline void tph_test__fill_frame(unsigned char byte) {
    volatile unsigned char junk[8192];
    size_t i;
    for (i = 0; i < sizeof junk; i++) junk[i] = byte;
}

static inline void tph_test_fill_stack(unsigned char byte) {
    /* Called through a volatile pointer: never inlined, so the array is a
     * frame of its own below the caller, where the next call's frame goes. */
    void (*volatile fill)(unsigned char) = tph_test__fill_frame;
    fill(byte);
}

/* ---- faults ------------------------------------------------------------------- */

static inline void tph_test__arm_fault(sim_fault_kind kind, uint64_t nth, bool from_nth_on,
                                       bool match_pool, uintptr_t pool_key) {
    sim_fault f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    f.nth = nth;
    f.from_nth_on = from_nth_on;
    f.match_pool = match_pool;
    f.pool_key = pool_key;
    sim_fault_arm(&f);
}

/* Arms the sim's fault of `kind`: its Nth call fails, or every call from the
 * Nth on when `from_nth_on`. */
static inline void tph_test_fail_call(sim_fault_kind kind, uint64_t nth, bool from_nth_on) {
    tph_test__arm_fault(kind, nth, from_nth_on, false, 0);
}

/* The same, counting only calls on the pool keyed `pool_key` (0: the default
 * pool). */
static inline void tph_test_fail_call_on_pool(sim_fault_kind kind, uint64_t nth, bool from_nth_on,
                                              uintptr_t pool_key) {
    tph_test__arm_fault(kind, nth, from_nth_on, true, pool_key);
}

/* ---- trace observation and holds ------------------------------------------ */

#define TPH_TEST_ANY ((uint64_t)-1) /* matches any value of a record's `a` */
#define TPH_TEST_COUNTERS 256

typedef struct tph_test__counter {
    const char *event;
    uint64_t a;
    uint64_t count;
} tph_test__counter;

typedef struct tph_test__hooks {
    rt_lock lock;
    rt_waitq changed;
    tph_test__counter counters[TPH_TEST_COUNTERS];
    size_t ncounters;
    /* hold: a thread recording (hold_event, hold_a) parks until released */
    const char *hold_event;
    uint64_t hold_a;
    bool hold_active;
    uint64_t held_now;   /* threads parked at the hold right now */
    uint64_t held_total; /* threads that reached the hold */
    tph_trace_hook chained;
    void *chained_ctx;
    bool misuse_expected; /* tph_test_expect_misuse */
    bool hold_once;       /* tph_test_hold_first: only the first thread parks */
} tph_test__hooks;

static tph_test__hooks tph_test__h;

static inline tph_test__counter *tph_test__find(const char *event, uint64_t a, bool create) {
    size_t i;
    for (i = 0; i < tph_test__h.ncounters; i++) {
        tph_test__counter *c = &tph_test__h.counters[i];
        if (c->a == a && strcmp(c->event, event) == 0) return c;
    }
    if (!create || tph_test__h.ncounters == TPH_TEST_COUNTERS) return NULL;
    tph_test__h.counters[tph_test__h.ncounters].event = event;
    tph_test__h.counters[tph_test__h.ncounters].a = a;
    tph_test__h.counters[tph_test__h.ncounters].count = 0;
    return &tph_test__h.counters[tph_test__h.ncounters++];
}

/* Records whose argument docs/architecture.md ("Trace events") gives as 0:
 * a record carrying anything else breaks the trace's stable shape, which
 * users' hooks and the scenario language read.  `a_zero`/`b_zero` say which. */
static const struct tph_test__zero_arg {
    const char *event;
    bool a_zero, b_zero;
} tph_test__zero_args[] = {
    {"healer-tick", true, true},         {"healer-start-failed", true, true},
    {"healer-started", false, true},     {"repair-started", false, true},
    {"register-failed", false, true},    {"repair-submitted-inline", false, true},
    {"cancel-untracked", false, true},   {"stale-tick-dropped", false, true},
    {"entry-retired", false, true}, /* retired only with no object left */
};

static inline void tph_test__check_shape(const tph_trace_record *rec) {
    size_t i;
    for (i = 0; i < sizeof tph_test__zero_args / sizeof tph_test__zero_args[0]; i++) {
        const struct tph_test__zero_arg *z = &tph_test__zero_args[i];
        if (strcmp(rec->event, z->event) != 0) continue;
        if ((z->a_zero && rec->a != 0) || (z->b_zero && rec->b != 0)) {
            static char what[160];
            snprintf(what, sizeof what, "trace record %s carries a=%llu b=%llu; its zero argument is not 0",
                     rec->event, (unsigned long long)rec->a, (unsigned long long)rec->b);
            tph_test__fail(__FILE__, __LINE__, what);
        }
    }
}

static inline void tph_test__hook(const tph_trace_record *rec, void *ctx) {
    tph_test__counter *c;
    (void)ctx;
    tph_test__check_shape(rec);
    sim_announce_note(rec->target, rec->event, rec->a, rec->b);
    rt_lock_acquire(&tph_test__h.lock);
    c = tph_test__find(rec->event, rec->a, true);
    if (c != NULL) c->count++;
    c = tph_test__find(rec->event, TPH_TEST_ANY, true);
    if (c != NULL) c->count++;
    rt_wake_all(&tph_test__h.changed);
    if (tph_test__h.hold_active && tph_test__h.hold_event != NULL &&
        (!tph_test__h.hold_once || tph_test__h.held_total == 0) &&
        strcmp(rec->event, tph_test__h.hold_event) == 0 &&
        (tph_test__h.hold_a == TPH_TEST_ANY || tph_test__h.hold_a == rec->a)) {
        tph_test__h.held_now++;
        tph_test__h.held_total++;
        rt_wake_all(&tph_test__h.changed);
        while (tph_test__h.hold_active)
            rt_wait(&tph_test__h.changed, &tph_test__h.lock, RT_FOREVER, "tph_test hold");
        tph_test__h.held_now--;
        rt_wake_all(&tph_test__h.changed);
    }
    rt_lock_release(&tph_test__h.lock);
    if (tph_test__h.chained != NULL) tph_test__h.chained(rec, tph_test__h.chained_ctx);
}

/* The body provokes misuse on purpose (the run is not failed for it). */
static inline void tph_test_expect_misuse(void) { tph_test__h.misuse_expected = true; }

/* Another hook to run after the test support's own (a test's extra checks). */
static inline void tph_test_chain_hook(tph_trace_hook fn, void *ctx) {
    tph_test__h.chained_ctx = ctx;
    tph_test__h.chained = fn;
}

/* How many times `event` was recorded with a == `a` (TPH_TEST_ANY: any a). */
static inline uint64_t tph_test_event_count(const char *event, uint64_t a) {
    tph_test__counter *c;
    uint64_t n;
    rt_lock_acquire(&tph_test__h.lock);
    c = tph_test__find(event, a, false);
    n = c != NULL ? c->count : 0;
    rt_lock_release(&tph_test__h.lock);
    return n;
}

/* Waits until `event` (with a == `a`, or any) has been recorded at least
 * `at_least` times in this process, or `timeout` (100 ns units, virtual under
 * the scheduler) passes.  True when reached. */
static inline bool tph_test_wait_event(const char *event, uint64_t a, uint64_t at_least,
                                       uint64_t timeout) {
    uint64_t deadline = rt_now() + timeout;
    bool reached = false;
    rt_lock_acquire(&tph_test__h.lock);
    for (;;) {
        tph_test__counter *c = tph_test__find(event, a, false);
        if (c != NULL && c->count >= at_least) {
            reached = true;
            break;
        }
        if (rt_now() >= deadline) break;
        rt_wait(&tph_test__h.changed, &tph_test__h.lock, deadline, "tph_test_wait_event");
    }
    rt_lock_release(&tph_test__h.lock);
    return reached;
}

/* From now on, any thread recording `event` with a == `a` (or any a) parks
 * inside the trace hook until tph_test_release_hold. */
static inline void tph_test_hold(const char *event, uint64_t a) {
    rt_lock_acquire(&tph_test__h.lock);
    tph_test__h.hold_event = event;
    tph_test__h.hold_a = a;
    tph_test__h.hold_active = true;
    rt_lock_release(&tph_test__h.lock);
}

/* As tph_test_hold, but only the first thread to record the event parks;
 * later records (the test's own thread making the same call) pass.  It
 * restarts the count tph_test_wait_held reads: the first park is 1 again,
 * and a later tph_test_hold in the same body counts on from there. */
static inline void tph_test_hold_first(const char *event, uint64_t a) {
    rt_lock_acquire(&tph_test__h.lock);
    tph_test__h.hold_once = true;
    tph_test__h.held_total = 0;
    rt_lock_release(&tph_test__h.lock);
    tph_test_hold(event, a);
}

/* Waits until at least `n` threads in total have reached the hold. */
static inline bool tph_test_wait_held(uint64_t n, uint64_t timeout) {
    uint64_t deadline = rt_now() + timeout;
    bool reached;
    rt_lock_acquire(&tph_test__h.lock);
    while (tph_test__h.held_total < n && rt_now() < deadline)
        rt_wait(&tph_test__h.changed, &tph_test__h.lock, deadline, "tph_test_wait_held");
    reached = tph_test__h.held_total >= n;
    rt_lock_release(&tph_test__h.lock);
    return reached;
}

/* Threads parked at the hold right now. */
static inline uint64_t tph_test_held_now(void) {
    uint64_t n;
    rt_lock_acquire(&tph_test__h.lock);
    n = tph_test__h.held_now;
    rt_lock_release(&tph_test__h.lock);
    return n;
}

/* Lets every parked thread go and stops holding. */
static inline void tph_test_release_hold(void) {
    rt_lock_acquire(&tph_test__h.lock);
    tph_test__h.hold_active = false;
    tph_test__h.hold_event = NULL;
    tph_test__h.hold_once = false;
    rt_wake_all(&tph_test__h.changed);
    rt_lock_release(&tph_test__h.lock);
}

/* Sleeps `duration` (100 ns units): virtual time under the scheduler. */
static inline void tph_test_sleep(uint64_t duration) { rt_sleep_until(rt_now() + duration); }

/* Set by the runners: is the body on real threads and the real clock? */
static bool tph_test__on_native;

/* Natively, a quiet window (a time in which something must NOT happen) is
 * capped here.  Real threads get a quarter of a second to misbehave; the
 * controlled runs of the same body check the whole window on virtual time
 * for free.  Uncapped, three such seconds made test_heal_healer and
 * test_heal_tick the slowest executables of the suite (6.5 s and 3.2 s of a
 * 24 s catcher pass, most of the cost of every surviving mutant). */
#define TPH_TEST_NATIVE_QUIET_CAP (250 * TPH_TEST_MS)

static inline void tph_test_quiet(uint64_t duration) {
    if (tph_test__on_native && duration > TPH_TEST_NATIVE_QUIET_CAP)
        duration = TPH_TEST_NATIVE_QUIET_CAP;
    tph_test_sleep(duration);
}

/* How long a body waits for something that must happen: `bound` under the
 * controlled scheduler, where virtual time makes it an assertion on the
 * latency; TPH_TEST_PATIENCE on real threads, where a short figure is a
 * real-time bound a loaded 2-core machine can miss and only "it happens" is
 * checked (a lag of seconds has nothing to do with the code under test). */
static inline uint64_t tph_test_latency_bound(uint64_t bound) {
    return tph_test__on_native && bound < TPH_TEST_PATIENCE ? TPH_TEST_PATIENCE : bound;
}

/* A thread for a body to fan out to. */
static inline rt_thread *tph_test_spawn(const char *name, rt_thread_fn fn, void *arg) {
    return rt_spawn(name, fn, arg, false);
}

/* ---- a pool kept from dispatching ------------------------------------------- */

/* A private pool limited to one thread, with that thread parked inside a work
 * callback until tph_test_blocker_open: anything queued on the pool meanwhile
 * stays queued.  The way to make "the pool never takes the repair" without
 * touching the model.  Made through the seam, not the public objects, so the
 * blocker itself registers nothing: the registry sees only what a test puts
 * there.  `key` is the pool's registry key. */
typedef struct tph_test_blocker {
    tph_os_pool *pool;
    tph_os_work *work;
    uintptr_t key;
    rt_lock lock;
    rt_waitq q;
    bool inside;
    bool open;
} tph_test_blocker;

static inline void TPH_OS_CALLBACK tph_test__blocker_fn(tph_os_instance *i, void *ctx,
                                                        tph_os_work *w) {
    tph_test_blocker *b = (tph_test_blocker *)ctx;
    (void)i;
    (void)w;
    rt_lock_acquire(&b->lock);
    b->inside = true;
    rt_wake_all(&b->q);
    while (!b->open) rt_wait(&b->q, &b->lock, RT_FOREVER, "tph_test blocker");
    rt_lock_release(&b->lock);
}

/* Test code that calls the seam itself announces each call as the core does
 * (harness/sim/sim_announce.c: an unannounced native call is misuse). */
static inline void tph_test_announce(const char *call, uintptr_t a, uint64_t b) {
    sim_announce_note("api", call, a, b);
}

/* Creates the pool and parks its thread; returns false if any step failed. */
static inline bool tph_test_blocker_start(tph_test_blocker *b) {
    tph_os_env env;
    memset(b, 0, sizeof *b);
    tph_test_announce("CreateThreadpool", 0, 0);
    b->pool = tph_os_pool_create();
    if (b->pool == NULL) return false;
    tph_test_announce("SetThreadpoolThreadMaximum", (uintptr_t)b->pool, 1);
    tph_os_pool_set_max(b->pool, 1);
    tph_test_announce("SetThreadpoolThreadMinimum", (uintptr_t)b->pool, 1);
    if (!tph_os_pool_set_min(b->pool, 1)) return false;
    b->key = (uintptr_t)b->pool;
    memset(&env, 0, sizeof env);
    env.pool = b->pool;
    env.priority = TPH_OS_PRIORITY_NORMAL;
    tph_test_announce("CreateThreadpoolWork", b->key, 0);
    b->work = tph_os_work_create(tph_test__blocker_fn, b, &env);
    if (b->work == NULL) return false;
    tph_test_announce("SubmitThreadpoolWork", (uintptr_t)b->work, 0);
    tph_os_work_submit(b->work);
    rt_lock_acquire(&b->lock);
    while (!b->inside) rt_wait(&b->q, &b->lock, RT_FOREVER, "tph_test blocker start");
    rt_lock_release(&b->lock);
    return true;
}

static inline void tph_test_blocker_open(tph_test_blocker *b) {
    rt_lock_acquire(&b->lock);
    b->open = true;
    rt_wake_all(&b->q);
    rt_lock_release(&b->lock);
}

/* Opens (if still closed), drains and closes the work, closes the pool. */
static inline void tph_test_blocker_finish(tph_test_blocker *b) {
    tph_test_blocker_open(b);
    if (b->work != NULL) {
        tph_test_announce("WaitForThreadpoolWorkCallbacks", (uintptr_t)b->work, 0);
        tph_os_work_wait(b->work, false);
        tph_test_announce("CloseThreadpoolWork", (uintptr_t)b->work, 0);
        tph_os_work_close(b->work);
    }
    if (b->pool != NULL) {
        tph_test_announce("CloseThreadpool", (uintptr_t)b->pool, 0);
        tph_os_pool_close(b->pool);
    }
    b->work = NULL;
    b->pool = NULL;
}

/* ---- runs -------------------------------------------------------------------- */

typedef struct tph_test__run {
    tph_test_body_fn body;
    void *ctx;
    const sim_config *cfg;
    bool finished;
} tph_test__run;

static inline void tph_test__main(void *arg) {
    tph_test__run *run = (tph_test__run *)arg;
    sim_process_begin(run->cfg);
    tph_trace_set_hook(tph_test__hook, NULL);
    sim_announce_check(true);
    run->body(run->ctx);
    /* Unpark anything a body left held, so the process can wind down. */
    tph_test_release_hold();
    sim_announce_check(false);
    tph_trace_set_hook(NULL, NULL);
    /* Misuse the model reported (a call on a closed object, a native call
     * not announced by its api/ record...) fails the body, unless it said
     * it provokes misuse on purpose. */
    if (!tph_test__h.misuse_expected && sim_misuse_count() > 0) {
        sim_misuse m;
        char what[300];
        if (sim_misuse_get(0, &m)) sim_misuse_format(&m, what, sizeof what);
        else snprintf(what, sizeof what, "?");
        tph_test__fail(__FILE__, __LINE__, what);
    }
    /* On native threads the model joins its workers here, inside the run.
     * A controlled run's workers are fibers that stay parked until the run
     * ends: tearing the model down from this fiber would free memory they
     * touched with no happens-before edge (the race build reports it), so
     * tph_test__after_run ends the process after sched_run, whose end orders
     * every fiber before the caller (sched_tsan_run_end). */
    if (tph_test__on_native) sim_process_end();
    run->finished = true;
}

static inline void tph_test__after_run(void) {
    if (sim_process_active()) sim_process_end();
    tph_process_state_reset();
    memset(&tph_test__h, 0, sizeof tph_test__h);
}

/* What a run ended with: for tph_test_child and for tests that expect a
 * process end (fail-fast). */
typedef struct tph_test_outcome {
    bool finished;     /* the body returned and the process wound down */
    bool ended;        /* the simulated process was ended (fail-fast, check) */
    char reason[600];  /* why it ended, or the scheduler's complaint */
} tph_test_outcome;

static inline void tph_test__report(const char *how, uint64_t seed, const tph_test_outcome *o,
                                    const char *extra) {
    if (o->finished && !o->ended) return;
    fail_msg("%s run (seed %llu) did not finish: %s%s%s", how, (unsigned long long)seed, o->reason,
             extra != NULL ? "\n" : "", extra != NULL ? extra : "");
}

/* Runs body under the controlled scheduler; returns the outcome (no cmocka
 * assertion).  `cfg` NULL = sim defaults. */
static inline tph_test_outcome tph_test_run_controlled_outcome(tph_test_body_fn body, void *ctx,
                                                               const sim_config *cfg,
                                                               uint64_t seed, char **blocked) {
    tph_test__run run;
    sched_options o;
    sched_result r;
    tph_test_outcome out;
    memset(&out, 0, sizeof out);
    memset(&r, 0, sizeof r);
    run.body = body;
    run.ctx = ctx;
    run.cfg = cfg;
    run.finished = false;
    sched_options_default(&o);
    o.seed = seed;
    if (sched_run(&o, tph_test__main, &run, &r) != 0) {
        snprintf(out.reason, sizeof out.reason, "sched_run refused: %s", r.reason);
    } else if (r.status == SCHED_PROCESS_ENDED) {
        out.ended = true;
        snprintf(out.reason, sizeof out.reason, "%s", r.reason);
    } else if (r.status != SCHED_OK) {
        snprintf(out.reason, sizeof out.reason, "%s: %s", sched_status_name(r.status), r.reason);
    }
    out.finished = run.finished && r.status == SCHED_OK;
    if (blocked != NULL) {
        *blocked = r.blocked_report;
        r.blocked_report = NULL;
    }
    sched_result_free(&r);
    tph_test__after_run();
    return out;
}

static inline tph_test_outcome tph_test_run_native_outcome(tph_test_body_fn body, void *ctx,
                                                           const sim_config *cfg, uint64_t seed) {
    tph_test__run run;
    rt_native_options o;
    rt_native_result r;
    tph_test_outcome out;
    memset(&out, 0, sizeof out);
    run.body = body;
    run.ctx = ctx;
    run.cfg = cfg;
    run.finished = false;
    rt_native_options_default(&o);
    o.seed = seed;
    tph_test__on_native = true;
    rt_native_run(tph_test__main, &run, &o);
    tph_test__on_native = false;
    rt_native_last_result(&r);
    if (r.ended) {
        out.ended = true;
        snprintf(out.reason, sizeof out.reason, "%s", r.reason);
    }
    out.finished = run.finished && !r.ended;
    tph_test__after_run();
    return out;
}

/* cmocka-asserting forms: the test fails unless the body ran to the end. */
static inline void tph_test_run_controlled(tph_test_body_fn body, void *ctx,
                                           const sim_config *cfg, uint64_t seed) {
    char *blocked = NULL;
    tph_test_outcome o = tph_test_run_controlled_outcome(body, ctx, cfg, seed, &blocked);
    if (!o.finished || o.ended) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", blocked != NULL ? blocked : "");
        free(blocked);
        tph_test__report("controlled", seed, &o, msg);
    }
    free(blocked);
}

static inline void tph_test_run_native(tph_test_body_fn body, void *ctx, const sim_config *cfg) {
    tph_test_outcome o = tph_test_run_native_outcome(body, ctx, cfg, 0);
    tph_test__report("native", 0, &o, NULL);
}

/* Seeds 1..seeds under the controlled scheduler, then once on native threads. */
static inline void tph_test_run_both(tph_test_body_fn body, void *ctx, const sim_config *cfg,
                                     uint64_t seeds) {
    uint64_t s;
    for (s = 1; s <= seeds; s++) tph_test_run_controlled(body, ctx, cfg, s);
    tph_test_run_native(body, ctx, cfg);
}

/* ---- child processes (fail-fast tests) ---------------------------------------- */

/* Runs fn(ctx) in a forked child (fn typically calls a *_outcome runner and
 * returns its outcome) and returns the outcome the child reported.  A fail-fast
 * that reaches the real process (abort) shows up as ended with "signal N". */
typedef tph_test_outcome (*tph_test_child_fn)(void *ctx);

static inline tph_test_outcome tph_test_child(tph_test_child_fn fn, void *ctx) {
    tph_test_outcome out;
    memset(&out, 0, sizeof out);
#if TPH_TEST_HAVE_FORK
    {
        int fds[2];
        pid_t pid;
        int status = 0;
        size_t got = 0;
        fflush(stdout);
        fflush(stderr);
        if (pipe(fds) != 0) {
            snprintf(out.reason, sizeof out.reason, "pipe: %s", strerror(errno));
            return out;
        }
        pid = fork();
        if (pid == 0) {
            tph_test_outcome child;
            size_t put = 0;
            close(fds[0]);
            child = fn(ctx);
            while (put < sizeof child) {
                ssize_t n = write(fds[1], (const char *)&child + put, sizeof child - put);
                if (n <= 0) break;
                put += (size_t)n;
            }
            close(fds[1]);
            _exit(0);
        }
        close(fds[1]);
        while (got < sizeof out) {
            ssize_t n = read(fds[0], (char *)&out + got, sizeof out - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        close(fds[0]);
        waitpid(pid, &status, 0);
        if (got != sizeof out) {
            memset(&out, 0, sizeof out);
            out.ended = true;
            if (WIFSIGNALED(status))
                snprintf(out.reason, sizeof out.reason, "signal %d", WTERMSIG(status));
            else
                snprintf(out.reason, sizeof out.reason, "child exited %d without a report",
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
    }
#else
    out = fn(ctx);
#endif
    return out;
}

/* ---- the registry ----------------------------------------------------------- */

/* The registry entry for `key`, read inside a run; a failed check (ending
 * the run) when the pool has none. */
static inline tph_heal_entry_info tph_test_entry(uintptr_t key) {
    tph_heal_entry_info info;
    memset(&info, 0, sizeof info);
    TPH_CHECK(tph_heal_entry_get(key, &info));
    return info;
}

/* main() of a test file that exists only in the self-heal build: the
 * self-heal-off build compiles it to this, so ctest's list stays the same
 * (test_heal_registry.c says what the off build does promise). */
#define TPH_TEST_MAIN_WITHOUT_SELF_HEAL()                          \
    int main(void) {                                               \
        printf("skipped: built without TPHEAL_SELF_HEAL\n");       \
        return 0;                                                  \
    }

#endif
