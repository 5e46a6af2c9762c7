/* Expressions (scn_run_internal.h): the value of a term -- a number, a heal
 * entry's field, a trace count, an object's callbacks, a label's time, a
 * read-out of the pool -- and whether a comparison holds.  What `assert`,
 * `expect` and the expression form of `require` evaluate. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "scn_run_internal.h"

static uint64_t term_value(run_state *run, const scn_term *t, bool *ok) {
    tph_heal_entry_info info;
    switch (t->kind) {
    case SCN_TERM_NUMBER: return t->number;
    case SCN_TERM_FIELD: {
        bool exists = (t->pool == SCN_DEFAULT_POOL || run->pools[t->pool]) &&
                      tph_heal_entry_get(run->keys[t->pool], &info);
        if (!exists) memset(&info, 0, sizeof info);
        switch (t->field) {
        case SCN_FIELD_EXISTS: return exists;
        case SCN_FIELD_OBJECTS: return info.objects;
        case SCN_FIELD_LAST_CANCELLED: return info.last_cancelled;
        case SCN_FIELD_LAST_STARTED: return info.last_started;
        case SCN_FIELD_LAST_SUBMITTED: return info.last_submitted;
        case SCN_FIELD_OUTSTANDING: return info.outstanding;
        case SCN_FIELD_OVERDUE_EPISODES: return info.overdue_episodes;
        case SCN_FIELD_REPAIRS_RUN: return info.repairs_run;
        case SCN_FIELD_UNHEALED: return info.unhealed;
        default: *ok = false; return 0;
        }
    }
    case SCN_TERM_COUNT: {
        uint64_t v;
        rt_lock_acquire(&run->lock);
        rt_access(&run->counts[count_slot(run, t->event, t->pool)], RT_READ); /* written in diagnostic sections (scn_hook.c) */
        v = run->counts[count_slot(run, t->event, t->pool)];
        rt_lock_release(&run->lock);
        return v;
    }
    case SCN_TERM_CALLS: {
        uint64_t v;
        rt_lock_acquire(&run->lock);
        rt_access(&run->objs[t->obj], RT_READ); /* written in diagnostic sections (scn_exec_callback) */
        v = run->objs[t->obj].calls;
        rt_lock_release(&run->lock);
        return v;
    }
    case SCN_TERM_OVERLAP: {
        uint64_t v;
        rt_lock_acquire(&run->lock);
        rt_access(&run->objs[t->obj], RT_READ);
        v = run->objs[t->obj].max_running;
        rt_lock_release(&run->lock);
        return v;
    }
    case SCN_TERM_IO_OPEN: {
        /* Read without the run's lock: the query races the object's own
         * starts, cancels and completions, which is what it is for.  A
         * closed io reads 0 (its memory is gone). */
        const obj_state *st = &run->objs[t->obj];
        return st->created && !st->dead ? tph_io_outstanding((tph_io *)st->h) : 0;
    }
    case SCN_TERM_BLOCKED: return run->label_time[t->label];
    case SCN_TERM_SEVERED:
        return scn_pool_severed(scn_run_pool_native(run, t->pool));
    case SCN_TERM_ENTRIES: return tph_heal_entry_count();
    case SCN_TERM_HEALER: return tph_heal_healer_running();
    case SCN_TERM_NOW: return rt_now();
    }
    *ok = false;
    return 0;
}

bool scn_expr_eval(run_state *run, const scn_expr *e, uint64_t *l, uint64_t *r) {
    bool ok = true;
    *l = term_value(run, &e->lhs, &ok);
    *r = term_value(run, &e->rhs, &ok);
    switch (e->cmp) {
    case SCN_EQ: return *l == *r;
    case SCN_NE: return *l != *r;
    case SCN_LT: return *l < *r;
    case SCN_LE: return *l <= *r;
    case SCN_GT: return *l > *r;
    case SCN_GE: return *l >= *r;
    }
    return false;
}

/* Terms whose value is a virtual time or duration (100 ns units). */
static bool term_is_time(const scn_term *t) {
    if (t->kind == SCN_TERM_BLOCKED || t->kind == SCN_TERM_NOW) return true;
    return t->kind == SCN_TERM_FIELD && (t->field == SCN_FIELD_LAST_CANCELLED || t->field == SCN_FIELD_LAST_STARTED ||
                                         t->field == SCN_FIELD_LAST_SUBMITTED);
}

/* A comparison with a time on either side prints both sides in ms/us (the
 * number beside a time was written with a unit, `>= 2ms`): the raw 100 ns
 * units ("left 860, right 20000") were the report's least readable part. */
void scn_expr_check(run_state *run, const scn_expr *e, scn_failure_kind kind, const char *where) {
    uint64_t l, r;
    char lt[32], rt[32];
    if (scn_expr_eval(run, e, &l, &r)) return;
    if (term_is_time(&e->lhs) || term_is_time(&e->rhs)) {
        scn_duration(lt, sizeof lt, l);
        scn_duration(rt, sizeof rt, r);
    } else {
        snprintf(lt, sizeof lt, "%llu", (unsigned long long)l);
        snprintf(rt, sizeof rt, "%llu", (unsigned long long)r);
    }
    scn_run_fail(run, kind, e->line, -1, "line %d: %s `%s` failed (left %s, right %s)", e->line, where, e->text, lt, rt);
}
