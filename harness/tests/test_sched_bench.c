/* The scheduler's benchmarks (harness/sched/sched_bench.c) with stand-ins
 * through the GNU linkers' --wrap (CMakeLists.txt), as test_scenario_bench
 * does the scenario bench's: built where the linker has it.
 * - the raw switch rate is the switches made over the clock read around
 *   them.  sched_bench_seconds reads its clock in its own file, where --wrap
 *   cannot reach the call, so the wrap is of clock_gettime: the thread CPU
 *   clock advances one second a read, the timed interval is one second and
 *   the rate is exactly the switch count -- two a round trip, n rounded down
 *   to even -- whatever the machine; and the switches are counted too
 *   (sched_fiber_switch through --wrap), so the count is made, not computed;
 * - sched_bench_pct reports failure (-1) when a run fails, the probe runs'
 *   or the counted runs': sched_run refuses the run chosen. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_THREAD_CPUTIME_ID */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fiber.h"
#include "rt_sched.h"

int __real_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);
void __real_sched_fiber_switch(sched_fiber *from, sched_fiber *to);
void __wrap_sched_fiber_switch(sched_fiber *from, sched_fiber *to);
int __real_sched_run(const sched_options *o, rt_thread_fn main_fn, void *arg, sched_result *out);
int __wrap_sched_run(const sched_options *o, rt_thread_fn main_fn, void *arg, sched_result *out);

static time_t cpu_seconds; /* the thread CPU clock: one second more a read */
static uint64_t switches;  /* sched_fiber_switch calls */
static uint64_t runs;      /* sched_run calls */
static uint64_t refuse_run; /* sched_run refuses its call number refuse_run (1-based; 0: none) */

int __wrap_clock_gettime(clockid_t id, struct timespec *ts) {
    if (id != CLOCK_THREAD_CPUTIME_ID) return __real_clock_gettime(id, ts);
    ts->tv_sec = ++cpu_seconds;
    ts->tv_nsec = 0;
    return 0;
}

void __wrap_sched_fiber_switch(sched_fiber *from, sched_fiber *to) {
    switches++;
    __real_sched_fiber_switch(from, to);
}

#define MAX_SEEN 128
static uint64_t seen_seed[MAX_SEEN]; /* the seed of each of the first MAX_SEEN runs */

int __wrap_sched_run(const sched_options *o, rt_thread_fn main_fn, void *arg, sched_result *out) {
    if (runs < MAX_SEEN) seen_seed[runs] = o->seed;
    if (++runs == refuse_run) {
        /* as sched_run refuses bad options: nothing for the caller to free */
        memset(out, 0, sizeof *out);
        return -1;
    }
    return __real_sched_run(o, main_fn, arg, out);
}

static void the_raw_rate_is_the_switches_made_per_second(void **state) {
    (void)state;
    /* 5 asks for 2 round trips: 4 switches in the one timed second */
    switches = 0;
    assert_true(sched_bench_raw_switches_per_sec(5) == 4.0);
    assert_int_equal(switches, 4);
    switches = 0;
    assert_true(sched_bench_raw_switches_per_sec(6) == 6.0);
    assert_int_equal(switches, 6);
    /* fewer than one round trip is one round trip */
    switches = 0;
    assert_true(sched_bench_raw_switches_per_sec(0) == 2.0);
    assert_int_equal(switches, 2);
}

/* The probes take the seeds after the counted runs', and the counted runs
 * take first_seed, first_seed + 1, ...: the documented seeds, each once. */
static void pct_runs_the_documented_seeds(void **state) {
    sched_bench_pct_out out;
    (void)state;
    runs = 0;
    refuse_run = 0;
    assert_int_equal(sched_bench_pct(2, 2, 5, 1000, &out), 0);
    assert_int_equal(runs, 105);
    for (uint64_t i = 0; i < 100; i++) assert_int_equal(seen_seed[i], 1005 + i);
    for (uint64_t i = 0; i < 5; i++) assert_int_equal(seen_seed[100 + i], 1000 + i);
}

static void pct_fails_when_a_probe_run_fails(void **state) {
    sched_bench_pct_out out;
    (void)state;
    runs = 0;
    refuse_run = 1;
    assert_int_equal(sched_bench_pct(2, 2, 3, 1, &out), -1);
    assert_int_equal(runs, 1);
    assert_int_equal(out.runs, 0);
}

static void pct_fails_when_a_counted_run_fails(void **state) {
    sched_bench_pct_out out;
    (void)state;
    /* 100 probe runs, then the counted ones: the second of them fails */
    runs = 0;
    refuse_run = 102;
    assert_int_equal(sched_bench_pct(2, 2, 3, 1, &out), -1);
    assert_int_equal(runs, 102); /* it stopped at the failure */
    assert_int_equal(out.runs, 0);
    /* and the same call with every run allowed succeeds */
    runs = 0;
    refuse_run = 0;
    assert_int_equal(sched_bench_pct(2, 2, 3, 1, &out), 0);
    assert_int_equal(runs, 103);
    assert_int_equal(out.runs, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_raw_rate_is_the_switches_made_per_second),
        cmocka_unit_test(pct_runs_the_documented_seeds),
        cmocka_unit_test(pct_fails_when_a_probe_run_fails),
        cmocka_unit_test(pct_fails_when_a_counted_run_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
