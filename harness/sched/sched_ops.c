/* The controlled rt_ops: each rt_ call of the sim lands here.  Scheduling
 * points: spawn, join, yield, lock acquire/release, wait, wake, sleep.  Pure
 * reads (rt_now, rt_thread_id, rt_thread_name) and rt_choose(_delay) are not points:
 * they change nothing another thread can see, and making them points would
 * only multiply equivalent interleavings. */
#include <inttypes.h>
#include <stddef.h>

#include "sched_internal.h"
#include "sched_tsan.h"

SCHED_NORETURN static void misuse(sched *s, const char *what, uint64_t id) {
    rt_thread *cur = s->current;
    sched_end(s, SCHED_MISUSE, "misuse: %s (#%" PRIu64 ") by thread %" PRIu32 " \"%s\"", what, id,
              cur->id, cur->name);
}

static rt_thread *op_spawn(const char *name, rt_thread_fn fn, void *arg, bool daemon) {
    sched *s = sched_current;
    rt_thread *me = s->current, *t;
    sched_tsan_quiet_begin(me);
    sched_tick(s);
    t = sched_spawn_thread(s, name, fn, arg, daemon);
    if (!t) sched_fail_oom(s);
    if (s->fp) sched_fp_spawned(s, t); /* its steps come after this one */
    sched_reschedule(s);
    sched_tsan_quiet_end(me);
    return t;
}

static void op_join(rt_thread *t) {
    sched *s = sched_current;
    rt_thread *cur = s->current;
    sched_tsan_quiet_begin(cur);
    sched_tick(s);
    if (!t || t == cur || t->joined || t->joiner) misuse(s, "rt_join of self or twice", t ? t->id : 0);
    if (s->fp) sched_fp_touch(s, SCHED_POR_THREAD_KEY(t->id), false); /* finished yet? */
    if (t->state != TS_FINISHED) {
        t->joiner = cur;
        cur->blocked_thread = t;
        sched_make_blocked(s, cur, TS_JOIN);
    }
    sched_reschedule(s);
    if (s->fp) sched_fp_touch(s, SCHED_POR_THREAD_KEY(t->id), false);
    t->joined = true;
    if (!cur->quiet_held) sched_hb_acquire(&t->joined);
    sched_tsan_quiet_end(cur);
}

static uint32_t op_thread_id(void) { return sched_current->current->id; }
static const char *op_thread_name(void) { return sched_current->current->name; }

static void op_yield(void) {
    sched *s = sched_current;
    rt_thread *me = s->current;
    sched_tsan_quiet_begin(me);
    sched_tick(s);
    sched_reschedule(s);
    sched_tsan_quiet_end(me);
}

/* RT_LOCK_HARNESS, RT_LOCK_UNORDERED or 0: the race detector's view of l. */
static uintptr_t lock_kind(const rt_lock *l) { return l->race_kind & RT_LOCK_KIND; }

static void lock_acquire(rt_lock *l, sched_take kind) {
    sched *s = sched_current;
    rt_thread *me = s->current;
    sched_lock *sl;
    sched_tsan_quiet_begin(me);
    sched_tick(s);
    sl = sched_lock_of(s, l);
    if (sl->owner == me) misuse(s, "recursive rt_lock_acquire of lock", sl->id);
    /* The point comes before the acquisition: who gets a contended lock
     * first is exactly what the strategy must be able to vary. */
    sched_reschedule(s);
    if (kind == SCHED_TAKE_SCOPED && (!(l->race_kind & RT_LOCK_ATOMIC_SECTIONS) || me->scoped_lock))
        misuse(s, "rt_lock_acquire_scoped of a lock not marked rt_lock_atomic_sections, or inside another scoped section: lock",
               sl->id);
    sched_lock_take(s, sl, kind);
    if (kind == SCHED_TAKE_DIAGNOSTIC) me->diagnostic_held++;
    if (lock_kind(l) == RT_LOCK_HARNESS) {
        /* The holder's own accesses are the harness's (sched_tsan.h). */
        if (me->quiet_held++ == 0) sched_tsan_quiet_begin(me);
    } else if (lock_kind(l) != RT_LOCK_UNORDERED) {
        sched_hb_acquire(l);
    }
    sched_tsan_quiet_end(me);
}

