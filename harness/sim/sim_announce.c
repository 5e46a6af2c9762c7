/* The announcement rule: every native call the core makes is announced by its
 * `api/<Win32 name>` trace record, on the same thread, just before the call,
 * naming the object and the argument the call is made with.
 *
 * Why it is checked: the harness holds a thread at `api/X` to make a race
 * happen ("the closer is parked at its run-down"), and a user's trace hook
 * reads those records to see what the pool was asked.  A record written after
 * its call, or naming another object, holds the thread on the wrong side of
 * the call -- the scenario then proves nothing and says nothing.  Generated
 * mutants that moved a record past its call, dropped it or changed its
 * arguments all survived the suite until this check existed
 * (docs/mutation.md).
 *
 * How: the harness's trace hook hands every record to sim_announce_note
 * (stored in the recording thread's own slot: no lock, no scheduling point,
 * so schedules are unchanged); each announced seam function asks
 * sim_expect_announced, under the model lock, and a missing or different
 * record is reported as misuse.  The slot is consumed by the call, so one
 * record announces one call; a record still pending when the thread records
 * anything else (or when checking ends) announced a call never made. */
#include <string.h>

#include "sim_model.h"

#define SLOTS 256 /* threads with a larger rt_thread_id are not checked */

typedef struct slot {
    uint32_t thread;
    bool pending;
    const char *event;
    uint64_t a, b;
} slot;

static slot slots[SLOTS];
/* Read by every thread at every announced call, turned off while the
 * process's daemon threads (healer, workers) may still run: a non-yielding
 * atomic, like the core's trace gate, so checking moves no schedule. */
static volatile uint32_t checking;

/* From the hook, outside the model lock: taken here, on the failure path
 * only, so a run that keeps the rule has the same schedule as before. */
static void report_uncalled(const char *event) {
    sim_lock();
    sim_report_misuse(event, NULL, SIM_OBJ_POOL, "announced but never called: its api/ record was not followed by the call");
    sim_unlock();
}

void sim_announce_note(const char *target, const char *event, uint64_t a, uint64_t b) {
    uint32_t id = rt_thread_id();
    if (!tph_os_gate_load32(&checking) || id >= SLOTS) return;
    /* An announcement still pending when the thread records anything else
     * announced a call that was never made: the trace would tell a hook and
     * the reader of a failure report that the pool was asked for it. */
    if (slots[id].pending && slots[id].thread == id) report_uncalled(slots[id].event);
    slots[id].thread = id;
    /* Any other record of the thread after the announcement means the
     * record no longer comes just before its call: what a hold or a hook
     * saw last would not be what the pool was asked. */
    slots[id].pending = strcmp(target, "api") == 0;
    slots[id].event = event;
    slots[id].a = a;
    slots[id].b = b;
}

void sim_announce_check(bool on) {
    /* Slots are cleared only when a run turns checking on, before it starts
     * any thread of its own.  Turned off, a run's calling thread's own
     * announcement still pending was never followed by its call. */
    if (on) {
        memset(slots, 0, sizeof slots);
    } else if (tph_os_gate_load32(&checking)) {
        uint32_t id = rt_thread_id();
        if (id < SLOTS && slots[id].pending && slots[id].thread == id) report_uncalled(slots[id].event);
    }
    tph_os_gate_store32(&checking, on ? 1u : 0u);
}

uintptr_t sim_pool_key_of(const sim_obj *pool) {
    return pool == NULL || pool->is_default ? 0 : (uintptr_t)sim_handle_of(pool);
}

void sim_expect_announced(const char *call, uintptr_t a1, uintptr_t a2, uint64_t b) {
    uint32_t id = rt_thread_id();
    const char *problem = NULL;
    slot *s;
    if (!tph_os_gate_load32(&checking) || id >= SLOTS) return;
    s = &slots[id];
    if (!s->pending || s->thread != id)
        problem = "not announced: no api/ trace record just before the call";
    else if (strcmp(s->event, call) != 0)
        problem = "not announced: the api/ record just before it names another call";
    else if (s->a != a1 && s->a != a2)
        problem = "not announced: its api/ record names another object";
    else if (s->b != b)
        problem = "not announced: its api/ record carries another argument";
    if (problem != NULL) sim_report_misuse(call, NULL, SIM_OBJ_POOL, problem);
    s->pending = false;
}

const sim_obj *sim_announced_pool(const void *handle, sim_object_kind kind) {
    const sim_obj *o = sim_obj_from_handle(handle, kind);
    if (o == NULL) return NULL;
    return kind == SIM_OBJ_POOL ? o : o->pool;
}
