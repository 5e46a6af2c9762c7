/* A program as scenario text (docs/scenarios.md), and the units the
 * shrinker switches (gen.h).  A unit switched off takes what depends on it
 * with it: an object its ops and callback, a pool its objects, an event the
 * waits that watch it, a group its members. */
#include <stdio.h>
#include <string.h>

#include "gen.h"

static const char kind_word[GEN_KIND_COUNT][10] = {"work", "wait", "timer", "periodic", "io", "group"};
static const char kind_letter[GEN_KIND_COUNT] = {'W', 'X', 'T', 'R', 'I', 'G'};

static void obj_name(const gen_program *p, int i, char *buf, size_t n) {
    snprintf(buf, n, "%c%d", kind_letter[p->objs[i].kind], i);
}

static void pool_name(int pool, char *buf, size_t n) {
    if (pool == 0) snprintf(buf, n, "default");
    else snprintf(buf, n, "P%d", pool);
}

static bool op_alive(const gen_program *p, const gen_op *op) {
    if (!op->live) return false;
    switch (op->kind) {
    case GEN_OP_SIGNAL:
    case GEN_OP_RESET: return p->events[op->target].live;
    case GEN_OP_RETIRE_WORKERS: return p->pools[op->target].live;
    case GEN_OP_TICK:
    case GEN_OP_RETIRE_IDLE:
    case GEN_OP_SLEEP:
    case GEN_OP_YIELD: return true;
    default: return gen_obj_alive(p, op->target);
    }
}

static void emit_op(const gen_program *p, const gen_op *op, bool shared, scn_text *out) {
    static const char *release_word[3] = {"draining", "cancelling", "untracked"};
    char n[16];
    const char *any = shared ? " => any" : "";
    if (op->kind == GEN_OP_SIGNAL || op->kind == GEN_OP_RESET) {
        scn_text_printf(out, "  %s E%d\n", op->kind == GEN_OP_SIGNAL ? "signal" : "reset", op->target);
        return;
    }
    if (op->kind == GEN_OP_RETIRE_WORKERS) {
        if (op->target == 0) scn_text_printf(out, "  retire_workers\n");
        else scn_text_printf(out, "  retire_workers P%d\n", op->target);
        return;
    }
    if (op->target >= 0 && op->target < p->nobjs) obj_name(p, op->target, n, sizeof n);
    switch (op->kind) {
    case GEN_OP_SUBMIT: scn_text_printf(out, "  submit %s%s\n", n, any); break;
    case GEN_OP_ARM:
        switch (p->objs[op->target].kind) {
        case GEN_WAIT:
            if (op->forever) scn_text_printf(out, "  arm %s%s\n", n, any);
            else scn_text_printf(out, "  arm %s timeout %ums%s\n", n, (unsigned)op->a, any);
            break;
        case GEN_TIMER:
            if (op->b) scn_text_printf(out, "  arm %s after %ums window %ums%s\n", n, (unsigned)op->a, (unsigned)op->b, any);
            else scn_text_printf(out, "  arm %s after %ums%s\n", n, (unsigned)op->a, any);
            break;
        default: /* periodic */
            scn_text_printf(out, "  arm %s", n);
            if (op->a) scn_text_printf(out, " after %ums", (unsigned)op->a);
            if (op->b) scn_text_printf(out, " window %ums", (unsigned)op->b);
            scn_text_printf(out, "%s\n", any);
            break;
        }
        break;
    case GEN_OP_DISARM: scn_text_printf(out, "  disarm %s%s\n", n, any); break;
    case GEN_OP_TRY_CANCEL: scn_text_printf(out, "  try_cancel_pending %s%s\n", n, any); break;
    case GEN_OP_CANCEL_UNTRACKED: scn_text_printf(out, "  cancel_untracked %s%s\n", n, any); break;
    case GEN_OP_CANCEL_PENDING: scn_text_printf(out, "  cancel_pending %s%s\n", n, any); break;
    case GEN_OP_WAIT: scn_text_printf(out, "  wait %s%s\n", n, any); break;
    case GEN_OP_STOP: scn_text_printf(out, "  stop_and_drain %s%s\n", n, any); break;
    case GEN_OP_STOP_CLOSE:
        /* an I/O object has no stop: its run-down drains the open starts */
        scn_text_printf(out, "  %s %s\n  close %s\n", p->objs[op->target].kind == GEN_IO ? "run_down" : "stop_and_drain", n, n);
        break;
    case GEN_OP_IO_COMPLETE: scn_text_printf(out, "  start %s\n  complete %s\n", n, n); break;
    case GEN_OP_IO_CANCEL: scn_text_printf(out, "  start %s\n  io_cancel %s\n", n, n); break;
    case GEN_OP_RUN_DOWN: scn_text_printf(out, "  run_down %s%s\n", n, any); break;
    case GEN_OP_RELEASE_CLOSE:
        scn_text_printf(out, "  release %s %s\n  close %s\n", n, release_word[op->a % 3], n);
        break;
    case GEN_OP_TICK: scn_text_printf(out, "  tick\n"); break;
    case GEN_OP_RETIRE_IDLE: scn_text_printf(out, "  retire_idle\n"); break;
    case GEN_OP_SLEEP: scn_text_printf(out, "  sleep %ums\n", (unsigned)op->a); break;
    default: scn_text_printf(out, "  yield\n"); break;
    }
}

