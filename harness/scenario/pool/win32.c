/* The scenario runner's pool backend on the real Windows thread pool
 * (scn_pool.h), linked into tpheal-harness-realpool with the core's win32
 * backend behind a fault front (win32_faults.c).  The real pool has none of
 * the model's other knobs or read-outs, and the process is the harness's
 * own: a run leaves the healer (and its pool) running for the next, as in
 * any long-lived application.  Scenarios that need more are declined by
 * scn_pool_unsupported before they run, so the model-only entry points below
 * are never reached. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_features.h"
#include "scn_pool.h"
#include "win32_faults.h"

const char *scn_pool_backend_name(void) { return "win32"; }
bool scn_pool_is_model(void) { return false; }

/* Runs begun in this process.  The first one has the process to itself: no
 * healer has started yet, so the scenarios that count or await its start
 * can run, and so can those with faults, whose counts of the Nth call
 * include the healer's own pool, timer and allocations (make stress runs
 * every free-running seed in a process of its own).  After it, the healer
 * it may have started is still up. */
static unsigned runs_begun;

const char *scn_pool_unsupported(const scn_scenario *s, char *buf, size_t n) {
    const unsigned fresh_only = SCN_FEATURE_BIT(SCN_FEATURE_HEALER) | SCN_FEATURE_BIT(SCN_FEATURE_FAULT);
    const char *why = scn_features_first(s, ((1u << SCN_FEATURE_COUNT) - 1u) & ~fresh_only, buf, n);
    size_t used;
    if (why || runs_begun == 0) return why;
    why = scn_features_first(s, fresh_only, buf, n);
    if (!why) return NULL;
    used = strlen(buf);
    if (used < n) snprintf(buf + used, n - used, "; this process already ran one: one seed per process");
    return why;
}

/* The real process neither begins nor ends with a run, and the core's state
 * (registry, healer) must not be reset under the live pool's threads. */
void scn_pool_process_begin(void) {
    runs_begun++;
    win32_fault_disarm_all();
}
void scn_pool_process_end(void) { win32_fault_disarm_all(); }
bool scn_pool_process_per_run(void) { return false; }

/* A call only the model answers reached the real backend: the runner let
 * through a scenario scn_pool_unsupported should have declined. */
static void model_only(const char *what) {
    fprintf(stderr, "tpheal-harness-realpool: %s reached the real pool's backend (a harness bug: "
                    "scn_pool_unsupported should have declined the scenario)\n", what);
    abort();
}

void scn_pool_set_stall(const void *pool_os, const scn_pool *p) {
    (void)pool_os;
    (void)p;
    model_only("a stall setting");
}
void scn_pool_arm_fault(const scn_fault *f, bool match_pool, const void *pool_os) {
    win32_fault_arm(f->kind, f->nth, f->onward, match_pool, pool_os);
}
uint64_t scn_pool_fault_fired(scn_fault_kind kind) { return win32_fault_fired(kind); }
void scn_pool_retire_idle_workers(const void *pool_os) {
    (void)pool_os;
    model_only("retire_workers");
}
uint64_t scn_pool_severed(const void *pool_os) {
    (void)pool_os;
    model_only("severed()");
    return 0;
}
/* The real pool's factory is as slow as it is: the model's knob that widens
 * the window the stall needs changes no expectation, so it is ignored here
 * rather than declining the scenario. */
void scn_pool_set_start_delay(const void *pool_os, uint64_t delay) {
    (void)pool_os;
    (void)delay;
}
/* Not observable on the real pool: `require severed` reads 0 here, and reach
 * is enforced on controlled runs only. */
uint64_t scn_pool_stalls(const void *pool_os) {
    (void)pool_os;
    return 0;
}
/* Not observable on the real pool: the oracle that asks is skipped there. */
bool scn_pool_any_severed_with_queued(void) { return false; }

void scn_pool_watch_severing(scn_pool_sever_fn fn, void *ctx) {
    (void)fn;
    (void)ctx;
}
bool scn_pool_object_counts_get(const void *os, scn_pool_object_counts *out) {
    (void)os;
    (void)out;
    return false;
}
void scn_pool_misuse_text(scn_text *out, size_t max) {
    (void)out;
    (void)max;
}

/* ---- I/O on a temporary file ------------------------------------------------
 * Each `complete` is one overlapped WriteFile.  Without
 * FILE_SKIP_COMPLETION_PORT_ON_SUCCESS a write that finishes at once still
 * queues its completion packet, so every successful call is exactly one
 * callback on the pool the io object is bound to -- the start it consumes
 * must have been made by the scenario first, as on the model. */
#define WRITE_MAX 65536u
static const char zeros[WRITE_MAX];

typedef struct op_block {
    struct op_block *next;
    OVERLAPPED ov; /* must live until its completion ran: freed with the file */
} op_block;

typedef struct real_file {
    HANDLE h;
    uint64_t offset;
    op_block *ops;
} real_file;

void *scn_pool_file_create(void) {
    char dir[MAX_PATH], path[MAX_PATH];
    real_file *f;
    DWORD n = GetTempPathA((DWORD)sizeof dir, dir);
    if (n == 0 || n >= sizeof dir || GetTempFileNameA(dir, "tph", 0, path) == 0) return NULL;
    f = (real_file *)calloc(1, sizeof *f);
    if (!f) return NULL;
    f->h = CreateFileA(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                       FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_OVERLAPPED | FILE_FLAG_DELETE_ON_CLOSE, NULL);
    if (f->h == INVALID_HANDLE_VALUE) {
        DeleteFileA(path);
        free(f);
        return NULL;
    }
    return f;
}

void *scn_pool_file_handle(void *file) { return file ? ((real_file *)file)->h : NULL; }

bool scn_pool_io_complete(void *file, uint64_t bytes) {
    real_file *f = (real_file *)file;
    op_block *op;
    DWORD len = bytes == 0 ? 1u : bytes > WRITE_MAX ? WRITE_MAX : (DWORD)bytes;
    if (!f) return false;
    op = (op_block *)calloc(1, sizeof *op);
    if (!op) return false;
    op->ov.Offset = (DWORD)f->offset;
    op->ov.OffsetHigh = (DWORD)(f->offset >> 32);
    f->offset += len;
    op->next = f->ops;
    f->ops = op;
    if (WriteFile(f->h, zeros, len, NULL, &op->ov)) return true;
    return GetLastError() == ERROR_IO_PENDING;
}

void scn_pool_file_close(void *file) {
    real_file *f = (real_file *)file;
    if (!f) return;
    CloseHandle(f->h);
    while (f->ops) {
        op_block *next = f->ops->next;
        free(f->ops);
        f->ops = next;
    }
    free(f);
}

/* The real pool checks nothing: the model's announcement rule covers the core. */
void scn_pool_announce_check(bool on) { (void)on; }
void scn_pool_announce_note(const char *target, const char *event, uint64_t a, uint64_t b) {
    (void)target;
    (void)event;
    (void)a;
    (void)b;
}
