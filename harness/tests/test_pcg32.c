/* pcg32 must be the reference PCG XSH-RR 64/32: the scheduler's seeds are
 * meant to mean the same thing in every build and port. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pcg32.h"

/* cmocka 2.0 deprecates assert_in_range (a -Werror build fails) and 1.1
 * (Debian 12, MSYS2) lacks its replacement assert_uint_in_range: one check
 * that reads the same on both. */
#define check_in_range(v, lo, hi)                                                          \
    do {                                                                                   \
        unsigned long long v_ = (v);                                                       \
        if (v_ < (lo) || v_ > (hi)) fail_msg("%s = %llu, outside [%u, %u]", #v, v_, (lo), (hi)); \
    } while (0)

static void reference_stream(void **state) {
    /* pcg32-global demo / pcg_basic: srandom_r(42, 54) */
    static const uint32_t expect[] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                      0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    pcg32 r;
    size_t i;
    (void)state;
    pcg32_seed(&r, 42u, 54u);
    for (i = 0; i < sizeof expect / sizeof expect[0]; i++) assert_int_equal(pcg32_next(&r), expect[i]);
}

static void bounded_stays_in_range_and_covers_it(void **state) {
    pcg32 r;
    unsigned seen[7] = {0};
    unsigned i;
    (void)state;
    pcg32_seed(&r, 1u, 2u);
    for (i = 0; i < 7000; i++) {
        uint32_t v = pcg32_bounded(&r, 7);
        assert_true(v < 7);
        seen[v]++;
    }
    for (i = 0; i < 7; i++) {
        /* expectation 1000 each; 5 sigma is about 150 */
        check_in_range(seen[i], 850u, 1150u);
    }
    for (i = 0; i < 100; i++) assert_int_equal(pcg32_bounded(&r, 1), 0);
}

static void bounded_has_no_modulo_bias(void **state) {
    /* n = 3 * 2^30: plain modulo would make [0, 2^30) twice as likely as the
     * rest: half the draws would land there instead of a third. */
    pcg32 r;
    uint32_t n = 3u << 30;
    unsigned low = 0, i;
    (void)state;
    pcg32_seed(&r, 7u, 9u);
    for (i = 0; i < 30000; i++)
        if (pcg32_bounded(&r, n) < (1u << 30)) low++;
    check_in_range(low, 9500u, 10500u); /* 1/3 expected; biased modulo gives ~1/2 */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_stream),
        cmocka_unit_test(bounded_stays_in_range_and_covers_it),
        cmocka_unit_test(bounded_has_no_modulo_bias),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
