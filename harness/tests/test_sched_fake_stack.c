/* AddressSanitizer's fake stacks under the controlled scheduler (fiber_asan.h):
 * an exited fiber's fake stack is handed to the next fiber instead of being
 * unmapped, which took the ASan build's test_sched_dfs from 50.6 s to 3.5 s.
 * The reuse must not cost the detection the option exists for:
 * - after thousands of reuses, a fiber's frames with an address taken still
 *   come from a fake stack (when a fake stack has no free frame, ASan puts
 *   the frame on the real stack without a word, where a use after return
 *   goes unseen);
 * - a frame that returned is poisoned (a use after return is reported);
 * - fake stacks are reused: after the runs the exited fibers' fake stacks
 *   wait for the next fiber (the cost the reuse removed: a change that loses
 *   it fails here).
 * Runs only in the ASan build (skipped elsewhere), with the option on unless
 * the environment's ASAN_OPTIONS turns it off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fiber_asan.h"
#include "rt.h"
#include "rt_sched.h"

#if defined(TPHEAL_ASAN)
#include <sanitizer/asan_interface.h>

extern int __asan_option_detect_stack_use_after_return;

/* The option the tests are about, on by default in this executable. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_stack_use_after_return=1"; }

enum { RUNS = 4000, THREADS = 4 };

typedef struct probe {
    unsigned checked;
    unsigned on_fake_stack;  /* the frame came from a fake stack */
    unsigned poisoned;       /* ...and was poisoned once it returned */
} probe;

/* A frame whose local has its address taken: ASan gives it a fake frame,
 * which ASan recognises as one only while it is live. */
__attribute__((noinline)) static int frame_with_a_local(volatile uintptr_t *out) {
    volatile char buf[48];
    void *fake = __asan_get_current_fake_stack();
    buf[0] = 1;
    *out = (uintptr_t)&buf[0];
    return fake && __asan_addr_is_in_fake_stack(fake, (void *)&buf[0], NULL, NULL) != NULL;
}

static void probe_thread(void *arg) {
    probe *p = arg;
    volatile uintptr_t addr = 0;
    int on_fake = frame_with_a_local(&addr);
    p->checked++;
    if (on_fake) p->on_fake_stack++;
    if (__asan_address_is_poisoned((void *)addr)) p->poisoned++;
    rt_yield();
}

static void probe_main(void *arg) {
    rt_thread *t[THREADS];
    unsigned i;
    for (i = 0; i < THREADS; i++) t[i] = rt_spawn("probe", probe_thread, arg, false);
    for (i = 0; i < THREADS; i++) rt_join(t[i]);
    probe_thread(arg);
}

static void frames_come_from_a_reused_fake_stack_run_after_run(void **state) {
    probe p;
    unsigned seed;
    (void)state;
    if (!__asan_option_detect_stack_use_after_return) skip(); /* ASAN_OPTIONS turned it off */
    memset(&p, 0, sizeof p);
    for (seed = 0; seed < RUNS; seed++) {
        sched_options o;
        sched_result r;
        sched_options_default(&o);
        o.seed = seed;
        assert_int_equal(sched_run(&o, probe_main, &p, &r), 0);
        assert_int_equal(r.status, SCHED_OK);
        sched_result_free(&r);
    }
    assert_int_equal(p.checked, RUNS * (THREADS + 1));
    if (p.on_fake_stack != p.checked)
        fail_msg("%u of %u frames came from a fake stack: the rest were on the real stack, where a use after "
                 "return goes unseen (a reused fake stack ran out of frames)", p.on_fake_stack, p.checked);
    if (p.poisoned != p.checked)
        fail_msg("%u of %u returned frames were poisoned", p.poisoned, p.checked);
    /* every fiber of the last run exited: main and its THREADS threads */
    if (sched_asan_fake_cached < THREADS + 1)
        fail_msg("%u fake stacks kept after the runs, want %u: an exited fiber's fake stack is unmapped, not reused",
                 sched_asan_fake_cached, THREADS + 1);
}
#else
static void frames_come_from_a_reused_fake_stack_run_after_run(void **state) {
    (void)state;
    skip(); /* the ASan build's test */
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_come_from_a_reused_fake_stack_run_after_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
