/* The failure report and its replay commands (scn_report.h). */
#include "scn_report.h"

#include <string.h>

#include "rt_sched.h"
#include "scn_shrink.h"

/* '=' is not plain: a first word like `x=1/tpheal-harness` unquoted is an
 * assignment to x, and the shell then runs `replay` (exit 127). */
void scn_shell_word(scn_text *t, const char *w) {
    const char *p;
    bool plain = *w != '\0';
    for (p = w; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                strchr("_./:+,@%-", *p) != NULL;
    if (plain) {
        scn_text_printf(t, "%s", w);
        return;
    }
    scn_text_printf(t, "'");
    for (p = w; *p; p++) {
        if (*p == '\'') scn_text_printf(t, "'\\''");
        else scn_text_printf(t, "%c", *p);
    }
    scn_text_printf(t, "'");
}

void scn_replay_by_seed(scn_text *t, const char *exe, const scn_run_opts *ro, const char *path) {
    scn_shell_word(t, exe);
    scn_text_printf(t, " replay --seed %llu --strategy %s", (unsigned long long)ro->seed,
                    sched_strategy_name(ro->strategy));
    if (ro->strategy == SCHED_STRATEGY_PCT)
        scn_text_printf(t, " --depth %u --pct-steps %llu", ro->depth, (unsigned long long)ro->pct_steps);
    scn_text_printf(t, " ");
    scn_shell_word(t, path);
}

void scn_replay_by_schedule(scn_text *t, const char *exe, const char *schedule, const char *schedule_file,
                            const char *path) {
    scn_shell_word(t, exe);
    if (schedule_file) {
        scn_text_printf(t, " replay --schedule-file ");
        scn_shell_word(t, schedule_file);
    } else {
        scn_text_printf(t, " replay --schedule ");
        scn_shell_word(t, schedule);
    }
    scn_text_printf(t, " ");
    scn_shell_word(t, path);
}

bool scn_replay_command(scn_text *t, const char *exe, const scn_run_opts *ro, const scn_run_out *r,
                        const char *path) {
    if (ro->schedule) scn_replay_by_schedule(t, exe, ro->schedule, NULL, path);
    else if (ro->strategy == SCHED_STRATEGY_DFS && r->schedule) scn_replay_by_schedule(t, exe, r->schedule, NULL, path);
    else if (!ro->native && ro->strategy != SCHED_STRATEGY_DFS) scn_replay_by_seed(t, exe, ro, path);
    else return false;
    return true;
}

void scn_model_hint(scn_text *t, const char *model_exe, uint64_t seed, const char *path) {
    scn_shell_word(t, model_exe);
    scn_text_printf(t, " run --mode controlled --strategy both --seeds 100 --first-seed %llu ",
                    (unsigned long long)seed);
    scn_shell_word(t, path);
}

void scn_report_block(FILE *out, const char *title, const char *text) {
    const char *p = text;
    if (!text || !*text) return;
    fprintf(out, "  %s:\n", title);
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        fprintf(out, "    %.*s\n", (int)n, p);
        p += n + (e ? 1 : 0);
    }
}

static void print_cmd(FILE *out, const char *label, scn_text *cmd) {
    fprintf(out, "  %s: %s\n", label, cmd->s ? cmd->s : "");
    scn_text_free(cmd);
}

/* The run that found the failure, in one line: how it ran and its replay
 * by seed (a shrunk report's body is the shrunk run's). */
static void print_found_by(FILE *out, const scn_scenario *s, const scn_run_opts *ro, const scn_run_out *r,
                           const scn_report_ctx *c) {
    scn_text cmd = {0};
    fprintf(out, "  found by: seed %llu, %s", (unsigned long long)ro->seed, sched_strategy_name(ro->strategy));
    if (ro->strategy == SCHED_STRATEGY_PCT)
        fprintf(out, " depth %u steps %llu", ro->depth, (unsigned long long)ro->pct_steps);
    fprintf(out, ", %llu choices, %llu preemptions; replay by seed: ", (unsigned long long)r->choice_points,
            (unsigned long long)r->preemptions);
    scn_replay_by_seed(&cmd, c->exe, ro, s->path);
    fprintf(out, "%s\n", cmd.s ? cmd.s : "");
    scn_text_free(&cmd);
    if (c->verdict) fprintf(out, "  replayed once by its schedule: %s\n", c->verdict);
}

