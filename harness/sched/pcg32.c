/* pcg32 seeding, as in the PCG reference implementation (pcg32_srandom_r). */
#include "pcg32.h"

void pcg32_seed(pcg32 *r, uint64_t initstate, uint64_t initseq) {
    r->state = 0u;
    r->inc = (initseq << 1u) | 1u;
    (void)pcg32_next(r);
    r->state += initstate;
    (void)pcg32_next(r);
}
