/* Callback environments: a plain value the caller fills, converted to the
 * native environment at object creation (so the caller may reuse or discard
 * it right after). */
#include <tpheal/env.h>
#include <tpheal/group.h>

#include "object.h"

void tph_env_init(tph_env *env) {
    if (env == NULL) return;
    env->pool = NULL;
    env->group = NULL;
    env->priority = TPH_PRIORITY_NORMAL;
    env->runs_long = false;
}

tph_err tph_env_set_pool(tph_env *env, tph_pool *pool) {
    if (env == NULL) return TPH_EINVAL;
    env->pool = pool; /* NULL: back to the default pool */
    return TPH_OK;
}

tph_err tph_env_set_priority(tph_env *env, tph_priority p) {
    if (env == NULL) return TPH_EINVAL;
    if (p != TPH_PRIORITY_HIGH && p != TPH_PRIORITY_NORMAL && p != TPH_PRIORITY_LOW)
        return TPH_EINVAL;
    env->priority = p;
    return TPH_OK;
}

tph_err tph_env_set_runs_long(tph_env *env, bool runs_long) {
    if (env == NULL) return TPH_EINVAL;
    env->runs_long = runs_long;
    return TPH_OK;
}

tph_err tph_env_set_group(tph_env *env, tph_group *group) {
    if (env == NULL) return TPH_EINVAL;
    env->group = group;
    return TPH_OK;
}

void tph_env_to_os(const tph_env *env, tph_os_env *out) {
    out->pool = NULL;
    out->group = NULL;
    out->group_cancel = NULL;
    out->priority = TPH_OS_PRIORITY_NORMAL;
    out->runs_long = false;
    if (env == NULL) return;
    out->pool = env->pool ? tph_pool_os(env->pool) : NULL;
    if (env->group) {
        out->group = tph_group_os(env->group);
        /* Set for every member, whether or not the user gave a cancel
         * function: the trampoline decides, so the native shape is uniform. */
        out->group_cancel = tph_group_cancel_trampoline;
    }
    out->priority = (int)env->priority;
    out->runs_long = env->runs_long;
}
