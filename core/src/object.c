/* The teardown rules every callback-bearing object follows, defined once.
 *
 * Order at close is: refuse arms, disarm (object file), drain, native close,
 * leave the group, release the registration, free, and only then report a
 * drain the owner never did.  The report comes last because in a fail-fast
 * build it ends the process, and ending it before the drain would leave a
 * callback still running against the object. */
#include <string.h>

#include "object.h"
#include "obligation.h"
#include "trace_point.h"

static const char *const kind_names[] = {"work", "wait", "timer", "periodic", "io"};

uint64_t tph_object_kind_code(const char *kind) {
    size_t i;
    for (i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strcmp(kind, kind_names[i]) == 0) return (uint64_t)(i + 1);
    return 0;
}

void tph_object_init(tph_object *o, const char *kind, void *user_ctx) {
    /* Zero bytes are an unlocked seam mutex and an empty registration. */
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->user_ctx = user_ctx;
}

void tph_object_created(tph_object *o, uint64_t id, const tph_env *env) {
    o->id = id;
    /* After the native create, so a failed create has nothing to unwind but
     * its own block; registration is best effort and cannot fail the create. */
    TPH_REGISTER(o, tph_key_of_env(env));
    if (env != NULL && env->group != NULL) tph_group_join(env->group, o);
}

bool tph_object_arm_begin(tph_object *o) {
    tph_os_mutex_lock(&o->lock);
    if (o->stopping != 0) {
        tph_os_mutex_unlock(&o->lock);
        return false;
    }
    return true;
}

void tph_object_arm_end(tph_object *o) { tph_os_mutex_unlock(&o->lock); }

void tph_object_owe_drain(tph_object *o) {
    tph_os_store32(&o->drain_owed, 1);
    TPH_TRACE("obligation", "drain-owed", o->id, tph_object_kind_code(o->kind));
}

void tph_object_drained(tph_object *o) {
    /* Cleared before the drain runs, never after: an arm landing during the
     * drain records the obligation again, and clearing afterwards would erase
     * that newer record. */
    tph_os_store32(&o->drain_owed, 0);
}

void tph_object_stop_begin(tph_object *o) {
    tph_os_mutex_lock(&o->lock);
    o->stopping++;
    tph_os_mutex_unlock(&o->lock);
}

void tph_object_stop_end(tph_object *o) {
    tph_os_mutex_lock(&o->lock);
    o->stopping--;
    tph_os_mutex_unlock(&o->lock);
}

void tph_object_close_begin(tph_object *o) { tph_object_stop_begin(o); }

void tph_object_close_finish(tph_object *o) {
    const char *kind = o->kind;
    uint64_t id = o->id;
    bool owed = tph_os_load32(&o->drain_owed) != 0;
    tph_group_leave(o);
    TPH_RELEASE(o);
    tph_os_free(o);
    if (owed) tph_obligation_drop_owed(kind, id);
}

void tph_object_free_released(tph_object *o) {
    TPH_RELEASE(o);
    tph_os_free(o);
}
