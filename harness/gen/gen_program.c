/* The draw of one program and its legality rules (gen.h).
 *
 * Legal = within the library's documented contract, so that every failure
 * is a defect of the library or of the harness:
 *   - an object a thread closes (its owner) is used by that thread only, and
 *     not after the close; an object no thread closes is shared by every
 *     thread and closed by the runner's teardown, after the threads end;
 *   - a group's members belong to the group's owner and die with its
 *     release; the release and the group's close are one unit;
 *   - every I/O start is followed, on the same thread, by its completion or
 *     its cancellation (an open start blocks a run-down and a close for
 *     good: io.h's promise);
 *   - an owner drains before it closes (stop_and_drain, then close), so the
 *     close owes no drain (the fail-fast build would end the process);
 *   - a callback never waits for, stops or closes anything (no wait on a
 *     callback from inside it): it sleeps, signals an event, or -- a timer --
 *     re-arms itself, which a stop refuses (EBUSY) and so ends the chain.
 * Results are pinned (`=> ok`, the default) where the order is the
 * program's own (an owner's sequential ops); an op on a shared object or
 * inside a callback may meet a concurrent stop and says `=> any`. */
#include <string.h>

#include "gen.h"
#include "pcg32.h"

static uint32_t pick(pcg32 *r, uint32_t n) { return pcg32_bounded(r, n); }
static bool chance(pcg32 *r, uint32_t one_in) { return pcg32_bounded(r, one_in) == 0; }

/* Draws from a weight table: the index of the chosen row. */
static uint32_t weighted(pcg32 *r, const uint8_t *w, uint32_t n) {
    uint32_t total = 0, i, x;
    for (i = 0; i < n; i++) total += w[i];
    x = pick(r, total);
    for (i = 0; i < n; i++) {
        if (x < w[i]) return i;
        x -= w[i];
    }
    return n - 1;
}

static void draw_pool(pcg32 *r, gen_pool *p, bool is_default) {
    p->used = p->live = true;
    p->limits_live = p->stall_live = p->delay_live = true;
    if (!is_default && chance(r, 2)) {
        p->max = (uint8_t)(1 + pick(r, 3));
        if (chance(r, 4)) p->min = (uint8_t)(1 + pick(r, p->max));
    }
    /* Unset is the sim's default: the default pool severs always, a private
     * pool never (as measured). */
    {
        static const uint8_t w[4] = {5, 1, 1, 1};
        p->stall = (uint8_t)weighted(r, w, 4);
        if (p->stall == 3) p->stall_percent = (uint8_t)(25 + 25 * pick(r, 3));
    }
    /* A worker starting 1 ms late lets a cancellation land on a cold pool:
     * without it a sever needs a window a few scheduling points wide. */
    if (chance(r, 2)) p->start_delay_ms = 1;
}

static bool has_callbacks(uint8_t kind) { return kind != GEN_GROUP; }

static void draw_callback(pcg32 *r, gen_program *p, gen_obj *o) {
    uint8_t n, i;
    if (!has_callbacks(o->kind) || !chance(r, 2)) return;
    n = (uint8_t)(1 + pick(r, GEN_MAX_CB_OPS));
    for (i = 0; i < n; i++) {
        gen_op *op = &o->cb[o->ncb];
        uint32_t c = pick(r, o->kind == GEN_TIMER ? 3u : 2u);
        memset(op, 0, sizeof *op);
        op->live = true;
        if (c == 0) {
            op->kind = GEN_OP_SLEEP;
            op->a = (uint16_t)(1 + pick(r, 5));
        } else if (c == 1) {
            op->kind = GEN_OP_SIGNAL;
            op->target = (int8_t)pick(r, p->nevents);
        } else {
            op->kind = GEN_OP_ARM; /* the timer re-arms itself */
            op->target = (int8_t)(o - p->objs);
            op->a = (uint16_t)(2 + pick(r, 19));
        }
        o->ncb++;
    }
}

static void draw_objects(pcg32 *r, gen_program *p, uint8_t npools) {
    static const uint8_t w[GEN_KIND_COUNT] = {3, 3, 2, 1, 1, 1};
    uint8_t n = (uint8_t)(2 + pick(r, 7)), i;
    for (i = 0; i < n; i++) {
        gen_obj *o = &p->objs[p->nobjs];
        int g = -1, j;
        memset(o, 0, sizeof *o);
        o->live = true;
        o->group = -1;
        o->kind = (uint8_t)weighted(r, w, GEN_KIND_COUNT);
        o->pool = (int8_t)pick(r, npools);
        o->owner = chance(r, 2) ? (int8_t)-1 : (int8_t)pick(r, p->nthreads);
        /* Work, waits and timers may join a group declared before them. */
        if (o->kind == GEN_WORK || o->kind == GEN_WAIT || o->kind == GEN_TIMER)
            for (j = 0; j < p->nobjs; j++)
                if (p->objs[j].kind == GEN_GROUP && chance(r, 2)) {
                    g = j;
                    break;
                }
        if (g >= 0) {
            o->group = (int8_t)g;
            o->pool = p->objs[g].pool;
            o->owner = p->objs[g].owner;
        }
        if (o->kind == GEN_WAIT) o->event = (int8_t)pick(r, p->nevents);
        if (o->kind == GEN_PERIODIC) o->period_ms = (uint16_t)(3 + pick(r, 10));
        if (o->kind == GEN_GROUP) o->cancel_callback = chance(r, 2);
        draw_callback(r, p, o);
        p->nobjs++;
    }
}

