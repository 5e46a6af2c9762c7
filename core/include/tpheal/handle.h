#ifndef TPHEAL_HANDLE_H
#define TPHEAL_HANDLE_H
#include <tpheal/error.h>

/* A waitable handle a tph_wait can watch: an event, or a handle adopted from
 * the caller with the function that closes it. */
typedef struct tph_handle tph_handle;

tph_err tph_event_create(tph_handle **out, bool manual_reset, bool initially_set);
tph_err tph_event_set(tph_handle *);
tph_err tph_event_reset(tph_handle *);
/* raw is an OS handle (HANDLE on Windows); close_fn(raw) runs at tph_handle_close. */
tph_err tph_handle_adopt(tph_handle **out, void *raw, void (*close_fn)(void *raw));
/* WaitForSingleObject: waits up to timeout_ms (0xFFFFFFFF: for ever) for the
 * handle to be signalled; *signalled (may be NULL) says whether it was.  For
 * the user's own waits beside the pool (a callback saying it is done): under
 * the checker (docs/check.md) a scheduling point on virtual time, and a wait
 * nobody ends is reported as a deadlock. */
tph_err tph_handle_wait(tph_handle *, uint32_t timeout_ms, bool *signalled);
tph_err tph_handle_close(tph_handle *);

#endif
