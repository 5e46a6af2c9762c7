/* The simulated process: lifecycle, tracked memory, the handle table with its
 * tombstones, misuse reports and fault injection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_impl.h"
#include "rt_native.h"
#include "sim_model.h"

sim_process *sim_P;

/* ---- tracked memory --------------------------------------------------------
 * Every block of the simulated process carries this header and sits on
 * P->allocs, so sim_process_end can free whatever the core or the model left
 * behind (a run abandoned mid-teardown leaves plenty).  The union keeps the
 * payload aligned like malloc's. */
typedef union sim_alloc_hdr_u {
    struct sim_alloc_hdr {
        struct sim_alloc_hdr *prev, *next;
        size_t size;
        uint32_t magic;
        uint32_t tracked;
    } h;
    long double align_ld;
    void *align_p;
    uint64_t align_u;
} sim_alloc_hdr_u;

#define SIM_ALLOC_MAGIC 0x51a110c5u

static void link_alloc(struct sim_alloc_hdr *h) {
    h->prev = NULL;
    h->next = P->allocs;
    if (P->allocs) P->allocs->prev = h;
    P->allocs = h;
}

static void *alloc_block(size_t n, bool tracked) {
    sim_alloc_hdr_u *u = (sim_alloc_hdr_u *)malloc(sizeof *u + (n ? n : 1));
    if (!u) return NULL;
    u->h.magic = SIM_ALLOC_MAGIC;
    u->h.size = n;
    u->h.tracked = tracked ? 1u : 0u;
    if (tracked) link_alloc(&u->h);
    return u + 1;
}

/* Unlinks p's block and returns what to pass to free().  The bounded
 * search forgets what it knew of the block (rt_forget): the allocator may
 * hand the address out again, to a new object. */
static void *unlink_block(void *p) {
    sim_alloc_hdr_u *u = (sim_alloc_hdr_u *)p - 1;
    if (u->h.magic != SIM_ALLOC_MAGIC) {
        fprintf(stderr, "sim: free of a block the simulated process did not allocate\n");
        abort();
    }
    rt_forget(p, u->h.size);
    if (u->h.tracked) {
        if (u->h.prev) u->h.prev->next = u->h.next;
        else P->allocs = u->h.next;
        if (u->h.next) u->h.next->prev = u->h.prev;
    }
    u->h.magic = 0;
    return u;
}

static void free_block(void *p) {
    if (p) free(unlink_block(p));
}

void *sim_zalloc(size_t n) {
    void *p = alloc_block(n, true);
    if (!p) {
        fprintf(stderr, "sim: out of memory\n");
        abort();
    }
    memset(p, 0, n);
    return p;
}

void sim_free(void *p) { free_block(p); }

void *sim_alloc_tracked(size_t n) { return alloc_block(n, true); }

/* tph_os_alloc/free live in os_sim.c; outside a process they fall back here. */
void *sim_alloc_untracked(size_t n);
void sim_free_any(void *p);
void *sim_alloc_untracked(size_t n) { return alloc_block(n, false); }
void sim_free_any(void *p) { free_block(p); }
void *sim_unlink_any(void *p);
void *sim_unlink_any(void *p) { return p ? unlink_block(p) : NULL; }

/* ---- lifecycle ------------------------------------------------------------- */
sim_config sim_config_default(void) {
    sim_config c;
    memset(&c, 0, sizeof c);
    /* 67 s: the default pool's worker idle timeout measured on Windows, after
     * which the pool is cold again and can stall (docs/pool-facts.md). */
    c.default_idle_timeout = 67 * SIM_SECOND;
    c.private_idle_timeout = 67 * SIM_SECOND;
    c.default_max_threads = 512;
    c.private_max_threads = 512;
    c.default_pool_stall.mode = SIM_STALL_ALWAYS;
    c.private_pool_stall.mode = SIM_STALL_NEVER;
    c.uptime_base = 3600ull * 10000000ull; /* one hour */
    return c;
}

/* A program linking the non-Windows build of tpheal (cmake/install.cmake)
 * never calls sim_process_begin: it is an ordinary program on native
 * threads, and its process *is* the simulated one.  So on the native runtime
 * the first pool call begins a default process, once.  Under the controlled
 * scheduler a missing begin is a harness bug and still aborts. */
static rt_lock implicit_lock;

void sim_need_process(const char *call) {
    if (P) return;
    if (rt_installed() == &rt_native_ops) {
        rt_lock_acquire(&implicit_lock);
        if (!P) {
            sim_config cfg = sim_config_default();
            sim_process_begin(&cfg);
        }
        rt_lock_release(&implicit_lock);
        if (P) return;
    }
    fprintf(stderr, "sim: %s called with no simulated process (sim_process_begin missing)\n", call);
    abort();
}