/* Whether thread t may use object i now (closed: the objects t has closed
 * or whose group t has released). */
static bool usable(const gen_program *p, int t, int i, const bool *closed) {
    const gen_obj *o = &p->objs[i];
    if (closed[i] || (o->group >= 0 && closed[o->group])) return false;
    return o->owner < 0 || o->owner == t;
}

/* Whether a pool never severs: a private pool whose stall is unset or
 * `never`.  An untracked cancellation owes nothing by contract, so on a
 * pool that may sever it may leave callbacks queued for good, and a drain
 * of them hangs (programs 2643 and 2927 of seed 1): legal only here. */
static bool never_severs(const gen_program *p, int pool) {
    const gen_pool *q = &p->pools[pool];
    return pool != 0 && (!q->stall_live || q->stall <= 1);
}

/* An op on object i, of a kind it has. */
static void draw_object_op(pcg32 *r, const gen_program *p, const gen_obj *o, gen_op *op) {
    switch (o->kind) {
    case GEN_WORK: {
        static const uint8_t w[4] = {5, 1, 1, 1};
        static const uint8_t k[4] = {GEN_OP_SUBMIT, GEN_OP_CANCEL_PENDING, GEN_OP_WAIT, GEN_OP_STOP};
        op->kind = k[weighted(r, w, 4)];
        break;
    }
    case GEN_WAIT: {
        static const uint8_t w[6] = {5, 4, 1, 1, 1, 1};
        static const uint8_t k[6] = {GEN_OP_ARM, GEN_OP_TRY_CANCEL, GEN_OP_DISARM, GEN_OP_WAIT, GEN_OP_STOP,
                                     GEN_OP_CANCEL_UNTRACKED};
        op->kind = k[weighted(r, w, 6)];
        /* the untracked cancel is rare: it opts the run out of the
         * severed-pool oracle (a sever it causes is owed nothing) */
        if (op->kind == GEN_OP_CANCEL_UNTRACKED && (!chance(r, 4) || !never_severs(p, o->pool)))
            op->kind = GEN_OP_TRY_CANCEL;
        if (op->kind == GEN_OP_ARM) {
            if (chance(r, 3)) op->a = (uint16_t)(1 + pick(r, 20));
            else op->forever = true;
        }
        break;
    }
    case GEN_TIMER: {
        static const uint8_t w[5] = {5, 1, 1, 1, 1};
        static const uint8_t k[5] = {GEN_OP_ARM, GEN_OP_DISARM, GEN_OP_CANCEL_PENDING, GEN_OP_WAIT, GEN_OP_STOP};
        op->kind = k[weighted(r, w, 5)];
        if (op->kind == GEN_OP_ARM) {
            op->a = (uint16_t)(1 + pick(r, 20));
            if (chance(r, 3)) op->b = (uint16_t)(1 + pick(r, 5));
        }
        break;
    }
    case GEN_PERIODIC: {
        /* No plain drain (`wait R`) of a running periodic timer: its
         * callbacks may outlast its period, and a drain then waits for a
         * queue that is never empty (a livelock of the program, not of the
         * library); the stop disarms first. */
        static const uint8_t w[3] = {4, 1, 1};
        static const uint8_t k[3] = {GEN_OP_ARM, GEN_OP_DISARM, GEN_OP_STOP};
        op->kind = k[weighted(r, w, 3)];
        if (op->kind == GEN_OP_ARM) {
            if (chance(r, 2)) op->a = (uint16_t)(1 + pick(r, 10));
            if (chance(r, 3)) op->b = (uint16_t)(1 + pick(r, 5));
        }
        break;
    }
    case GEN_IO: {
        static const uint8_t w[3] = {3, 2, 1};
        static const uint8_t k[3] = {GEN_OP_IO_COMPLETE, GEN_OP_IO_CANCEL, GEN_OP_RUN_DOWN};
        op->kind = k[weighted(r, w, 3)];
        break;
    }
    default: op->kind = GEN_OP_YIELD; break;
    }
}

