/* The statements of a scenario that need more than the core's public API
 * (scn_features.c): a pool backend declines a scenario that uses one it
 * lacks (scn_pool_unsupported). */
#ifndef TPHEAL_SCN_FEATURES_H
#define TPHEAL_SCN_FEATURES_H

#include <stddef.h>

#include "scn_ast.h"

typedef enum scn_feature {
    SCN_FEATURE_FAULT = 0,      /* `fault ...` */
    SCN_FEATURE_STALL,          /* a pool's `stall` setting */
    SCN_FEATURE_RETIRE_WORKERS, /* `retire_workers P` */
    SCN_FEATURE_SEVERED,        /* the severed(P) term */
    SCN_FEATURE_HEALER,         /* `healer`; healer-started / healer-start-failed
                                   counted, awaited, held on or ordered */
    SCN_FEATURE_FAIL_FAST,      /* `expect fail_fast`, `build fail_fast` */
    SCN_FEATURE_DEADLOCK,       /* `expect deadlock` */
    SCN_FEATURE_MISUSE,         /* `expect misuse` */
    SCN_FEATURE_SAME_TICK,      /* `expect unhealed P`: the same-tick limitation */
    SCN_FEATURE_COUNT
} scn_feature;

#define SCN_FEATURE_BIT(f) (1u << (f))

/* The line of the first use of f in s; -1 when used without a line of its
 * own (an outcome); 0 when unused. */
int scn_feature_line(const scn_scenario *s, scn_feature f);
const char *scn_feature_text(scn_feature f);
/* The first feature of `mask` that s uses, as "line N: why" in buf; NULL
 * when it uses none. */
const char *scn_features_first(const scn_scenario *s, unsigned mask, char *buf, size_t n);

#endif
