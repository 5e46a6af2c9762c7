/* The run driver: sets a run up, runs thread 1 until the run ends (every
 * non-daemon thread finished, deadlock, livelock, rt_end_process, replay
 * divergence, misuse), then discards every fiber still alive -- daemon
 * workers and timer services never finish -- and reports. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"
#include "sched_tsan.h"

/* One hour of virtual time: far beyond any scenario's sleeps, yet reached
 * quickly by a daemon periodic timer that would otherwise run forever. */
#define SCHED_DEFAULT_MAX_VIRTUAL_TIME (3600ull * 10000000ull)
#define SCHED_DEFAULT_MAX_STEPS 1000000u
#define SCHED_DEFAULT_STACK (64u * 1024u)
#define SCHED_DEFAULT_PCT_DEPTH 3u
/* Any fixed odd stream works; this one keeps the reference test's (54) apart. */
#define SCHED_PCG_STREAM 0x7470686561ull /* "tphea" */

void sched_options_default(sched_options *o) {
    memset(o, 0, sizeof *o);
    o->seed = 0;
    o->strategy = SCHED_STRATEGY_RANDOM;
    o->pct_depth = SCHED_DEFAULT_PCT_DEPTH;
    o->pct_steps = 0;
    o->max_steps = SCHED_DEFAULT_MAX_STEPS;
    o->max_virtual_time = SCHED_DEFAULT_MAX_VIRTUAL_TIME;
    o->schedule = NULL;
    o->stack_size = SCHED_DEFAULT_STACK;
}

const char *sched_status_name(sched_status st) {
    switch (st) {
    case SCHED_OK: return "ok";
    case SCHED_DEADLOCK: return "deadlock";
    case SCHED_LIVELOCK: return "livelock";
    case SCHED_PROCESS_ENDED: return "process-ended";
    case SCHED_REPLAY_DIVERGED: return "replay-diverged";
    case SCHED_MISUSE: return "misuse";
    }
    return "?";
}

static void appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...);

static const char *state_text(const rt_thread *t, char *buf, size_t n) {
    const rt_thread *o;
    switch (t->state) {
    case TS_RUNNABLE: snprintf(buf, n, "runnable"); break;
    case TS_LOCK:
        o = t->blocked_thread;
        if (o)
            snprintf(buf, n, "wants lock#%" PRIu64 " held by thread %" PRIu32 " \"%s\"", (uint64_t)t->blocked_id,
                     o->id, o->name);
        else
            snprintf(buf, n, "wants lock#%" PRIu64 " (free, wake-up pending)", (uint64_t)t->blocked_id);
        break;
    case TS_WAIT:
        if (t->timed_at != SCHED_NONE)
            snprintf(buf, n, "waits on %s (waitq#%" PRIu64 ") until t=%" PRIu64, t->what ? t->what : "?",
                     (uint64_t)t->blocked_id, t->deadline);
        else
            snprintf(buf, n, "waits on %s (waitq#%" PRIu64 ") forever", t->what ? t->what : "?",
                     (uint64_t)t->blocked_id);
        break;
    case TS_SLEEP: snprintf(buf, n, "sleeps until t=%" PRIu64, t->deadline); break;
    case TS_SETTLE: snprintf(buf, n, "settles until t=%" PRIu64 " and the process is quiet", t->deadline); break;
    case TS_JOIN:
        o = t->blocked_thread;
        snprintf(buf, n, "joins thread %" PRIu32 " \"%s\"", o->id, o->name);
        break;
    case TS_FINISHED: snprintf(buf, n, "finished"); break;
    }
    return buf;
}

char *sched_blocked_report(sched *s) {
    char *buf = NULL, line[320];
    size_t len = 0, cap = 0;
    uint32_t i;
    for (i = 0; i < s->nthreads; i++) {
        const rt_thread *t = s->threads[i];
        if (t->state == TS_FINISHED) continue;
        appendf(&buf, &len, &cap, "thread %" PRIu32 " \"%s\"%s: %s\n", t->id, t->name,
                t->daemon ? " (daemon)" : "", state_text(t, line, sizeof line));
    }
    if (!buf) appendf(&buf, &len, &cap, "%s", "");
    return buf;
}

static void appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
    va_list ap;
    int n;
    char tmp[512];
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof tmp) n = (int)sizeof tmp - 1;
    if (*len + (size_t)n + 1 > *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        char *b;
        while (c < *len + (size_t)n + 1) c *= 2;
        b = realloc(*buf, c);
        if (!b) return;
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *len, tmp, (size_t)n + 1);
    *len += (size_t)n;
}

static void normalize(sched_options *o) {
    if (o->pct_depth == 0) o->pct_depth = SCHED_DEFAULT_PCT_DEPTH;
    if (o->max_steps == 0) o->max_steps = SCHED_DEFAULT_MAX_STEPS;
    if (o->max_virtual_time == 0) o->max_virtual_time = SCHED_DEFAULT_MAX_VIRTUAL_TIME;
    if (o->stack_size == 0) o->stack_size = SCHED_DEFAULT_STACK;
}

/* No fiber has an ignore region open here: sched_tsan_run_end closed them
 * all after the run, and before a run starts none was opened. */
