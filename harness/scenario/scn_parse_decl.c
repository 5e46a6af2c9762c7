/* The scenario parser's declarations: `pool NAME private ...` (and `pool
 * default`), and the objects -- `event`, `work`, `wait`, `timer`,
 * `periodic`, `io`, `group` -- with their placement and options. */
#include <stdint.h>
#include <string.h>

#include "scn_parse_internal.h"

static bool parse_stall(scn_parser *p, scn_pool *pl) {
    const scn_tok *t = NULL;
    if (!scn_take_word(p, "a stall setting (never, always or N%)", &t)) return false;
    if (kw_eq(t->text, "never")) pl->stall = SCN_STALL_NEVER;
    else if (kw_eq(t->text, "always")) pl->stall = SCN_STALL_ALWAYS;
    else {
        size_t n = strlen(t->text);
        uint64_t v;
        if (n < 2 || t->text[n - 1] != '%' || !scn_parse_uint(t->text, n - 1, &v) || v > 100)
            return scn_error_tok(p, p->pos - 1,
                                 "bad stall setting '%s' (never, always or 0%%..100%%)", t->text);
        pl->stall = SCN_STALL_PERCENT;
        pl->stall_percent = (uint32_t)v;
    }
    return true;
}

bool scn_parse_pool(scn_parser *p) {
    scn_scenario *s = p->s;
    scn_pool *pl;
    const scn_tok *name;
    if (peek_kw(p, "default")) {
        p->pos++;
        pl = &s->pools[SCN_DEFAULT_POOL];
        if (pl->line) return scn_error_tok(p, p->pos - 1, "duplicate declaration of the default pool");
        pl->line = p->ln->line;
        while (!at_end(p)) {
            if (accept_kw(p, "stall")) {
                if (!parse_stall(p, pl)) return false;
            } else if (accept_kw(p, "start_delay")) {
                if (!scn_take_duration(p, "start-delay", &pl->start_delay)) return false;
            } else if (peek_kw(p, "min") || peek_kw(p, "max")) {
                return scn_error_tok(p, p->pos, "the default pool has no thread limits to set");
            } else {
                return scn_error_tok(p, p->pos, "unknown pool option '%s' (stall, start-delay)", peek(p)->text);
            }
        }
        return true;
    }
    if (!scn_take_new_name(p, "pool", &name)) return false;
    if (s->npools >= SCN_MAX_POOLS) return scn_error_tok(p, p->pos - 1, "too many pools (at most %d)", SCN_MAX_POOLS);
    pl = &s->pools[s->npools];
    memset(pl, 0, sizeof *pl);
    scn_copy_name(pl->name, name->text);
    pl->line = p->ln->line;
    if (!accept_kw(p, "private")) {
        if (at_end(p)) return scn_error_tok(p, p->pos, "missing 'private' (pool NAME private ...)");
        return scn_error_tok(p, p->pos, "expected 'private', found '%s'", peek(p)->text);
    }
    while (!at_end(p)) {
        uint64_t v;
        if (accept_kw(p, "min")) {
            if (!scn_take_number(p, "min", 512, &v)) return false;
            pl->has_min = true;
            pl->min = (uint32_t)v;
        } else if (accept_kw(p, "max")) {
            if (!scn_take_number(p, "max", 512, &v)) return false;
            if (v == 0) return scn_error_tok(p, p->pos - 1, "max must be at least 1");
            pl->has_max = true;
            pl->max = (uint32_t)v;
        } else if (accept_kw(p, "stall")) {
            if (!parse_stall(p, pl)) return false;
        } else if (accept_kw(p, "start_delay")) {
            if (!scn_take_duration(p, "start-delay", &pl->start_delay)) return false;
        } else {
            return scn_error_tok(p, p->pos, "unknown pool option '%s' (min, max, stall, start-delay)", peek(p)->text);
        }
    }
    if (pl->has_min && pl->has_max && pl->min > pl->max)
        return scn_error_at(p, p->ln->line, p->ln->tok[0].col, "pool %s: min %u is above max %u",
                            pl->name, pl->min, pl->max);
    s->npools++;
    return true;
}