void sim_lock(void) { rt_lock_acquire(&P->lock); }
void sim_lock_scoped(void) { rt_lock_acquire_scoped(&P->lock); }
void sim_unlock(void) { rt_lock_release(&P->lock); }
void sim_touch(const void *key) { rt_access(key, RT_WRITE); }
void sim_touch_obj(const sim_obj *o) { sim_touch(o->pool ? o->pool : o); }
void sim_wait_about(rt_waitq *q, uint64_t deadline, const char *what, const sim_obj *o) {
    rt_wait(q, &P->lock, deadline, what);
    sim_touch_obj(o);
}

bool sim_process_active(void) { return P != NULL; }

void sim_process_begin(const sim_config *cfg) {
    if (P) {
        fprintf(stderr, "sim: sim_process_begin while a process is active\n");
        abort();
    }
    P = (sim_process *)calloc(1, sizeof *P);
    if (!P) abort();
    /* The model's lock orders the model, not the core (sim_hb.h).  Its
     * sections touch the model only, and every wait queue of the model is
     * waited on under it, so a wake, spawn or fault counter inside one is
     * seen by nobody before the section ends: atomic sections. */
    rt_lock_atomic_sections(&P->lock);
    rt_lock_harness_only(&P->lock);
    P->cfg = cfg ? *cfg : sim_config_default();
    P->private_stall = P->cfg.private_pool_stall;
    P->runtime = rt_installed();
    P->service_sleep_until = RT_FOREVER;
    P->default_pool = sim_pool_new(true);
}

void sim_process_end(void) {
    if (!P) return;
    if (P->runtime == (const void *)&rt_native_ops) {
        /* Real threads: stop them and wait (running callbacks finish).  After
         * an ended run the locks may be held by dead threads: the run's
         * threads exit on their own at their next rt_ call, so only join. */
        if (!rt_native_ended()) {
            sim_lock();
            sim_stop_workers_locked();
            sim_unlock();
        }
        for (sim_worker *w = P->all_workers; w; w = w->all_next) {
            rt_join(w->thread);
            w->thread = NULL;
        }
        if (P->service) rt_join(P->service);
        P->service = NULL;
    }
    /* Controlled runs: the scheduler abandoned every fiber; nothing to join. */
    while (P->allocs) {
        sim_alloc_hdr_u *u = (sim_alloc_hdr_u *)P->allocs;
        P->allocs = P->allocs->next;
        u->h.magic = 0;
        free(u);
    }
    free(P->objs);
    free(P->timed);
    free(P->misuse);
    free(P->freed_core);
    free(P);
    P = NULL;
}

/* ---- handles --------------------------------------------------------------
 * handle = ((index + 1) << 4) | kind: deterministic for a seed, never an
 * address, and still decodable after the object is freed. */
sim_obj *sim_obj_new(sim_object_kind kind) {
    sim_touch(&P->objs);
    if (P->nobjs == P->cap) {
        uint32_t cap = P->cap ? P->cap * 2 : 64;
        sim_obj **n = (sim_obj **)realloc(P->objs, cap * sizeof *n);
        if (!n) abort();
        P->objs = n;
        P->cap = cap;
    }
    sim_obj *o = (sim_obj *)sim_zalloc(sizeof *o);
    o->kind = kind;
    o->index = P->nobjs;
    o->id = (kind == SIM_OBJ_POOL && P->next_id[kind] == 0 && !P->default_pool) ? 0 : ++P->next_id[kind];
    o->priority = TPH_OS_PRIORITY_NORMAL;
    P->objs[P->nobjs++] = o;
    return o;
}

void *sim_handle_of(const sim_obj *o) {
    if (o->kind == SIM_OBJ_POOL && o->is_default) return NULL;
    return (void *)((((uintptr_t)o->index + 1u) << 4) | (uintptr_t)o->kind);
}

sim_obj *sim_obj_from_handle(const void *handle, sim_object_kind kind) {
    if (!P) return NULL;
    uintptr_t v = (uintptr_t)handle;
    if (v == 0) return kind == SIM_OBJ_POOL ? P->default_pool : NULL;
    if ((v & 0xFu) != (uintptr_t)kind && kind != SIM_OBJ_NONE) return NULL;
    uintptr_t index = (v >> 4) - 1u;
    if ((v >> 4) == 0 || index >= P->nobjs) return NULL;
    rt_access(&P->objs, RT_READ);
    sim_obj *o = P->objs[index];
    if ((uintptr_t)o->kind != (v & 0xFu)) return NULL;
    sim_touch_obj(o);
    return o;
}

void sim_report_misuse(const char *call, const sim_obj *o, sim_object_kind kind, const char *problem) {
    sim_touch(&P->misuse);
    if (P->nmisuse == P->capmisuse) {
        size_t cap = P->capmisuse ? P->capmisuse * 2 : 16;
        sim_misuse *n = (sim_misuse *)realloc(P->misuse, cap * sizeof *n);
        if (!n) abort();
        P->misuse = n;
        P->capmisuse = cap;
    }
    sim_misuse *m = &P->misuse[P->nmisuse++];
    m->call = call;
    m->kind = o ? o->kind : kind;
    m->id = o ? o->id : 0;
    m->problem = problem;
}

