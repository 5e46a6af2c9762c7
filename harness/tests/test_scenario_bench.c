/* The bench (scn_bench.c) with stand-ins through the linker's --wrap
 * (CMakeLists.txt): its clock ticks once a scenario run begun and once a
 * scenario freed, so a rate is exact and no real time is read, and scn_run
 * can be made to refuse a run.
 * - `bench --rate` (scn_bench_rate): the runs divided by the clock read
 *   around exactly the timed runs -- not the untimed warm-up, not an empty
 *   interval, not the freeing after them: one clock unit a run, the rate is 1
 *   whatever the machine;
 * - `bench` (scn_bench_main) exits 1 when the runner refuses a run, the DFS
 *   search's included;
 * - its two `pct: depth-d bug` lines run PCT on the depth-2 bug 4,000 times
 *   and on the depth-3 bug 40,000 times, at that depth (harness/sched/README.md:
 *   the counts are chosen so the bound predicts >= 20 hits);
 * - its `points/run` figures are the steps the runner reported for exactly
 *   the runs counted, the seeded runs' and the DFS search's apart;
 * - its peak RSS is read (fopen of /proc/self/status, wrapped too) after
 *   the memory scenario's runs, and said to be unread when the file cannot
 *   be opened.
 * The two real-time measurements the bench composes are stood in for too:
 * the raw fiber switch rate (4 million switches) and the PCT hit counts
 * (44,000 runs of the known-depth bugs) are test_sched_bench's and
 * test_sched_pct's to check; here each call is recorded and answered with
 * fixed figures.  Run for real, the eight cases ran those 280,000 runs and
 * 28 million switches: 7.5 s in the default build, 127 s in the ASan build
 * with make test's detect_stack_use_after_return (every fiber frame a fake
 * stack), past 200 s beside CPU hogs -- past the sabotage sweep's baseline
 * bound, which stopped the whole sweep. */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, fileno under -std=c11; the test is Linux-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt_sched.h"
#include "scn_ast.h"
#include "scn_bench.h"
#include "scn_run.h"

double __wrap_sched_bench_seconds(void);
void __real_scn_free(scn_scenario *s);
void __wrap_scn_free(scn_scenario *s);
int __real_scn_run(const scn_scenario *s, const scn_run_opts *o, scn_run_out *out);
int __wrap_scn_run(const scn_scenario *s, const scn_run_opts *o, scn_run_out *out);
int __wrap_sched_bench_pct(unsigned bug_depth, unsigned pct_depth, uint64_t runs, uint64_t first_seed,
                           sched_bench_pct_out *out);
double __wrap_sched_bench_raw_switches_per_sec(uint64_t n);

scn_scenario *__real_scn_parse(const char *path, const char *text, size_t len, scn_error *err);
scn_scenario *__wrap_scn_parse(const char *path, const char *text, size_t len, scn_error *err);
FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);

static uint64_t runs_begun, freed;
static bool refuse_dfs;    /* scn_run refuses a run of the DFS strategy */
static bool refuse_seeded; /* ... of a seeded strategy (random, PCT) */
static bool pct_fails;     /* sched_bench_pct reports a run that did not end normally */
static bool pct_below;     /* ... hits one short of its bound's share */

/* The steps scn_run reported: the first `seeded_wanted` runs of a seeded
 * strategy after the `seeded_skip` before them (PCT's probe, the bench's
 * first run: scn_campaign_pct_steps, untimed and uncounted), then the
 * reference race's, and every DFS run, each summed with its count. */
static uint64_t seeded_skip, seeded_wanted, seeded_runs, seeded_steps, dfs_runs, dfs_steps;

/* /proc/self/status: refused, or a stand-in whose peak is 4096 KiB, with
 * the runs begun when it was opened */
static bool status_refused;
static uint64_t status_opened_at;
static char status_text[] = "Name:\ttest\nVmPeak:\t  9999 kB\nVmHWM:\t    4096 kB\nVmRSS:\t  1 kB\n";

