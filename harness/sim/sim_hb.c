/* The happens-before rows (sim_hb.h) and their TSan annotations. */
#include "sim_hb.h"

#if defined(TPHEAL_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

const sim_hb_row sim_hb_rows[SIM_HB_EDGE_COUNT] = {
#define SIM_HB_ROW(name, rel, acq, page) {#name, rel, acq, page},
    SIM_HB_EDGES(SIM_HB_ROW)
#undef SIM_HB_ROW
};

void sim_hb_release(sim_hb_edge e, const void *sync) {
    (void)e;
#if defined(TPHEAL_TSAN)
    __tsan_release((void *)sync);
#else
    (void)sync;
#endif
}

void sim_hb_acquire(sim_hb_edge e, const void *sync) {
    (void)e;
#if defined(TPHEAL_TSAN)
    __tsan_acquire((void *)sync);
#else
    (void)sync;
#endif
}