static void op_lock_acquire(rt_lock *l) { lock_acquire(l, SCHED_TAKE_ORDINARY); }
static void op_lock_acquire_diagnostic(rt_lock *l) { lock_acquire(l, SCHED_TAKE_DIAGNOSTIC); }
static void op_lock_acquire_scoped(rt_lock *l) { lock_acquire(l, SCHED_TAKE_SCOPED); }

/* Not a point: the section's step so far is the one that took the lock, so
 * touching it now is touching it there. */
static void op_lock_observed(rt_lock *l) {
    sched *s = sched_current;
    rt_thread *me = s->current;
    sched_lock *sl = sched_lock_of(s, l);
    if (sl->owner != me) misuse(s, "rt_lock_observed of a lock not held", sl->id);
    if (!sl->diagnostic) return;
    sl->diagnostic = false;
    me->diagnostic_held--;
    sched_touch(s, sl, true);
}

static void op_lock_release(rt_lock *l) {
    sched *s = sched_current;
    rt_thread *me = s->current;
    sched_lock *sl;
    sched_tsan_quiet_begin(me);
    sched_tick(s);
    sl = sched_lock_of(s, l);
    if (sl->owner != me) misuse(s, "rt_lock_release of a lock not held", sl->id);
    if (sl->diagnostic) me->diagnostic_held--;
    if (lock_kind(l) == RT_LOCK_HARNESS) {
        if (--me->quiet_held == 0) sched_tsan_quiet_end(me);
    } else if (lock_kind(l) != RT_LOCK_UNORDERED) {
        sched_hb_release(l);
    }
    sched_lock_give(s, sl);
    sched_reschedule(s);
    sched_tsan_quiet_end(me);
}

static bool op_wait(rt_waitq *q, rt_lock *l, uint64_t deadline, const char *what) {
    sched *s = sched_current;
    rt_thread *cur = s->current;
    sched_lock *sl;
    sched_waitq *sq;
    bool woken, scoped;
    bool edge = lock_kind(l) == 0;
    sched_tsan_quiet_begin(cur);
    sched_tick(s);
    sl = sched_lock_of(s, l);
    sq = sched_waitq_of(s, q);
    if (sl->owner != cur) misuse(s, "rt_wait without holding its lock", sl->id);
    if (edge) sched_hb_release(l);
    sched_touch(s, q, true);
    if (deadline != RT_FOREVER && s->fp) sched_fp_clock(s);
    scoped = sl->scoped;
    sched_lock_give(s, sl);
    cur->woken = false;
    cur->what = what;
    if (deadline > s->now) {
        sched_q_push_back(&sq->head, &sq->tail, cur);
        cur->blocked_id = sq->id;
        cur->in_waitq = sq;
        if (deadline != RT_FOREVER) sched_timed_add(s, cur, deadline);
        sched_make_blocked(s, cur, TS_WAIT);
    }
    sched_reschedule(s);
    sched_lock_take(s, sl, scoped ? SCHED_TAKE_SCOPED : SCHED_TAKE_ORDINARY);
    if (edge) sched_hb_acquire(l);
    woken = cur->woken;
    sched_tsan_quiet_end(cur);
    return woken;
}

/* Who a wake finds on a queue with a timed waiter depends on the step
 * count (the waiter may have timed out): such a wake reads the clock. */
static void touch_queue(sched *s, rt_waitq *q, sched_waitq *sq) {
    rt_thread *w;
    if (!s->fp) return;
    sched_fp_touch(s, (uintptr_t)q, true);
    for (w = sq->head; w; w = w->qnext)
        if (w->timed_at != SCHED_NONE) {
            sched_fp_clock(s);
            break;
        }
}

