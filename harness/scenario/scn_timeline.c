/* A run as a picture (`replay --timeline FILE.html`): one self-contained
 * HTML page with an inline SVG -- no script, no font, no network -- drawn
 * from the run's own trace.  A lane per thread (the scenario's, each pool
 * worker, named by the pool it serves: the healer's, a declared pool's, or
 * the one who made it), virtual time across; each trace record a mark whose
 * text is its hover (<title>); callbacks, holds and awaits as spans; each
 * pool's severed intervals as a band of their own; the failing check as a
 * red line.  What is collected costs no scheduling point (rt_now and
 * rt_thread_name only), so a run drawn is the run replayed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_run_internal.h"

#define LABEL_W 260
#define PLOT_W 1400
#define LANE_H 30
#define TOP 70

typedef struct tl_mark {
    uint32_t thread;
    uint64_t time, n;
    char *text; /* formatted when drawn: by then every pool has its name */
    const char *target, *event;
    int pool;
    uintptr_t key;
    tail_rec rec;
} tl_mark;

typedef struct tl_span {
    uint32_t thread;
    uint64_t t0, t1;
    char *text;
    const char *kind; /* "callback", "hold", "await", "labelled" (an op `as LABEL`: what blocked() reads) */
} tl_span;

typedef struct tl_lane {
    uint32_t thread;
    char who[24];
    char label[120];
} tl_lane;

struct scn_tl {
    tl_mark *marks;
    size_t nmarks, capmarks;
    tl_span *spans;
    size_t nspans, capspans;
    tl_lane lanes[64];
    size_t nlanes;
    uint64_t open_cb[64]; /* per lane: start of the callback running there, +1 (0: none) */
};

scn_tl *scn_tl_new(void) { return (scn_tl *)calloc(1, sizeof(scn_tl)); }

void scn_tl_free(scn_tl *tl) {
    size_t i;
    if (!tl) return;
    for (i = 0; i < tl->nmarks; i++) free(tl->marks[i].text);
    for (i = 0; i < tl->nspans; i++) free(tl->spans[i].text);
    free(tl->marks);
    free(tl->spans);
    free(tl);
}

static int lane_of(scn_tl *tl, uint32_t thread, const char *who) {
    size_t i;
    for (i = 0; i < tl->nlanes; i++)
        if (tl->lanes[i].thread == thread) return (int)i;
    if (tl->nlanes >= 64) return -1;
    tl->lanes[tl->nlanes].thread = thread;
    snprintf(tl->lanes[tl->nlanes].who, sizeof tl->lanes[tl->nlanes].who, "%s", who && *who ? who : "?");
    return (int)tl->nlanes++;
}

void scn_tl_record(run_state *run, uint64_t n, const tail_rec *r) {
    scn_tl *tl = run->tl;
    tl_mark *m;
    if (!tl || lane_of(tl, r->thread, r->who) < 0) return;
    if (tl->nmarks == tl->capmarks) {
        size_t cap = tl->capmarks ? tl->capmarks * 2 : 256;
        tl_mark *nm = (tl_mark *)realloc(tl->marks, cap * sizeof *nm);
        if (!nm) return;
        tl->marks = nm;
        tl->capmarks = cap;
    }
    m = &tl->marks[tl->nmarks++];
    m->thread = r->thread;
    m->time = r->time;
    m->n = n;
    m->text = NULL;
    m->rec = *r;
    m->target = r->target;
    m->event = r->event;
    m->pool = r->pool;
    m->key = r->key;
}

void scn_tl_span(run_state *run, uint64_t t0, const char *kind, const char *text) {
    scn_tl *tl = run->tl;
    tl_span *s;
    uint32_t thread = rt_thread_id();
    if (!tl || lane_of(tl, thread, rt_thread_name()) < 0) return;
    if (tl->nspans == tl->capspans) {
        size_t cap = tl->capspans ? tl->capspans * 2 : 64;
        tl_span *ns = (tl_span *)realloc(tl->spans, cap * sizeof *ns);
        if (!ns) return;
        tl->spans = ns;
        tl->capspans = cap;
    }
    s = &tl->spans[tl->nspans++];
    s->thread = thread;
    s->t0 = t0;
    s->t1 = rt_now();
    s->kind = kind;
    s->text = scn_strdup(text);
}