/* The owner's last word on object i: a group is released (a mode drawn)
 * and closed, anything else stopped and closed. */
static void closing_op(pcg32 *r, const gen_program *p, int i, gen_op *op) {
    memset(op, 0, sizeof *op);
    op->live = true;
    op->target = (int8_t)i;
    if (p->objs[i].kind == GEN_GROUP) {
        static const uint8_t w[3] = {3, 4, 1};
        op->kind = GEN_OP_RELEASE_CLOSE;
        op->a = (uint16_t)weighted(r, w, 3); /* 0 draining, 1 cancelling, 2 untracked */
        if (op->a == 2 && !never_severs(p, p->objs[i].pool)) op->a = 1;
    } else {
        op->kind = GEN_OP_STOP_CLOSE;
    }
}

static void draw_thread(pcg32 *r, gen_program *p, int t, uint8_t npools) {
    gen_thread *th = &p->threads[t];
    bool closed[GEN_MAX_OBJS] = {false};
    uint8_t want = (uint8_t)(2 + pick(r, 8)), owned = 0, i;
    th->live = true;
    for (i = 0; i < p->nobjs; i++)
        if (p->objs[i].owner == t && p->objs[i].group < 0) owned++;
    /* room for the closes at the end */
    if (want + owned > GEN_MAX_OPS) want = (uint8_t)(GEN_MAX_OPS - owned);
    while (th->nops < want) {
        gen_op *op = &th->ops[th->nops];
        static const uint8_t w[6] = {8, 3, 1, 1, 2, 1};
        uint32_t c = weighted(r, w, 6);
        memset(op, 0, sizeof *op);
        op->live = true;
        if (c == 0) {
            int cand[GEN_MAX_OBJS], n = 0, j;
            for (j = 0; j < p->nobjs; j++)
                if (p->objs[j].kind != GEN_GROUP && usable(p, t, j, closed)) cand[n++] = j;
            if (n == 0) continue;
            op->target = (int8_t)cand[pick(r, (uint32_t)n)];
            draw_object_op(r, p, &p->objs[op->target], op);
            /* an owner may close early: nothing of it after this point */
            if (p->objs[op->target].owner == t && p->objs[op->target].group < 0 && chance(r, 8)) {
                closing_op(r, p, op->target, op);
                closed[op->target] = true;
            }
        } else if (c == 1) {
            op->kind = chance(r, 4) ? GEN_OP_RESET : GEN_OP_SIGNAL;
            op->target = (int8_t)pick(r, p->nevents);
        } else if (c == 2) {
            op->kind = chance(r, 2) ? GEN_OP_TICK : GEN_OP_RETIRE_IDLE;
        } else if (c == 3) {
            op->kind = GEN_OP_RETIRE_WORKERS;
            op->target = (int8_t)pick(r, npools);
        } else if (c == 4) {
            op->kind = GEN_OP_SLEEP;
            op->a = (uint16_t)(1 + pick(r, 20));
        } else {
            op->kind = GEN_OP_YIELD;
        }
        th->nops++;
    }
    /* The owner closes what is left, groups last (their members first). */
    for (i = 0; i < p->nobjs; i++)
        if (p->objs[i].owner == t && p->objs[i].group < 0 && p->objs[i].kind != GEN_GROUP && !closed[i])
            closing_op(r, p, i, &th->ops[th->nops++]);
    for (i = 0; i < p->nobjs; i++)
        if (p->objs[i].owner == t && p->objs[i].kind == GEN_GROUP && !closed[i])
            closing_op(r, p, i, &th->ops[th->nops++]);
}

static void draw_faults(pcg32 *r, gen_program *p, uint8_t npools) {
    if (chance(r, 4)) {
        gen_fault *f = &p->faults[p->nfaults++];
        f->live = true;
        f->kind = 0; /* healer-start */
        f->nth = (uint8_t)(1 + pick(r, 2));
        f->onward = chance(r, 4);
        f->pool = -1;
    }
    /* work-create on a private pool none of whose objects is work: the only
     * work created there is the registry's repair object. */
    if (npools > 1 && chance(r, 6)) {
        int pool = (int)(1 + pick(r, (uint32_t)(npools - 1))), j;
        bool work_there = false;
        for (j = 0; j < p->nobjs; j++)
            if (p->objs[j].pool == pool && p->objs[j].kind == GEN_WORK) work_there = true;
        if (!work_there) {
            gen_fault *f = &p->faults[p->nfaults++];
            f->live = true;
            f->kind = 1;
            f->pool = (int8_t)pool;
            f->nth = 1;
            /* never onward: a pool whose repair object can never be made is
             * untracked by contract (cancel-untracked), and a drain of a
             * callback queued on it when it severs waits for good (program
             * 2173 of seed 1: the runner's teardown deadlocked) */
            f->onward = false;
        }
    }
}

