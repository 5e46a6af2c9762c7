/* tpheal-harness's command line (harness/cli/): what the commands share --
 * the options, who this process is, the usage and report helpers.  One file
 * per command (cmd_*.c), main.c dispatches. */
#ifndef TPH_CLI_H
#define TPH_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <tpheal/config.h>

#include "rt_sched.h"
#include "sched_dfs.h"
#include "scn_ast.h"
#include "scn_bench.h"
#include "scn_campaign.h"
#include "scn_clock.h"
#include "scn_json.h"
#include "scn_pool.h"
#include "scn_report.h"
#include "scn_run.h"
#include "scn_shrink.h"
#include "scn_text.h"
#include "scn_suggest.h"

/* --strategy as a set: a bit per sched_strategy_kind; `both` is the two
 * seeded ones, dfs runs alone. */
#define STRATEGY_BIT(k) (1u << (unsigned)(k))
#define STRATEGIES_SEEDED (STRATEGY_BIT(SCHED_STRATEGY_RANDOM) | STRATEGY_BIT(SCHED_STRATEGY_PCT))
#define STRATEGIES_DFS STRATEGY_BIT(SCHED_STRATEGY_DFS)


#ifndef TPHEAL_BUILD_ID
#define TPHEAL_BUILD_ID "unknown"
#endif
#if TPHEAL_FAIL_FAST
#define BUILD_KIND "fail-fast"
#define SIBLING "tpheal-harness"
#else
#define BUILD_KIND "default"
#define SIBLING "tpheal-harness-failfast"
#endif

/* This process and the model harness beside it (the real-pool build's
 * free-running failures are reproduced there), passed to whatever names them
 * in a printed command; never a file-scope global. */
typedef struct cli_exe {
    const char *argv0;
    char model_exe[1024];
} cli_exe;

typedef struct options {
    uint64_t seeds;
    uint64_t first_seed;
    bool one_seed;
    unsigned strategies; /* a bit per sched_strategy_kind (STRATEGY_BIT); dfs alone */
    unsigned preemptions; /* dfs: the preemption bound */
    bool por;             /* dfs: partial-order reduction */
    bool verify;          /* the verify command: dfs + por, one line a scenario and a total */
    bool preemptions_given, max_runs_given, por_given;
    uint64_t max_runs;    /* dfs: stop after this many runs */
    uint64_t max_failures; /* stop a scenario's runs at its Nth failure (0: never) */
    double min_reach;     /* NOT-EXERCISED below this % of a strategy's runs (0: below one run) */
    unsigned depth;
    uint64_t pct_steps;
    bool native;
    bool json;
    bool replay_failures;
    const char *schedule;
    /* what was given (replay needs a seed's whole recipe; --seeds and --seed
     * exclude each other) */
    bool seeds_given, strategy_given, depth_given, pct_steps_given;
    bool require_reach;         /* run: a scenario with no `require` is NOT-EXERCISED */
    bool trace;                 /* replay: print every trace record */
    const char *timeline;       /* replay: write the run as an HTML page here */
    bool replay_continue;       /* replay --continue: past where the schedule stops fitting, seeded */
    const char *save_schedules; /* run: write each reported schedule to a file here */
    uint64_t shrink_seconds;    /* run: each seeded failure's shrink budget (0: no shrinking) */
    uint64_t shrink_runs;       /* run: the shrink's runs a preemption bound */
    char *schedule_owned;       /* --schedule-file's contents */
    const struct cli_exe *exe;  /* who this process is (set by the command after parsing) */
} options;

/* help and usage (cli_help.c) */
int cli_usage(const char *why); /* the synopses (and why) on stderr; returns 2 */
int cli_unknown_command(const char *cmd);
int cli_help(const char *cmd);
bool cli_wants_help(int argc, char **argv);
/* The i-th command with a help text, or NULL past the last. */
const char *cli_command_name(size_t i);

/* options (cli_options.c) */
bool cli_option_is_flag(const char *a);
bool cli_parse_u64(const char *s, uint64_t *out);
/* Parses options from argv[i..]; file names go to files.  Returns 0 or 2. */
int cli_parse_options(int argc, char **argv, int i, options *o, const char **files, int *nfiles);
void cli_print_parse_error(const char *path, const scn_error *e);

/* the report and the sibling build (cli_report.c) */
const char *cli_strategy_name(sched_strategy_kind s);
void cli_print_report(const cli_exe *x, const scn_scenario *s, const scn_run_opts *ro, const scn_run_out *r,
                      const char *replay_verdict, const char *schedule_file, const scn_shrink_result *shrunk);
int cli_run_sibling(const cli_exe *x, int argc, char **argv, const char *file);

/* the commands */
int cmd_run(const cli_exe *x, int argc, char **argv); /* run and verify */
int cmd_replay(const cli_exe *x, int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_bench(const cli_exe *x, int argc, char **argv);
int cmd_generate(const cli_exe *x, int argc, char **argv);

#endif
