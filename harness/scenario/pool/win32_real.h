/* The win32 backend's failable entry points under the names the fault front
 * calls them by.  harness/scenario/CMakeLists.txt compiles the unchanged
 * core/src/win/os_win32.c for tpheal_core_realfault with each of them renamed
 * tph_os_X -> win32_real_X (TPH_WIN32_FRONTED, the one list of them), and
 * win32_faults.c defines the tph_os_X the core calls, in front of these.  No
 * source file is included into another: the front wraps the backend as built. */
#ifndef TPHEAL_SCN_WIN32_REAL_H
#define TPHEAL_SCN_WIN32_REAL_H

#include "os.h"

void *win32_real_alloc(size_t);
tph_os_pool *win32_real_pool_create(void);
tph_os_work *win32_real_work_create(tph_os_work_cb, void *ctx, const tph_os_env *);
tph_os_wait *win32_real_wait_create(tph_os_wait_cb, void *ctx, const tph_os_env *);
tph_os_timer *win32_real_timer_create(tph_os_timer_cb, void *ctx, const tph_os_env *);
tph_os_io *win32_real_io_create(void *file_handle, tph_os_io_cb, void *ctx, const tph_os_env *);
tph_os_group *win32_real_group_create(void);
tph_os_event *win32_real_event_create(bool manual_reset, bool initially_set);

#endif
