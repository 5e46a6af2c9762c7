/* The heart of the controlled scheduler: the clock and bounds of a
 * scheduling point, the pick, the switch, thread birth and death, and the
 * end of a run.  Per point: no allocation, O(1) bookkeeping (runnable set is
 * an array with back-indices), one pcg32 draw at a choice point. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"
#include "sched_tsan.h"

sched *sched_current;

static void runnable_add(sched *s, rt_thread *t) {
    t->runnable_at = s->nrunnable;
    s->runnable[s->nrunnable++] = t;
}

static void runnable_remove(sched *s, rt_thread *t) {
    uint32_t i = t->runnable_at;
    rt_thread *last = s->runnable[--s->nrunnable];
    s->runnable[i] = last;
    last->runnable_at = i;
    t->runnable_at = SCHED_NONE;
}

void sched_make_runnable(sched *s, rt_thread *t) {
    t->state = TS_RUNNABLE;
    t->in_waitq = NULL;
    if (t->runnable_at == SCHED_NONE) runnable_add(s, t);
}

void sched_make_blocked(sched *s, rt_thread *t, sched_tstate state) {
    t->state = state;
    if (t->runnable_at != SCHED_NONE) runnable_remove(s, t);
}

void sched_timed_add(sched *s, rt_thread *t, uint64_t deadline) {
    t->deadline = deadline;
    t->timed_at = s->ntimed;
    s->timed[s->ntimed++] = t;
    if (t->state != TS_SETTLE && deadline < s->next_deadline) s->next_deadline = deadline;
}

void sched_timed_remove(sched *s, rt_thread *t) {
    uint32_t i = t->timed_at;
    rt_thread *last = s->timed[--s->ntimed];
    s->timed[i] = last;
    last->timed_at = i;
    t->timed_at = SCHED_NONE;
    /* next_deadline may now be lower than any deadline left: harmless, the
     * next fire_due rescans and raises it. */
}

/* Wakes every timed thread whose deadline has come (a timed-out rt_wait
 * leaves its queue and returns false); a settling one only when `settled`
 * (advance_to_deadline found the process quiet). */
static void fire_due(sched *s, bool settled) {
    uint64_t next = RT_FOREVER;
    uint32_t i = 0;
    while (i < s->ntimed) {
        rt_thread *t = s->timed[i];
        if (t->state == TS_SETTLE && (!settled || t->deadline > s->now)) {
            i++; /* not in `next`: sched_tick_slow never fires it */
        } else if (t->deadline <= s->now) {
            /* what a deadline does depends on the step count: the step it
             * fires in depends on every other */
            if (s->fp) sched_fp_clock(s);
            sched_timed_remove(s, t);
            if (t->state == TS_WAIT) {
                /* a timeout: t->woken stays false (rt_wait cleared it, and
                 * wake() takes its thread off the timed set) */
                sched_waitq *q = t->in_waitq;
                sched_q_remove(&q->head, &q->tail, t);
            }
            sched_make_runnable(s, t);
        } else {
            if (t->deadline < next) next = t->deadline;
            i++;
        }
    }
    s->next_deadline = next;
}

static void check_virtual_time(sched *s) {
    if (s->now > s->opt.max_virtual_time && s->alive_nondaemon > 0)
        sched_end(s, SCHED_LIVELOCK,
                  "livelock: virtual time %" PRIu64 " passed max_virtual_time %" PRIu64
                  " with %" PRIu32 " non-daemon thread(s) unfinished",
                  s->now, s->opt.max_virtual_time, s->alive_nondaemon);
}

void sched_tick_slow(sched *s) {
    if (s->steps > s->opt.max_steps)
        sched_end(s, SCHED_LIVELOCK, "livelock: more than %" PRIu64 " scheduling points", s->opt.max_steps);
    if (s->now >= s->next_deadline) fire_due(s, false);
    check_virtual_time(s);
}

/* Nothing runnable (or, on idle time, a busy stretch ran its length): jump
 * the clock to the earliest deadline, or it is a deadlock.  A settling
 * thread's deadline counts only when nothing can run and no other deadline
 * comes at or before it: then the process is quiet, and it wakes alone. */
