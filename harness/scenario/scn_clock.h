/* The harness's one monotonic wall clock, for the rates it prints (run,
 * bench, the stress batches' time slices).  Nothing a run decides or prints
 * as its outcome depends on it. */
#ifndef TPHEAL_SCN_CLOCK_H
#define TPHEAL_SCN_CLOCK_H

/* Monotonic seconds since an arbitrary start. */
double scn_wall_seconds(void);

#endif
