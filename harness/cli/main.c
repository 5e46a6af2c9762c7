/* tpheal-harness (harness/cli/: a file per command): runs scenario files (docs/scenarios.md) under the
 * controlled scheduler, one seed per simulated process.
 * tpheal-harness-realpool (Windows builds) is the same program linked with
 * the core's win32 backend and the real-pool backend of the runner
 * (scenario/scn_pool.h): free-running runs on the real Windows thread pool;
 * a scenario that needs the model is declined, with the reason.
 *
 *   tpheal-harness run FILE... [options]        (tpheal-harness help run)
 *   tpheal-harness replay SEED-OR-SCHEDULE FILE  (tpheal-harness help replay)
 *   tpheal-harness list [DIR]
 *   tpheal-harness bench [--seeds N]
 *   tpheal-harness stress-batch ... / stress-faultloop ...  (ci/stress.py's)
 *   tpheal-harness help [COMMAND]   and   tpheal-harness COMMAND --help
 *
 * Exit: 0 everything passed, 1 a failure, 2 bad input (usage or a scenario
 * that does not parse: `file:line:col: message`), 3 nothing ran (every
 * scenario given was declined by this pool backend), 4 no failure but a
 * scenario was NOT-EXERCISED (a `require` no run reached, or reached by
 * fewer than --min-reach percent of a strategy's runs).
 *
 * A scenario that says `build fail-fast` needs the core built with
 * TPHEAL_FAIL_FAST; this binary hands it to its sibling
 * tpheal-harness-failfast (same directory) with the same options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include "stress.h" /* stress-batch, stress-faultloop: harness/stress/ (ci/stress.py) */

/* The model harness beside this one: the real-pool build's free-running
 * failures are reproduced there (tpheal-harness-realpool -> tpheal-harness). */
static void find_model_exe(cli_exe *x) {
    const char *argv0 = x->argv0;
    const char *real = strstr(argv0, "tpheal-harness-realpool");
    if (scn_pool_is_model() || !real) {
        snprintf(x->model_exe, sizeof x->model_exe, "%s", argv0);
        return;
    }
    snprintf(x->model_exe, sizeof x->model_exe, "%.*stpheal-harness%s", (int)(real - argv0), argv0,
             real + strlen("tpheal-harness-realpool"));
}

/* Every command with a help text answers `COMMAND --help` with it. */
static bool is_command(const char *a) {
    size_t i;
    const char *name;
    for (i = 0; (name = cli_command_name(i)) != NULL; i++)
        if (strcmp(a, name) == 0) return true;
    return false;
}

int main(int argc, char **argv) {
    cli_exe x;
    x.argv0 = argc > 0 && argv[0] && *argv[0] ? argv[0] : "tpheal-harness";
    /* A race inside a controlled run fails that run, with its replay command;
     * TSan's exit status is left for the ones outside any run (native mode). */
    sched_race_reports_claimed();
    find_model_exe(&x);
    if (argc < 2) return cli_usage(NULL);
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cli_help(argc <= 2 ? NULL : cli_wants_help(3, argv) ? "help" : argv[2]); /* `help --help` */
    if (is_command(argv[1]) && cli_wants_help(argc, argv)) return cli_help(argv[1]);
    if (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "verify") == 0) return cmd_run(&x, argc, argv);
    if (strcmp(argv[1], "replay") == 0) return cmd_replay(&x, argc, argv);
    if (strcmp(argv[1], "list") == 0) return cmd_list(argc, argv);
    if (strcmp(argv[1], "bench") == 0) return cmd_bench(&x, argc, argv);
    if (strcmp(argv[1], "stress-batch") == 0) return tph_stress_batch_main(argc - 1, argv + 1, x.argv0, x.model_exe);
    if (strcmp(argv[1], "stress-faultloop") == 0) return tph_stress_faultloop_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "--version") == 0) {
        printf("tpheal-harness %s (%s core, %s pool)\n", TPHEAL_BUILD_ID, BUILD_KIND, scn_pool_backend_name());
        return 0;
    }
    return cli_unknown_command(argv[1]);
}
