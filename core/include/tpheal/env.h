#ifndef TPHEAL_ENV_H
#define TPHEAL_ENV_H
#include <tpheal/error.h>

typedef struct tph_pool tph_pool;
typedef struct tph_group tph_group;

typedef enum tph_priority {
    TPH_PRIORITY_HIGH = 0,
    TPH_PRIORITY_NORMAL = 1,
    TPH_PRIORITY_LOW = 2,
} tph_priority;

/* A callback environment: where an object's callbacks run.  A plain value,
 * copied at object creation; start from tph_env_init.  A NULL environment
 * (or pool) means the process default pool. */
typedef struct tph_env {
    tph_pool *pool;
    tph_group *group;
    tph_priority priority;
    bool runs_long;
} tph_env;

void tph_env_init(tph_env *);
tph_err tph_env_set_pool(tph_env *, tph_pool *);
tph_err tph_env_set_priority(tph_env *, tph_priority);
tph_err tph_env_set_runs_long(tph_env *, bool);
tph_err tph_env_set_group(tph_env *, tph_group *);

#endif
