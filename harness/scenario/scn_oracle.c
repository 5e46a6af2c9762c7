/* The oracles every run checks (scn_run_internal.h), beyond the scenario's
 * own `expect`s: at quiescence (the scenario's threads are done and the run
 * has settled), every cancelled pool repaired and no repair outstanding;
 * after teardown, the scenario's orders, no registry entry left behind, and
 * every object's callbacks matching what the pool ran and what was armed. */
#include <stdint.h>
#include <stdio.h>

#include "scn_run_internal.h"

/* The one unhealed state the library leaves behind by design.  When the healer
 * cannot start, the cancelling thread submits the repair itself; if that
 * repair starts in the cancellation's own 15.625 ms clock tick the stamps are
 * equal, which reads as unhealed (a dispatch in the same tick might have come
 * first), and with no healer nothing looks again until the next cancellation
 * retries the start (docs/architecture.md, "same-tick inline repair").  The
 * pool *was* repaired: the trace shows the repair starting after the
 * cancellation.  Anything else unhealed is a failure. */
static bool same_tick_inline_repair(run_state *run, int p, const tph_heal_entry_info *e) {
    return p >= 0 && p < 64 && !tph_heal_healer_running() && e->last_started == e->last_cancelled &&
           e->outstanding == 0 && run->last_start_at[p] > run->last_cancel_at[p];
}

void scn_oracle_at_quiescence(run_state *run) {
    const scn_scenario *s = run->s;
    tph_heal_entry_info info[64];
    size_t n, i;
    for (i = 0; i < s->nexpects; i++) scn_expr_check(run, &s->expects[i], SCN_FAILURE_EXPECT_FAILED, "expect");
    {
        scn_reach_probe probe = scn_hook_reach_probe(run);
        scn_reach_at_quiescence(&run->reach, &probe);
    }
    n = tph_heal_entries(info, 64);
    if (n > 64) n = 64;
    for (i = 0; i < n; i++) {
        int p = scn_run_pool_index(run, info[i].key);
        char buf[96];
        const char *name = scn_pool_phrase(run, info[i].key, buf, sizeof buf);
        if (info[i].unhealed && same_tick_inline_repair(run, p, &info[i])) {
            run->tolerated_unhealed |= 1ull << p;
            continue;
        }
        if (info[i].unhealed && !(p >= 0 && (s->allow_unhealed >> p) & 1))
            scn_run_fail(run, SCN_FAILURE_ORACLE_UNHEALED, 0, p,
                         "oracle: %s was cancelled and no repair started after its last cancellation", name);
        if (info[i].outstanding != 0 && s->outcome == SCN_OUTCOME_NORMAL)
            scn_run_fail(run, SCN_FAILURE_ORACLE_OUTSTANDING, 0, p, "oracle: %s has %u repairs outstanding at quiescence",
                         name, info[i].outstanding);
    }
    if (!s->allow_severed && scn_pool_any_severed_with_queued())
        scn_run_fail(run, SCN_FAILURE_ORACLE_SEVERED, 0, -1, "oracle: a pool is severed with callbacks queued at quiescence");
}