static void advance_to_deadline(sched *s) {
    uint64_t earliest = RT_FOREVER, settle = RT_FOREVER;
    bool settled;
    uint32_t i;
    if (s->ntimed == 0)
        sched_end(s, SCHED_DEADLOCK, "deadlock: no runnable thread and no pending deadline");
    for (i = 0; i < s->ntimed; i++) {
        uint64_t *e = s->timed[i]->state == TS_SETTLE ? &settle : &earliest;
        if (s->timed[i]->deadline < *e) *e = s->timed[i]->deadline;
    }
    settled = s->nrunnable == 0 && settle < earliest;
    if (settled) earliest = settle;
    if (earliest == RT_FOREVER) {
        /* a busy stretch with only a settling thread timed: it waits for
         * quiet, and the spinners run on (the step bound ends a livelock) */
        s->steps_at_jump = s->steps;
        return;
    }
    if (earliest > s->now) s->now = earliest;
    if (!s->step_time) {
        s->steps_at_jump = s->steps;
        if (s->fp) sched_fp_time_jump(s);
    }
    fire_due(s, settled);
    /* The earliest deadline has come, so someone woke: if not, the timed
     * set is corrupt and looping here would hang the whole harness. */
    if (s->nrunnable == 0) sched_end(s, SCHED_MISUSE, "internal: time jump woke nobody");
    check_virtual_time(s);
}

static rt_thread *pick_next(sched *s) {
    rt_thread *t = s->current, *cur = s->current;
    /* On idle time a section of an rt_lock_atomic_sections lock runs on
     * while its holder can: no choice, and the step goes on. */
    if (!s->step_time && t && t->atomic_held && t->runnable_at != SCHED_NONE) return t;
    /* Past that, another thread may run while t holds its scoped section. */
    if (s->fp && t && t->scoped_lock) sched_lock_seen(s, t);
    if (s->fp) sched_fp_point(s);
    if (!s->step_time && s->ntimed && s->steps - s->steps_at_jump >= SCHED_IDLE_BUSY_POINTS) advance_to_deadline(s);
    while (s->nrunnable == 0) advance_to_deadline(s);
    if (s->nrunnable == 1) return s->runnable[0];
    s->choice_points++;
    t = s->replay ? sched_replay_pick(s) : NULL;
    if (!t) t = s->strategy->pick(s);
    if (cur && t != cur && cur->runnable_at != SCHED_NONE) s->preemptions++;
    sched_record_pick(s, t->id);
    s->chash = sched_mix(s->chash, t->id);
    return t;
}

static void note_switch(sched *s, rt_thread *next) {
    s->switches++;
    s->ihash = sched_mix(s->ihash, (s->steps << 24) ^ next->id);
    s->current = next;
}

/* Run on every resumption of a thread: a thread that finished just before
 * cannot free its own stack while standing on it. */
static void reclaim_dead(sched *s) {
    if (s->dead) {
        sched_tsan_forget(s, s->dead);
        sched_fiber_drop(&s->dead->fiber);
        s->dead = NULL;
        s->fibers_live--;
    }
}

void sched_reschedule(sched *s) {
    rt_thread *cur = s->current;
    rt_thread *next;
    /* Another thread could find the lock held: a dependency the reduction
     * was told is not there (rt_lock_acquire_diagnostic). */
    if (cur->diagnostic_held)
        sched_end(s, SCHED_MISUSE, "misuse: a scheduling point inside a diagnostic section by thread %" PRIu32 " \"%s\"",
                  cur->id, cur->name);
    next = pick_next(s);
    if (next == cur) return;
    note_switch(s, next);
    sched_fiber_switch(&cur->fiber, &next->fiber);
    reclaim_dead(s);
}

static SCHED_NORETURN void end_at_exit(sched *s);

static void thread_exit(sched *s, rt_thread *t) {
    rt_thread *next;
    sched_tsan_quiet_begin(t); /* never ended: the fiber is forgotten */
    if (s->fp) sched_fp_touch(s, SCHED_POR_THREAD_KEY(t->id), true); /* its joiner reads it */
    sched_make_blocked(s, t, TS_FINISHED);
    if (t->joiner) sched_make_runnable(s, t->joiner);
    /* The exit is ordered before the join, and before the run's end. */
    if (!t->quiet_held) sched_hb_release(&t->joined);
    sched_hb_release(&s->race);
    if (!t->daemon && --s->alive_nondaemon == 0) end_at_exit(s);
    next = pick_next(s);
    s->dead = t;
    note_switch(s, next);
    sched_fiber_switch_exit(&t->fiber, &next->fiber);
}

