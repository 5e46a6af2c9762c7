/* The native run driver: a simulated process on real OS threads (pthreads, or
 * Win32 threads on Windows) with the real monotonic clock -- the free-running
 * stress mode.  Scheduling is the OS's; the seed drives rt_choose and the
 * optional noise injected at each rt_ call (yield / spin / short sleep, in the
 * style of rr's chaos mode and FoundationDB's BUGGIFY), so a seed makes rare
 * interleavings likelier but does not replay a run.
 */
#ifndef TPHEAL_RT_NATIVE_H
#define TPHEAL_RT_NATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "rt.h"

typedef struct rt_native_options {
    uint64_t seed;         /* rt_choose stream and noise; 0 is a valid seed */
    /* Noise at each rt_ call, in parts per million (0 = off). */
    uint32_t yield_ppm;    /* sched_yield / SwitchToThread */
    uint32_t spin_ppm;     /* busy spin of up to spin_max_iters iterations */
    uint32_t sleep_ppm;    /* sleep of up to sleep_max_us microseconds */
    uint32_t spin_max_iters; /* 0 = 2000 */
    uint32_t sleep_max_us;   /* 0 = 200 */
} rt_native_options;

typedef struct rt_native_result {
    bool ended;             /* rt_end_process was called */
    char reason[256];       /* its reason (truncated); empty when !ended */
    uint32_t threads;       /* threads spawned, main included */
} rt_native_result;

/* Zero noise, seed 0. */
void rt_native_options_default(rt_native_options *);

/* Installs the native runtime, runs main_fn(arg) as thread 1 (non-daemon) on a
 * new OS thread and waits until every non-daemon thread has finished, or until
 * rt_end_process ends the run.  Returns 0 for a normal end, 1 when the run was
 * ended by rt_end_process.  The result is kept for rt_native_last_result.
 * Daemon threads may outlive the run (the sim joins its own).  After an ended
 * run, every run thread exits at its next rt_ call made while it holds no
 * rt_lock (blocked ones notice within ~20 ms), so the model's lock is free
 * again for teardown; the thread that called rt_end_process dies holding
 * whatever it held, as in a dead process.  rt_wait may return spuriously
 * (every ~20 ms slice), as rt.h allows. */
int rt_native_run(rt_thread_fn main_fn, void *arg, const rt_native_options *);
void rt_native_last_result(rt_native_result *out);
/* True once rt_end_process was called in the current (or last) native run. */
bool rt_native_ended(void);

#endif
