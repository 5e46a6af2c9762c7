/* What every callback-bearing object (work, wait, timer, periodic, io) shares:
 * its registration, its place in a cleanup group, its close obligation, and
 * the stop guard.  One definition of each teardown rule, called from every
 * object file (object.c), so the five closes cannot drift apart.
 *
 * Each object is ONE tph_os_alloc block whose first member is a tph_object.
 * That is what lets a cleanup group free a member it knows only as a
 * tph_object after the OS has closed it (tph_object_free_released).
 */
#ifndef TPHEAL_OBJECT_H
#define TPHEAL_OBJECT_H

#include <tpheal/env.h>
#include <tpheal/group.h>
#include <tpheal/handle.h>
#include <tpheal/pool.h>

#include "os.h"
#include "registration.h"

typedef struct tph_object {
    TPH_REGISTRATION_FIELD
#if TPHEAL_SELF_HEAL
    /* The claim a cancelling group release takes before the native release.
     * Stored here rather than in an array the release allocates, because a
     * release that could not allocate its claims would have to cancel with no
     * repair arranged -- exactly the untracked case the claim exists to avoid. */
    tph_registration group_claim;
#endif
    const char *kind;        /* "work", "wait", ...: static */
    uint64_t id;             /* the native handle value (deterministic in the sim) */
    void *user_ctx;          /* handed to the group's cancel function */
    struct tph_group *group; /* NULL when not a member */
    struct tph_object *prev, *next; /* group member list, under the group's lock */
    /* Guards `stopping` against arms: a callback re-arming its own object
     * while a stop/close is between its disarm and its drain would leave the
     * object armed after the drain, and a close would then free memory a
     * later callback still writes into. */
    tph_os_mutex lock;
    uint32_t stopping;       /* under lock: >0 refuses arms; close never lowers it */
    /* A callback may be queued or running that the owner never waited out. */
    volatile uint32_t drain_owed;
} tph_object;

/* ---- accessors across the object files ---------------------------------- */
tph_os_pool *tph_pool_os(const tph_pool *);
tph_os_group *tph_group_os(const tph_group *);
tph_os_event *tph_handle_os(const tph_handle *);

/* The native environment for an object created with `env` (NULL = defaults). */
void tph_env_to_os(const tph_env *env, tph_os_env *out);
/* The key of the pool an object created with `env` runs on, as the registry
 * keys it (key.c): NULL env or NULL pool mean the default pool, key 0. */
tph_pool_key_t tph_key_of_env(const tph_env *env);

/* ---- lifecycle ------------------------------------------------------------ */
/* Fresh object state (the block is otherwise uninitialised memory). */
void tph_object_init(tph_object *, const char *kind, void *user_ctx);
/* After the native create succeeded: take the registration, join the group. */
void tph_object_created(tph_object *, uint64_t id, const tph_env *env);

/* Arming: begin returns false (and holds nothing) while a stop or close is in
 * progress; otherwise it holds the object's lock until arm_end. */
bool tph_object_arm_begin(tph_object *);
void tph_object_arm_end(tph_object *);
/* Record "a drain is owed" -- always before the native arming call, so a
 * callback can never exist that the close obligation does not cover. */
void tph_object_owe_drain(tph_object *);
/* The owner drained (wait / stop_and_drain / cancel / run_down). */
void tph_object_drained(tph_object *);

/* A stop that disarms and drains refuses arms between its two steps. */
void tph_object_stop_begin(tph_object *);
void tph_object_stop_end(tph_object *);
/* Close: arms are refused from here on. */
void tph_object_close_begin(tph_object *);
/* After the native drain and close: leave the group, release the
 * registration, free the block, and only then report a drain the owner never
 * did (which ends the process in a fail-fast build). */
void tph_object_close_finish(tph_object *);

/* ---- cleanup groups (group.c) ---------------------------------------------- */
void tph_group_join(struct tph_group *, tph_object *);
void tph_group_leave(tph_object *);
/* The group's native cancel callback: object_ctx is the member's tph_object. */
void TPH_OS_CALLBACK tph_group_cancel_trampoline(void *object_ctx, void *cleanup_ctx);
/* A member the OS closed in a group release: release and free. */
void tph_object_free_released(tph_object *);

/* Small stable code for a kind string, for trace records (which carry numbers). */
uint64_t tph_object_kind_code(const char *kind);

#endif
