#ifndef TPHEAL_GROUP_H
#define TPHEAL_GROUP_H
#include <tpheal/env.h>

/* A cleanup group.  Objects join it by being created with an environment whose
 * group is set; a release closes every member, and the member objects are
 * freed by it (their tph_* pointers are dead afterwards). */
typedef void (*tph_group_cancel_fn)(void *object_ctx, void *cleanup_ctx);

tph_err tph_group_create(tph_group **out, tph_group_cancel_fn /* may be NULL */);
/* Lets pending callbacks run, waits for them, closes every member. */
tph_err tph_group_close_members_draining(tph_group *);
#if TPHEAL_SELF_HEAL
/* Drops pending callbacks (the cancel function runs once per member) and
 * records each member's pool as owed a repair: a dropped wait packet can
 * sever a cold pool. */
tph_err tph_group_close_members_cancelling(tph_group *, void *cleanup_ctx);
#endif
/* The same release with no repair arranged; marks, allocates and starts nothing. */
tph_err tph_group_close_members_cancelling_no_heal_tracking(tph_group *, void *cleanup_ctx);
tph_err tph_group_close(tph_group *);

#endif
