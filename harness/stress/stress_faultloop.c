/* `tpheal-harness stress-faultloop`: every failable seam call of a scenario
 * failed in turn -- the 1st allocation, the 2nd, ..., the 1st pool creation,
 * ... -- until a run shows that no call of that kind is left to fail.
 *
 *   stress-faultloop --seed SEED [--max-sites N] [--only KIND:N [--trace]]
 *                    [--leak-check-each] FILE
 *
 * --only runs one site (the replay ci/stress.py prints); a failing one
 * prints its report and trace tail on stderr, and with --trace every trace
 * record of the run instead of the tail.
 *
 * Runs are controlled (random walk, seed SEED), so they are deterministic:
 * the run with fault KIND:N is identical, up to the Nth call of KIND, to the
 * run with KIND armed at a count no run reaches (the per-kind baseline:
 * arming a fault takes the sim's lock, two scheduling points, so the
 * fault-free run is not the right reference -- measured: 602 vs 600 steps).
 * If the Nth call is never reached, the whole run is identical to that
 * baseline (same steps, interleaving hash, report and trace tail), which is
 * how the loop knows a kind is exhausted without asking the simulated
 * process (it is gone when scn_run returns).
 *
 * What an injected run must show (docs/stress.md):
 *   - it ends: no deadlock, livelock or fail-fast end, no crash (the driver
 *     sees a crash; the crash line names KIND:N);
 *   - no leak: in the ASan build LeakSanitizer checks at exit, and after
 *     every run with --leak-check-each (ci/stress.py adds it to find the
 *     site once an exit check failed: a check per run costs ~60 ms, which
 *     made the loop over the corpus take 25 s instead of ~3);
 *   - every error reached its caller: the sim reports no misuse (a core that
 *     lost an error would go on to use the handle it did not get), and a
 *     scenario operation that now returns an error is accepted;
 *   - the registry invariants and the callback accounting oracles hold.
 * Scenarios that expect a fail-fast, deadlock or misuse are only checked for
 * crashes and leaks (their expected outcome need not survive a fault).
 *
 * Output: one JSON line per injected fault (type "fault-site"), then a summary
 * line {"v":1,"type":"faultloop-summary","summary":true,"sites":N,"per_kind":{...},
 * "complete":B,...} (harness/json-schema.json).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_json.h"
#include "scn_pool.h"
#include "stress.h"
#include "stress_runner.h"
#include "stress_util.h"

#if defined(TPHEAL_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

#define CMD "stress-faultloop"
/* A call count no scenario reaches: the per-kind baseline arms this. */
#define NEVER_NTH UINT32_MAX

/* The kinds looped over: every failable seam call.  HEALER_START is the same
 * sim fault as POOL_CREATE (the healer's private pool), so it is not
 * looped twice. */
static const scn_fault_kind KINDS[] = {
    SCN_FAULT_ALLOC,         SCN_FAULT_POOL_CREATE,  SCN_FAULT_WORK_CREATE,
    SCN_FAULT_WAIT_CREATE,   SCN_FAULT_TIMER_CREATE, SCN_FAULT_IO_CREATE,
    SCN_FAULT_GROUP_CREATE,  SCN_FAULT_EVENT_CREATE,
};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])

static int sim_class(scn_fault_kind k) {
    return k == SCN_FAULT_HEALER_START ? (int)SCN_FAULT_POOL_CREATE : (int)k;
}

typedef struct run_record {
    bool passed;
    char status[32];
    uint64_t steps, hash;
    scn_failures failures; /* every failure as data */
    char *tail;       /* trace tail, malloc'd */
} run_record;

