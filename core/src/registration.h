/* An object's claim on its pool's self-heal entry: the interface between the
 * objects (work.c, wait.c, timer.c, periodic.c, io.c, group.c) and the
 * registry (registry.c) beneath them.  The registry calls nothing above it:
 * the healer's start reaches it as an argument (tph_healer_start_fn).
 *
 * Every object carries one tph_registration on its callback context, taken at
 * creation (tph_register) and given up at close (tph_registration_release).
 * With TPHEAL_SELF_HEAL=0 the type is empty in cost: the field macro expands to
 * nothing and every function below is an inline no-op, so call sites carry no
 * conditionals of their own.
 */
#ifndef TPHEAL_REGISTRATION_H
#define TPHEAL_REGISTRATION_H

#include <tpheal/config.h>
#include <tpheal/env.h>

#include "os.h"

/* `_t`: the bare name is taken by tph_pool_key() in <tpheal/pool.h>. */
typedef uintptr_t tph_pool_key_t;

#if TPHEAL_SELF_HEAL

struct tph_pool_entry;
typedef struct tph_registration {
    tph_pool_key_t key;              /* kept even when entry is NULL */
    struct tph_pool_entry *entry;  /* NULL when registration failed */
} tph_registration;


/* Best effort: on failure the registration is empty but keeps its key; the
 * object is still created. */
tph_registration tph_register(tph_pool_key_t key);
/* Gives up the claim; retires the entry when nothing needs it (and drops it
 * outside the registry lock). Leaves *r empty. */
void tph_registration_release(tph_registration *r);
/* A second, independent claim on the same pool (registers when r is empty).
 * Taken by a cleanup group before its native release. */
tph_registration tph_registration_reclaim(const tph_registration *r);
/* Starts the healer (true when it runs).  The healer is built on the objects
 * above this layer, so the registry never names it: whoever reports a
 * cancellation hands its start down (healer.h: tph_owe_repair). */
typedef bool tph_healer_start_fn(void);
/* A cancellation happened on r's pool: stamp it and make sure a repair will
 * come (`start` the healer, or an inline submit).  Retries registration when r
 * is empty.  Returns false when the cancellation is left untracked. */
bool tph_registry_owe_repair(const tph_registration *r, tph_healer_start_fn *start);
/* The same for a claim taken before a release: never retries registration. */
bool tph_registry_owe_repair_claimed(const tph_registration *r, tph_healer_start_fn *start);

/* What object code writes: the field in its context struct, taking the
 * claim at creation and giving it up at close.  One spelling in both builds. */
#define TPH_REGISTRATION_FIELD tph_registration registration;
#define TPH_REGISTER(obj, key) ((obj)->registration = tph_register(key))
#define TPH_RELEASE(obj) tph_registration_release(&(obj)->registration)

#else /* !TPHEAL_SELF_HEAL */

/* No registry: no field, no claim, nothing to release -- the registration
 * costs nothing, which test_noheal checks (sizeof of every object context). */
#define TPH_REGISTRATION_FIELD
#define TPH_REGISTER(obj, key) ((void)(obj), (void)(key))
#define TPH_RELEASE(obj) ((void)(obj))

#endif

#endif
