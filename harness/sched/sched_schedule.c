/* The schedule string: every choice a run made, so a replay is exact
 * whatever the seed-to-choice mapping becomes.  Format (README.md):
 *
 *     T1:<item>.<item>...        T1 = format version 1
 *     T1/idle:<item>...          the same, recorded on idle time
 *     <id>          thread <id> picked at one choice point
 *     <id>*<n>      thread <id> picked at n consecutive choice points
 *     =<v>          rt_choose returned v
 *
 * Numbers are base 32, digits 0-9a-v, most significant first.  Only choice
 * points (two or more runnable threads) are recorded: a forced step replays
 * itself.  Run-length coding keeps it short: a thread usually keeps running
 * for several points. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

static const char digits[] = "0123456789abcdefghijklmnopqrstuv";

/* Room for n more bytes and the terminator (false once out of memory:
 * the run goes on, its result just has no schedule). */
static bool reserve(sched *s, size_t n) {
    size_t cap;
    char *b;
    if (s->outlen + n + 1 <= s->outcap) return !s->out_oom;
    if (s->out_oom) return false;
    cap = s->outcap ? s->outcap * 2 : 256;
    while (cap < s->outlen + n + 1) cap *= 2;
    b = realloc(s->out, cap);
    if (!b) {
        s->out_oom = true;
        return false;
    }
    s->out = b;
    s->outcap = cap;
    return true;
}

/* Writes v in base 32 at p, returns the length (at most 13). */
static size_t fmt_num(char *p, uint64_t v) {
    char tmp[16];
    size_t i = sizeof tmp, n;
    if (v < 32u) { /* the common case: a thread id or a small choice */
        *p = digits[v];
        return 1;
    }
    do {
        tmp[--i] = digits[v & 31u];
        v >>= 5;
    } while (v);
    n = sizeof tmp - i;
    memcpy(p, tmp + i, n);
    return n;
}

/* Up to: '.', 13 digits, '*', 13 digits. */
#define SCHED_MAX_ITEM 32u

static void flush_pick(sched *s) {
    char *p;
    if (!s->last_run) return;
    if (reserve(s, SCHED_MAX_ITEM)) {
        p = s->out + s->outlen;
        if (s->out_items++) *p++ = '.';
        p += fmt_num(p, s->last_pick);
        if (s->last_run > 1) {
            *p++ = '*';
            p += fmt_num(p, s->last_run);
        }
        s->outlen = (size_t)(p - s->out);
    }
    s->last_run = 0;
}

static const char header_steps[] = "T1:", header_idle[] = "T1/idle:";

void sched_record_start(sched *s) {
    const char *h = s->opt.time == SCHED_TIME_IDLE ? header_idle : header_steps;
    size_t n = strlen(h);
    if (reserve(s, n)) {
        memcpy(s->out, h, n);
        s->outlen = n;
    }
}

void sched_record_pick_slow(sched *s, uint32_t id) {
    flush_pick(s);
    s->last_pick = id;
    s->last_run = 1;
}

void sched_record_choose(sched *s, uint32_t value) {
    char *p;
    flush_pick(s);
    if (!reserve(s, SCHED_MAX_ITEM)) return;
    p = s->out + s->outlen;
    if (s->out_items++) *p++ = '.';
    *p++ = '=';
    p += fmt_num(p, value);
    s->outlen = (size_t)(p - s->out);
}

char *sched_record_finish(sched *s) {
    char *r;
    flush_pick(s);
    if (s->out_oom || !s->out) {
        free(s->out);
        s->out = NULL;
        return NULL;
    }
    s->out[s->outlen] = '\0';
    r = s->out;
    s->out = NULL;
    return r;
}

/* ---- parsing ---- */

static int digit_value(char c) {
    const char *p = c ? strchr(digits, c) : NULL;
    return p ? (int)(p - digits) : -1;
}

static int parse_num(const char *t, size_t *i, uint64_t max, uint64_t *out) {
    uint64_t v = 0;
    size_t start = *i;
    int d;
    while ((d = digit_value(t[*i])) >= 0) {
        if (v > (max - (uint64_t)d) / 32u) return -1;
        v = v * 32u + (uint64_t)d;
        (*i)++;
    }
    if (*i == start) return -1;
    *out = v;
    return 0;
}

