/* The core's win32 seam with the scenario language's fault kinds in front of its failable
 * calls, for tpheal-harness-realpool: the scenarios that fail the Nth
 * allocation or create run on the real pool too, so the core's error paths
 * meet real handles (a failed repair-object create beside a real wait, a
 * healer pool that cannot be made).  The backend is built unchanged with its
 * failable entry points renamed (win32_real.h), so what runs when nothing is
 * armed is exactly the library users link (core/src/win/os_win32.c). */
#include <windows.h>

#include "win32_real.h"

#include "win32_faults.h"

typedef struct fault_slot {
    volatile LONG armed;
    LONG nth;
    bool onward, match_pool;
    const void *pool;
    volatile LONG matching; /* matching calls since armed */
    volatile LONG fired;
} fault_slot;

static fault_slot slots[SCN_FAULT_KIND_COUNT];

/* The healer's start is its pool's creation (scn_ast.h). */
static scn_fault_kind slot_of(scn_fault_kind kind) {
    return scn_fault_slot(kind);
}

void win32_fault_arm(scn_fault_kind kind, uint32_t nth, bool onward, bool match_pool, const void *pool) {
    fault_slot *s = &slots[slot_of(kind)];
    InterlockedExchange(&s->armed, 0);
    s->nth = (LONG)nth;
    s->onward = onward;
    s->match_pool = match_pool;
    s->pool = pool;
    InterlockedExchange(&s->matching, 0);
    InterlockedExchange(&s->fired, 0);
    InterlockedExchange(&s->armed, nth != 0);
}

void win32_fault_disarm_all(void) {
    int k;
    for (k = 0; k < SCN_FAULT_KIND_COUNT; k++) win32_fault_arm((scn_fault_kind)k, 0, false, false, NULL);
}

uint64_t win32_fault_fired(scn_fault_kind kind) {
    return (uint64_t)InterlockedCompareExchange(&slots[slot_of(kind)].fired, 0, 0);
}

/* The model's rule (sim_fault_hit): count the matching calls, fail the nth
 * (and every later one when onward). */
static bool hit(scn_fault_kind kind, const void *pool) {
    fault_slot *s = &slots[kind];
    LONG m;
    if (!InterlockedCompareExchange(&s->armed, 0, 0)) return false;
    if (s->match_pool && s->pool != pool) return false;
    m = InterlockedIncrement(&s->matching);
    if (m == s->nth || (s->onward && m > s->nth)) {
        InterlockedIncrement(&s->fired);
        return true;
    }
    return false;
}

static const void *pool_of(const tph_os_env *env) { return env ? (const void *)env->pool : NULL; }

void *tph_os_alloc(size_t n) { return hit(SCN_FAULT_ALLOC, NULL) ? NULL : win32_real_alloc(n); }
tph_os_pool *tph_os_pool_create(void) {
    return hit(SCN_FAULT_POOL_CREATE, NULL) ? NULL : win32_real_pool_create();
}
tph_os_work *tph_os_work_create(tph_os_work_cb cb, void *ctx, const tph_os_env *env) {
    return hit(SCN_FAULT_WORK_CREATE, pool_of(env)) ? NULL : win32_real_work_create(cb, ctx, env);
}
tph_os_wait *tph_os_wait_create(tph_os_wait_cb cb, void *ctx, const tph_os_env *env) {
    return hit(SCN_FAULT_WAIT_CREATE, pool_of(env)) ? NULL : win32_real_wait_create(cb, ctx, env);
}
tph_os_timer *tph_os_timer_create(tph_os_timer_cb cb, void *ctx, const tph_os_env *env) {
    return hit(SCN_FAULT_TIMER_CREATE, pool_of(env)) ? NULL : win32_real_timer_create(cb, ctx, env);
}
tph_os_io *tph_os_io_create(void *file_handle, tph_os_io_cb cb, void *ctx, const tph_os_env *env) {
    return hit(SCN_FAULT_IO_CREATE, pool_of(env)) ? NULL : win32_real_io_create(file_handle, cb, ctx, env);
}
tph_os_group *tph_os_group_create(void) {
    return hit(SCN_FAULT_GROUP_CREATE, NULL) ? NULL : win32_real_group_create();
}
tph_os_event *tph_os_event_create(bool manual_reset, bool initially_set) {
    return hit(SCN_FAULT_EVENT_CREATE, NULL) ? NULL : win32_real_event_create(manual_reset, initially_set);
}
