/* Forwards each rt_ call to the runtime installed for this run (rt_impl.h). */
#include <stdlib.h>

#include "rt_impl.h"

static const rt_ops *active;

void rt_install(const rt_ops *ops) { active = ops; }

const rt_ops *rt_installed(void) { return active ? active : &rt_native_ops; }

#define OPS (active ? active : &rt_native_ops)

rt_thread *rt_spawn(const char *name, rt_thread_fn fn, void *arg, bool daemon) {
    return OPS->spawn(name, fn, arg, daemon);
}
void rt_join(rt_thread *t) { OPS->join(t); }
uint32_t rt_thread_id(void) { return OPS->thread_id(); }
const char *rt_thread_name(void) { return OPS->thread_name(); }
void rt_yield(void) { OPS->yield(); }
void rt_lock_acquire(rt_lock *l) { OPS->lock_acquire(l); }
void rt_lock_release(rt_lock *l) { OPS->lock_release(l); }
void rt_lock_acquire_diagnostic(rt_lock *l) { OPS->lock_acquire_diagnostic(l); }
void rt_lock_acquire_scoped(rt_lock *l) { OPS->lock_acquire_scoped(l); }
void rt_lock_observed(rt_lock *l) { OPS->lock_observed(l); }
void rt_lock_harness_only(rt_lock *l) { l->race_kind = (l->race_kind & ~(uintptr_t)RT_LOCK_KIND) | RT_LOCK_HARNESS; }
void rt_lock_unordered(rt_lock *l) { l->race_kind = (l->race_kind & ~(uintptr_t)RT_LOCK_KIND) | RT_LOCK_UNORDERED; }
void rt_lock_atomic_sections(rt_lock *l) { l->race_kind |= RT_LOCK_ATOMIC_SECTIONS; }
bool rt_wait(rt_waitq *q, rt_lock *l, uint64_t deadline, const char *what) {
    return OPS->wait(q, l, deadline, what);
}
void rt_wake_one(rt_waitq *q) { OPS->wake_one(q); }
void rt_wake_all(rt_waitq *q) { OPS->wake_all(q); }
uint64_t rt_now(void) { return OPS->now(); }
void rt_sleep_until(uint64_t t) { OPS->sleep_until(t); }
void rt_settle_until(uint64_t t) { OPS->settle_until(t); }
void rt_forget(const void *p, size_t n) { OPS->forget(p, n); }
uint32_t rt_choose(uint32_t n) { return OPS->choose(n); }
uint32_t rt_choose_delay(uint32_t n) { return OPS->choose_delay(n); }
void rt_access(const volatile void *obj, rt_access_kind k) { OPS->access(obj, k); }
void rt_end_process(const char *reason) {
    OPS->end_process(reason);
    abort(); /* an implementation that returned broke its contract */
}
