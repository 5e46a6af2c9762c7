/* Assertions, observations and timing helpers of the conformance cases.
 * Only os.h is used, so the helpers behave identically on both backends. */
#include <stdio.h>
#include <string.h>

#include "conf.h"

void conf_check(conf_ctx *c, bool ok, const char *expr, const char *file, int line) {
    if (ok) return;
    c->failures++;
    fprintf(stderr, "%s:%d: %s: check failed: %s\n", file, line, c->case_name, expr);
}

void conf_check_eq(conf_ctx *c, uint64_t got, uint64_t want, const char *got_expr,
                   const char *want_expr, const char *file, int line) {
    if (got == want) return;
    c->failures++;
    fprintf(stderr, "%s:%d: %s: %s == %llu, expected %s == %llu\n", file, line, c->case_name,
            got_expr, (unsigned long long)got, want_expr, (unsigned long long)want);
}

void conf_observe(conf_ctx *c, const char *key, uint64_t value) {
    size_t room = sizeof c->observed - c->observed_len;
    int n = snprintf(c->observed + c->observed_len, room, " %s=%llu", key,
                     (unsigned long long)value);
    if (n > 0 && (size_t)n < room) c->observed_len += (size_t)n;
}

void conf_sleep_ms(uint32_t ms) {
    tph_os_event *e = tph_os_event_create(true, false);
    if (!e) return;
    (void)tph_os_event_wait(e, ms);
    tph_os_event_close(e);
}

uint32_t conf_await_count(const volatile uint32_t *counter, uint32_t want) {
    uint32_t v = tph_os_load32(counter);
    for (uint32_t waited = 0; v < want && waited < CONF_PATIENCE_MS; waited += 5) {
        conf_sleep_ms(5);
        v = tph_os_load32(counter);
    }
    return v;
}

void conf_conc_enter(conf_conc *k) {
    uint32_t now = tph_os_fetch_add32(&k->now, 1) + 1;
    (void)tph_os_fetch_max64(&k->max, now);
}

void conf_conc_leave(conf_conc *k) { (void)tph_os_fetch_sub32(&k->now, 1); }

static void TPH_OS_CALLBACK blocker_cb(tph_os_instance *inst, void *ctx, tph_os_work *w) {
    conf_blocker *b = (conf_blocker *)ctx;
    (void)inst;
    (void)w;
    tph_os_event_set(b->started);
    /* Bounded: a broken case must not hang the matrix. */
    (void)tph_os_event_wait(b->gate, 4 * CONF_PATIENCE_MS);
}

bool conf_blocker_start(conf_blocker *b) {
    memset(b, 0, sizeof *b);
    b->pool = tph_os_pool_create();
    b->started = tph_os_event_create(true, false);
    b->gate = tph_os_event_create(true, false);
    if (!b->pool || !b->started || !b->gate) return false;
    tph_os_pool_set_max(b->pool, 1);
    (void)tph_os_pool_set_min(b->pool, 1);
    b->env.pool = b->pool;
    b->env.priority = TPH_OS_PRIORITY_NORMAL;
    b->work = tph_os_work_create(blocker_cb, b, &b->env);
    if (!b->work) return false;
    tph_os_work_submit(b->work);
    return tph_os_event_wait(b->started, CONF_PATIENCE_MS) == TPH_OS_WAIT_SIGNALED;
}

void conf_blocker_release(conf_blocker *b) {
    if (b->gate) tph_os_event_set(b->gate);
    if (b->work) {
        tph_os_work_wait(b->work, false);
        tph_os_work_close(b->work);
        b->work = NULL;
    }
}

void conf_blocker_close(conf_blocker *b) {
    conf_blocker_release(b);
    if (b->pool) tph_os_pool_close(b->pool);
    if (b->started) tph_os_event_close(b->started);
    if (b->gate) tph_os_event_close(b->gate);
    memset(b, 0, sizeof *b);
}
