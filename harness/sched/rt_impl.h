/* How an implementation of rt.h plugs in.  rt_dispatch.c forwards every rt_
 * call to the ops table installed for the current run, so the native runtime
 * and the controlled scheduler live in one binary and a run picks one. */
#ifndef TPHEAL_RT_IMPL_H
#define TPHEAL_RT_IMPL_H
#include "rt.h"

typedef struct rt_ops {
    const char *name; /* "native" or "controlled" */
    rt_thread *(*spawn)(const char *name, rt_thread_fn, void *arg, bool daemon);
    void (*join)(rt_thread *);
    uint32_t (*thread_id)(void);
    const char *(*thread_name)(void);
    void (*yield)(void);
    void (*lock_acquire)(rt_lock *);
    void (*lock_release)(rt_lock *);
    bool (*wait)(rt_waitq *, rt_lock *, uint64_t deadline, const char *what);
    void (*wake_one)(rt_waitq *);
    void (*wake_all)(rt_waitq *);
    uint64_t (*now)(void);
    void (*sleep_until)(uint64_t);
    uint32_t (*choose)(uint32_t n);
    void (*end_process)(const char *reason); /* must not return */
    void (*access)(const volatile void *obj, rt_access_kind);
    void (*lock_acquire_diagnostic)(rt_lock *);
    void (*lock_observed)(rt_lock *);
    uint32_t (*choose_delay)(uint32_t n);
    void (*lock_acquire_scoped)(rt_lock *);
    void (*settle_until)(uint64_t);
    void (*forget)(const void *, size_t);
} rt_ops;

/* Installed by the run driver before the run's first thread starts; NULL
 * restores the native runtime (the default when nothing was installed). */
void rt_install(const rt_ops *);
const rt_ops *rt_installed(void);

/* The native implementation (rt_native.c). */
extern const rt_ops rt_native_ops;

#endif
