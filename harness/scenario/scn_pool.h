/* The pool beneath the core, as the scenario runner sees it.
 *
 * The runner drives the core through its public API; this interface is the
 * rest: the knobs and read-outs only a model has (stalls, faults, severed
 * pools, misuse reports, per-object callback counts), a file to complete
 * I/O on, and where a run's process begins and ends.  One backend is linked
 * into each harness executable -- one interface, a directory per backend, as
 * libuv keeps src/unix and src/win:
 *
 *   pool/model.c  the modelled pool (harness/sim/): every knob, every
 *                 read-out; a run is one simulated process.
 *   pool/win32.c  the real Windows thread pool (core/src/win/os_win32.c
 *                 behind the fault front pool/win32_faults.c): faults, no
 *                 other knob or read-out; I/O on a temporary file opened for
 *                 overlapped writes; the process is the harness's own, so
 *                 the healer and its pool outlive a run.
 *
 * A scenario that needs what the linked backend lacks is declined before it
 * runs, with the reason (scn_pool_unsupported): it is never run with one of
 * its oracles silently switched off. */
#ifndef TPHEAL_SCN_POOL_H
#define TPHEAL_SCN_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scn_ast.h"
#include "scn_text.h"

/* "sim" or "win32": printed in reports and `list`. */
const char *scn_pool_backend_name(void);

/* True for the model: it can be run under the controlled scheduler (its
 * threads are rt_ threads) and has every knob below.  The real pool's
 * threads are the OS's: free-running mode only. */
bool scn_pool_is_model(void);

/* NULL when this backend can run `s`; otherwise what in `s` it cannot do,
 * with the line ("line 6: fault healer-start: faults are injected by the
 * model"), written into buf. */
const char *scn_pool_unsupported(const scn_scenario *s, char *buf, size_t n);

/* A run's process.  begin: before the hook and the pools.  end: after the
 * run; when the process ends with the run (the model) the core's process
 * state is reset too, so the next run starts from a fresh process.
 * process_per_run: false when state (the healer) carries over to the next
 * run, as in any long-lived real process. */
void scn_pool_process_begin(void);
void scn_pool_process_end(void);
bool scn_pool_process_per_run(void);

/* Faults (both backends).  pool_os NULL = the default pool. */
void scn_pool_arm_fault(const scn_fault *f, bool match_pool, const void *pool_os);
uint64_t scn_pool_fault_fired(scn_fault_kind kind);

/* Model only (scn_pool_unsupported declines the scenarios that use them).
 * pool_os NULL = the default pool. */
void scn_pool_set_stall(const void *pool_os, const scn_pool *p);
void scn_pool_set_start_delay(const void *pool_os, uint64_t delay); /* `start-delay D` */
void scn_pool_retire_idle_workers(const void *pool_os);
uint64_t scn_pool_severed(const void *pool_os);
uint64_t scn_pool_stalls(const void *pool_os); /* times it severed (`require severed`) */
/* fn is told when the model severs a pool and when a submit releases it
 * (sim_set_sever_watch: under the model's lock, no scheduling point);
 * pool_os NULL = the default pool.  The real pool severs nothing: a no-op. */
typedef void (*scn_pool_sever_fn)(void *ctx, const void *pool_os, bool severed, uint32_t queued);
void scn_pool_watch_severing(scn_pool_sever_fn fn, void *ctx);
bool scn_pool_any_severed_with_queued(void);

/* What the pool itself counted for one object (os: the core's handle id or
 * OS handle, see the runner).  False when the backend cannot tell. */
typedef struct scn_pool_object_counts {
    uint64_t callbacks_run; /* callbacks that returned */
    uint64_t cancelled;     /* queued callbacks dropped by a cancel, disarm or close */
} scn_pool_object_counts;
bool scn_pool_object_counts_get(const void *os, scn_pool_object_counts *out);

/* Misuse the pool reported during the run (the model records it; the real
 * pool has no such report), at most `max` lines appended to out. */
void scn_pool_misuse_text(scn_text *out, size_t max);
/* The announcement rule (harness/sim/sim_announce.c): the runner's trace hook
 * hands every record over, and a native call not announced by its `api`
 * record (or a record never followed by its call) is misuse.  The real pool
 * cannot tell: no-ops there. */
void scn_pool_announce_check(bool on);
void scn_pool_announce_note(const char *target, const char *event, uint64_t a, uint64_t b);

/* A file for an `io` object; file_handle is what tph_io_create binds.
 * io_complete makes one started operation complete with `bytes` transferred
 * (false: it could not).  file_close after the io object is closed. */
void *scn_pool_file_create(void);
void *scn_pool_file_handle(void *file);
bool scn_pool_io_complete(void *file, uint64_t bytes);
void scn_pool_file_close(void *file);

#endif
