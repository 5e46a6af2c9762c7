#ifndef TPHEAL_NATIVE_H
#define TPHEAL_NATIVE_H
#include <stdint.h>

#include <tpheal/group.h>
#include <tpheal/handle.h>
#include <tpheal/io.h>
#include <tpheal/periodic.h>
#include <tpheal/timer.h>
#include <tpheal/wait.h>
#include <tpheal/work.h>

/* The native object behind a tpheal object, as the number a trace record
 * carries in `a` (tpheal/trace.h): on Windows the PTP_WORK, PTP_WAIT,
 * PTP_TIMER, PTP_IO, PTP_CLEANUP_GROUP or event HANDLE; on the model of the
 * pool its deterministic id.  For telling which object a trace line names
 * and for diagnostics: never close, free or arm what it names.  0 for NULL. */
uintptr_t tph_work_native(const tph_work *);
uintptr_t tph_wait_native(const tph_wait *);
uintptr_t tph_timer_native(const tph_timer *);
uintptr_t tph_periodic_native(const tph_periodic *);
uintptr_t tph_io_native(const tph_io *);
uintptr_t tph_group_native(const tph_group *);
uintptr_t tph_handle_native(const tph_handle *);

#endif
