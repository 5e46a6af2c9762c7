/* ThreadSanitizer reports as failures of the run that raised them
 * (TPHEAL_TSAN builds; otherwise only sched_race_reports_claimed, a no-op).
 *
 * TSan calls __tsan_on_report for every report, on the fiber whose access
 * raised it, inside its runtime: the hook only copies what the report says
 * (kind, the two accesses' sizes and program counters, the threads' names)
 * into the current run, and everything else -- symbolising, naming, text --
 * happens after the run on the caller's stack.  The text has no address,
 * pid or TSan thread number: the same seed gives it byte for byte.
 * TSan still prints its own report on stderr (heap block, full stacks). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_sched.h"

#if defined(TPHEAL_TSAN)
#include <sanitizer/common_interface_defs.h>

#include "sched_tsan.h"

/* The report accessors (tsan_debugging.cpp, LLVM >= 4; no public header). */
int __tsan_get_report_data(void *report, const char **description, int *count, int *stack_count,
                           int *mop_count, int *loc_count, int *mutex_count, int *thread_count,
                           int *unique_tid_count, void **sleep_trace, unsigned long trace_size);
int __tsan_get_report_mop(void *report, unsigned long idx, int *tid, void **addr, int *size, int *write,
                          int *atomic, void **trace, unsigned long trace_size);
int __tsan_get_report_thread(void *report, unsigned long idx, int *tid, unsigned long *os_id, int *running,
                             const char **name, int *parent_tid, void **trace, unsigned long trace_size);
void __tsan_on_report(void *report);
int __tsan_on_finalize(int failed);
const char *__tsan_default_options(void);

#ifndef TPHEAL_SOURCE_DIR
#define TPHEAL_SOURCE_DIR ""
#endif

/* Process-wide by nature: TSan's hooks have no context argument. */
static int claimed;
static unsigned long unclaimed_reports;

void sched_race_reports_claimed(void) { claimed = 1; }

/* Every report counts, not only the first of a PC pair: a seed's report
 * must not depend on which seeds ran before it in the same process.  And an
 * impossible allocation returns NULL, as the C library's does, instead of
 * ending the process: the model's out-of-memory stop (test_sim_abort) is
 * then the same code in the race build as in the others. */
const char *__tsan_default_options(void) {
    return "suppress_equal_stacks=0:suppress_equal_addresses=0:allocator_may_return_null=1";
}

int __tsan_on_finalize(int failed) { return claimed ? unclaimed_reports != 0 : failed; }

static void copy_name(char *dst, size_t n, const char *src) {
    snprintf(dst, n, "%s", src ? src : "");
}

void __tsan_on_report(void *report) {
    sched *s = sched_current;
    const char *what = NULL;
    int count = 0, stacks = 0, mops = 0, locs = 0, mutexes = 0, threads = 0, utids = 0;
    void *sleep = NULL;
    sched_race *r;
    if (!s) {
        unclaimed_reports++;
        return;
    }
    r = &s->race;
    if (r->reports++) return;
    __tsan_get_report_data(report, &what, &count, &stacks, &mops, &locs, &mutexes, &threads, &utids, &sleep, 1);
    copy_name(r->what, sizeof r->what, what);
    for (int i = 0; i < mops && r->naccess < 2; i++) {
        sched_race_access *a = &r->access[r->naccess++];
        void *addr = NULL;
        memset(a->pc, 0, sizeof a->pc);
        __tsan_get_report_mop(report, (unsigned long)i, &a->tid, &addr, &a->size, &a->write, &a->atomic, a->pc,
                              SCHED_RACE_FRAMES);
    }
    for (int i = 0; i < threads && r->nthreads < SCHED_RACE_THREADS; i++) {
        int tid = 0, running = 0, parent = 0;
        unsigned long os = 0;
        const char *name = NULL;
        void *trace = NULL;
        __tsan_get_report_thread(report, (unsigned long)i, &tid, &os, &running, &name, &parent, &trace, 1);
        r->thread_tid[r->nthreads] = tid;
        copy_name(r->thread_name[r->nthreads], sizeof r->thread_name[0], name);
        r->nthreads++;
    }
}

void sched_tsan_name(rt_thread *t) {
    char name[48];
    snprintf(name, sizeof name, "thread %" PRIu32 " \"%s\"", t->id, t->name);
    __tsan_set_fiber_name(t->fiber.tsan_fiber, name);
}

/* TSan's notion of the current thread is a pointer the fiber API sets: a
 * fiber that will never run again is made current for a moment, without
 * its stack running, and the caller's is made current again. */
static void *running_tsan_fiber(sched *s) {
    return s->current && s->current->fiber.tsan_fiber && sched_current ? s->current->fiber.tsan_fiber
                                                                        : s->main.tsan_fiber;
}