static char *dup_or_null(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static bool same_text(const char *a, const char *b) {
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static void record_free(run_record *r) {
    scn_failures_free(&r->failures);
    free(r->tail);
    memset(r, 0, sizeof *r);
}

static bool same_run(const run_record *a, const run_record *b) {
    return a->passed == b->passed && a->steps == b->steps && a->hash == b->hash &&
           scn_failures_same(&a->failures, &b->failures) && same_text(a->tail, b->tail);
}

typedef struct loop {
    const scn_scenario *base;
    scn_scenario copy;      /* base with one more fault */
    scn_fault *faults;      /* base faults + the injected one */
    uint64_t seed;
    bool leaked;            /* LSan already reported: later checks would repeat it */
    bool check_each;        /* --leak-check-each */
    bool trace;             /* --trace: keep every record of the run */
} loop;

static bool run_with(loop *L, int kind, uint32_t nth, run_record *rec, stress_run_out *out) {
    const scn_scenario *s = L->base;
    if (kind >= 0) {
        L->copy = *s;
        if (s->nfaults) memcpy(L->faults, s->faults, s->nfaults * sizeof *s->faults);
        scn_fault *f = &L->faults[s->nfaults];
        memset(f, 0, sizeof *f);
        f->kind = (scn_fault_kind)kind;
        f->pool = -1;
        f->nth = nth;
        f->onward = false;
        L->copy.faults = L->faults;
        L->copy.nfaults = s->nfaults + 1;
        s = &L->copy;
    }
    stress_run_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = STRESS_CONTROLLED;
    cfg.seed = L->seed;
    cfg.want_report = true;
    cfg.full_trace = L->trace && kind >= 0 && nth != NEVER_NTH;
    if (!stress_run_one(s, &cfg, out)) return false;
    memset(rec, 0, sizeof *rec);
    rec->passed = out->passed;
    memcpy(rec->status, out->status, sizeof rec->status);
    rec->steps = out->steps;
    rec->hash = out->interleaving_hash;
    scn_failures_copy(&rec->failures, &out->failure_list);
    rec->tail = dup_or_null(out->trace_tail);
    return true;
}

static bool leak_check(loop *L) {
#if defined(TPHEAL_ASAN)
    if (L->leaked || !L->check_each) return false;
    if (__lsan_do_recoverable_leak_check()) {
        L->leaked = true;
        return true;
    }
#else
    (void)L;
#endif
    return false;
}

static void emit(const char *kind, uint32_t nth, bool ok, const char *status, const char *reason,
                 const char *accepted) {
    scn_json j;
    scn_json_begin(&j, stdout, "fault-site");
    scn_json_str(&j, "kind", kind);
    scn_json_u64(&j, "nth", nth);
    scn_json_bool(&j, "ok", ok);
    scn_json_str(&j, "status", status);
    scn_json_str(&j, "reason", reason);
    if (accepted) scn_json_str(&j, "accepted", accepted);
    scn_json_end(&j); /* flushed: the line before a crash must be out */
}

/* Judges one injected run; returns whether it is acceptable. */
static bool judge(const loop *L, const stress_run_out *out, bool leaked, char *status, size_t scap,
                  char *reason, size_t rcap, const char **accepted, size_t *acc_len) {
    *accepted = NULL;
    if (leaked) {
        snprintf(status, scap, "leak");
        snprintf(reason, rcap, "LeakSanitizer found memory lost by this run (report on stderr)");
        return false;
    }
    if (out->passed || L->base->outcome != SCN_OUTCOME_NORMAL) {
        snprintf(status, scap, "ok");
        reason[0] = '\0';
        return true;
    }
    if (out->deadlock_in_scenario_wait) {
        snprintf(status, scap, "ok");
        reason[0] = '\0';
        *accepted = "deadlock in a scenario await/hold: the fault removed the trace point it waited for";
        *acc_len = strlen(*accepted);
        return true;
    }
    /* Every failure of a kind an injected fault may cause (scn_failure.h):
     * an error answered, a set-up step refused, ... */
    const scn_failure *bad = scn_failures_first_not_fault_caused(&out->failure_list);
    if (!bad) {
        snprintf(status, scap, "ok");
        reason[0] = '\0';
        *accepted = out->report;
        *acc_len = strcspn(out->report, "\n");
        return true;
    }
    snprintf(status, scap, "%s", strcmp(out->status, "ok") ? out->status : "oracle");
    size_t n = strcspn(bad->message, "\n");
    if (n >= rcap) n = rcap - 1;
    memcpy(reason, bad->message, n);
    reason[n] = '\0';
    return false;
}

int tph_stress_faultloop_main(int argc, char **argv) {
    uint64_t seed = 0, max_sites = 100000, only_nth = 0;
    const char *path = NULL, *only = NULL;
    bool have_seed = false, check_each = false, trace = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--leak-check-each")) {
            check_each = true;
            continue;
        }
        if (!strcmp(o, "--trace")) {
            trace = true;
            continue;
        }
        if (strncmp(o, "--", 2) != 0) {
            if (path) {
                fprintf(stderr, CMD ": more than one scenario file: %s\n", o);
                return 2;
            }
            path = o;
            continue;
        }
        if (!v) {
            fprintf(stderr, CMD ": %s needs a value\n", o);
            return 2;
        }
        i++;
        if (!strcmp(o, "--seed")) {
            if (!stress_parse_u64(CMD, o, v, &seed)) return 2;
            have_seed = true;
        } else if (!strcmp(o, "--max-sites")) {
            if (!stress_parse_u64(CMD, o, v, &max_sites)) return 2;
        } else if (!strcmp(o, "--only")) {
            only = v;
        } else {
            fprintf(stderr, CMD ": unknown option %s\n", o);
            return 2;
        }
    }
    if (!scn_pool_is_model()) {
        /* The loop knows a kind is exhausted only by comparing controlled,
         * deterministic runs (above); free-running runs cannot tell it. */
        fprintf(stderr, CMD ": the fault loop needs controlled runs on the model: use tpheal-harness\n");
        return 2;
    }
    if (!path || !have_seed) {
        fprintf(stderr, "usage: tpheal-harness " CMD " --seed SEED [--max-sites N] "
                        "[--only KIND:N [--trace]] [--leak-check-each] FILE\n");
        return 2;
    }
    if (trace && !only) {
        /* every record of every site would be the whole loop's runs */
        fprintf(stderr, CMD ": --trace prints one run's records: give it with --only KIND:N\n");
        return 2;
    }
    int only_kind = -1;
    if (only) {
        const char *colon = strchr(only, ':');
        for (size_t k = 0; colon && k < SCN_FAULT_KIND_COUNT; k++) {
            const char *nm = scn_fault_name((scn_fault_kind)k);
            if (strlen(nm) == (size_t)(colon - only) && !strncmp(nm, only, (size_t)(colon - only)))
                only_kind = (int)k;
        }
        if (only_kind < 0 || !stress_parse_u64(CMD, "--only", colon + 1, &only_nth) ||
            only_nth == 0 || only_nth > UINT32_MAX) {
            fprintf(stderr, CMD ": --only wants KIND:N with a fault kind of the scenario language "
                            "and N >= 1, not '%s'\n", only);
            return 2;
        }
    }
    scn_error err;
    scn_scenario *scn = scn_parse_file(path, &err);
    if (!scn) {
        fprintf(stderr, "%s:%d:%d: %s\n", path, err.line, err.col, err.msg);
        return 2;
    }
    if (stress_wrong_build(path, scn->fail_fast_build)) {
        scn_free(scn);
        return STRESS_EXIT_OTHER_BUILD;
    }
    loop L;
    memset(&L, 0, sizeof L);
    L.base = scn;
    L.seed = seed;
    L.check_each = check_each;
    L.trace = trace;
    L.faults = calloc(scn->nfaults + 1, sizeof *L.faults);
    if (!L.faults) {
        scn_free(scn);
        return 3;
    }
    stress_crash_install(path);
    stress_crash_current(seed, 0);

    /* The fault-free baseline. */
    run_record base;
    stress_run_out out;
    if (!run_with(&L, -1, 0, &base, &out)) {
        fprintf(stderr, "%s: run could not start: %s\n", path, out.reason);
        stress_run_out_free(&out);
        free(L.faults);
        scn_free(scn);
        return 3;
    }
    bool base_leak = leak_check(&L);
    if (!out.passed || base_leak)
        emit("none", 0, false, base_leak ? "leak" : out.status,
             base_leak ? "LeakSanitizer found memory lost by the fault-free run" : out.reason, NULL);
    stress_run_out_free(&out);

    uint64_t sites = 0, per_kind[SCN_FAULT_KIND_COUNT] = {0};
    bool complete = true;
    unsigned taken = 0; /* sim classes the scenario arms itself */
    for (size_t i = 0; i < scn->nfaults; i++) taken |= 1u << sim_class(scn->faults[i].kind);
    for (size_t ki = 0; ki < NKINDS; ki++) {
        scn_fault_kind kind = KINDS[ki];
        if (only_kind >= 0 && sim_class((scn_fault_kind)only_kind) != (int)kind) continue;
        if (taken & (1u << sim_class(kind))) continue;
        run_record kbase;
        if (!run_with(&L, (int)kind, NEVER_NTH, &kbase, &out)) {
            stress_run_out_free(&out);
            break;
        }
        stress_run_out_free(&out);
        for (uint32_t nth = only ? (uint32_t)only_nth : 1;; nth++) {
            if (sites >= max_sites) {
                complete = false;
                break;
            }
            run_record rec;
            stress_crash_current(seed, ((uint64_t)kind << 32) | nth);
            if (!run_with(&L, (int)kind, nth, &rec, &out)) {
                stress_run_out_free(&out);
                break;
            }
            bool leaked = leak_check(&L);
            bool reached = !same_run(&rec, &kbase) || leaked;
            if (reached) {
                char status[32], reason[320];
                const char *acc = NULL;
                size_t acc_len = 0;
                bool ok = judge(&L, &out, leaked, status, sizeof status, reason, sizeof reason,
                                &acc, &acc_len);
                char accbuf[320] = "";
                if (acc) {
                    if (acc_len >= sizeof accbuf) acc_len = sizeof accbuf - 1;
                    memcpy(accbuf, acc, acc_len);
                    accbuf[acc_len] = '\0';
                }
                emit(scn_fault_name(kind), nth, ok, status, reason, acc ? accbuf : NULL);
                if (only && trace && out.trace_full) /* a replay asked for every record */
                    fprintf(stderr, "%s%strace (every record of the run):\n%s", out.report ? out.report : "",
                            out.report ? "\n" : "", out.trace_full);
                else if (only && (!ok || acc) && out.trace_tail) /* a replay: the whole story */
                    fprintf(stderr, "%s\ntrace tail:\n%s", out.report ? out.report : "",
                            out.trace_tail);
                sites++;
                per_kind[kind]++;
            }
            record_free(&rec);
            stress_run_out_free(&out);
            if (!reached || only) break;
        }
        record_free(&kbase);
    }
    scn_json j;
    scn_json_begin(&j, stdout, "faultloop-summary");
    scn_json_bool(&j, "summary", true);
    scn_json_str(&j, "scenario", path);
    scn_json_hex(&j, "seed", seed);
    scn_json_u64(&j, "sites", sites);
    scn_json_bool(&j, "complete", complete);
    scn_json_bool(&j, "baseline_passed", base.passed);
    scn_json_object(&j, "per_kind");
    for (size_t ki = 0; ki < NKINDS; ki++) scn_json_u64(&j, scn_fault_name(KINDS[ki]), per_kind[KINDS[ki]]);
    scn_json_close(&j);
    scn_json_end(&j);
    record_free(&base);
    free(L.faults);
    scn_free(scn);
    return 0;
}
