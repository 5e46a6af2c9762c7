/* Which pool an object runs on, as the registry keys it. */
#include <tpheal/pool.h>

#include "object.h"

tph_pool_key_t tph_key_of_env(const tph_env *env) {
    /* No environment and an environment with no pool both mean the process
     * default pool, key 0: the registry must see them as one pool, since it
     * is the default pool that stalls. */
    if (env == NULL || env->pool == NULL) return 0;
    return tph_pool_key(env->pool);
}
