/* The failure report of one run and the commands that replay it
 * (docs/scenarios.md, "The failure report").  Every command printed is one
 * a shell runs as pasted, from where the harness was started: it names the
 * harness as it was invoked (argv[0]; a bare `tpheal-harness` is not on
 * PATH after a build, and pasted as printed it failed with exit 127) and
 * carries everything the run depended on (a seed replayed without its PCT
 * strategy ran a random walk: a different interleaving, another failure). */
#ifndef TPHEAL_SCN_REPORT_H
#define TPHEAL_SCN_REPORT_H

#include <stdio.h>

#include "scn_ast.h"
#include "scn_run.h"
#include "scn_text.h"

/* Appends w as one word of a POSIX shell command (single-quoted when it
 * holds anything but [A-Za-z0-9_./:+,@%-]). */
void scn_shell_word(scn_text *, const char *w);

/* `EXE replay --seed S --strategy random FILE`, or with
 * `--strategy pct --depth D --pct-steps K`. */
void scn_replay_by_seed(scn_text *, const char *exe, const scn_run_opts *, const char *path);
/* `EXE replay --schedule-file F FILE` when the schedule was saved to F,
 * else `EXE replay --schedule 'STRING' FILE`. */
void scn_replay_by_schedule(scn_text *, const char *exe, const char *schedule, const char *schedule_file,
                            const char *path);

/* A free-running run is replayed by nothing: `MODEL_EXE run --mode controlled
 * --strategy both --seeds 100 --first-seed S FILE` looks for its failure on
 * the model, deterministically (the real pool's harness names the model
 * harness beside it). */
void scn_model_hint(scn_text *, const char *model_exe, uint64_t seed, const char *path);

/* The one command that replays a failure, for the short line and --json:
 * by the schedule the run was given; a DFS run by its own schedule (it is a
 * step of a search: no seed names it, and `--seed S --strategy pct` once
 * stood in for it in --json); otherwise by seed.  False for a native run,
 * which nothing replays. */
bool scn_replay_command(scn_text *, const char *exe, const scn_run_opts *, const scn_run_out *, const char *path);

typedef struct scn_report_ctx {
    const char *exe;           /* this harness, as invoked */
    const char *model_exe;     /* the controlled-mode harness (itself on the model) */
    const char *build;         /* "ID (default core, sim pool)" */
    const char *verdict;       /* the replay-by-schedule check's result, or NULL */
    const char *schedule_file; /* the schedule saved here, or NULL */
    /* The failure shrunk (scn_shrink.h), or NULL: not shrunk.  When a
     * schedule was found the report leads with it and its replay, and its
     * body (failures, trace, schedule) is that run's; the run that found
     * the failure stays, one line, with its replay by seed. */
    const struct scn_shrink_result *shrunk;
} scn_report_ctx;

/* The whole report: a pure function of its inputs (same seed, same bytes;
 * a shrink prints its runs, never its seconds). */
void scn_report_print(FILE *, const scn_scenario *, const scn_run_opts *, const scn_run_out *,
                      const scn_report_ctx *);

/* Writes the indented block "  title:\n    line\n..." (nothing for empty text). */
void scn_report_block(FILE *, const char *title, const char *text);

#endif