void scn_report_print(FILE *out, const scn_scenario *s, const scn_run_opts *ro, const scn_run_out *orig,
                      const scn_report_ctx *c) {
    scn_text cmd = {0};
    const bool shrunk = c->shrunk && c->shrunk->found;
    const scn_run_out *r = shrunk ? &c->shrunk->hit : orig;
    fprintf(out, "FAILURE %s\n", s->path);
    if (c->shrunk) {
        scn_text what = {0};
        scn_shrink_describe(&what, c->shrunk, true);
        fprintf(out, "  shortest failing schedule: %s\n", what.s ? what.s : "");
        scn_text_free(&what);
    }
    if (shrunk) {
        scn_replay_by_schedule(&cmd, c->exe, r->schedule, c->schedule_file, s->path);
        print_cmd(out, "replay", &cmd);
        print_found_by(out, s, ro, orig, c);
    }
    fprintf(out, "  purpose: %s\n", s->purpose);
    if (shrunk)
        fprintf(out, "  below: the shortest failing schedule's run%s\n",
                strncmp(r->schedule ? r->schedule : "", "T1/idle:", 8) == 0 ? " (bounded search, idle time)" : "");
    else if (ro->native)
        fprintf(out, "  mode: native (free-running; a seed does not replay the interleaving)  seed: %llu\n",
                (unsigned long long)ro->seed);
    else if (ro->schedule)
        fprintf(out, "  replayed from a schedule string\n");
    else if (ro->strategy == SCHED_STRATEGY_DFS)
        fprintf(out, "  dfs run %llu of the search (bounded-exhaustive: it replays by its schedule)\n",
                (unsigned long long)ro->seed);
    else if (ro->strategy == SCHED_STRATEGY_PCT)
        fprintf(out, "  seed: %llu  strategy: pct depth %u steps %llu\n", (unsigned long long)ro->seed, ro->depth,
                (unsigned long long)ro->pct_steps);
    else
        fprintf(out, "  seed: %llu  strategy: random\n", (unsigned long long)ro->seed);
    fprintf(out, "  scenario: %s  content hash: %016llx\n", s->path, (unsigned long long)s->content_hash);
    fprintf(out, "  build: %s\n", c->build);
    if (r->status >= 0)
        fprintf(out, "  status: %s  steps: %llu  interleaving: %016llx\n", sched_status_name((sched_status)r->status),
                (unsigned long long)r->steps, (unsigned long long)r->interleaving_hash);
    fprintf(out, "  kind: %s\n", scn_failure_kind_name(r->kind));
    scn_report_block(out, "failures", r->failures);
    if (r->fairness) fprintf(out, "  fairness: %s\n", r->fairness);
    scn_report_block(out, "blocked threads", r->blocked_report);
    scn_report_block(out, "misuse reported by the sim", r->misuse);
    scn_report_block(out, "faults injected", r->faults);
    if (r->failed_check) {
        char title[160];
        snprintf(title, sizeof title,
                 "trace up to the first failing check (after record #%llu, at t=%llu.%04llums)",
                 (unsigned long long)r->fail_record, (unsigned long long)(r->fail_time / SCN_MS),
                 (unsigned long long)(r->fail_time % SCN_MS));
        scn_report_block(out, title, r->trace_tail);
    } else {
        scn_report_block(out, "trace at the end of the run",
                         r->trace_tail);
    }
    if (r->schedule) fprintf(out, "  schedule: %s\n", r->schedule);
    if (shrunk) return; /* its replay led the report */
    if (c->verdict) fprintf(out, "  replayed once by its schedule: %s\n", c->verdict);
    if (r->schedule) {
        scn_replay_by_schedule(&cmd, c->exe, r->schedule, c->schedule_file, s->path);
        print_cmd(out, "replay", &cmd);
    }
    if (ro->native) {
        scn_model_hint(&cmd, c->model_exe, ro->seed, s->path);
        print_cmd(out, "look for a deterministic reproduction on the model", &cmd);
    }
    if (!ro->native && !ro->schedule && ro->strategy != SCHED_STRATEGY_DFS) {
        scn_replay_by_seed(&cmd, c->exe, ro, s->path);
        print_cmd(out, "replay by seed", &cmd);
    }
}