static void emit_pool(const gen_program *p, int i, scn_text *out) {
    const gen_pool *q = &p->pools[i];
    static const char *stall_word[4] = {"", "never", "always", ""};
    scn_text line = {0};
    if (i == 0) scn_text_printf(&line, "pool default");
    else scn_text_printf(&line, "pool P%d private", i);
    if (q->limits_live && q->min) scn_text_printf(&line, " min %u", (unsigned)q->min);
    if (q->limits_live && q->max) scn_text_printf(&line, " max %u", (unsigned)q->max);
    if (q->stall_live && q->stall == 3) scn_text_printf(&line, " stall %u%%", (unsigned)q->stall_percent);
    else if (q->stall_live && q->stall) scn_text_printf(&line, " stall %s", stall_word[q->stall]);
    if (q->delay_live && q->start_delay_ms) scn_text_printf(&line, " start-delay %ums", (unsigned)q->start_delay_ms);
    /* the default pool's line only when it says something */
    if (i != 0 || strlen(line.s) > strlen("pool default")) scn_text_printf(out, "%s\n", line.s);
    scn_text_free(&line);
}

void gen_emit(const gen_program *p, const char *purpose, const char *comments, scn_text *out) {
    int i, j;
    char n[16], pn[16];
    scn_text_printf(out, "# purpose: %s\n", purpose);
    if (comments && *comments) scn_text_printf(out, "%s", comments);
    /* Past the healer's overdue retry (5 s): a pool that severs again while
     * its repair is still queued is repaired only by that retry, not within
     * the period plus window (docs/generate.md, finding F2); the oracles
     * hold a program to the eventual repair. */
    scn_text_printf(out, "settle 6s\n");
    for (i = 0; i < GEN_MAX_POOLS; i++)
        if (p->pools[i].used && p->pools[i].live) emit_pool(p, i, out);
    for (i = 0; i < p->nevents; i++)
        if (p->events[i].live)
            scn_text_printf(out, "event E%d%s%s\n", i, p->events[i].manual ? " manual" : "", p->events[i].set ? " set" : "");
    for (i = 0; i < p->nobjs; i++) {
        const gen_obj *o = &p->objs[i];
        if (!gen_obj_alive(p, i)) continue;
        obj_name(p, i, n, sizeof n);
        scn_text_printf(out, "%s %s", kind_word[o->kind], n);
        if (o->kind == GEN_WAIT) scn_text_printf(out, " event E%d", o->event);
        if (o->kind == GEN_PERIODIC) scn_text_printf(out, " period %ums", (unsigned)o->period_ms);
        if (o->group >= 0) {
            obj_name(p, o->group, pn, sizeof pn);
            scn_text_printf(out, " in %s", pn);
        } else if (o->pool != 0) {
            pool_name(o->pool, pn, sizeof pn);
            scn_text_printf(out, " on %s", pn);
        }
        if (o->kind == GEN_GROUP && o->cancel_callback) scn_text_printf(out, " cancel-callback");
        scn_text_printf(out, "\n");
    }
    for (i = 0; i < p->nfaults; i++) {
        const gen_fault *f = &p->faults[i];
        if (!f->live || (f->pool >= 0 && !p->pools[f->pool].live)) continue;
        if (f->kind == 0) scn_text_printf(out, "fault healer-start nth %u%s\n", (unsigned)f->nth, f->onward ? " onward" : "");
        else scn_text_printf(out, "fault work-create pool P%d nth %u%s\n", f->pool, (unsigned)f->nth, f->onward ? " onward" : "");
    }
    for (i = 0; i < p->nobjs; i++) {
        const gen_obj *o = &p->objs[i];
        bool any = false;
        if (!gen_obj_alive(p, i)) continue;
        for (j = 0; j < o->ncb; j++) any |= o->cb[j].live && op_alive(p, &o->cb[j]);
        if (!any) continue;
        obj_name(p, i, n, sizeof n);
        scn_text_printf(out, "\ncallback %s\n", n);
        for (j = 0; j < o->ncb; j++)
            if (o->cb[j].live && op_alive(p, &o->cb[j])) emit_op(p, &o->cb[j], true, out);
        scn_text_printf(out, "end\n");
    }
    for (i = 0; i < p->nthreads; i++) {
        const gen_thread *th = &p->threads[i];
        bool any = false;
        if (!th->live) continue;
        for (j = 0; j < th->nops; j++) any |= op_alive(p, &th->ops[j]);
        scn_text_printf(out, "\nthread t%d\n", i);
        for (j = 0; j < th->nops; j++) {
            const gen_op *op = &th->ops[j];
            if (!op_alive(p, op)) continue;
            emit_op(p, op, op->target >= 0 && op->target < p->nobjs && op->kind != GEN_OP_SIGNAL &&
                               op->kind != GEN_OP_RESET && op->kind != GEN_OP_RETIRE_WORKERS &&
                               p->objs[op->target].owner < 0, out);
        }
        if (!any) scn_text_printf(out, "  yield\n");
        scn_text_printf(out, "end\n");
    }
}

