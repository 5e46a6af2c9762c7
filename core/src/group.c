/* Cleanup groups.  The group keeps the list of its members' contexts so that,
 * after a release closes them natively, it can give up their registrations
 * and free them.  A member pointer is dead after a release; a member closed
 * on its own before the release leaves the list at its close. */
#include <string.h>

#include <tpheal/group.h>

#include "healer.h"
#include "object.h"
#include "obligation.h"
#include "trace_point.h"

struct tph_group {
    tph_os_group *os;
    tph_group_cancel_fn cancel_fn;
    tph_os_mutex lock; /* guards the member list */
    tph_object *head;
};

tph_os_group *tph_group_os(const tph_group *g) { return g ? g->os : NULL; }

tph_err tph_group_create(tph_group **out, tph_group_cancel_fn cancel_fn) {
    tph_group *g;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    g = (tph_group *)tph_os_alloc(sizeof *g);
    if (g == NULL) return TPH_ENOMEM;
    memset(g, 0, sizeof *g);
    g->cancel_fn = cancel_fn;
    TPH_TRACE("api", "CreateThreadpoolCleanupGroup", 0, 0);
    g->os = tph_os_group_create();
    if (g->os == NULL) {
        tph_os_free(g);
        return TPH_ENOMEM;
    }
    *out = g;
    return TPH_OK;
}

void tph_group_join(tph_group *g, tph_object *o) {
    tph_os_mutex_lock(&g->lock);
    o->group = g;
    o->prev = NULL;
    o->next = g->head;
    if (g->head) g->head->prev = o;
    g->head = o;
    tph_os_mutex_unlock(&g->lock);
}

void tph_group_leave(tph_object *o) {
    tph_group *g = o->group;
    if (g == NULL) return;
    tph_os_mutex_lock(&g->lock);
    if (o->prev)
        o->prev->next = o->next;
    else
        g->head = o->next;
    if (o->next) o->next->prev = o->prev;
    o->prev = o->next = NULL;
    o->group = NULL;
    tph_os_mutex_unlock(&g->lock);
}

void TPH_OS_CALLBACK tph_group_cancel_trampoline(void *object_ctx, void *cleanup_ctx) {
    tph_object *o = (tph_object *)object_ctx;
    /* o->group is still set: members are detached from the group only after
     * the native release has returned. */
    if (o->group != NULL && o->group->cancel_fn != NULL) o->group->cancel_fn(o->user_ctx, cleanup_ctx);
}

/* Takes the member list for a release.  The members keep their `group`
 * pointer, so the cancel trampoline still reaches the group's function during
 * the native release; a member created during the release joins a fresh list
 * and is neither claimed nor freed by this one. */
static tph_object *detach_members(tph_group *g) {
    tph_object *head;
    tph_os_mutex_lock(&g->lock);
    head = g->head;
    g->head = NULL;
    tph_os_mutex_unlock(&g->lock);
    return head;
}

/* Before the native release (the seed's prepare-shutdown): every member
 * refuses arms from here on, and the one-shot timer's trampoline drops a
 * deferred re-arm (both read `stopping`).  The release waits for running
 * callbacks, and a member whose callback re-arms it would otherwise queue the
 * next callback from inside each one: a wait on a set event kept a draining
 * release waiting forever (scenario group-release-stops-rearms: livelock in
 * 500 of 500 runs; the cancelling releases livelocked too).  Never lowered:
 * the release closes and frees the members. */
static void stop_rearms(tph_object *o) {
    for (; o != NULL; o = o->next) tph_object_stop_begin(o);
}

/* After the native release: every member is closed by the OS; free them. */
static void free_members(tph_object *o) {
    tph_object *next;
    for (; o != NULL; o = next) {
        next = o->next;
        tph_object_free_released(o);
    }
}

static void native_release(tph_group *g, bool cancel, void *cleanup_ctx) {
    TPH_TRACE("api", "CloseThreadpoolCleanupGroupMembers", (uintptr_t)g->os, cancel);
    tph_os_group_close_members(g->os, cancel, cleanup_ctx);
}

tph_err tph_group_close_members_draining(tph_group *g) {
    /* FALSE: pending callbacks run; nothing queued is removed, so nothing can
     * be severed and nothing is owed a repair. */
    tph_object *list;
    if (g == NULL) return TPH_EINVAL;
    list = detach_members(g);
    stop_rearms(list);
    native_release(g, false, NULL);
    free_members(list);
    return TPH_OK;
}

#if TPHEAL_SELF_HEAL
tph_err tph_group_close_members_cancelling(tph_group *g, void *cleanup_ctx) {
    tph_object *list, *o, *next;
    uintptr_t untracked_key = 0;
    bool untracked = false;
    if (g == NULL) return TPH_EINVAL;
    /* (1) Claims BEFORE the release.  A member whose pool was never
     * registered pins nothing, and the release frees the last object bound to
     * the pool, so a registration attempted afterwards would hand a possibly
     * freed pool to CreateThreadpoolWork.  A claim holding an entry keeps the
     * pool alive through the release (its repair work is bound to it). */
    list = detach_members(g);
    for (o = list; o != NULL; o = o->next)
        o->group_claim = tph_registration_reclaim(&o->registration);
    stop_rearms(list);
    /* (2) The cancelling release: drops queued callbacks, including wait
     * packets -- the removal that can sever a cold pool. */
    native_release(g, true, cleanup_ctx);
    /* (3) Mark every member's pool, not only waits': the facts do not confine
     * the stall to waits released by a group, and a mark costs a stamp. */
    for (o = list; o != NULL; o = next) {
        next = o->next;
        /* Never re-registers: see (1). */
        if (!tph_owe_repair_claimed(&o->group_claim) && !untracked) {
            untracked = true;
            untracked_key = o->group_claim.key;
        }
        /* (4) Give up the claim and the member's own registration; an entry
         * owed a repair outlives both. */
        tph_registration_release(&o->group_claim);
        tph_object_free_released(o);
    }
    /* Last, after every member is released and freed: in a fail-fast build
     * this ends the process, and nothing owed may be skipped.  One call is
     * enough -- the registry already recorded each untracked pool. */
    if (untracked) tph_obligation_untracked(untracked_key);
    return TPH_OK;
}
#endif

tph_err tph_group_close_members_cancelling_no_heal_tracking(tph_group *g, void *cleanup_ctx) {
    tph_object *list;
    if (g == NULL) return TPH_EINVAL;
    list = detach_members(g);
    stop_rearms(list);
    native_release(g, true, cleanup_ctx);
    free_members(list);
    return TPH_OK;
}

tph_err tph_group_close(tph_group *g) {
    /* Members still listed would outlive their group's bookkeeping: their
     * release would have nobody to free them.  Refuse; release them first. */
    bool has_members;
    if (g == NULL) return TPH_EINVAL;
    tph_os_mutex_lock(&g->lock);
    has_members = g->head != NULL;
    tph_os_mutex_unlock(&g->lock);
    if (has_members) return TPH_EBUSY;
    TPH_TRACE("api", "CloseThreadpoolCleanupGroup", (uintptr_t)g->os, 0);
    tph_os_group_close(g->os);
    tph_os_free(g);
    return TPH_OK;
}