void scn_tl_callback(run_state *run, int obj, bool start) {
    scn_tl *tl = run->tl;
    int l;
    char text[160];
    if (!tl || (l = lane_of(tl, rt_thread_id(), rt_thread_name())) < 0) return;
    if (start) {
        tl->open_cb[l] = rt_now() + 1;
        return;
    }
    if (!tl->open_cb[l]) return;
    snprintf(text, sizeof text, "callback of %s %s", scn_obj_kind_name(run->s->objs[obj].kind), run->s->objs[obj].name);
    scn_tl_span(run, tl->open_cb[l] - 1, "callback", text);
    tl->open_cb[l] = 0;
}

/* ---- drawing ------------------------------------------------------------ */

static void esc(scn_text *t, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '<': scn_text_printf(t, "&lt;"); break;
        case '>': scn_text_printf(t, "&gt;"); break;
        case '&': scn_text_printf(t, "&amp;"); break;
        case '"': scn_text_printf(t, "&quot;"); break;
        default: scn_text_printf(t, "%c", *s);
        }
    }
}

/* Virtual time across, but not linearly: a run is microseconds of calls,
 * then hundreds of milliseconds of waiting for a tick, and a linear axis
 * drew every call of the first millisecond on one pixel.  Half of x is the
 * time's rank among the run's distinct times, half the time itself: still
 * monotonic, so left of is earlier than. */
