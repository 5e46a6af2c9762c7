/* The user's lock (lock.h): the seam's mutex, so the same call is an SRW
 * lock on Windows and a scheduling point of the model. */
#include <tpheal/lock.h>

#include "os.h"

struct tph_lock {
    tph_os_mutex m;
};

tph_err tph_lock_create(tph_lock **out) {
    static const tph_os_mutex unlocked = TPH_OS_MUTEX_INIT;
    tph_lock *l;
    if (out == NULL) return TPH_EINVAL;
    *out = NULL;
    l = (tph_lock *)tph_os_alloc(sizeof *l);
    if (l == NULL) return TPH_ENOMEM;
    l->m = unlocked;
    *out = l;
    return TPH_OK;
}

tph_err tph_lock_acquire(tph_lock *l) {
    if (l == NULL) return TPH_EINVAL;
    tph_os_mutex_lock(&l->m);
    return TPH_OK;
}

tph_err tph_lock_release(tph_lock *l) {
    if (l == NULL) return TPH_EINVAL;
    tph_os_mutex_unlock(&l->m);
    return TPH_OK;
}

tph_err tph_lock_close(tph_lock *l) {
    if (l == NULL) return TPH_EINVAL;
    tph_os_free(l);
    return TPH_OK;
}
