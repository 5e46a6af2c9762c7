/* The trace: a fixed-capacity ring of small records, armed before main from
 * TPHEAL_TRACE, plus a hook the harness uses to park a thread at a named
 * point.
 *
 * The ring's memory comes from plain malloc rather than the seam: the trace is
 * diagnostics about the simulated process, not part of it, so it must neither
 * consume the sim's allocation-fault budget nor vanish when a simulated
 * process ends. */
#include <stdlib.h>
#include <string.h>

#include "os.h"
#include "trace_point.h"

#define FILTER_MAX 256
#define FILTER_PARTS 16

/* The gate every trace point reads: nonzero when armed or hooked.  Written
 * and read only through tph_os_gate_load32/store32 (see trace_point.h). */
volatile uint32_t tph_trace_on;

/* The diagnostics lock (os.h): it orders the trace, never the core. */
static tph_os_mutex trace_lock;
static bool trace_armed;
static char filter_buf[FILTER_MAX];
static const char *filter_parts[FILTER_PARTS];
static size_t filter_count;
static bool filter_all;

/* What the environment asked for at start-up, so a process reset can return
 * to it: a fresh process would read the same variable. */
static char env_filter[FILTER_MAX];

static tph_trace_record *ring;
static size_t ring_capacity;
static size_t wanted_capacity = TPH_TRACE_DEFAULT_CAPACITY;
static uint64_t recorded; /* since the last clear: the next seq */

static tph_trace_hook hook_fn;
static void *hook_ctx;

static void refresh_gate(void) {
    tph_os_gate_store32(&tph_trace_on, (trace_armed || hook_fn != NULL) ? 1u : 0u);
}

static bool filter_passes(const char *target) {
    size_t i;
    if (filter_all) return true;
    for (i = 0; i < filter_count; i++)
        if (strstr(target, filter_parts[i]) != NULL) return true;
    return false;
}

/* Under the lock.  Makes sure the ring exists at the wanted capacity. */
static void ensure_ring_locked(void) {
    if (ring != NULL && ring_capacity == wanted_capacity) return;
    free(ring);
    ring = (tph_trace_record *)calloc(wanted_capacity, sizeof *ring);
    ring_capacity = ring != NULL ? wanted_capacity : 0;
    recorded = 0;
}

/* Under the lock (or before any thread exists). */
static void parse_filter_locked(const char *filter) {
    char *p;
    filter_count = 0;
    filter_all = false;
    snprintf(filter_buf, sizeof filter_buf, "%s", filter != NULL ? filter : "");
    for (p = filter_buf; *p != '\0' && filter_count < FILTER_PARTS;) {
        char *comma = strchr(p, ',');
        if (comma != NULL) *comma = '\0';
        if (strcmp(p, "*") == 0) filter_all = true;
        if (*p != '\0') filter_parts[filter_count++] = p;
        if (comma == NULL) break;
        p = comma + 1;
    }
    trace_armed = filter_all || filter_count > 0;
    if (trace_armed) ensure_ring_locked();
    if (ring == NULL) trace_armed = false;
}

tph_err tph_trace_arm(const char *filter) {
    tph_os_diag_lock(&trace_lock);
    parse_filter_locked(filter);
    refresh_gate();
    tph_os_diag_unlock(&trace_lock);
    return TPH_OK;
}

bool tph_trace_armed(void) { return trace_armed; }

tph_err tph_trace_set_capacity(size_t records) {
    tph_os_diag_lock(&trace_lock);
    wanted_capacity = records == 0 ? TPH_TRACE_DEFAULT_CAPACITY : records;
    tph_os_diag_unlock(&trace_lock);
    return TPH_OK;
}

void tph_trace_clear(void) {
    tph_os_diag_lock(&trace_lock);
    recorded = 0;
    if (trace_armed) ensure_ring_locked();
    tph_os_diag_unlock(&trace_lock);
}