static bool new_obj(scn_parser *p, scn_obj_kind kind, scn_obj **out) {
    scn_scenario *s = p->s;
    const scn_tok *name;
    scn_obj *o = NULL;
    if (!scn_take_new_name(p, scn_obj_kind_name(kind), &name)) return false;
    if (s->nobjs >= SCN_MAX_OBJS)
        return scn_error_tok(p, p->pos - 1, "too many objects (at most %d)", SCN_MAX_OBJS);
    o = &s->objs[s->nobjs++];
    memset(o, 0, sizeof *o);
    scn_copy_name(o->name, name->text);
    o->kind = kind;
    o->pool = SCN_DEFAULT_POOL;
    o->group = -1;
    o->event = -1;
    o->callback = -1;
    o->line = p->ln->line;
    *out = o;
    return true;
}

/* `on POOL` or `in GROUP`: where an object's callbacks run. */
static bool parse_placement(scn_parser *p, scn_obj *o, bool *placed) {
    if (accept_kw(p, "on")) {
        if (*placed) return scn_error_tok(p, p->pos - 1, "%s is already placed", o->name);
        if (!scn_take_pool(p, &o->pool)) return false;
        *placed = true;
        return true;
    }
    if (accept_kw(p, "in")) {
        int g;
        if (*placed) return scn_error_tok(p, p->pos - 1, "%s is already placed", o->name);
        if (o->kind == SCN_OBJ_GROUP) return scn_error_tok(p, p->pos - 1, "a group cannot be in a group");
        if (!scn_take_obj(p, "a group name", &g)) return false;
        if (p->s->objs[g].kind != SCN_OBJ_GROUP)
            return scn_error_tok(p, p->pos - 1, "'%s' is a %s, not a group", p->s->objs[g].name,
                                 scn_obj_kind_name(p->s->objs[g].kind));
        o->group = g;
        o->pool = p->s->objs[g].pool;
        *placed = true;
        return true;
    }
    return false;
}

bool scn_parse_object(scn_parser *p, scn_obj_kind kind) {
    scn_obj *o = NULL;
    bool placed = false;
    if (!new_obj(p, kind, &o)) return false;
    while (!at_end(p)) {
        if (kind != SCN_OBJ_EVENT && (peek_kw(p, "on") || peek_kw(p, "in"))) {
            if (!parse_placement(p, o, &placed)) return false;
        } else if (kind == SCN_OBJ_EVENT && accept_kw(p, "manual")) {
            o->manual_reset = true;
        } else if (kind == SCN_OBJ_EVENT && accept_kw(p, "set")) {
            o->initially_set = true;
        } else if (kind == SCN_OBJ_WAIT && accept_kw(p, "event")) {
            int e;
            if (!scn_take_obj(p, "an event name", &e)) return false;
            if (p->s->objs[e].kind != SCN_OBJ_EVENT)
                return scn_error_tok(p, p->pos - 1, "'%s' is a %s, not an event", p->s->objs[e].name,
                                     scn_obj_kind_name(p->s->objs[e].kind));
            o->event = e;
        } else if (kind == SCN_OBJ_PERIODIC && accept_kw(p, "period")) {
            if (!scn_take_duration(p, "period", &o->period)) return false;
            if (o->period < SCN_MS) return scn_error_tok(p, p->pos - 1, "period must be at least 1ms");
        } else if (kind == SCN_OBJ_GROUP && accept_kw(p, "cancel_callback")) {
            o->cancel_callback = true;
        } else {
            return scn_error_tok(p, p->pos, "unknown %s option '%s'", scn_obj_kind_name(kind),
                                 peek(p)->text);
        }
    }
    if (kind == SCN_OBJ_WAIT && o->event < 0)
        return scn_error_tok(p, p->pos, "wait %s needs `event NAME`", o->name);
    if (kind == SCN_OBJ_PERIODIC && o->period == 0)
        return scn_error_tok(p, p->pos, "periodic %s needs `period DURATION`", o->name);
    return true;
}
