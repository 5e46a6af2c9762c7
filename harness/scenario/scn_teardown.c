/* Teardown (scn_run_internal.h): closes what the scenario left open, after
 * the quiescence oracles and before the registry oracle, which then finds
 * every entry the scenario's objects held retired unless something leaked.
 * The order is always legal: group members through their group, then
 * callback objects, events, groups (each kind's close_pass, scn_kinds.c),
 * each stopped and drained first (its quiesce), then the scenario's pools. */
#include <stdint.h>

#include "scn_run_internal.h"

void scn_teardown(run_state *run) {
    const scn_scenario *s = run->s;
    size_t i;
    int pass;
    for (i = 0; i < s->nobjs; i++) {
        const scn_kind_ops *k = scn_kind(s->objs[i].kind);
        bool members = false;
        size_t j;
        if (!k->release_members || !run->objs[i].created || run->objs[i].dead) continue;
        for (j = 0; j < s->nobjs; j++)
            if (s->objs[j].group == (int)i && run->objs[j].created && !run->objs[j].dead) members = true;
        if (members && k->release_members(run->objs[i].h) == TPH_OK)
            scn_exec_mark_group_released(run, (int)i);
    }
    for (pass = 0; pass < SCN_CLOSE_PASSES; pass++) {
        for (i = s->nobjs; i-- > 0;) {
            const scn_obj *o = &s->objs[i];
            const scn_kind_ops *k = scn_kind(o->kind);
            obj_state *st = &run->objs[i];
            if (k->close_pass != pass || !st->created || st->dead) continue;
            if (k->quiesce) k->quiesce(st);
            if (scn_exec_close(run, (int)i) != TPH_OK)
                scn_run_fail(run, SCN_FAILURE_TEARDOWN_CLOSE, 0, (int)i, "teardown: closing %s %s failed",
                             scn_obj_kind_name(o->kind), o->name);
        }
    }
    for (i = 1; i < s->npools; i++)
        if (run->pools[i]) tph_pool_close(run->pools[i]);
}