void tph_trace_emit(const char *target, const char *event, uint64_t a, uint64_t b) {
    tph_trace_record rec;
    tph_trace_hook hook;
    void *ctx;
    bool keep;
    rec.time = tph_os_interrupt_time();
    rec.thread = tph_os_thread_id();
    rec.target = target;
    rec.event = event;
    rec.a = a;
    rec.b = b;
    tph_os_diag_lock(&trace_lock);
    keep = trace_armed && filter_passes(target);
    rec.seq = recorded;
    if (keep) {
        ring[recorded % ring_capacity] = rec;
        recorded++;
    }
    /* An armed trace narrows what the hook sees to what it records; an
     * unarmed one still feeds the hook everything, because holds and waits in
     * tests must not depend on an environment variable nobody sets. */
    hook = (keep || !trace_armed) ? hook_fn : NULL;
    ctx = hook_ctx;
    tph_os_diag_unlock(&trace_lock);
    /* Outside the lock: the harness parks threads in the hook, and a parked
     * thread must not stop every other thread from recording. */
    if (hook != NULL) hook(&rec, ctx);
}

size_t tph_trace_snapshot(tph_trace_record *out, size_t max, uint64_t *dropped) {
    size_t kept, first, i, n = 0;
    tph_os_diag_lock(&trace_lock);
    kept = ring_capacity == 0 ? 0 : (recorded < ring_capacity ? (size_t)recorded : ring_capacity);
    first = (size_t)(recorded - kept);
    if (dropped != NULL) *dropped = recorded - kept;
    /* Oldest first: the oldest kept record sits where the next one would go
     * once the ring has wrapped, not at index 0. */
    for (i = 0; i < kept && n < max; i++) out[n++] = ring[(first + i) % ring_capacity];
    tph_os_diag_unlock(&trace_lock);
    return n;
}

void tph_trace_dump(FILE *f) {
    size_t kept, first, i;
    tph_os_diag_lock(&trace_lock);
    kept = ring_capacity == 0 ? 0 : (recorded < ring_capacity ? (size_t)recorded : ring_capacity);
    first = (size_t)(recorded - kept);
    if (first > 0)
        fprintf(f, "# %llu earlier records dropped (ring capacity %llu)\n",
                (unsigned long long)first, (unsigned long long)ring_capacity);
    for (i = 0; i < kept; i++) {
        const tph_trace_record *r = &ring[(first + i) % ring_capacity];
        fprintf(f, "%llu %llu t%u %s %s %llu %llu\n", (unsigned long long)r->seq,
                (unsigned long long)r->time, (unsigned)r->thread, r->target, r->event,
                (unsigned long long)r->a, (unsigned long long)r->b);
    }
    tph_os_diag_unlock(&trace_lock);
}

void tph_trace_set_hook(tph_trace_hook fn, void *ctx) {
    tph_os_diag_lock(&trace_lock);
    hook_fn = fn;
    hook_ctx = ctx;
    refresh_gate();
    tph_os_diag_unlock(&trace_lock);
}

void tph_trace_reset_process(void) {
    /* Back to what a fresh process would have: the environment's arming,
     * an empty ring, no hook.  The ring's memory is kept for reuse. */
    memset(&trace_lock, 0, sizeof trace_lock);
    hook_fn = NULL;
    hook_ctx = NULL;
    wanted_capacity = TPH_TRACE_DEFAULT_CAPACITY;
    recorded = 0;
    parse_filter_locked(env_filter);
    refresh_gate();
}

/* Armed before main, so events during static initialisation and the first
 * moments of main are not lost; arming late was a real defect once (the
 * trace missed the very start-up window it was meant to explain). */
static void trace_arm_from_env(void) {
    const char *env = getenv("TPHEAL_TRACE");
    snprintf(env_filter, sizeof env_filter, "%s", env != NULL ? env : "");
    parse_filter_locked(env_filter);
    refresh_gate();
}

#if defined(_MSC_VER)
#pragma section(".CRT$XCU", read)
static void __cdecl trace_arm_from_env_crt(void) { trace_arm_from_env(); }
__declspec(allocate(".CRT$XCU")) void(__cdecl *tph_trace_arm_initializer)(void) =
    trace_arm_from_env_crt;
#if defined(_WIN64)
#pragma comment(linker, "/include:tph_trace_arm_initializer")
#else
#pragma comment(linker, "/include:_tph_trace_arm_initializer")
#endif
#elif defined(__GNUC__) || defined(__clang__)
__attribute__((constructor)) static void trace_arm_from_env_ctor(void) { trace_arm_from_env(); }
#else
#error "tpheal's trace needs a before-main initialiser on this compiler"
#endif
