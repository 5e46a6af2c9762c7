/* Compiled by core/tests/CMakeLists.txt to check the API's shape per build.
 * With TPHEAL_SELF_HEAL on, the calls below must compile (the names are
 * real); with it off, each of TPH_CALL_WAIT / TPH_CALL_GROUP must be a
 * compile error -- the self-heal-only functions do not exist there, so a
 * program cannot ask for a repair the build will never make. */
#include <tpheal/tpheal.h>

int main(void) {
    tph_wait *w = NULL;
    tph_group *g = NULL;
    int rc = 0, calls = 2;
#ifdef TPH_CALL_WAIT
    rc += (int)tph_wait_try_cancel_pending(w);
    calls++;
#endif
#ifdef TPH_CALL_GROUP
    rc += (int)tph_group_close_members_cancelling(g, NULL);
    calls++;
#endif
    /* The untracked forms exist in both builds.  Every call gets NULL, so
     * each must answer TPH_EINVAL. */
    rc += (int)tph_wait_try_cancel_pending_no_heal_tracking(w);
    rc += (int)tph_group_close_members_cancelling_no_heal_tracking(g, NULL);
    return rc == calls * (int)TPH_EINVAL ? 0 : 1;
}
