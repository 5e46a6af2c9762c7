/* pcg32 (O'Neill's PCG XSH-RR 64/32): the only source of randomness in a
 * controlled run.  Inline because the scheduler draws one number per choice
 * point and a call would be a measurable share of a ~20 ns point. */
#ifndef TPHEAL_PCG32_H
#define TPHEAL_PCG32_H

#include <stdint.h>

typedef struct pcg32 {
    uint64_t state;
    uint64_t inc; /* stream selector, always odd */
} pcg32;

/* The reference seeding: (initstate 42, initseq 54) yields
 * 0xa15c02b7 0x7b47f409 0xba1d3330 ... (tested in test_pcg32.c). */
void pcg32_seed(pcg32 *, uint64_t initstate, uint64_t initseq);

static inline uint32_t pcg32_next(pcg32 *r) {
    uint64_t old = r->state;
    uint32_t xorshifted, rot;
    r->state = old * 6364136223846793005ULL + r->inc;
    xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    rot = (uint32_t)(old >> 59u);
    /* 0u - rot, not -rot: MSVC rejects unary minus on unsigned under /WX. */
    return (xorshifted >> rot) | (xorshifted << ((0u - rot) & 31u));
}

/* Uniform in [0, n), n >= 1, without modulo bias (Lemire's multiply-shift
 * with rejection; the rejection loop almost never iterates). */
static inline uint32_t pcg32_bounded(pcg32 *r, uint32_t n) {
    uint64_t m = (uint64_t)pcg32_next(r) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (0u - n) % n;
        while (low < threshold) {
            m = (uint64_t)pcg32_next(r) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

#endif
