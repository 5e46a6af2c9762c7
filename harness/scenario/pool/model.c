/* The scenario runner's pool backend on the model (scn_pool.h): every knob
 * and read-out of harness/sim, and a run that is one simulated process. */
#include <string.h>

#include <tpheal/tpheal.h>

#include "process_state.h"
#include "scn_pool.h"
#include "sim.h"

const char *scn_pool_backend_name(void) { return "sim"; }
bool scn_pool_is_model(void) { return true; }

const char *scn_pool_unsupported(const scn_scenario *s, char *buf, size_t n) {
    (void)s;
    (void)buf;
    (void)n;
    return NULL;
}

void scn_pool_process_begin(void) { sim_process_begin(NULL); }

void scn_pool_process_end(void) {
    if (sim_process_active()) sim_process_end();
    /* the core's statics described the process that just ended */
    tph_process_state_reset();
}

bool scn_pool_process_per_run(void) { return true; }

static sim_stall stall_of(const scn_pool *p) {
    sim_stall st;
    memset(&st, 0, sizeof st);
    switch (p->stall) {
    case SCN_STALL_NEVER: st.mode = SIM_STALL_NEVER; break;
    case SCN_STALL_ALWAYS: st.mode = SIM_STALL_ALWAYS; break;
    case SCN_STALL_PERCENT:
        st.mode = SIM_STALL_PROBABILITY;
        st.numerator = p->stall_percent;
        st.denominator = 100;
        break;
    default: break;
    }
    return st;
}

void scn_pool_set_stall(const void *pool_os, const scn_pool *p) {
    sim_set_stall((tph_os_pool *)(uintptr_t)pool_os, stall_of(p));
}

void scn_pool_set_start_delay(const void *pool_os, uint64_t delay) {
    sim_pool_set_start_delay((tph_os_pool *)(uintptr_t)pool_os, delay);
}

/* A scenario fault arms the seam site its SCN_FAULT_MAP row names. */
static sim_fault_kind sim_kind_of(scn_fault_kind k) {
    switch (k) {
#define SCN_FAULT_SITE_CASE_(fault, word, site, takes_pool) \
    case SCN_FAULT_##fault: return SIM_FAULT_##site;
        SCN_FAULT_MAP(SCN_FAULT_SITE_CASE_)
#undef SCN_FAULT_SITE_CASE_
    default: return SIM_FAULT_ALLOC;
    }
}

void scn_pool_arm_fault(const scn_fault *f, bool match_pool, const void *pool_os) {
    sim_fault sf;
    memset(&sf, 0, sizeof sf);
    sf.kind = sim_kind_of(f->kind);
    sf.nth = f->nth;
    sf.from_nth_on = f->onward;
    sf.match_pool = match_pool;
    sf.pool_key = (uintptr_t)pool_os;
    sim_fault_arm(&sf);
}

uint64_t scn_pool_fault_fired(scn_fault_kind kind) { return sim_fault_fired(sim_kind_of(kind)); }

void scn_pool_retire_idle_workers(const void *pool_os) {
    sim_pool_retire_idle_workers((tph_os_pool *)(uintptr_t)pool_os);
}

uint64_t scn_pool_severed(const void *pool_os) {
    sim_pool_stats ps;
    if (!sim_pool_stats_get((tph_os_pool *)(uintptr_t)pool_os, &ps)) return 0;
    return ps.severed;
}

uint64_t scn_pool_stalls(const void *pool_os) {
    sim_pool_stats ps;
    if (!sim_pool_stats_get((tph_os_pool *)(uintptr_t)pool_os, &ps)) return 0;
    return ps.stalls;
}

void scn_pool_watch_severing(scn_pool_sever_fn fn, void *ctx) { sim_set_sever_watch(fn, ctx); }

bool scn_pool_any_severed_with_queued(void) { return sim_any_pool_severed_with_queued(); }

bool scn_pool_object_counts_get(const void *os, scn_pool_object_counts *out) {
    sim_object_stats st;
    if (!os || !sim_object_stats_get(os, &st)) return false;
    out->callbacks_run = st.callbacks_run;
    out->cancelled = st.cancelled;
    return true;
}

void scn_pool_misuse_text(scn_text *out, size_t max) {
    size_t n = sim_misuse_count(), i;
    for (i = 0; i < n && i < max; i++) {
        sim_misuse m;
        char buf[256];
        if (!sim_misuse_get(i, &m)) break;
        sim_misuse_format(&m, buf, sizeof buf);
        scn_text_printf(out, "%s\n", buf);
    }
}

/* The model frees its files with the process. */
void *scn_pool_file_create(void) { return sim_file_create(); }
void *scn_pool_file_handle(void *file) { return file; }
bool scn_pool_io_complete(void *file, uint64_t bytes) { return sim_io_complete(file, NULL, 0, (uintptr_t)bytes); }
void scn_pool_file_close(void *file) { (void)file; }

void scn_pool_announce_check(bool on) { sim_announce_check(on); }
void scn_pool_announce_note(const char *target, const char *event, uint64_t a, uint64_t b) {
    sim_announce_note(target, event, a, b);
}
