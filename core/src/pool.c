/* Private thread pools.  A pool registers nothing itself: the registry learns
 * of a pool from the first object created on it, which is also what keeps the
 * pool alive for the registry (the repair work object is bound to it). */
#include <tpheal/pool.h>

#include "object.h"
#include "trace_point.h"

struct tph_pool {
    tph_os_pool *os;
};

tph_err tph_pool_create(tph_pool **out) {
    tph_pool *p;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    p = (tph_pool *)tph_os_alloc(sizeof *p);
    if (p == NULL) return TPH_ENOMEM;
    TPH_TRACE("api", "CreateThreadpool", 0, 0);
    p->os = tph_os_pool_create();
    if (p->os == NULL) {
        tph_os_free(p);
        return TPH_ENOMEM;
    }
    *out = p;
    return TPH_OK;
}

tph_err tph_pool_set_thread_limits(tph_pool *p, uint32_t min, uint32_t max) {
    if (p == NULL || max == 0 || min > max) return TPH_EINVAL;
    /* Maximum first: SetThreadpoolThreadMinimum starts threads up to the new
     * minimum, which must not exceed the old maximum on the way there. */
    TPH_TRACE("api", "SetThreadpoolThreadMaximum", (uintptr_t)p->os, max);
    tph_os_pool_set_max(p->os, max);
    TPH_TRACE("api", "SetThreadpoolThreadMinimum", (uintptr_t)p->os, min);
    if (!tph_os_pool_set_min(p->os, min)) return TPH_ENOMEM;
    return TPH_OK;
}

tph_err tph_pool_close(tph_pool *p) {
    if (p == NULL) return TPH_EINVAL;
    TPH_TRACE("api", "CloseThreadpool", (uintptr_t)p->os, 0);
    tph_os_pool_close(p->os);
    tph_os_free(p);
    return TPH_OK;
}

uintptr_t tph_pool_key(const tph_pool *p) { return p ? (uintptr_t)p->os : 0; }

tph_os_pool *tph_pool_os(const tph_pool *p) { return p ? p->os : NULL; }
