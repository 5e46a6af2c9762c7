/* The native object behind each tpheal object (<tpheal/native.h>): the id
 * every callback-bearing object keeps in its tph_object head, the OS handle
 * of a group or an event. */
#include <tpheal/native.h>

#include "object.h"

static uintptr_t id_of(const void *o) { return o ? (uintptr_t)((const tph_object *)o)->id : 0; }

uintptr_t tph_work_native(const tph_work *w) { return id_of(w); }
uintptr_t tph_wait_native(const tph_wait *w) { return id_of(w); }
uintptr_t tph_timer_native(const tph_timer *t) { return id_of(t); }
uintptr_t tph_periodic_native(const tph_periodic *p) { return id_of(p); }
uintptr_t tph_io_native(const tph_io *io) { return id_of(io); }
uintptr_t tph_group_native(const tph_group *g) { return (uintptr_t)tph_group_os(g); }
uintptr_t tph_handle_native(const tph_handle *h) { return (uintptr_t)tph_handle_os(h); }