/* ---- units --------------------------------------------------------------------- */

/* The units in order: threads, their ops, objects, their callback ops,
 * events, pools 1.. (the default pool is never removed), the three knobs of
 * every pool, faults.  ref points at the unit's live flag. */
static bool *unit_ref(gen_program *p, size_t u) {
    int i;
    if (u < p->nthreads) return &p->threads[u].live;
    u -= p->nthreads;
    for (i = 0; i < p->nthreads; i++) {
        if (u < p->threads[i].nops) return &p->threads[i].ops[u].live;
        u -= p->threads[i].nops;
    }
    if (u < p->nobjs) return &p->objs[u].live;
    u -= p->nobjs;
    for (i = 0; i < p->nobjs; i++) {
        if (u < p->objs[i].ncb) return &p->objs[i].cb[u].live;
        u -= p->objs[i].ncb;
    }
    if (u < p->nevents) return &p->events[u].live;
    u -= p->nevents;
    for (i = 1; i < GEN_MAX_POOLS; i++) {
        if (!p->pools[i].used) continue;
        if (u == 0) return &p->pools[i].live;
        u--;
    }
    for (i = 0; i < GEN_MAX_POOLS; i++) {
        if (!p->pools[i].used) continue;
        if (u < 3) return u == 0 ? &p->pools[i].limits_live : u == 1 ? &p->pools[i].stall_live : &p->pools[i].delay_live;
        u -= 3;
    }
    if (u < p->nfaults) return &p->faults[u].live;
    return NULL;
}

size_t gen_units(const gen_program *p) {
    size_t n = p->nthreads + p->nobjs + p->nevents + p->nfaults;
    int i;
    for (i = 0; i < p->nthreads; i++) n += p->threads[i].nops;
    for (i = 0; i < p->nobjs; i++) n += p->objs[i].ncb;
    for (i = 0; i < GEN_MAX_POOLS; i++)
        if (p->pools[i].used) n += i == 0 ? 3u : 4u;
    return n;
}

void gen_unit_set(gen_program *p, size_t unit, bool live) {
    bool *r = unit_ref(p, unit);
    if (r) *r = live;
}

bool gen_unit_live(const gen_program *p, size_t unit) {
    bool *r = unit_ref((gen_program *)p, unit);
    return r && *r;
}