static void thread_main(void *p) {
    rt_thread *t = (rt_thread *)p;
    sched *s = sched_current;
    reclaim_dead(s);
    if (t->spawn_edge) sched_hb_acquire(&t->spawn_edge);
    t->fn(t->arg);
    thread_exit(s, t);
}

static int grow(sched *s) {
    uint32_t cap = s->cap ? s->cap * 2u : 16u;
    rt_thread **a = realloc(s->threads, cap * sizeof *a);
    if (!a) return -1;
    s->threads = a;
    a = realloc(s->runnable, cap * sizeof *a);
    if (!a) return -1;
    s->runnable = a;
    a = realloc(s->timed, cap * sizeof *a);
    if (!a) return -1;
    s->timed = a;
    s->cap = cap;
    return 0;
}

rt_thread *sched_spawn_thread(sched *s, const char *name, rt_thread_fn fn, void *arg, bool daemon) {
    rt_thread *t;
    if (s->nthreads == s->cap && grow(s) != 0) return NULL;
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (sched_fiber_make(&t->fiber, s->opt.stack_size, thread_main, t) != 0) {
        free(t);
        return NULL;
    }
    if (++s->fibers_live > s->fibers_peak) s->fibers_peak = s->fibers_live;
    t->id = ++s->nthreads;
    t->daemon = daemon;
    t->fn = fn;
    t->arg = arg;
    t->runnable_at = SCHED_NONE;
    t->timed_at = SCHED_NONE;
    t->deadline = RT_FOREVER;
    /* A bounded copy (t is zeroed, so the name stays terminated), not
     * snprintf: that was half of a spawn's instructions and 3.7% of a
     * scenario run's (callgrind, tpheal-harness bench). */
    if (name) {
        size_t n;
        for (n = 0; n + 1 < sizeof t->name && name[n]; n++) t->name[n] = name[n];
    }
    s->threads[t->id - 1] = t;
    sched_tsan_name(t);
    /* A spawn orders the spawner's past before the thread, as
     * pthread_create does -- unless the spawner holds a harness-only lock:
     * the model creating a pool worker is no edge of the pool's contract. */
    if (!s->current || !s->current->quiet_held) {
        t->spawn_edge = true;
        sched_hb_release(&t->spawn_edge);
    }
    s->strategy->thread_spawned(s, t);
    sched_make_runnable(s, t);
    if (!daemon) s->alive_nondaemon++;
    return t;
}

void sched_fail_oom(sched *s) { sched_end(s, SCHED_MISUSE, "out of memory (thread or fiber stack)"); }

/* The run's bookkeeping at its end, before the last switch to main. */
static void end_run(sched *s, sched_status status) {
    if (s->fp) {
        /* The last step's races count too (por off first: a failure in
         * there ends the run through here again).  Ending the run is
         * dependent with every step: whatever had not run yet never will
         * (a fail-fast scenario went from 59 runs to 2 without this). */
        uint32_t i;
        bool por = s->por;
        for (i = 0; i < s->nthreads; i++)
            if (s->threads[i] != s->current && s->threads[i]->state != TS_FINISHED) {
                sched_fp_all(s);
                break;
            }
        s->por = s->fp = false;
        if (por) sched_por_end(s);
        sched_trace_end(s);
    }
    s->status = status;
    s->reason[0] = '\0';
}

void sched_end(sched *s, sched_status status, const char *fmt, ...) {
    end_run(s, status);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->reason, sizeof s->reason, fmt, ap);
        va_end(ap);
    }
    sched_fiber_switch_final(&s->current->fiber, &s->main);
    abort();
}

/* The last non-daemon thread's exit ends the run from its exit path, where
 * none of its frames is live: its fiber exits (sched_fiber_switch_exit) as a
 * finishing thread's does.  That is how most runs end. */
static SCHED_NORETURN void end_at_exit(sched *s) {
    end_run(s, SCHED_OK);
    sched_fiber_switch_exit(&s->current->fiber, &s->main);
    abort();
}
