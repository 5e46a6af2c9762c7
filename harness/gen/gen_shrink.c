/* Running generated programs, and shrinking a failure: the program by delta
 * debugging over its units while the same failure persists, then the
 * schedule to the fewest preemptions that still fail (gen_check.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_check.h"
#include "scn_ast.h"
#include "scn_campaign.h"
#include "scn_shrink.h"

void gen_failure_free(gen_failure *f) {
    free(f->failures);
    free(f->schedule);
    free(f->signature);
    scn_failures_free(&f->list);
    memset(f, 0, sizeof *f);
}

char *gen_failure_signature(int status, const scn_failures *list, const char *failures) {
    scn_text t = {0};
    const char *s = failures ? failures : "", *nl;
    size_t n, i;
    if (list && list->n) s = list->v[0].message ? list->v[0].message : "";
    nl = strchr(s, '\n');
    n = nl ? (size_t)(nl - s) : strlen(s);
    scn_text_printf(&t, "%s (status %d): ", scn_failure_kind_name(list && list->n ? list->v[0].kind : SCN_FAILURE_NONE),
                    status);
    for (i = 0; i < n; i++) {
        bool starts = i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_');
        if (isdigit((unsigned char)s[i]) && starts) {
            while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '.')) i++;
            i--;
            scn_text_printf(&t, "#");
        } else {
            scn_text_printf(&t, "%c", s[i]);
        }
    }
    return scn_text_take(&t);
}

/* k for PCT as `run` measures it: the choice points of a probe run (seed
 * 0, random walk), so a generated program's PCT seed replays with `replay
 * --seed S --strategy pct --depth D --pct-steps K`. */
static uint64_t probe_pct_steps(const scn_scenario *s) { return scn_campaign_pct_steps(s); }

/* One run; true when it failed (with the signature `same`, if given). */
static bool run_once(const scn_scenario *s, const scn_run_opts *ro, const char *same, gen_failure *out) {
    scn_run_out r;
    bool hit = false;
    if (scn_run(s, ro, &r) != 0 || r.declined) {
        scn_run_out_free(&r);
        return false;
    }
    if (!r.passed) {
        char *sig = gen_failure_signature(r.status, &r.failure_list, r.failures);
        if (!same || strcmp(sig, same) == 0) {
            hit = true;
            out->how = *ro;
            out->status = r.status;
            out->failures = scn_strdup(r.failures);
            out->schedule = scn_strdup(r.schedule);
            out->signature = sig;
            sig = NULL;
            scn_failures_copy(&out->list, &r.failure_list);
        }
        free(sig);
    }
    scn_run_out_free(&r);
    return hit;
}

bool gen_find_failure(const char *path, const char *text, const gen_search *how, const char *same, gen_failure *out,
                      uint64_t *runs, char *parse_error, size_t parse_error_len) {
    scn_error e;
    scn_scenario *s = scn_parse(path, text, strlen(text), &e);
    uint64_t seed, k = 0;
    bool hit = false;
    memset(out, 0, sizeof *out);
    if (!s) {
        if (parse_error) snprintf(parse_error, parse_error_len, "%s:%d:%d: %s", path, e.line, e.col, e.msg);
        return false;
    }
    for (seed = how->first_seed; !hit && seed - how->first_seed < how->seeds; seed++) {
        int st;
        for (st = 0; !hit && st < SCHED_STRATEGY_COUNT; st++) {
            scn_run_opts ro;
            if (!(how->strategies >> st & 1u) || st == SCHED_STRATEGY_DFS) continue;
            memset(&ro, 0, sizeof ro);
            ro.seed = seed;
            ro.strategy = (sched_strategy_kind)st;
            ro.tail_on_failure = true;
            if (st == SCHED_STRATEGY_PCT) {
                if (k == 0) k = probe_pct_steps(s);
                ro.depth = how->depth;
                ro.pct_steps = k;
            }
            (*runs)++;
            hit = run_once(s, &ro, same, out);
        }
    }
    scn_free(s);
    return hit;
}

