/* The stress subcommands of tpheal-harness, used by ci/stress.py (`make
 * stress`; docs/stress.md).  main.c dispatches to them:
 *   stress-batch      many seeded runs of one scenario, one JSON summary
 *   stress-faultloop  every failable seam call of a scenario failed in turn
 * Each returns the process exit status: 0 ran (verdicts are in the JSON),
 * 2 bad input (`file:line:col: message` on stderr). */
#ifndef TPHEAL_STRESS_H
#define TPHEAL_STRESS_H

/* exe: this harness as invoked (argv[0]), model_exe: the model harness
 * beside it (cli_exe, harness/cli/cli.h); a batch's failures carry the
 * commands `run` prints, which name them. */
int tph_stress_batch_main(int argc, char **argv, const char *exe, const char *model_exe);
int tph_stress_faultloop_main(int argc, char **argv);

#endif