static void wake(sched *s, sched_waitq *sq, rt_thread *t) {
    sched_q_remove(&sq->head, &sq->tail, t);
    if (t->timed_at != SCHED_NONE) sched_timed_remove(s, t);
    t->woken = true;
    sched_make_runnable(s, t);
}

static void op_wake_one(rt_waitq *q) {
    sched *s = sched_current;
    rt_thread *me = s->current;
    sched_waitq *sq;
    sched_tsan_quiet_begin(me);
    sched_tick(s);
    sq = sched_waitq_of(s, q);
    touch_queue(s, q, sq);
    if (sq->head) wake(s, sq, sq->head);
    sched_reschedule(s);
    sched_tsan_quiet_end(me);
}

static void op_wake_all(rt_waitq *q) {
    sched *s = sched_current;
    rt_thread *me = s->current;
    sched_waitq *sq;
    sched_tsan_quiet_begin(me);
    sched_tick(s);
    sq = sched_waitq_of(s, q);
    touch_queue(s, q, sq);
    while (sq->head) wake(s, sq, sq->head);
    sched_reschedule(s);
    sched_tsan_quiet_end(me);
}

static uint64_t op_now(void) {
    sched *s = sched_current;
    if (s->fp) sched_fp_clock(s);
    return s->now;
}

static void sleep_until(uint64_t deadline, sched_tstate state) {
    sched *s = sched_current;
    rt_thread *cur = s->current;
    sched_tsan_quiet_begin(cur);
    sched_tick(s);
    if (s->fp) sched_fp_clock(s);
    if (deadline > s->now || state == TS_SETTLE) {
        sched_make_blocked(s, cur, state);
        sched_timed_add(s, cur, deadline);
    }
    sched_reschedule(s);
    sched_tsan_quiet_end(cur);
}

static void op_sleep_until(uint64_t deadline) { sleep_until(deadline, TS_SLEEP); }
static void op_settle_until(uint64_t deadline) { sleep_until(deadline, TS_SETTLE); }

static uint32_t choose(uint32_t n, bool delay) {
    sched *s = sched_current;
    uint32_t v;
    if (n <= 1) return 0;
    sched_tsan_quiet_begin(s->current);
    s->choices++;
    if (!s->replay || !sched_replay_choose(s, n, &v))
        v = s->strategy->choose ? s->strategy->choose(s, n, delay) : pcg32_bounded(&s->rng, n);
    sched_record_choose(s, v);
    if (s->fp) sched_trace_choose(s, v);
    /* the value marked by bit 63 (a pick's id never has it), then the width:
     * both whole, as 32 + 32 bits and the mark do not fit one word */
    s->chash = sched_mix(sched_mix(s->chash, ((uint64_t)1 << 63) | v), n);
    sched_tsan_quiet_end(s->current);
    return v;
}

static uint32_t op_choose(uint32_t n) { return choose(n, false); }
static uint32_t op_choose_delay(uint32_t n) { return choose(n, true); }

static void op_end_process(const char *reason) {
    sched *s = sched_current;
    sched_tsan_quiet_begin(s->current);
    sched_end(s, SCHED_PROCESS_ENDED, "%s", reason ? reason : "");
}

static void op_access(const volatile void *obj, rt_access_kind k) {
    sched *s = sched_current;
    if (s->fp) sched_fp_touch(s, (uintptr_t)obj, k == RT_WRITE);
}

/* Also called at a process's end, after the run (sched_current may be NULL). */
static void op_forget(const void *p, size_t n) {
    sched *s = sched_current;
    if (s && s->fp) sched_fp_forget(s, (uintptr_t)p, n);
}

const rt_ops sched_controlled_ops = {
    "controlled",   op_spawn,     op_join,    op_thread_id,    op_thread_name,
    op_yield,       op_lock_acquire, op_lock_release, op_wait, op_wake_one,
    op_wake_all,    op_now,       op_sleep_until, op_choose,   op_end_process,
    op_access,      op_lock_acquire_diagnostic, op_lock_observed, op_choose_delay,
    op_lock_acquire_scoped, op_settle_until, op_forget,
};
