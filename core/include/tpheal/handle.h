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
tph_err tph_handle_close(tph_handle *);

#endif
