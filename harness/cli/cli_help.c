/* tpheal-harness help: the synopsis table and every command's help text,
 * usage errors, and the unknown-command note. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct command_help {
    const char *name, *synopsis, *text;
} command_help;

static const command_help HELP[] = {
    {"run", "run FILE... [--seeds N | --seed S] [--first-seed S] [--strategy random|pct|both]\n"
            "          [--depth D] [--pct-steps K] [--mode controlled|native] [--json] [--no-replay]\n"
            "          [--save-schedules DIR] [--min-reach PCT] [--require-reach] [--max-failures N]\n"
            "          [--shrink-seconds S] [--shrink-runs R]\n"
            "       tpheal-harness run FILE... --strategy dfs [--preemptions P] [--max-runs M] [--por]",
     "Runs each scenario for N seeds (default 100) from --first-seed (default 0), or the one\n"
     "seed S, with each strategy asked for (default random; pct: depth D, default 3, and K\n"
     "expected choice points, default measured by a seed-0 probe run).  Every failure prints a\n"
     "report and the commands that replay it, led by its shortest failing schedule: the\n"
     "fewest preemptions (0..3, the bounded search), then the shortest choice prefix, that\n"
     "fail with the same kind at the same check, searched for at most S seconds (default 10;\n"
     "0: no shrinking) and R runs a bound (default 2000; the report says when either budget\n"
     "cut the search); the seed that found it stays, one line.  --save-schedules writes each reported schedule\n"
     "to DIR and the replay command names the file.  --mode native runs on OS threads\n"
     "(free-running, real time: a seed does not replay its interleaving).  Progress goes to\n"
     "stderr every 5 s of a long run (TPHEAL_PROGRESS_SECONDS).  Each `require` line reports\n"
     "the share of each strategy's runs that reached it; one reached by no run (or by less\n"
     "than --min-reach PCT) makes the scenario NOT-EXERCISED; a scenario with no `require`\n"
     "gets a warning (its passes say nothing of what it reached), and with --require-reach\n"
     "is NOT-EXERCISED.  --max-failures N stops a scenario's runs at its Nth failure\n"
     "(schedules to first catch: N = 1).  --strategy dfs explores every interleaving with\n"
     "at most P preemptions (default 2), up to M runs (default 100000); --por adds the\n"
     "partial-order reduction (see verify).  An option only one strategy reads (--depth,\n"
     "--pct-steps: pct; --preemptions, --max-runs, --por: dfs) is refused without it.\n"
     "Exit 0 all passed, 1 a failure, 2 bad input, 3 all declined, 4 not exercised."},
    {"verify", "verify FILE... [--preemptions P] [--max-runs M] [--no-por] [--json]",
     "A bounded proof: every interleaving of each scenario with at most P preemptions (default\n"
     "1), up to M runs a scenario (default 20000), with the partial-order reduction (one run\n"
     "per class of equivalent schedules; --no-por for the plain bounded search).  One line a\n"
     "scenario: PROVEN (complete, no failure), INCOMPLETE (stopped at M) or FAILED, with traces,\n"
     "runs, options pruned and wall time; then a total.  Exit 0 all proven, 1 a failure, 4 some\n"
     "incomplete, 2 bad input."},
    {"replay", "replay (--seed S --strategy random | --seed S --strategy pct --depth D --pct-steps K\n"
               "          | (--schedule STRING | --schedule-file PATH) [--continue [--seed S]])\n"
               "          [--trace] [--timeline FILE.html] FILE",
     "Re-runs one controlled run of FILE: by its seed with everything the run used (a seed\n"
     "alone is refused: replayed with another strategy it is another run), or by the exact\n"
     "schedule a failure report printed (the string, or the file --save-schedules wrote).\n"
     "--continue, after a change: replays the schedule as far as it still fits the program,\n"
     "then goes on as a random walk from --seed S (default 0), and says at which item the\n"
     "schedule stopped fitting and why (\"does the old failure still fail?\").\n"
     "--trace prints every trace record of the run.  --timeline writes the run as one\n"
     "self-contained HTML page (no network): a lane per thread and pool worker, virtual time\n"
     "across, each trace record a mark with its text on hover, callbacks, holds and awaits as\n"
     "spans, each pool's severed intervals, the failing check.  Exit 0 passed, 1 failed, 2 bad\n"
     "input."},
    {"list", "list [DIR]",
     "The scenarios in DIR (default scenarios), the trace points (a scenario names one as\n"
     "NAME or TARGET/NAME), operations, object kinds, entry fields and faults."},
    {"bench", "bench [--seeds N]",
     "Schedules per CPU second of the reference race against the raw fiber switch rate."},
    {"stress-batch", "stress-batch --mode controlled|native [--strategy random|pct] [--depth D]\n"
                     "          [--pct-steps K] --base SEED [--first J] [--count N] [--max-ms MS]\n"
                     "          [--max-run-ms MS] [--max-failures F] [--shrink-seconds S] FILE",
     "Many seeded runs of one scenario in one process, for ci/stress.py (docs/stress.md): runs\n"
     "j = J, J+1, ... with seeds derived from SEED, until N runs or MS of wall time, then one\n"
     "JSON object (type \"batch\", harness/json-schema.json): the runs, distinct interleavings\n"
     "and the first F failures, each with the commands that replay it and (controlled) its\n"
     "shortest failing schedule, each distinct failure shrunk once within S seconds (default\n"
     "10, 0: none; as run's).  --max-run-ms skips a\n"
     "native batch whose one run would take longer.  Exit 0 ran (verdicts in the JSON), 2 bad\n"
     "input, 4 the scenario needs the other (fail-fast) build."},
    {"stress-faultloop", "stress-faultloop --seed SEED [--max-sites N] [--only KIND:N [--trace]]\n"
                         "          [--leak-check-each] FILE",
     "Fails every failable seam call of a scenario in turn (the 1st allocation, the 2nd, ...,\n"
     "the 1st pool creation, ...) on controlled runs of seed SEED, until no call of a kind is left\n"
     "to fail or N sites were run; one JSON line per site (type \"fault-site\") and a summary.\n"
     "--only KIND:N runs that one site: the replay ci/stress.py prints, with the report and the\n"
     "trace tail of a failing site on stderr; --trace prints every trace record of that run\n"
     "there instead of the tail.  --leak-check-each runs LeakSanitizer after every run (ASan\n"
     "build).  Exit 0 ran (verdicts in the JSON), 2 bad input, 4 the other build's scenario."},
    {"generate", "generate [--seed S] [--programs N] [--first I] [--seeds K] [--seconds B]\n"
                 "          [--strategy random|pct|both] [--depth D] [--out DIR] [--max-failures F]\n"
                 "          [--shrink-runs M] [--no-shrink] [--print] [--json]",
     "Programs nobody wrote (docs/generate.md): draws programs I..I+N-1 of master seed S\n"
     "(default 0, 100 programs from 0), each a legal scenario over the public surface with no\n"
     "expectation of its own, and runs each for K seeds (default 4) of each strategy (default\n"
     "both) with every oracle of the runner.  A failing program is shrunk: delta debugging\n"
     "over its threads, operations, objects, events, pools, knobs and faults while the same\n"
     "failure persists, then the bounded search with the reduction at 0..3 preemptions for\n"
     "its fewest-preemption schedule (M runs each, default 20000); the report prints the\n"
     "shrunk scenario and the command that replays it.  --out DIR writes each failing\n"
     "program and its shrunk form there (gen-S-I.scn, gen-S-I-shrunk.scn).  --seconds B\n"
     "stops drawing after B wall seconds; --max-failures F after F failing programs (default\n"
     "3).  --print prints the programs and runs nothing.  Exit 0 all passed, 1 a failure,\n"
     "2 bad options."},
    {"help", "help [COMMAND]", "This text, or one command's."},
};
#define NHELP (sizeof HELP / sizeof HELP[0])

static void print_synopses(FILE *f) {
    size_t i;
    for (i = 0; i < NHELP; i++) fprintf(f, "%s tpheal-harness %s\n", i ? "      " : "usage:", HELP[i].synopsis);
    fprintf(f, "       tpheal-harness COMMAND --help\n");
}

int cli_usage(const char *why) {
    if (why) fprintf(stderr, "tpheal-harness: %s\n", why);
    print_synopses(stderr);
    return 2;
}

/* The names a slip is matched against: every command with help, and
 * --version.  Taken from HELP, so a command cannot be suggested without a
 * help text (`help stress-faultloop` once answered "did you mean
 * 'stress-faultloop'?"). */
