/* rt_lock and rt_waitq under the scheduler: an owner plus a FIFO of
 * blocked fibers.  Contention blocks the fiber; nothing spins. */
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

_Static_assert(sizeof(sched_lock) <= sizeof(((rt_lock *)0)->word), "sched_lock must fit in rt_lock's words");
_Static_assert(sizeof(sched_waitq) <= sizeof(rt_waitq), "sched_waitq must fit in rt_waitq");

sched_lock *sched_lock_of(sched *s, rt_lock *l) {
    sched_lock *sl = (sched_lock *)(void *)l;
    if (sl->gen != s->gen) {
        sl->owner = sl->head = sl->tail = NULL;
        sl->diagnostic = sl->scoped = false;
        sl->gen = s->gen;
        sl->id = ++s->nlocks;
    }
    return sl;
}

sched_waitq *sched_waitq_of(sched *s, rt_waitq *q) {
    sched_waitq *sq = (sched_waitq *)(void *)q;
    if (sq->gen != s->gen) {
        sq->head = sq->tail = NULL;
        sq->gen = s->gen;
        sq->id = ++s->nqueues;
    }
    return sq;
}

void sched_q_push_back(rt_thread **head, rt_thread **tail, rt_thread *t) {
    t->qnext = NULL;
    t->qprev = *tail;
    if (*tail) (*tail)->qnext = t;
    else *head = t;
    *tail = t;
}

static void q_push_front(rt_thread **head, rt_thread **tail, rt_thread *t) {
    t->qprev = NULL;
    t->qnext = *head;
    if (*head) (*head)->qprev = t;
    else *tail = t;
    *head = t;
}

void sched_q_remove(rt_thread **head, rt_thread **tail, rt_thread *t) {
    if (t->qprev) t->qprev->qnext = t->qnext;
    else *head = t->qnext;
    if (t->qnext) t->qnext->qprev = t->qprev;
    else *tail = t->qprev;
    t->qprev = t->qnext = NULL;
}

/* The owner, also told to every thread queued on the lock (their
 * blocked_thread): the blocked report must not read the lock itself. */
static void set_owner(sched_lock *sl, rt_thread *owner) {
    rt_thread *w;
    sl->owner = owner;
    for (w = sl->head; w; w = w->qnext) w->blocked_thread = owner;
}

static bool atomic_sections(sched_lock *sl) {
    return (((rt_lock *)(void *)sl)->race_kind & RT_LOCK_ATOMIC_SECTIONS) != 0;
}

/* Takes the lock for the current thread, blocking while another owns it.
 * A release wakes one waiter, which must still win the lock against threads
 * that arrive meanwhile (barging is a real interleaving); a waiter that
 * loses goes back to the head of the queue so it is not starved. */
void sched_lock_take(sched *s, sched_lock *sl, sched_take kind) {
    rt_thread *cur = s->current;
    bool first = true, diagnostic = kind == SCHED_TAKE_DIAGNOSTIC;
    /* a scoped taker that finds the lock held (or queues on it) writes it */
    if (!diagnostic) sched_touch(s, sl, kind == SCHED_TAKE_ORDINARY || sl->owner || sl->head);
    while (sl->owner) {
        if (first) sched_q_push_back(&sl->head, &sl->tail, cur);
        else q_push_front(&sl->head, &sl->tail, cur);
        first = false;
        cur->blocked_id = sl->id;
        cur->blocked_thread = sl->owner;
        sched_make_blocked(s, cur, TS_LOCK);
        sched_reschedule(s);
        if (!diagnostic) sched_touch(s, sl, true); /* the retry is a step of its own */
    }
    set_owner(sl, cur);
    sl->diagnostic = diagnostic;
    sl->scoped = kind == SCHED_TAKE_SCOPED;
    if (sl->scoped) cur->scoped_lock = sl;
    if (atomic_sections(sl)) cur->atomic_held++;
}

void sched_lock_seen(sched *s, rt_thread *t) {
    sched_lock *sl = t->scoped_lock;
    if (!sl || !sl->scoped) return;
    sched_touch(s, sl, true);
    sl->scoped = false;
}

void sched_lock_give(sched *s, sched_lock *sl) {
    rt_thread *t = sl->head;
    /* a scoped section nobody saw, and nobody queued on: a read */
    if (!sl->diagnostic) sched_touch(s, sl, !sl->scoped || t);
    if (sl->owner->scoped_lock == sl) sl->owner->scoped_lock = NULL;
    sl->diagnostic = sl->scoped = false;
    if (atomic_sections(sl)) sl->owner->atomic_held--;
    set_owner(sl, NULL);
    if (t) {
        sched_q_remove(&sl->head, &sl->tail, t);
        sched_make_runnable(s, t);
    }
}