sim_obj *sim_use(const void *handle, sim_object_kind kind, const char *call, bool allow_closed) {
    sim_obj *o = sim_obj_from_handle(handle, kind);
    if (!o) {
        sim_report_misuse(call, NULL, kind, handle ? "unknown handle" : "null handle");
        return NULL;
    }
    if (o->freed) {
        sim_report_misuse(call, o, kind, "object already freed");
        return NULL;
    }
    if (o->closed && !allow_closed) {
        sim_report_misuse(call, o, kind, "object already closed");
        return NULL;
    }
    return o;
}

size_t sim_misuse_count(void) {
    sim_need_process("sim_misuse_count");
    sim_lock();
    size_t n = P->nmisuse;
    sim_unlock();
    return n;
}

bool sim_misuse_get(size_t i, sim_misuse *out) {
    sim_need_process("sim_misuse_get");
    sim_lock();
    bool ok = i < P->nmisuse;
    if (ok) *out = P->misuse[i];
    sim_unlock();
    return ok;
}

int sim_misuse_format(const sim_misuse *m, char *buf, size_t size) {
    return snprintf(buf, size, "%s(%s#%u): %s", m->call, sim_object_kind_name(m->kind), (unsigned)m->id,
                    m->problem);
}

const char *sim_object_kind_name(sim_object_kind k) {
    static const char *const names[SIM_OBJ_KIND_COUNT] = {"none", "pool", "group", "work", "wait",
                                                          "timer", "io", "event", "file"};
    return (unsigned)k < SIM_OBJ_KIND_COUNT ? names[k] : "?";
}

/* ---- faults ---------------------------------------------------------------- */
const char *sim_fault_kind_name(sim_fault_kind k) {
    static const char *const names[SIM_FAULT_KIND_COUNT] = {
#define SIM_FAULT_NAME_(site, name, what) name,
        SIM_FAULT_SITE_MAP(SIM_FAULT_NAME_)
#undef SIM_FAULT_NAME_
    };
    return (unsigned)k < SIM_FAULT_KIND_COUNT ? names[k] : "?";
}

void sim_fault_arm(const sim_fault *f) {
    sim_need_process("sim_fault_arm");
    if ((unsigned)f->kind >= SIM_FAULT_KIND_COUNT) return;
    sim_lock();
    sim_fault_state *s = &P->faults[f->kind];
    s->armed = *f;
    s->matching = 0;
    s->fired = 0;
    sim_unlock();
}

void sim_fault_disarm_all(void) {
    sim_need_process("sim_fault_disarm_all");
    sim_lock();
    for (int k = 0; k < SIM_FAULT_KIND_COUNT; k++) P->faults[k].armed.nth = 0;
    sim_unlock();
}

static uint64_t fault_read(sim_fault_kind k, int which) {
    sim_need_process("sim_fault_*");
    if ((unsigned)k >= SIM_FAULT_KIND_COUNT) return 0;
    sim_lock();
    const sim_fault_state *s = &P->faults[k];
    uint64_t v = which == 0 ? s->calls : s->matching;
    sim_unlock();
    return v;
}
uint64_t sim_fault_calls(sim_fault_kind k) { return fault_read(k, 0); }
uint64_t sim_fault_matching_calls(sim_fault_kind k) { return fault_read(k, 1); }
/* `fired` alone is read without the model's lock: the runner asks it after a
 * controlled run has ended (a `require fault` goal), when a fiber abandoned
 * mid-call may still hold that lock -- make stress hung there on one seed of
 * healer-start-fails-then-retried.  Written atomically under the lock. */
uint64_t sim_fault_fired(sim_fault_kind k) {
    sim_need_process("sim_fault_fired");
    if ((unsigned)k >= SIM_FAULT_KIND_COUNT) return 0;
    return tph_os_load64(&P->faults[k].fired);
}

bool sim_fault_hit(sim_fault_kind kind, uintptr_t pool_key) {
    sim_fault_state *s = &P->faults[kind];
    sim_touch(s);
    s->calls++;
    if (s->armed.nth == 0) return false;
    if (s->armed.match_pool && s->armed.pool_key != pool_key) return false;
    s->matching++;
    bool fail = s->matching == s->armed.nth || (s->armed.from_nth_on && s->matching > s->armed.nth);
    if (fail) tph_os_fetch_add64(&s->fired, 1);
    return fail;
}

const char *sim_fail_fast_reason(void) {
    if (!P) return NULL;
    return P->fail_fasted ? P->fail_fast_reason : NULL;
}
