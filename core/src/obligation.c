/* Broken obligations: always a trace event, and in a TPHEAL_FAIL_FAST build the
 * end of the process.  Every caller reaches here only after the teardown it
 * owed (drain, close, free) is complete -- see obligation.h. */
#include <tpheal/config.h>

#include "object.h"
#include "obligation.h"
#include "trace_point.h"

/* Reasons are stable strings: the harness and the fail-fast tests match them. */
#define TPH_FF_DROP "tpheal: drop-obligation-owed"
#define TPH_FF_UNTRACKED "tpheal: cancel-untracked"
#define TPH_FF_UNREPAIRABLE "tpheal: pool-unrepairable"

static void fail_fast(const char *reason, uint64_t a, uint64_t b) {
#if TPHEAL_FAIL_FAST
    TPH_TRACE("obligation", "fail-fast", a, b);
    tph_os_fail_fast(reason);
#else
    (void)reason;
    (void)a;
    (void)b;
#endif
}

void tph_obligation_drop_owed(const char *kind, uint64_t object_id) {
    uint64_t code = tph_object_kind_code(kind);
    TPH_TRACE("obligation", "drop-obligation-owed", object_id, code);
    fail_fast(TPH_FF_DROP, object_id, code);
}

void tph_obligation_untracked(uintptr_t pool_key) {
    /* The registry already recorded "cancel-untracked" with the key; what is
     * left is the build's decision. */
    fail_fast(TPH_FF_UNTRACKED, pool_key, 0);
}

void tph_obligation_unrepairable(uintptr_t pool_key, uint32_t overdue_episodes) {
    fail_fast(TPH_FF_UNREPAIRABLE, pool_key, overdue_episodes);
}
