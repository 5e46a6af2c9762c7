#ifndef TPHEAL_POOL_H
#define TPHEAL_POOL_H
#include <tpheal/error.h>

/* A private thread pool.  The process default pool has no tph_pool: pass a
 * NULL pool (or no environment) to use it. */
typedef struct tph_pool tph_pool;

tph_err tph_pool_create(tph_pool **out);
/* max == 0 and min > max are rejected with TPH_EINVAL. */
tph_err tph_pool_set_thread_limits(tph_pool *, uint32_t min, uint32_t max);
/* The pool itself is freed by the OS once every object bound to it is gone. */
tph_err tph_pool_close(tph_pool *);
/* The registry key of a pool: its raw handle; 0 stands for the default pool. */
uintptr_t tph_pool_key(const tph_pool *);

#endif
