/* `tpheal-harness bench`: the reference race timed (schedules/s, scheduling
 * points/s against the raw fiber switch rate of the same process) and the
 * memory of a 16-thread run (scn_bench.c says how it stays honest). */
#ifndef TPHEAL_SCN_BENCH_H
#define TPHEAL_SCN_BENCH_H
#include <stdint.h>

/* Runs `seeds` seeds of the reference race; prints the figures.  Returns 0,
 * 1 when a run failed, 2 when a bench scenario does not parse. */
int scn_bench_main(uint64_t seeds);
/* The reference race's schedules per CPU second over `seeds` seeds, nothing
 * else (bench --rate: how the race build's bench and the plain build's
 * compare in one run); negative when a run failed or it does not parse. */
double scn_bench_rate(uint64_t seeds);

#define SCN_BENCH_DEFAULT_SEEDS 5000u

#endif