void sched_tsan_forget(sched *s, rt_thread *t) {
    void *back;
    if (!t->tsan_ignores || !t->fiber.tsan_fiber) return;
    back = running_tsan_fiber(s);
    __tsan_switch_to_fiber(t->fiber.tsan_fiber, __tsan_switch_to_fiber_no_sync);
    while (t->tsan_ignores) {
        t->tsan_ignores--;
        __tsan_ignore_thread_end();
    }
    __tsan_switch_to_fiber(back, __tsan_switch_to_fiber_no_sync);
}

void sched_tsan_run_end(sched *s) {
    for (uint32_t i = 0; i < s->nthreads; i++) {
        rt_thread *t = s->threads[i];
        if (!t->fiber.tsan_fiber) continue;
        __tsan_switch_to_fiber(t->fiber.tsan_fiber, __tsan_switch_to_fiber_no_sync);
        __tsan_release(&s->race);
        while (t->tsan_ignores) {
            t->tsan_ignores--;
            __tsan_ignore_thread_end();
        }
    }
    __tsan_switch_to_fiber(s->main.tsan_fiber, __tsan_switch_to_fiber_no_sync);
    __tsan_acquire(&s->race);
}

typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof tmp) n = (int)sizeof tmp - 1;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t c = t->cap ? t->cap * 2 : 512;
        char *b;
        while (c < t->len + (size_t)n + 1) c *= 2;
        b = realloc(t->buf, c);
        if (!b) return;
        t->buf = b;
        t->cap = c;
    }
    memcpy(t->buf + t->len, tmp, (size_t)n + 1);
    t->len += (size_t)n;
}

static const char *thread_of(const sched_race *r, int tid) {
    for (uint32_t i = 0; i < r->nthreads; i++)
        if (r->thread_tid[i] == tid) return r->thread_name[i][0] ? r->thread_name[i] : "the harness's own thread";
    return "an unnamed thread";
}

/* Removes each "dir/../" from a path in place: the sweep's copies compile
 * through ccache's base_dir, so debug info names build-san/../src/x.c, which
 * the source tree's prefix only matches once collapsed (a report must not
 * depend on where the tree was built). */
static void collapse_dotdot(char *path) {
    char *p;
    while ((p = strstr(path, "/../")) != NULL) {
        char *seg = p;
        while (seg > path && seg[-1] != '/') seg--;
        if (seg == p || (p - seg == 2 && seg[0] == '.' && seg[1] == '.')) return; /* "/../" at the root, or "../../" */
        memmove(seg, p + 4, strlen(p + 4) + 1);
    }
}

/* "function file:line", the file relative to the source tree. */
static void site(text *t, void *pc) {
    char buf[512];
    const char *root = TPHEAL_SOURCE_DIR;
    size_t rl = strlen(root);
    char *fn, *file, *line, *bar;
    /* Return addresses but the first, and TSan records the first as the
     * instruction after the access call too: the site is the byte before. */
    __sanitizer_symbolize_pc((void *)((char *)pc - 1), "%f|%s|%l", buf, sizeof buf);
    fn = buf;
    bar = strchr(fn, '|');
    if (!bar) {
        put(t, "%s", "(unknown)");
        return;
    }
    *bar = '\0';
    file = bar + 1;
    bar = strchr(file, '|');
    line = "";
    if (bar) {
        *bar = '\0';
        line = bar + 1;
    }
    collapse_dotdot(file);
    if (rl && strncmp(file, root, rl) == 0) file += rl;
    if (!*file || strcmp(file, "<null>") == 0) put(t, "%s", fn);
    else put(t, "%s %s:%s", fn, file, line);
}

static void access_text(text *t, const sched_race *r, const sched_race_access *a, const char *lead) {
    put(t, "  %s%s%s of %d bytes by %s\n", lead, a->atomic ? "atomic " : "", a->write ? "write" : "read", a->size,
        thread_of(r, a->tid));
    for (int i = 0; i < SCHED_RACE_FRAMES && a->pc[i]; i++) {
        put(t, "    #%d ", i);
        site(t, a->pc[i]);
        put(t, "\n");
    }
}

char *sched_tsan_race_text(sched *s) {
    sched_race *r = &s->race;
    text t = {0};
    if (!r->reports) return NULL;
    put(&t, "ThreadSanitizer: %s", r->what);
    if (r->reports > 1) put(&t, " (the first of %" PRIu32 " reports in this run)", r->reports);
    put(&t, "\n");
    if (r->naccess > 0) access_text(&t, r, &r->access[0], "");
    if (r->naccess > 1) access_text(&t, r, &r->access[1], "previous ");
    return t.buf;
}
#else
void sched_race_reports_claimed(void) {}
#endif