FILE *__wrap_fopen(const char *path, const char *mode) {
    if (strcmp(path, "/proc/self/status") != 0) return __real_fopen(path, mode);
    status_opened_at = runs_begun;
    if (status_refused) return NULL;
    return fmemopen(status_text, strlen(status_text), "r");
}

/* Armed (> 0): the parse this many calls on fails, as a parse error at
 * 7:3 would */
static unsigned parse_fails_in;

scn_scenario *__wrap_scn_parse(const char *path, const char *text, size_t len, scn_error *err) {
    if (parse_fails_in && --parse_fails_in == 0) {
        memset(err, 0, sizeof *err);
        err->line = 7;
        err->col = 3;
        snprintf(err->msg, sizeof err->msg, "refused");
        return NULL;
    }
    return __real_scn_parse(path, text, len, err);
}

double __wrap_sched_bench_seconds(void) {
    return (double)(runs_begun + freed);
}

void __wrap_scn_free(scn_scenario *s) {
    if (s) freed++;
    __real_scn_free(s);
}

int __wrap_scn_run(const scn_scenario *s, const scn_run_opts *o, scn_run_out *out) {
    runs_begun++;
    if ((refuse_dfs && o->strategy == SCHED_STRATEGY_DFS) || (refuse_seeded && o->strategy != SCHED_STRATEGY_DFS)) {
        memset(out, 0, sizeof *out);
        out->bad_options = true;
        return -1;
    }
    {
        int rc = __real_scn_run(s, o, out);
        if (rc == 0 && o->strategy == SCHED_STRATEGY_DFS) {
            dfs_runs++;
            dfs_steps += out->steps;
        } else if (rc == 0 && seeded_skip) {
            seeded_skip--;
        } else if (rc == 0 && seeded_runs < seeded_wanted) {
            seeded_runs++;
            seeded_steps += out->steps;
        }
        return rc;
    }
}

/* the PCT measurements the bench asked for, in order */
static struct {
    unsigned bug_depth, pct_depth;
    uint64_t runs;
} pct_calls[8];
static size_t npct_calls;

int __wrap_sched_bench_pct(unsigned bug_depth, unsigned pct_depth, uint64_t runs, uint64_t first_seed,
                           sched_bench_pct_out *out) {
    (void)first_seed;
    if (npct_calls < sizeof pct_calls / sizeof pct_calls[0]) {
        pct_calls[npct_calls].bug_depth = bug_depth;
        pct_calls[npct_calls].pct_depth = pct_depth;
        pct_calls[npct_calls].runs = runs;
    }
    npct_calls++;
    memset(out, 0, sizeof *out);
    if (pct_fails) return -1;
    /* fixed figures: n = 3 threads, k = 10 points, so the bound is
     * 1/(3 * 10^(d-1)); the hits are the bound's share plus one */
    out->threads = 3;
    out->k = 10;
    out->runs = runs;
    out->bound = bug_depth == 2 ? 1.0 / 30.0 : 1.0 / 300.0;
    out->hits = (uint64_t)(out->bound * (double)runs) + (pct_below ? 0 : 1);
    return 0;
}

/* the switch count asked for, and a fixed rate */
static uint64_t raw_switches_asked;

double __wrap_sched_bench_raw_switches_per_sec(uint64_t n) {
    raw_switches_asked = n;
    return 1e6;
}

static void the_rate_is_the_timed_runs_over_their_clock(void **state) {
    static const uint64_t seeds[] = {1, 5, 201};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        uint64_t before = runs_begun;
        double r = scn_bench_rate(seeds[i]);
        /* the warm-up (up to 200 seeds) runs too, untimed, and PCT's probe */
        assert_int_equal(runs_begun - before, seeds[i] + (seeds[i] < 200 ? seeds[i] : 200) + 1);
        if (r != 1.0) fail_msg("%llu seeds: rate %g, expected 1 (a run per clock unit)", (unsigned long long)seeds[i], r);
    }
}

static void a_refused_dfs_run_fails_the_bench(void **state) {
    (void)state;
    assert_int_equal(scn_bench_main(2), 0);
    refuse_dfs = true;
    assert_int_equal(scn_bench_main(2), 1);
    refuse_dfs = false;
}