static size_t command_names(const char **names) {
    size_t i;
    for (i = 0; i < NHELP; i++) names[i] = HELP[i].name;
    names[NHELP] = "--version";
    return NHELP + 1;
}

const char *cli_command_name(size_t i) { return i < NHELP ? HELP[i].name : NULL; }

/* Names what was typed and the nearest command, if it looks like a slip. */
int cli_unknown_command(const char *cmd) {
    char why[160];
    const char *names[NHELP + 1];
    size_t n = command_names(names);
    const char *nearest = scn_suggest(cmd, names, n);
    if (nearest) snprintf(why, sizeof why, "unknown command '%s' (did you mean '%s'?)", cmd, nearest);
    else snprintf(why, sizeof why, "unknown command '%s'", cmd);
    return cli_usage(why);
}

/* `help [CMD]` / `CMD --help`: to stdout, exit 0; an unknown CMD is usage. */
int cli_help(const char *cmd) {
    size_t i;
    if (!cmd) {
        print_synopses(stdout);
        printf("\nExit: 0 passed, 1 a failure, 2 bad input or usage, 3 nothing ran (all declined), 4 not exercised.\n");
        return 0;
    }
    for (i = 0; i < NHELP; i++)
        if (strcmp(cmd, HELP[i].name) == 0) {
            printf("usage: tpheal-harness %s\n\n%s\n", HELP[i].synopsis, HELP[i].text);
            return 0;
        }
    {
        char why[160];
        const char *names[NHELP + 1];
        size_t n = command_names(names);
        const char *nearest = scn_suggest(cmd, names, n);
        snprintf(why, sizeof why, "help: unknown command '%s'%s%s%s", cmd, nearest ? " (did you mean '" : "",
                 nearest ? nearest : "", nearest ? "'?)" : "");
        return cli_usage(why);
    }
}

bool cli_wants_help(int argc, char **argv) {
    int i;
    for (i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
    return false;
}

/* The options that take no value: the sibling re-execution (run_sibling)
 * copies every other option with the word after it.  One list, so a new flag
 * cannot be copied with the file name as its "value" (--trace was). */