/* English ordinals for "the 2nd B": 1st 2nd 3rd 4th ... 11th 12th 13th 21st. */
static const char *ordinal_suffix(uint64_t n) {
    if (n % 100 >= 11 && n % 100 <= 13) return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* `A before B` holds when at every B at least as many A came first; the
 * report names the first B that broke it (its record number, as the trace
 * prints it) and the counts there, so it can be found in the trace. */
static void report_order(run_state *run, const scn_order *o, const order_tally *t) {
    const char *a = scn_trace_point_name(o->first), *b = scn_trace_point_name(o->then);
    char more[64] = "";
    if (t->broken > 1) snprintf(more, sizeof more, "; %llu later %s broke it too", (unsigned long long)(t->broken - 1), b);
    scn_run_fail(run, SCN_FAILURE_ORDER_BROKEN, o->line, (int)(o - run->s->orders),
                 "line %d: expect `%s before %s`: the %llu%s %s (trace record #%llu) came when %llu %s had "
                      "been recorded (each %s needs as many %s before it)%s",
                 o->line, a, b, (unsigned long long)t->first_nth, ordinal_suffix(t->first_nth), b,
                 (unsigned long long)t->first_record, (unsigned long long)t->firsts_seen, a, b, a, more);
}

void scn_oracle_after_teardown(run_state *run) {
    const scn_scenario *s = run->s;
    tph_heal_entry_info info[64];
    size_t n, i;
    for (i = 0; i < s->norders; i++)
        if (run->orders[i].broken) report_order(run, &s->orders[i], &run->orders[i]);
    n = tph_heal_entries(info, 64);
    if (n > 64) n = 64;
    for (i = 0; i < n; i++) {
        int p;
        char buf[96];
        if (run->healer_key_known && info[i].key == run->healer_key) continue;
        p = scn_run_pool_index(run, info[i].key);
        if (p >= 0 && (((s->allow_unhealed | run->tolerated_unhealed) >> p) & 1)) continue;
        scn_run_fail(run, SCN_FAILURE_ORACLE_REGISTRY_LEFT, 0, p, "oracle: registry entry for %s remains after every object was closed "
                     "(objects %llu, outstanding %u, unhealed %d)",
                     scn_pool_phrase(run, info[i].key, buf, sizeof buf), (unsigned long long)info[i].objects,
                     info[i].outstanding, (int)info[i].unhealed);
    }
    for (i = 0; i < s->nobjs; i++) {
        const scn_obj *o = &s->objs[i];
        const obj_state *st = &run->objs[i];
        const scn_kind_ops *k = scn_kind(o->kind);
        scn_pool_object_counts os;
        bool counted;
        if (!st->created || !k->has_callbacks) continue;
        /* The model counts what it ran and dropped; the real pool does not
         * say, and there the work oracle falls back to its bound. */
        counted = scn_pool_object_counts_get(st->os, &os);
        if (counted && os.callbacks_run != st->calls + st->swallowed)
            scn_run_fail(run, SCN_FAILURE_ORACLE_CALLBACKS_UNSEEN, 0, (int)i, "oracle: %s %s: the pool ran %llu callbacks, the scenario saw %llu (+%llu swallowed after a disarm)",
                         scn_obj_kind_name(o->kind), o->name, (unsigned long long)os.callbacks_run,
                         (unsigned long long)st->calls, (unsigned long long)st->swallowed);
        if (k->check_arms) k->check_arms(run, o, st, counted, &os);
    }
}

/* ---- callbacks against arms, by kind (the check_arms of scn_kinds.c's rows) ---- */

/* Work: every submit ran or was dropped, where the pool counts (the model);
 * where it does not, no more callbacks than submits. */
void scn_oracle_work_arms(run_state *run, const scn_obj *o, const obj_state *st, bool counted,
                          const scn_pool_object_counts *os) {
    if (counted && st->calls + os->cancelled != st->arms)
        scn_run_fail(run, SCN_FAILURE_ORACLE_WORK_ARMS, 0, st->index, "oracle: work %s: %llu submits, %llu callbacks, %llu dropped", o->name,
                     (unsigned long long)st->arms, (unsigned long long)st->calls,
                     (unsigned long long)os->cancelled);
    else if (!counted && st->calls > st->arms)
        scn_run_fail(run, SCN_FAILURE_ORACLE_WORK_ARMS, 0, st->index, "oracle: work %s: %llu callbacks for %llu submits", o->name,
                     (unsigned long long)st->calls, (unsigned long long)st->arms);
}

/* Waits and timers: at most one callback an arm. */
void scn_oracle_bounded_arms(run_state *run, const scn_obj *o, const obj_state *st, bool counted,
                             const scn_pool_object_counts *os) {
    (void)counted;
    (void)os;
    if (st->calls > st->arms)
        scn_run_fail(run, SCN_FAILURE_ORACLE_BOUNDED_ARMS, 0, st->index, "oracle: %s %s: %llu callbacks for %llu arms", scn_obj_kind_name(o->kind), o->name,
                     (unsigned long long)st->calls, (unsigned long long)st->arms);
}

/* I/O: every start completed (a callback) or was cancelled. */
void scn_oracle_io_arms(run_state *run, const scn_obj *o, const obj_state *st, bool counted,
                        const scn_pool_object_counts *os) {
    (void)counted;
    (void)os;
    if (st->calls + st->io_cancels != st->arms)
        scn_run_fail(run, SCN_FAILURE_ORACLE_IO_ARMS, 0, st->index, "oracle: io %s: %llu starts, %llu callbacks, %llu cancels", o->name,
                     (unsigned long long)st->arms, (unsigned long long)st->calls,
                     (unsigned long long)st->io_cancels);
}