static void destroy(sched *s) {
    uint32_t i;
    for (i = 0; i < s->nthreads; i++) {
        sched_fiber_drop(&s->threads[i]->fiber);
        free(s->threads[i]);
    }
    free(s->threads);
    free(s->runnable);
    free(s->timed);
    free(s->replay);
    free(s->out);
    sched_trace_free(s);
    free(s);
}

int sched_run(const sched_options *opt, rt_thread_fn main_fn, void *arg, sched_result *out) {
    /* Only ties rt_lock/rt_waitq memory to the run that last used it; never
     * observable in a run's behaviour or output. */
    static uintptr_t generation;
    sched *s;
    rt_thread *t1;
    memset(out, 0, sizeof *out);
    if (sched_current) {
        /* One run at a time: the rt_ops and the current run are process-wide. */
        out->status = SCHED_MISUSE;
        snprintf(out->reason, sizeof out->reason, "sched_run called inside a run");
        return -1;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        out->status = SCHED_MISUSE;
        snprintf(out->reason, sizeof out->reason, "out of memory");
        return -1;
    }
    s->opt = *opt;
    normalize(&s->opt);
    if (opt->schedule) {
        if (sched_schedule_parse(opt->schedule, &s->replay, &s->nreplay, &s->opt.time, out->reason,
                                 sizeof out->reason) != 0) {
            out->status = SCHED_MISUSE;
            destroy(s);
            return -1;
        }
        if (!s->replay) s->replay = calloc(1, sizeof *s->replay); /* replay mode, zero items */
    }
    if (++generation == 0) ++generation;
    s->gen = generation;
    pcg32_seed(&s->rng, s->opt.seed, SCHED_PCG_STREAM);
    s->next_deadline = RT_FOREVER;
    s->step_time = s->opt.time == SCHED_TIME_IDLE ? 0 : SCHED_STEP_TIME;
    s->strategy = sched_strategy_for(s->opt.strategy);
    s->fp = true; /* every controlled run computes its behaviour class */
    s->strategy->run_start(s);
    sched_record_start(s);
    sched_fiber_main(&s->main);
    t1 = sched_spawn_thread(s, "main", main_fn, arg, false);
    if (!t1) {
        sched_fiber_main_done(&s->main);
        destroy(s);
        out->status = SCHED_MISUSE;
        snprintf(out->reason, sizeof out->reason, "out of memory (thread or fiber stack)");
        return -1;
    }
    sched_current = s;
    rt_install(&sched_controlled_ops);
    s->current = t1;
    sched_fiber_switch(&s->main, &t1->fiber);
    /* The run is over: whichever fiber ended it switched here for good. */
    sched_tsan_run_end(s);
    rt_install(NULL);
    sched_current = NULL;
    sched_fiber_main_done(&s->main);

    if (s->opt.replay_continue && s->replay && s->replay_pos < s->nreplay) {
        /* Continued: the run ended before the schedule did, which is
         * where this program and the schedule part. */
        s->diverged_at = (uint64_t)s->replay_pos + 1;
        snprintf(s->diverged, sizeof s->diverged, "the run ended (%s) with %" PRIu64 " schedule item(s) unused",
                 sched_status_name(s->status), (uint64_t)(s->nreplay - s->replay_pos));
    } else if (s->status != SCHED_REPLAY_DIVERGED && s->replay && s->replay_pos < s->nreplay) {
        /* A replay must use the whole schedule, or it is not the same run. */
        snprintf(s->reason, sizeof s->reason,
                 "replay diverged: the run ended (%s) with %" PRIu64 " schedule item(s) unused",
                 sched_status_name(s->status), (uint64_t)(s->nreplay - s->replay_pos));
        s->status = SCHED_REPLAY_DIVERGED;
    }
    out->status = s->status;
    memcpy(out->reason, s->reason, sizeof out->reason);
    out->fairness = s->status == SCHED_LIVELOCK && !s->replay ? s->strategy->livelock_note : NULL;
    out->diverged_at = s->diverged_at;
    memcpy(out->diverged, s->diverged, sizeof out->diverged);
    out->steps = s->steps;
    out->choice_points = s->choice_points;
    out->preemptions = s->preemptions;
    out->switches = s->switches;
    out->choices = s->choices;
    out->virtual_time = s->now;
    out->threads = s->nthreads;
    out->fibers_peak = s->fibers_peak;
    out->interleaving_hash = s->ihash;
    out->choice_hash = s->chash;
    out->trace_hash = sched_trace_hash(s);
    out->schedule = sched_record_finish(s);
    out->blocked_report = s->status == SCHED_OK ? NULL : sched_blocked_report(s);
    out->lock_waiters = 0;
    for (uint32_t i = 0; s->status != SCHED_OK && i < s->nthreads; i++)
        if (s->threads[i]->state == TS_LOCK) out->lock_waiters++;
    out->race = sched_tsan_race_text(s);
    out->races = s->race.reports;
    destroy(s);
    sched_fiber_recycle();
    return 0;
}

void sched_result_free(sched_result *r) {
    free(r->schedule);
    free(r->blocked_report);
    free(r->race);
    r->schedule = NULL;
    r->blocked_report = NULL;
    r->race = NULL;
}

void sched_release_cache(void) { sched_stack_release_all(); }
