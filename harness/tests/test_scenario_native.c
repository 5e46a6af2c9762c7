/* A native (free-running) scenario run hands the OS-thread runtime the
 * run's seed -- its rt_choose stream and its noise come from it, so the
 * seed a failure report prints is the one that ran -- and the noise the
 * runner states (scn_run.c: 2% yields, 1% spins, 0.2% sleeps, at their
 * default lengths).  rt_native_run is watched through the GNU linkers'
 * --wrap (CMakeLists.txt), then run for real. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rt_native.h"
#include "scn_ast.h"
#include "scn_run.h"

int __real_rt_native_run(rt_thread_fn main_fn, void *arg, const rt_native_options *o);
int __wrap_rt_native_run(rt_thread_fn main_fn, void *arg, const rt_native_options *o);

static rt_native_options seen;
static unsigned native_runs;

int __wrap_rt_native_run(rt_thread_fn main_fn, void *arg, const rt_native_options *o) {
    seen = *o;
    native_runs++;
    return __real_rt_native_run(main_fn, arg, o);
}

static void a_native_run_gets_the_seed_and_the_documented_noise(void **state) {
    static const char text[] = "# purpose: x\nwork W\nthread A\n  submit W\n  wait W\nend\n";
    static const uint64_t seeds[] = {0, 1, 0x123456789abcdefull};
    scn_error e;
    scn_scenario *s = scn_parse("t.scn", text, strlen(text), &e);
    size_t i;
    (void)state;
    assert_non_null(s);
    for (i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        scn_run_opts o;
        scn_run_out r;
        memset(&o, 0, sizeof o);
        o.seed = seeds[i];
        o.native = true;
        native_runs = 0;
        assert_int_equal(scn_run(s, &o, &r), 0);
        assert_int_equal(native_runs, 1);
        if (r.failures) fail_msg("seed %llu: %s", (unsigned long long)seeds[i], r.failures);
        scn_run_out_free(&r);
        assert_true(seen.seed == seeds[i]);
        assert_int_equal(seen.yield_ppm, 20000);
        assert_int_equal(seen.spin_ppm, 10000);
        assert_int_equal(seen.sleep_ppm, 2000);
        assert_int_equal(seen.spin_max_iters, 0); /* the defaults: 2000 iterations, 200 us */
        assert_int_equal(seen.sleep_max_us, 0);
    }
    scn_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_native_run_gets_the_seed_and_the_documented_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
