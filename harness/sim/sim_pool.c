/* Pools: callback queues by priority, the worker factory (workers created on
 * demand up to the maximum, retired after the idle timeout down to the
 * minimum), dispatch, and THE STALL (README.md, "The stall"). */
#include "sim_model.h"

/* ---- creation ---------------------------------------------------------------- */
sim_obj *sim_pool_new(bool is_default) {
    sim_obj *p = sim_obj_new(SIM_OBJ_POOL);
    p->is_default = is_default;
    p->min_threads = 0;
    p->max_threads = is_default ? P->cfg.default_max_threads : P->cfg.private_max_threads;
    p->stall = is_default ? P->cfg.default_pool_stall : P->private_stall;
    p->idle_timeout = is_default ? P->cfg.default_idle_timeout : P->cfg.private_idle_timeout;
    P->npools++;
    return p;
}

sim_obj *sim_env_pool(const tph_os_env *env, const char *call) {
    if (!env || !env->pool) return P->default_pool;
    return sim_use(env->pool, SIM_OBJ_POOL, call, false);
}

/* ---- workers ----------------------------------------------------------------- */
static void run_packet(sim_worker *w, const sim_packet *pk) {
    sim_obj *o = pk->obj;
    void *h = sim_handle_of(o);
    tph_os_instance *inst = (tph_os_instance *)(void *)w;
    switch (o->kind) {
    case SIM_OBJ_WORK: o->cb.work(inst, o->ctx, (tph_os_work *)h); break;
    case SIM_OBJ_WAIT: o->cb.wait(inst, o->ctx, (tph_os_wait *)h, pk->wait_result); break;
    case SIM_OBJ_TIMER: o->cb.timer(inst, o->ctx, (tph_os_timer *)h); break;
    case SIM_OBJ_IO:
        o->cb.io(inst, o->ctx, pk->overlapped, pk->io_result, pk->bytes, (tph_os_io *)h);
        break;
    default: break;
    }
}

static sim_packet *dequeue(sim_obj *pool) {
    for (int pr = 0; pr < 3; pr++) {
        sim_queue *q = &pool->queue[pr];
        sim_packet *pk = q->head;
        if (pk) {
            q->head = pk->next;
            if (!q->head) q->tail = NULL;
            return pk;
        }
    }
    return NULL;
}