static void the_pct_lines_run_the_documented_counts(void **state) {
    (void)state;
    npct_calls = 0;
    assert_int_equal(scn_bench_main(2), 0);
    assert_int_equal(npct_calls, 2);
    assert_int_equal(pct_calls[0].bug_depth, 2);
    assert_int_equal(pct_calls[0].pct_depth, 2);
    assert_int_equal(pct_calls[0].runs, 4000);
    assert_int_equal(pct_calls[1].bug_depth, 3);
    assert_int_equal(pct_calls[1].pct_depth, 3);
    assert_int_equal(pct_calls[1].runs, 40000);
}

/* Runs scn_bench_main(seeds) with its stdout in buf. */
static int bench_main_captured(uint64_t seeds, char *buf, size_t size) {
    FILE *f = tmpfile();
    int saved, rc;
    size_t n;
    assert_non_null(f);
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(f), STDOUT_FILENO) >= 0);
    rc = scn_bench_main(seeds);
    fflush(stdout);
    assert_true(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    rewind(f);
    n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return rc;
}

static void expect_line(const char *out, const char *what, const char *want) {
    if (!strstr(out, want)) fail_msg("%s: no `%s` in the bench's output:\n%s", what, want, out);
}

/* The steps total is only ever printed divided (points/run, points/s), so a
 * wrong total shows only here: the figure must be the runner's own steps of
 * the runs it counts. */
static void the_points_per_run_are_the_runs_steps(void **state) {
    static char out[8192];
    char want[128];
    (void)state;
    seeded_wanted = 2;
    seeded_skip = 1;
    seeded_runs = seeded_steps = dfs_runs = dfs_steps = 0;
    assert_int_equal(bench_main_captured(2, out, sizeof out), 0);
    seeded_wanted = 0;
    assert_int_equal(seeded_runs, 2);
    assert_true(seeded_steps > 0);
    assert_true(dfs_runs > 0 && dfs_steps > 0);
    snprintf(want, sizeof want, "  scheduling points/run:  %.1f\n", (double)seeded_steps / 2.0);
    expect_line(out, "seeded runs", want);
    snprintf(want, sizeof want, "(points/run %.1f)\n", (double)dfs_steps / (double)dfs_runs);
    expect_line(out, "DFS runs", want);
    /* the ratio's figure is real time; its line and its target are not */
    expect_line(out, "ratio", "  points/s : raw switches/s = ");
    expect_line(out, "ratio", "%  target >= 30%\n");
}

/* A seeded run the runner refuses counts as failed, not as run, in the
 * reference race's and the memory scenario's tallies, and fails the bench. */
static void a_refused_seeded_run_fails_the_bench(void **state) {
    static char out[8192];
    (void)state;
    refuse_seeded = true;
    assert_int_equal(bench_main_captured(2, out, sizeof out), 1);
    refuse_seeded = false;
    expect_line(out, "seeded runs", "seeds 0..1 (random and PCT alternately), 0 runs, 2 failed\n");
    expect_line(out, "memory runs", "-thread scenario, 0 runs (200 failed)\n"); /* MEM_SEEDS */
}

/* A PCT measurement whose runs did not all end normally prints that in
 * place of its hit line, goes on to the next depth, and fails the bench. */
static void a_pct_run_that_did_not_end_fails_the_bench(void **state) {
    static char out[8192];
    (void)state;
    pct_fails = true;
    npct_calls = 0;
    assert_int_equal(bench_main_captured(2, out, sizeof out), 1);
    pct_fails = false;
    assert_int_equal(npct_calls, 2);
    expect_line(out, "depth 2", "pct: depth-2 bug: a run did not end normally\n");
    expect_line(out, "depth 3", "pct: depth-3 bug: a run did not end normally\n");
    if (strstr(out, "bug, n=")) fail_msg("a hit line for a failed measurement:\n%s", out);
}

/* The hit lines print what sched_bench_pct measured, the switch line what
 * the raw rate returned for the 4 million switches the bench asks. */
