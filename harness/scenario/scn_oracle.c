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

/* A count the hook kept for every run (count_slot: any pool when pool < 0). */
static uint64_t recorded(run_state *run, const char *point, int pool) {
    int i = scn_trace_point_find(point);
    return i < 0 ? 0 : run->counts[count_slot(run, i, pool)];
}

static bool block_uses_untracked(const scn_block *b) {
    size_t i;
    for (i = 0; b && i < b->n; i++) {
        const scn_op *op = &b->ops[i];
        if (op->kind == SCN_OP_CANCEL_UNTRACKED || (op->kind == SCN_OP_RELEASE && op->release == SCN_RELEASE_UNTRACKED))
            return true;
        if (op->kind == SCN_OP_REPEAT && block_uses_untracked(op->body)) return true;
    }
    return false;
}

/* Whether the scenario cancels without heal tracking anywhere: such a
 * cancellation may sever a pool and, by its contract, owe it nothing. */
static bool scenario_cancels_untracked(const scn_scenario *s) {
    size_t i;
    for (i = 0; i < s->nthreads; i++)
        if (block_uses_untracked(&s->threads[i].body)) return true;
    for (i = 0; i < s->ncallbacks; i++)
        if (block_uses_untracked(&s->callbacks[i].body)) return true;
    return false;
}

/* One healer a process: started at most once, and started (or its start
 * tried and failed) by any process that stamped a cancellation.  Two starts
 * are two private pools and two timers ticking the one registry.  Only where
 * a run is a process (the model): on the real pool the healer of an earlier
 * run is still up. */
static void oracle_one_healer(run_state *run) {
    uint64_t started = recorded(run, "healer-started", -1), failed = recorded(run, "healer-start-failed", -1);
    if (!scn_pool_process_per_run()) return;
    if (started > 1)
        scn_run_fail(run, SCN_FAILURE_ORACLE_HEALERS, 0, -1, "oracle: the healer started %llu times in one process (exactly one healer)",
                     (unsigned long long)started);
    else if (started == 0 && failed == 0 && recorded(run, "cancelled", -1) != 0)
        scn_run_fail(run, SCN_FAILURE_ORACLE_HEALERS, 0, -1,
                     "oracle: a cancellation was stamped and the healer was never started nor tried");
}

/* Every pool a tracked cancellation severed was repaired: a severed pool
 * dispatches nothing until a SubmitThreadpoolWork, which the repair is, so
 * a pool still severed at quiescence (the settle is longer than the healer's
 * period plus its window) had no repair submitted after its last sever.
 * Untracked cancellations owe nothing by contract, and neither does a pool
 * whose repair object could not be made (`cancel-untracked`).  `severed`:
 * bit p set when scenario pool p is severed. */
static void oracle_severed_repaired(run_state *run, uint64_t severed) {
    const scn_scenario *s = run->s;
    size_t p;
    if (s->outcome != SCN_OUTCOME_NORMAL || scenario_cancels_untracked(s)) return;
    for (p = 0; p < s->npools && p < 64; p++) {
        if ((s->allow_unhealed >> p) & 1) continue;
        if (recorded(run, "cancel-untracked", (int)p) != 0) continue;
        if ((severed >> p) & 1)
            scn_run_fail(run, SCN_FAILURE_ORACLE_SEVERED_LEFT, 0, (int)p,
                         "oracle: pool %s is severed at quiescence: no repair was submitted after its last sever",
                         s->pools[p].name);
    }
}

/* The same limitation's other face: an entry still owed a repair when its
 * last object went (so not retired then) is repaired by the inline submit
 * or a public tick, and is idle after; only the healer's tick retires an
 * idle entry, and when the healer never started nothing does (generate
 * seed 1, program 1142: a cancelling release with the healer's start
 * failing, a public tick's repair, no healer).  Idle = no objects, nothing
 * outstanding, not unhealed. */
static bool idle_entry_with_no_healer(run_state *run, const tph_heal_entry_info *e) {
    return !tph_heal_healer_running() && recorded(run, "healer-start-failed", -1) != 0 && e->objects == 0 &&
           e->outstanding == 0 && !e->unhealed;
}

/* A cancellation owes its pool a repair stamped *after* the cancelling call
 * (docs/architecture.md's rule table): the question the healer asks is
 * whether the pool dispatched after the removal.  A mark before the call
 * lets a repair that starts in between answer for a sever that had not
 * happened; the pool then stays severed until the overdue retry, if any.
 * So the last cancelling call on each pool is followed by a `cancelled`
 * record for it -- on any schedule, as each thread makes its call and then
 * its mark.  Untracked cancellations owe nothing. */
static void oracle_marked_after_the_call(run_state *run) {
    const scn_scenario *s = run->s;
    size_t p;
    if (s->outcome != SCN_OUTCOME_NORMAL || scenario_cancels_untracked(s)) return;
    for (p = 0; p < s->npools && p < 64; p++) {
        if (run->last_cancel_call_at[p] == 0 || run->last_cancel_call_at[p] < run->last_cancel_at[p]) continue;
        if (recorded(run, "cancel-untracked", (int)p) != 0) continue;
        scn_run_fail(run, SCN_FAILURE_ORACLE_MARK_ORDER, 0, (int)p,
                     "oracle: pool %s: no cancellation stamp after the cancelling call of record #%llu "
                     "(a cancellation marks its pool after the call)",
                     s->pools[p].name, (unsigned long long)run->last_cancel_call_at[p]);
    }
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
    oracle_one_healer(run);
    oracle_marked_after_the_call(run);
    /* One read of the model for both severed-pool oracles: a read is a
     * section of the model's lock, scheduling points the corpus's pinned
     * runs (ci/golden) would see move. */
    if (!s->allow_severed) {
        const void *pools_os[64];
        uint64_t severed = 0;
        size_t p;
        for (p = 0; p < s->npools && p < 64; p++) pools_os[p] = scn_run_pool_native(run, (int)p);
        if (scn_pool_severed_scan(pools_os, p, &severed))
            scn_run_fail(run, SCN_FAILURE_ORACLE_SEVERED, 0, -1, "oracle: a pool is severed with callbacks queued at quiescence");
        oracle_severed_repaired(run, severed);
    }
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
        if (idle_entry_with_no_healer(run, &info[i])) continue;
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