/* ---- the program: ddmin over its units ------------------------------------------- */

static bool still_fails(gen_program *p, const char *path, const gen_search *how, const char *same, uint64_t *runs) {
    scn_text t = {0};
    gen_failure f;
    bool hit;
    if (gen_program_illegal(p)) return false;
    gen_emit(p, "shrinking", NULL, &t);
    hit = gen_find_failure(path, t.s, how, same, &f, runs, NULL, 0);
    gen_failure_free(&f);
    scn_text_free(&t);
    return hit;
}

uint64_t gen_shrink_program(gen_program *p, const char *path, const gen_search *how, const char *same,
                            uint64_t max_runs) {
    size_t total = gen_units(p), *live = malloc(total * sizeof *live), n = 0, u, chunks = 2;
    uint64_t runs = 0;
    if (!live) return 0;
    for (u = 0; u < total; u++)
        if (gen_unit_live(p, u)) live[n++] = u;
    /* ddmin's complement step: drop one of `chunks` slices while the failure
     * stays; refine the slices when none can go.  Units are dropped, never
     * added back, so a program only shrinks and the search ends. */
    while (n >= 1 && runs < max_runs) {
        size_t c, size = (n + chunks - 1) / chunks;
        bool dropped = false;
        for (c = 0; c * size < n && runs < max_runs; c++) {
            size_t lo = c * size, hi = lo + size < n ? lo + size : n, i;
            for (i = lo; i < hi; i++) gen_unit_set(p, live[i], false);
            if (still_fails(p, path, how, same, &runs)) {
                memmove(live + lo, live + hi, (n - hi) * sizeof *live);
                n -= hi - lo;
                chunks = chunks > 2 ? chunks - 1 : 2;
                dropped = true;
                break;
            }
            for (i = lo; i < hi; i++) gen_unit_set(p, live[i], true);
        }
        if (dropped) continue;
        if (chunks >= n) break;
        chunks = chunks * 2 < n ? chunks * 2 : n;
    }
    free(live);
    return runs;
}

/* ---- the schedule: the shared shrinker (scn_shrink.h) ------------------------------ */

/* The same failure while a program shrinks: its signature (gen_check.h). */
static bool same_signature(void *same, const scn_run_out *r) {
    char *sig = gen_failure_signature(r->status, &r->failure_list, r->failures);
    bool eq = !same || strcmp(sig, (const char *)same) == 0;
    free(sig);
    return eq;
}

int gen_shrink_schedule(const char *path, const char *text, const char *same, uint64_t max_runs, gen_failure *out,
                        uint64_t *runs) {
    scn_error e;
    scn_scenario *s = scn_parse(path, text, strlen(text), &e);
    scn_shrink_budget b;
    scn_shrink_result res;
    int bound = -1;
    memset(out, 0, sizeof *out);
    if (!s) return -1;
    b.max_preemptions = SCN_SHRINK_PREEMPTIONS;
    b.runs_per_bound = max_runs;
    b.prefix_runs = SCN_SHRINK_PREFIX_RUNS;
    b.max_seconds = 0; /* generate's budget is its runs: its output stays a function of the seed */
    scn_shrink(s, &b, same_signature, (void *)same, NULL, &res);
    *runs += res.runs;
    if (res.found) {
        out->how.strategy = SCHED_STRATEGY_DFS; /* the schedule replays it; the search is gone */
        out->how.tail_on_failure = true;
        out->status = res.hit.status;
        out->failures = scn_strdup(res.hit.failures);
        out->schedule = scn_strdup(res.hit.schedule);
        out->signature = gen_failure_signature(res.hit.status, &res.hit.failure_list, res.hit.failures);
        bound = (int)res.preemptions;
    }
    scn_shrink_result_free(&res);
    scn_free(s);
    return bound;
}