static void the_pct_and_switch_lines_print_the_measured_figures(void **state) {
    static char out[8192];
    char want[160];
    (void)state;
    raw_switches_asked = 0;
    assert_int_equal(bench_main_captured(2, out, sizeof out), 0);
    assert_int_equal(raw_switches_asked, 4000000);
    expect_line(out, "raw", "  raw fiber switches/s:   1000000 per ");
    snprintf(want, sizeof want, "pct: depth-2 bug, n=3 k=10: 134/4000 runs hit it (%.4f)  bound 1/(n k^1) = %.5f\n",
             134.0 / 4000.0, 1.0 / 30.0);
    expect_line(out, "depth 2", want);
    snprintf(want, sizeof want, "pct: depth-3 bug, n=3 k=10: 134/40000 runs hit it (%.4f)  bound 1/(n k^2) = %.5f\n",
             134.0 / 40000.0, 1.0 / 300.0);
    expect_line(out, "depth 3", want);
}

/* Hits short of the bound's share are flagged on their line and fail the
 * bench: the bound is PCT's guarantee, so a shortfall is a scheduler bug. */
static void pct_hits_below_the_bound_fail_the_bench(void **state) {
    static char out[8192];
    (void)state;
    pct_below = true;
    assert_int_equal(bench_main_captured(2, out, sizeof out), 1);
    pct_below = false;
    expect_line(out, "depth 2", "133/4000 runs hit it");
    expect_line(out, "flag", "  BELOW THE BOUND\n");
}

/* The peak is the process's after every run the bench makes through the
 * runner (the memory scenario's last), VmHWM's figure; unreadable, no line. */
static void the_peak_rss_is_read_after_the_runs(void **state) {
    static char out[8192];
    (void)state;
    status_opened_at = 0;
    assert_int_equal(bench_main_captured(2, out, sizeof out), 0);
    if (status_opened_at != runs_begun)
        fail_msg("the status read after %llu of %llu runs", (unsigned long long)status_opened_at,
                 (unsigned long long)runs_begun);
    expect_line(out, "peak", "  peak RSS (VmHWM):       4.0 MiB, the whole bench process");
    status_refused = true;
    assert_int_equal(bench_main_captured(2, out, sizeof out), 0);
    status_refused = false;
    expect_line(out, "no status file", "  peak RSS:               not read on this platform\n");
}

/* The bench's two built-in scenarios (the reference race, the memory
 * scenario) cannot fail to parse unless the parser changed: either refused
 * is reported at its line and column under its name, and the bench exits 2
 * having run nothing and kept nothing (the first scenario freed). */
static void a_built_in_scenario_refused_exits_2(void **state) {
    static const char *const want[] = {"bench:7:3: refused\n", "bench-memory:7:3: refused\n"};
    unsigned k;
    (void)state;
    for (k = 0; k < 2; k++) {
        char err[256];
        FILE *f = tmpfile();
        int saved, rc;
        size_t n;
        uint64_t begun = runs_begun, freed_before = freed;
        assert_non_null(f);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
        parse_fails_in = k + 1;
        rc = scn_bench_main(2);
        parse_fails_in = 0;
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        rewind(f);
        n = fread(err, 1, sizeof err - 1, f);
        err[n] = '\0';
        fclose(f);
        assert_int_equal(rc, 2);
        assert_string_equal(err, want[k]);
        assert_int_equal(runs_begun, begun);
        assert_int_equal(freed - freed_before, k); /* the reference scenario, once parsed */
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_rate_is_the_timed_runs_over_their_clock),
        cmocka_unit_test(a_refused_dfs_run_fails_the_bench),
        cmocka_unit_test(the_pct_lines_run_the_documented_counts),
        cmocka_unit_test(the_points_per_run_are_the_runs_steps),
        cmocka_unit_test(a_refused_seeded_run_fails_the_bench),
        cmocka_unit_test(a_pct_run_that_did_not_end_fails_the_bench),
        cmocka_unit_test(the_pct_and_switch_lines_print_the_measured_figures),
        cmocka_unit_test(pct_hits_below_the_bound_fail_the_bench),
        cmocka_unit_test(the_peak_rss_is_read_after_the_runs),
        cmocka_unit_test(a_built_in_scenario_refused_exits_2),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sched_release_cache();
    return rc;
}