void gen_program_draw(gen_program *p, uint64_t seed, uint64_t index) {
    pcg32 r;
    uint8_t npools, i;
    memset(p, 0, sizeof *p);
    p->seed = seed;
    p->index = index;
    /* One stream per program: the index selects pcg32's stream, the master
     * seed its state, so programs of one seed are independent draws. */
    pcg32_seed(&r, seed, index);
    draw_pool(&r, &p->pools[0], true);
    npools = (uint8_t)(1 + pick(&r, GEN_MAX_POOLS));
    for (i = 1; i < npools; i++) draw_pool(&r, &p->pools[i], false);
    p->nevents = (uint8_t)(1 + pick(&r, GEN_MAX_EVENTS));
    for (i = 0; i < p->nevents; i++) {
        p->events[i].live = true;
        p->events[i].manual = chance(&r, 2);
        p->events[i].set = chance(&r, 4);
    }
    p->nthreads = (uint8_t)(2 + pick(&r, GEN_MAX_THREADS - 1));
    draw_objects(&r, p, npools);
    for (i = 0; i < p->nthreads; i++) draw_thread(&r, p, i, npools);
    draw_faults(&r, p, npools);
}

/* ---- legality ------------------------------------------------------------- */

bool gen_obj_alive(const gen_program *p, int i) {
    const gen_obj *o;
    if (i < 0 || i >= p->nobjs) return false;
    o = &p->objs[i];
    if (!o->live || !p->pools[o->pool].live) return false;
    if (o->kind == GEN_WAIT && !p->events[o->event].live) return false;
    if (o->group >= 0 && !gen_obj_alive(p, o->group)) return false;
    return true;
}

static bool op_on_object(uint8_t k) {
    return k != GEN_OP_SIGNAL && k != GEN_OP_RESET && k != GEN_OP_TICK && k != GEN_OP_RETIRE_IDLE &&
           k != GEN_OP_RETIRE_WORKERS && k != GEN_OP_SLEEP && k != GEN_OP_YIELD;
}

const char *gen_program_illegal(const gen_program *p) {
    int t, i, j;
    if (p->nthreads > GEN_MAX_THREADS || p->nobjs > GEN_MAX_OBJS || p->nevents > GEN_MAX_EVENTS) return "too big";
    for (i = 0; i < p->nobjs; i++) {
        const gen_obj *o = &p->objs[i];
        if (o->group >= 0 && (o->group >= i || p->objs[o->group].kind != GEN_GROUP)) return "a member before its group";
        if (o->group >= 0 && o->owner != p->objs[o->group].owner) return "a member owned apart from its group";
        for (j = 0; j < o->ncb; j++) {
            const gen_op *c = &o->cb[j];
            if (c->kind != GEN_OP_SLEEP && c->kind != GEN_OP_SIGNAL && !(c->kind == GEN_OP_ARM && o->kind == GEN_TIMER && c->target == i))
                return "a callback that waits, stops, closes or arms another object";
        }
    }
    for (t = 0; t < p->nthreads; t++) {
        bool closed[GEN_MAX_OBJS] = {false};
        const gen_thread *th = &p->threads[t];
        for (j = 0; j < th->nops; j++) {
            const gen_op *op = &th->ops[j];
            const gen_obj *o;
            if (!op_on_object(op->kind)) continue;
            if (op->target < 0 || op->target >= p->nobjs) return "an op on no object";
            o = &p->objs[op->target];
            if (o->owner >= 0 && o->owner != t) return "an op on an object another thread closes";
            if (closed[op->target] || (o->group >= 0 && closed[o->group])) return "an op after the close";
            if (op->kind == GEN_OP_WAIT && o->kind == GEN_PERIODIC) return "a drain of a running periodic timer";
            if ((op->kind == GEN_OP_CANCEL_UNTRACKED || (op->kind == GEN_OP_RELEASE_CLOSE && op->a == 2)) &&
                !never_severs(p, o->pool))
                return "an untracked cancellation on a pool that may sever";
            if ((op->kind == GEN_OP_RELEASE_CLOSE) != (o->kind == GEN_GROUP)) return "a release of no group";
            if ((op->kind == GEN_OP_STOP_CLOSE || op->kind == GEN_OP_RELEASE_CLOSE) && o->owner != t)
                return "a close by another thread than the owner";
            if (op->kind == GEN_OP_STOP_CLOSE && o->group >= 0) return "a member closed apart from its group";
            if (op->kind == GEN_OP_STOP_CLOSE || op->kind == GEN_OP_RELEASE_CLOSE) closed[op->target] = true;
        }
    }
    return NULL;
}