/* Removes a live worker from its pool's accounting (it exits when it runs). */
static void unlink_worker(sim_worker *w, bool count_retired) {
    sim_obj *pool = w->pool;
    for (sim_worker **pp = &pool->workers; *pp; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    if (w->idle) pool->nidle--;
    if (w->started) pool->nstarted--;
    pool->nworkers--;
    w->idle = false;
    w->retired = true;
    if (count_retired) pool->workers_retired++;
}

static void worker_main(void *arg) {
    sim_worker *w = (sim_worker *)arg;
    /* start_at was written before the spawn and is never written again */
    if (w->start_at) rt_sleep_until(w->start_at);
    sim_lock_scoped();
    sim_obj *pool = w->pool;
    sim_touch_obj(pool);
    if (!w->retired) {
        w->started = true;
        pool->nstarted++;
    }
    while (!w->retired && !P->shutdown) {
        sim_touch_obj(pool); /* every pass: the first, and each after an rt_wait */
        sim_packet *pk = pool->severed ? NULL : dequeue(pool);
        if (pk) {
            if (w->idle) {
                w->idle = false;
                pool->nidle--;
            }
            w->signalled = false;
            sim_obj *o = pk->obj;
            sim_packet copy = *pk;
            sim_free(pk);
            o->queued--;
            pool->nqueued--;
            o->running++;
            pool->nrunning++;
            /* A callback into a context the core already freed: on the real
             * pool, a use after free.  Reported, and not run. */
            bool freed_ctx = sim_freed_context(o->ctx);
            if (freed_ctx)
                sim_report_misuse(o->kind == SIM_OBJ_TIMER ? "timer callback" : o->kind == SIM_OBJ_WAIT ? "wait callback"
                                  : o->kind == SIM_OBJ_IO ? "io callback" : "work callback",
                                  o, o->kind, "its context was freed by the core before it ran (use after free)");
            sim_unlock();
            if (!freed_ctx) {
                sim_hb_acquire(SIM_HB_SUBMIT, &o->hb[SIM_HB_SUBMIT]);
                sim_hb_acquire(SIM_HB_TIMER_SET, &o->hb[SIM_HB_TIMER_SET]);
                if (copy.signal_event)
                    sim_hb_acquire(SIM_HB_EVENT_SET, &copy.signal_event->hb[SIM_HB_EVENT_SET]);
                run_packet(w, &copy);
                sim_hb_release(SIM_HB_CALLBACK_RETURN, &o->hb[SIM_HB_CALLBACK_RETURN]);
                sim_hb_release(SIM_HB_GROUP_RELEASE, &o->hb[SIM_HB_GROUP_RELEASE]);
            }
            sim_lock_scoped();
            sim_touch_obj(pool);
            o->running--;
            pool->nrunning--;
            o->run_count++;
            pool->callbacks_run++;
            if (o->running == 0) rt_wake_all(&o->idle_q);
            sim_maybe_free(o);
            continue;
        }
        /* Above the thread maximum (lowered meanwhile): retire now. */
        if (pool->nworkers > pool->max_threads) {
            unlink_worker(w, true);
            break;
        }
        if (!w->idle) {
            w->idle = true;
            pool->nidle++;
            w->idle_since = rt_now();
        }
        w->signalled = false;
        uint64_t deadline = RT_FOREVER;
        if (pool->nworkers > pool->min_threads || pool->freed) {
            deadline = pool->freed ? 0 : w->idle_since + pool->idle_timeout;
        }
        if (deadline != RT_FOREVER && rt_now() >= deadline) {
            unlink_worker(w, true);
            break;
        }
        rt_wait(&w->wake, &P->lock, deadline, "pool worker idle");
    }
    sim_unlock();
}

static void spawn_worker(sim_obj *pool) {
    sim_worker *w = (sim_worker *)sim_zalloc(sizeof *w);
    sim_touch(&P->all_workers); /* thread creation: ids go in spawn order */
    sim_touch_obj(pool);
    w->pool = pool;
    w->id = ++P->next_worker_id;
    w->next = pool->workers;
    pool->workers = w;
    w->all_next = P->all_workers;
    P->all_workers = w;
    pool->nworkers++;
    pool->workers_created++;
    w->start_at = pool->start_delay ? rt_now() + pool->start_delay : 0;
    w->thread = rt_spawn(pool->is_default ? "default pool worker" : "private pool worker", worker_main, w, true);
}

/* A packet arrived (or the pool was released): wake an idle worker that is
 * not already on its way, else ask the factory for one more (up to max).  A
 * busy worker drains the queue before idling, so no packet is stranded. */
static void kick(sim_obj *pool) {
    sim_touch_obj(pool);
    if (pool->severed || P->shutdown) return;
    for (sim_worker *w = pool->workers; w; w = w->next) {
        if (w->idle && !w->signalled) {
            w->signalled = true;
            rt_wake_one(&w->wake);
            return;
        }
    }
    if (!pool->factory_held && pool->nworkers < pool->max_threads) spawn_worker(pool);
}

void sim_enqueue(sim_obj *o, const sim_packet *proto) {
    sim_obj *pool = o->pool;
    sim_touch_obj(o);
    sim_packet *pk = (sim_packet *)sim_zalloc(sizeof *pk);
    *pk = *proto;
    pk->obj = o;
    pk->next = NULL;
    int pr = o->priority;
    if (pr < 0 || pr > 2) pr = TPH_OS_PRIORITY_NORMAL;
    sim_queue *q = &pool->queue[pr];
    if (q->tail) q->tail->next = pk;
    else q->head = pk;
    q->tail = pk;
    o->queued++;
    pool->nqueued++;
    kick(pool);
}

uint32_t sim_drop_packets(sim_obj *o) {
    sim_obj *pool = o->pool;
    sim_touch_obj(o);
    uint32_t n = 0;
    for (int pr = 0; pr < 3; pr++) {
        sim_queue *q = &pool->queue[pr];
        sim_packet *prev = NULL;
        for (sim_packet *pk = q->head; pk;) {
            sim_packet *next = pk->next;
            if (pk->obj == o) {
                if (prev) prev->next = next;
                else q->head = next;
                if (q->tail == pk) q->tail = prev;
                sim_free(pk);
                n++;
            } else {
                prev = pk;
            }
            pk = next;
        }
    }
    o->queued -= n;
    o->cancelled += n;
    pool->nqueued -= n;
    /* A drain (WaitFor*Callbacks(FALSE)) waiting on these packets has
     * nothing left to wait for: they will never run. */
    if (n && o->drainers && o->running == 0 && o->queued == 0) rt_wake_all(&o->idle_q);
    return n;
}

/* ---- the stall ---------------------------------------------------------------
 * docs/pool-facts.md: removing a wait packet already delivered to the
 * queue of a pool whose worker factory has no thread yet loses the pool's
 * arrival notification for good.  "No thread yet" is modelled as no started
 * worker: a worker the factory spawned for that very packet but that has not
 * run is the microsecond window the measurements describe.  The stall setting
 * decides whether the condition severs (by default only the default pool's,
 * as only it was ever seen to stall). */
static bool stall_decides(sim_obj *pool) {
    switch (pool->stall.mode) {
    case SIM_STALL_ALWAYS: return true;
    case SIM_STALL_PROBABILITY:
        if (pool->stall.denominator == 0) return false;
        return rt_choose(pool->stall.denominator) < pool->stall.numerator;
    default: return false;
    }
}

static void tell_sever_watch(sim_obj *pool, bool severed) {
    if (P->sever_watch)
        P->sever_watch(P->sever_watch_ctx, pool == P->default_pool ? NULL : (const void *)sim_handle_of(pool), severed, pool->nqueued);
}

void sim_stall_check(sim_obj *pool, uint32_t dropped) {
    sim_touch_obj(pool);
    if (dropped == 0 || pool->severed || pool->nstarted != 0) return;
    if (!stall_decides(pool)) return;
    pool->severed = true;
    pool->stalls++;
    tell_sever_watch(pool, true);
}

/* Only SubmitThreadpoolWork releases a severed pool; the released worker
 * serves the old queue first (FIFO: the submit's packet queues behind it). */
void sim_pool_release(sim_obj *pool) {
    sim_touch_obj(pool);
    if (!pool->severed) return;
    pool->severed = false;
    pool->releases++;
    tell_sever_watch(pool, false);
}

void sim_set_sever_watch(sim_sever_watch_fn fn, void *ctx) {
    sim_need_process("sim_set_sever_watch");
    P->sever_watch = fn;
    P->sever_watch_ctx = ctx;
}

/* ---- freeing ------------------------------------------------------------------ */
static void maybe_free_pool(sim_obj *pool) {
    sim_touch_obj(pool);
    if (!pool->closed || pool->freed || pool->bound != 0) return;
    pool->freed = true;
    /* Its workers leave: wake the idle ones (a freed pool idles out at once). */
    for (sim_worker *w = pool->workers; w; w = w->next) rt_wake_one(&w->wake);
}

void sim_maybe_free(sim_obj *o) {
    sim_touch_obj(o);
    if (!o->closed || o->freed || o->queued || o->running || o->armed || o->io_pending) return;
    o->freed = true;
    if (o->pool) {
        o->pool->bound--;
        maybe_free_pool(o->pool);
    }
}

void sim_wait_callbacks(sim_obj *o, bool include_queued, const char *what, sim_hb_edge edge) {
    sim_touch_obj(o);
    o->drainers++;
    while (!P->shutdown && (o->running || (include_queued && o->queued))) sim_wait_about(&o->idle_q, RT_FOREVER, what, o);
    o->drainers--;
    sim_hb_acquire(edge, &o->hb[edge]);
}

void sim_stop_workers_locked(void) {
    P->shutdown = true;
    for (uint32_t i = 0; i < P->nobjs; i++) {
        sim_obj *o = P->objs[i];
        if (o->kind == SIM_OBJ_POOL)
            for (sim_worker *w = o->workers; w; w = w->next) rt_wake_one(&w->wake);
        if (o->kind == SIM_OBJ_EVENT) rt_wake_all(&o->ev_q);
        if (o->running || o->queued || o->io_pending) rt_wake_all(&o->idle_q);
    }
    rt_wake_all(&P->service_q);
}

/* ---- seam: pools ---------------------------------------------------------------- */
tph_os_pool *tph_os_pool_create(void) {
    sim_need_process("CreateThreadpool");
    sim_lock_scoped();
    sim_expect_announced("CreateThreadpool", 0, 0, 0);
    tph_os_pool *h = NULL;
    if (!sim_fault_hit(SIM_FAULT_POOL_CREATE, 0)) h = (tph_os_pool *)sim_handle_of(sim_pool_new(false));
    sim_unlock();
    return h;
}

/* SetThreadpoolThreadMaximum: a minimum above the new maximum drops to it. */
void tph_os_pool_set_max(tph_os_pool *ph, uint32_t max) {
    sim_need_process("SetThreadpoolThreadMaximum");
    sim_lock_scoped();
    sim_expect_announced("SetThreadpoolThreadMaximum", (uintptr_t)ph, sim_pool_key_of(sim_announced_pool(ph, SIM_OBJ_POOL)), max);
    sim_obj *p = ph ? sim_use(ph, SIM_OBJ_POOL, "SetThreadpoolThreadMaximum", false) : NULL;
    if (!ph) sim_report_misuse("SetThreadpoolThreadMaximum", P->default_pool, SIM_OBJ_POOL, "default pool");
    if (p) {
        p->max_threads = max;
        if (p->min_threads > max) p->min_threads = max;
        for (sim_worker *w = p->workers; w; w = w->next)
            if (w->idle) rt_wake_one(&w->wake);
    }
    sim_unlock();
}

/* SetThreadpoolThreadMinimum: a maximum below the new minimum rises to it,
 * and the minimum's threads are created at once. */
bool tph_os_pool_set_min(tph_os_pool *ph, uint32_t min) {
    sim_need_process("SetThreadpoolThreadMinimum");
    sim_lock_scoped();
    sim_expect_announced("SetThreadpoolThreadMinimum", (uintptr_t)ph, sim_pool_key_of(sim_announced_pool(ph, SIM_OBJ_POOL)), min);
    sim_obj *p = ph ? sim_use(ph, SIM_OBJ_POOL, "SetThreadpoolThreadMinimum", false) : NULL;
    if (!ph) sim_report_misuse("SetThreadpoolThreadMinimum", P->default_pool, SIM_OBJ_POOL, "default pool");
    if (p) {
        p->min_threads = min;
        if (p->max_threads < min) p->max_threads = min;
        while (p->nworkers < min) spawn_worker(p);
    }
    sim_unlock();
    return p != NULL;
}

void tph_os_pool_close(tph_os_pool *ph) {
    sim_need_process("CloseThreadpool");
    sim_lock_scoped();
    sim_expect_announced("CloseThreadpool", (uintptr_t)ph, sim_pool_key_of(sim_announced_pool(ph, SIM_OBJ_POOL)), 0);
    if (!ph) {
        sim_report_misuse("CloseThreadpool", P->default_pool, SIM_OBJ_POOL, "default pool cannot be closed");
    } else {
        sim_obj *p = sim_use(ph, SIM_OBJ_POOL, "CloseThreadpool", false);
        if (p) {
            p->closed = true;
            maybe_free_pool(p);
        }
    }
    sim_unlock();
}

/* ---- queries ------------------------------------------------------------------ */
bool sim_pool_stats_get(tph_os_pool *ph, sim_pool_stats *out) {
    sim_need_process("sim_pool_stats_get");
    sim_lock();
    sim_obj *p = sim_obj_from_handle(ph, SIM_OBJ_POOL);
    if (p) {
        out->id = p->id;
        out->closed = p->closed;
        out->freed = p->freed;
        out->min_threads = p->min_threads;
        out->max_threads = p->max_threads;
        out->workers = p->nworkers;
        out->started_workers = p->nstarted;
        out->idle_workers = p->nidle;
        out->queued = p->nqueued;
        out->running = p->nrunning;
        out->bound_objects = p->bound;
        out->severed = p->severed;
        out->stalls = p->stalls;
        out->releases = p->releases;
        out->workers_created = p->workers_created;
        out->workers_retired = p->workers_retired;
        out->callbacks_run = p->callbacks_run;
    }
    sim_unlock();
    return p != NULL;
}

uint32_t sim_pool_count(void) {
    sim_need_process("sim_pool_count");
    sim_lock();
    uint32_t n = P->npools;
    sim_unlock();
    return n;
}

tph_os_pool *sim_pool_at(uint32_t index) {
    sim_need_process("sim_pool_at");
    sim_lock();
    tph_os_pool *h = NULL;
    uint32_t k = 0;
    for (uint32_t i = 0; i < P->nobjs; i++) {
        sim_obj *o = P->objs[i];
        if (o->kind != SIM_OBJ_POOL) continue;
        if (k++ == index) {
            h = (tph_os_pool *)sim_handle_of(o);
            break;
        }
    }
    sim_unlock();
    return h;
}

bool sim_any_pool_severed_with_queued(void) {
    sim_need_process("sim_any_pool_severed_with_queued");
    sim_lock();
    bool any = false;
    for (uint32_t i = 0; i < P->nobjs && !any; i++) {
        sim_obj *o = P->objs[i];
        any = o->kind == SIM_OBJ_POOL && o->severed && o->nqueued > 0;
    }
    sim_unlock();
    return any;
}

bool sim_severed_scan(tph_os_pool *const *pools, size_t n, uint64_t *severed) {
    sim_need_process("sim_severed_scan");
    sim_lock();
    bool any = false;
    *severed = 0;
    for (uint32_t i = 0; i < P->nobjs && !any; i++) {
        sim_obj *o = P->objs[i];
        any = o->kind == SIM_OBJ_POOL && o->severed && o->nqueued > 0;
    }
    for (size_t i = 0; i < n && i < 64; i++) {
        sim_obj *p = sim_obj_from_handle(pools[i], SIM_OBJ_POOL);
        if (p && p->severed) *severed |= 1ull << i;
    }
    sim_unlock();
    return any;
}

void sim_set_stall(tph_os_pool *ph, sim_stall s) {
    sim_need_process("sim_set_stall");
    sim_lock();
    sim_obj *p = sim_obj_from_handle(ph, SIM_OBJ_POOL);
    if (p) p->stall = s;
    sim_unlock();
}

void sim_pool_set_start_delay(tph_os_pool *ph, uint64_t delay) {
    sim_need_process("sim_pool_set_start_delay");
    sim_lock();
    sim_obj *p = sim_obj_from_handle(ph, SIM_OBJ_POOL);
    if (p) p->start_delay = delay;
    sim_unlock();
}

void sim_set_private_stall(sim_stall s) {
    sim_need_process("sim_set_private_stall");
    sim_lock();
    P->private_stall = s;
    sim_unlock();
}

void sim_pool_hold_factory(tph_os_pool *ph, bool hold) {
    sim_need_process("sim_pool_hold_factory");
    sim_lock_scoped();
    sim_obj *p = sim_obj_from_handle(ph, SIM_OBJ_POOL);
    if (p) {
        p->factory_held = hold;
        if (!hold && p->nqueued > 0) kick(p);
    }
    sim_unlock();
}

/* Forces the idle timeout: idle workers above the minimum are retired in the
 * accounting now (so the pool is cold when this returns) and exit when they
 * next run. */
void sim_pool_retire_idle_workers(tph_os_pool *ph) {
    sim_need_process("sim_pool_retire_idle_workers");
    sim_lock_scoped();
    sim_obj *p = ph ? sim_obj_from_handle(ph, SIM_OBJ_POOL) : P->default_pool; /* NULL: the default pool (sim.h) */
    if (p) {
        sim_touch_obj(p);
        sim_worker *w = p->workers;
        while (w && p->nworkers > p->min_threads) {
            sim_worker *next = w->next;
            if (w->idle && !w->signalled) {
                unlink_worker(w, true);
                rt_wake_one(&w->wake);
            }
            w = next;
        }
    }
    sim_unlock();
}
