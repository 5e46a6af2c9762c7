/* The healer's interface to the objects beside it: starting it, and reporting
 * a cancellation (which may start it).
 *
 * The healer (healer.c) is built on the public objects -- its own pool and
 * periodic timer -- so it sits in the objects' layer, above the registry.  The
 * registry never calls up into it: tph_owe_repair hands the healer's start
 * down to the registry as an argument (registration.h), so the layers form no
 * circle.  Everything here exists only in a TPHEAL_SELF_HEAL build. */
#ifndef TPHEAL_HEALER_H
#define TPHEAL_HEALER_H

#include <tpheal/config.h>

/* Forgets the healer (process_state.h: tph_process_state_reset); in both builds. */
void tph_healer_reset_process(void);

#if TPHEAL_SELF_HEAL

#include "registration.h"

/* Make sure the healer runs; false if it could not be started. */
bool tph_healer_ensure_running(void);

/* A cancellation happened on r's pool: stamp it and make sure a repair will
 * come (healer, or an inline submit).  Retries registration when r is empty.
 * Returns false when the cancellation is left untracked. */
bool tph_owe_repair(const tph_registration *r);
/* The same for a claim taken before a release: never retries registration. */
bool tph_owe_repair_claimed(const tph_registration *r);

#endif /* TPHEAL_SELF_HEAL */
#endif