typedef struct axis {
    uint64_t *times;
    size_t n;
    uint64_t tmax;
} axis;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double xof(const axis *ax, uint64_t t) {
    size_t lo = 0, hi = ax->n;
    double rank, lin;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ax->times[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    rank = ax->n > 1 ? (double)lo / (double)(ax->n - 1) : 0.0;
    lin = ax->tmax ? (double)t / (double)ax->tmax : 0.0;
    if (rank > 1.0) rank = 1.0;
    return LABEL_W + 10 + (PLOT_W - 20) * (0.5 * rank + 0.5 * lin);
}

static void build_axis(const scn_tl *tl, axis *ax, uint64_t fail_time, bool failed) {
    size_t i, k = 0;
    ax->times = (uint64_t *)malloc((tl->nmarks + 2 * tl->nspans + 1) * sizeof *ax->times);
    ax->n = 0;
    ax->tmax = 0;
    if (!ax->times) return;
    for (i = 0; i < tl->nmarks; i++) ax->times[k++] = tl->marks[i].time;
    for (i = 0; i < tl->nspans; i++) {
        ax->times[k++] = tl->spans[i].t0;
        ax->times[k++] = tl->spans[i].t1;
    }
    if (failed) ax->times[k++] = fail_time;
    qsort(ax->times, k, sizeof *ax->times, cmp_u64);
    for (i = 0; i < k; i++)
        if (ax->n == 0 || ax->times[ax->n - 1] != ax->times[i]) ax->times[ax->n++] = ax->times[i];
    ax->tmax = ax->n ? ax->times[ax->n - 1] : 0;
}

/* A worker's lane says whose it is: the healer's (it runs the ticks), or
 * the pool of the callbacks and repairs it runs. */
static void name_lanes(run_state *run, scn_tl *tl) {
    size_t i, j;
    for (i = 0; i < tl->nlanes; i++) {
        tl_lane *l = &tl->lanes[i];
        const char *pool = NULL;
        char buf[96];
        if (!strstr(l->who, "pool worker")) {
            /* through a copy: GCC 12 at -O0 (the sweep's Debug copies, -Werror)
             * calls two fields of one lane an overlap (-Wrestrict) */
            char who[sizeof l->who];
            memcpy(who, l->who, sizeof who);
            snprintf(l->label, sizeof l->label, "thread %s", who);
            continue;
        }
        for (j = 0; j < tl->nmarks && !pool; j++) {
            const tl_mark *m = &tl->marks[j];
            if (m->thread != l->thread) continue;
            if (strcmp(m->event, "healer-tick") == 0) pool = "healer pool";
            else if (strncmp(m->event, "repair-", 7) == 0 && strcmp(m->target, "heal") == 0 &&
                     strcmp(m->event, "repair-submitted") && strcmp(m->event, "repair-in-flight") &&
                     strcmp(m->event, "repair-overdue"))
                pool = scn_poolname_at(run, m->pool, m->key, buf, sizeof buf);
        }
        for (j = 0; j < tl->nspans && !pool; j++)
            if (tl->spans[j].thread == l->thread && strcmp(tl->spans[j].kind, "callback") == 0) {
                const char *name = tl->spans[j].text + strlen("callback of ");
                size_t o;
                name = strchr(name, ' ') ? strchr(name, ' ') + 1 : name;
                for (o = 0; o < run->s->nobjs; o++)
                    if (strcmp(run->s->objs[o].name, name) == 0 && run->s->objs[o].pool >= 0)
                        pool = run->s->pools[run->s->objs[o].pool].name;
            }
        snprintf(l->label, sizeof l->label, "worker %u of %s", (unsigned)l->thread,
                 pool ? pool : strstr(l->who, "default") ? "default" : "a private pool");
    }
}

static const char *mark_colour(const tl_mark *m) {
    if (strcmp(m->target, "sim") == 0) return "#d62728";
    if (strcmp(m->target, "heal") == 0) return "#2ca02c";
    if (strcmp(m->target, "obligation") == 0) return "#1f77b4";
    if (strcmp(m->target, "api") == 0) return "#7f7f7f";
    return "#9467bd";
}

char *scn_tl_html(run_state *run, const char *title, bool failed, uint64_t fail_time, const char *failure) {
    scn_tl *tl = run->tl;
    scn_text t = {0};
    axis ax;
    size_t i, j, nbands = 0;
    int height;
    uintptr_t band_keys[MAX_OTHER_POOLS + 64];
    int band_pool[MAX_OTHER_POOLS + 64];
    if (!tl) return NULL;
    if (fail_time == UINT64_MAX) /* no check failed: the run's outcome, at its end */
        for (fail_time = 0, i = 0; i < tl->nmarks; i++)
            if (tl->marks[i].time > fail_time) fail_time = tl->marks[i].time;
    for (i = 0; i < tl->nmarks; i++) {
        scn_text mt = {0};
        scn_tracefmt_rec(run, &mt, tl->marks[i].n, &tl->marks[i].rec);
        free(tl->marks[i].text);
        tl->marks[i].text = scn_text_take(&mt);
    }
    name_lanes(run, tl);
    build_axis(tl, &ax, fail_time, failed);
    /* a band per pool that severed */
    for (i = 0; i < tl->nmarks; i++) {
        const tl_mark *m = &tl->marks[i];
        bool seen = false;
        if (strcmp(m->event, "pool-severed") != 0) continue;
        for (j = 0; j < nbands; j++) seen |= band_keys[j] == m->key && band_pool[j] == m->pool;
        if (!seen && nbands < sizeof band_keys / sizeof band_keys[0]) {
            band_keys[nbands] = m->key;
            band_pool[nbands++] = m->pool;
        }
    }
    height = TOP + (int)(tl->nlanes + nbands) * LANE_H + 60;
    scn_text_printf(&t, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
    esc(&t, title);
    scn_text_printf(&t, "</title>\n<style>body{font-family:sans-serif;margin:8px}text{font-family:sans-serif;font-size:12px}"
                        ".lane-label{font-weight:bold}.mark:hover{stroke:#000;stroke-width:2}</style></head><body>\n<h3>");
    esc(&t, title);
    scn_text_printf(&t, "</h3>\n<p>Virtual time runs left to right (half by order of events, half by time). Hover a mark "
                        "or a bar for its trace record or span. Marks: green heal, grey api (the pool calls), blue "
                        "obligation, red sim (the model severed or released a pool). Bars: grey callbacks, orange "
                        "holds, purple awaits, teal labelled operations (what blocked() measures); red band: a pool "
                        "severed; red line: the failing check.</p>\n");
    scn_text_printf(&t, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" id=\"timeline\">\n",
                    LABEL_W + PLOT_W + 60, height); /* + the last time label's overhang */
    /* axis: a few time labels */
    for (i = 0; ax.n && i <= 8; i++) {
        uint64_t tm = ax.times[(ax.n - 1) * i / 8];
        char d[32];
        double x = xof(&ax, tm);
        scn_text_printf(&t, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>", x, TOP - 12, x,
                        height - 40);
        scn_text_printf(&t, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, TOP - 16,
                        scn_duration(d, sizeof d, tm));
    }
    for (i = 0; i < tl->nlanes; i++) {
        int y = TOP + (int)i * LANE_H;
        scn_text_printf(&t, "<g class=\"lane\" data-lane=\"");
        esc(&t, tl->lanes[i].label);
        scn_text_printf(&t, "\"><rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", y, LABEL_W + PLOT_W,
                        LANE_H, i % 2 ? "#fafafa" : "#f0f0f0");
        scn_text_printf(&t, "<text class=\"lane-label\" x=\"6\" y=\"%d\">", y + 19);
        esc(&t, tl->lanes[i].label);
        scn_text_printf(&t, "</text></g>\n");
    }
    for (i = 0; i < nbands; i++) {
        int y = TOP + (int)(tl->nlanes + i) * LANE_H;
        char buf[96];
        const char *name = scn_poolname_at(run, band_pool[i], band_keys[i], buf, sizeof buf);
        uint64_t from = 0;
        bool open = false;
        scn_text_printf(&t, "<g class=\"lane severed-band\" data-lane=\"");
        esc(&t, name);
        scn_text_printf(&t, " severed\"><text class=\"lane-label\" x=\"6\" y=\"%d\">pool ", y + 19);
        esc(&t, name);
        scn_text_printf(&t, ": severed</text>");
        for (j = 0; j <= tl->nmarks; j++) {
            const tl_mark *m = j < tl->nmarks ? &tl->marks[j] : NULL;
            bool mine = m && m->key == band_keys[i] && m->pool == band_pool[i];
            if (mine && !open && strcmp(m->event, "pool-severed") == 0) {
                from = m->time;
                open = true;
            } else if (open && (!m || (mine && strcmp(m->event, "pool-healed") == 0))) {
                double x0 = xof(&ax, from), x1 = xof(&ax, m ? m->time : ax.tmax);
                char d0[32], d1[32];
                scn_text_printf(&t, "<rect class=\"severed\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                                    "fill=\"#d62728\" opacity=\"0.6\"><title>severed from %s to %s</title></rect>",
                                x0, y + 6, x1 - x0 < 2 ? 2 : x1 - x0, LANE_H - 12, scn_duration(d0, sizeof d0, from),
                                m ? scn_duration(d1, sizeof d1, m->time) : "the end (never healed)");
                open = false;
            }
        }
        scn_text_printf(&t, "</g>\n");
    }
    for (i = 0; i < tl->nspans; i++) {
        const tl_span *s = &tl->spans[i];
        int l = lane_of(tl, s->thread, NULL), y = TOP + l * LANE_H;
        double x0 = xof(&ax, s->t0), x1 = xof(&ax, s->t1);
        const char *fill = strcmp(s->kind, "hold") == 0    ? "#ff7f0e"
                           : strcmp(s->kind, "await") == 0   ? "#9467bd"
                           : strcmp(s->kind, "labelled") == 0 ? "#17becf"
                                                              : "#aaa";
        char d0[32], d1[32];
        scn_text_printf(&t, "<rect class=\"span %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"10\" fill=\"%s\" "
                            "opacity=\"0.7\"><title>", s->kind, x0, y + 18, x1 - x0 < 2 ? 2 : x1 - x0, fill);
        esc(&t, s->text);
        scn_text_printf(&t, " (%s to %s)</title></rect>\n", scn_duration(d0, sizeof d0, s->t0),
                        scn_duration(d1, sizeof d1, s->t1));
    }
    for (i = 0; i < tl->nmarks; i++) {
        const tl_mark *m = &tl->marks[i];
        int l = lane_of(tl, m->thread, NULL), y = TOP + l * LANE_H;
        scn_text_printf(&t, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%d\" r=\"5\" fill=\"%s\"><title>", xof(&ax, m->time),
                        y + 11, mark_colour(m));
        esc(&t, m->text);
        scn_text_printf(&t, "</title></circle>\n");
    }
    if (failed) {
        double x = xof(&ax, fail_time);
        char d[32];
        scn_text_printf(&t, "<g id=\"failing-check\"><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d00\" "
                            "stroke-width=\"3\"><title>",
                        x, TOP - 10, x, height - 40);
        esc(&t, failure);
        scn_text_printf(&t, "</title></line><text x=\"%.1f\" y=\"%d\" fill=\"#d00\" text-anchor=\"middle\">failing check "
                            "at %s</text></g>\n",
                        x, height - 24, scn_duration(d, sizeof d, fail_time));
    }
    scn_text_printf(&t, "</svg>\n");
    if (failed) {
        scn_text_printf(&t, "<pre id=\"failure\">");
        esc(&t, failure);
        scn_text_printf(&t, "</pre>\n");
    }
    scn_text_printf(&t, "</body></html>\n");
    free(ax.times);
    return scn_text_take(&t);
}