int sched_schedule_parse(const char *t, sched_item **items, size_t *n, sched_time_model *time, char *err,
                         size_t errlen) {
    size_t i, cap = 0, count = 0, end = strlen(t), bad_at = 0;
    sched_item *v = NULL;
    while (end > 0 && (t[end - 1] == '\n' || t[end - 1] == '\r' || t[end - 1] == ' ')) end--;
    *items = NULL;
    *n = 0;
    if (strncmp(t, header_idle, sizeof header_idle - 1) == 0) {
        i = sizeof header_idle - 1;
        *time = SCHED_TIME_IDLE;
    } else if (strncmp(t, header_steps, sizeof header_steps - 1) == 0) {
        i = sizeof header_steps - 1;
        *time = SCHED_TIME_STEPS;
    } else {
        snprintf(err, errlen, "schedule:1:1: expected \"T1:\" or \"T1/idle:\" (schedule format version 1)");
        return -1;
    }
    while (i < end) {
        sched_item it;
        uint64_t x;
        if (count > 0) {
            bad_at = i;
            if (t[i] != '.') goto bad;
            i++;
        }
        bad_at = i;
        if (t[i] == '=') {
            bad_at = ++i;
            if (parse_num(t, &i, UINT32_MAX, &x) != 0) goto bad;
            it.kind = SCHED_ITEM_CHOOSE;
            it.value = (uint32_t)x;
            it.count = 1;
        } else {
            if (parse_num(t, &i, UINT32_MAX, &x) != 0 || x == 0) goto bad;
            it.kind = SCHED_ITEM_PICK;
            it.value = (uint32_t)x;
            it.count = 1;
            if (t[i] == '*') {
                bad_at = ++i;
                if (parse_num(t, &i, UINT64_MAX, &x) != 0 || x == 0) goto bad;
                it.count = x;
            }
        }
        if (i > end) goto bad;
        if (count == cap) {
            sched_item *g;
            cap = cap ? cap * 2 : 64;
            g = realloc(v, cap * sizeof *g);
            if (!g) {
                free(v);
                snprintf(err, errlen, "schedule:1:%" PRIu64 ": out of memory", (uint64_t)bad_at + 1);
                return -1;
            }
            v = g;
        }
        v[count++] = it;
    }
    *items = v;
    *n = count;
    return 0;
bad:
    free(v);
    snprintf(err, errlen,
             "schedule:1:%" PRIu64 ": expected a thread id (base-32 digits 0-9a-v, non-zero, optional "
             "*count) or =value, items separated by '.'",
             (uint64_t)bad_at + 1);
    return -1;
}

/* ---- replay ---- */

/* The schedule does not fit the program here.  A replay ends diverged;
 * with replay_continue the run goes on with its strategy from its seed
 * (the caller makes this choice the strategy's) and remembers where. */
static void diverge(sched *s, const char *what) {
    char runnable[96];
    size_t used = 0;
    uint32_t k;
    runnable[0] = '\0';
    for (k = 0; k < s->nrunnable && used + 12 < sizeof runnable; k++)
        used += (size_t)snprintf(runnable + used, sizeof runnable - used, " %" PRIu32,
                                 s->runnable[k]->id);
    if (s->opt.replay_continue) {
        s->diverged_at = (uint64_t)s->replay_pos + 1;
        snprintf(s->diverged, sizeof s->diverged, "%s (runnable:%s)", what, runnable);
        free(s->replay);
        s->replay = NULL;
        return;
    }
    sched_end(s, SCHED_REPLAY_DIVERGED,
              "replay diverged at item %" PRIu64 " of the schedule: %s (runnable:%s)",
              (uint64_t)s->replay_pos + 1, what, runnable);
}

/* The next item, or NULL when the run went on past the schedule. */
static sched_item *next_item(sched *s) {
    if (s->replay_pos >= s->nreplay) diverge(s, "the schedule has no more choices");
    return s->replay ? &s->replay[s->replay_pos] : NULL;
}

static void consume(sched *s, sched_item *it) {
    if (++s->replay_used >= it->count) {
        s->replay_pos++;
        s->replay_used = 0;
    }
}

/* NULL when the schedule stopped fitting here and the run continues: the
 * caller asks the strategy (sched_core.c, sched_ops.c). */
rt_thread *sched_replay_pick(sched *s) {
    char what[96];
    sched_item *it = next_item(s);
    if (!it) return NULL;
    if (it->kind != SCHED_ITEM_PICK) {
        snprintf(what, sizeof what, "recorded rt_choose value %" PRIu32 ", the program is at a thread choice",
                 it->value);
        diverge(s, what);
        return NULL;
    }
    if (it->value > s->nthreads || s->threads[it->value - 1]->runnable_at == SCHED_NONE) {
        snprintf(what, sizeof what, "recorded thread %" PRIu32 " is not runnable", it->value);
        diverge(s, what);
        return NULL;
    }
    consume(s, it);
    return s->threads[it->value - 1];
}

/* False when the schedule stopped fitting here and the run continues. */
bool sched_replay_choose(sched *s, uint32_t n, uint32_t *v) {
    char what[96];
    sched_item *it = next_item(s);
    if (!it) return false;
    *v = it->value;
    if (it->kind != SCHED_ITEM_CHOOSE) {
        snprintf(what, sizeof what, "recorded a pick of thread %" PRIu32 ", the program calls rt_choose(%" PRIu32 ")", *v, n);
        diverge(s, what);
        return false;
    }
    if (*v >= n) {
        snprintf(what, sizeof what, "recorded rt_choose value %" PRIu32 " is out of range for rt_choose(%" PRIu32 ")", *v, n);
        diverge(s, what);
        return false;
    }
    consume(s, it);
    return true;
}
