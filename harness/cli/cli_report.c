/* The failure report and the hand-off to the sibling build (fail-fast or
 * default) for a scenario this build cannot run. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L /* sys/wait */
#include <sys/wait.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- the failure report (scn_report.c) ------------------------------------------ */

const char *cli_strategy_name(sched_strategy_kind s) { return sched_strategy_name(s); }

static void build_line(char *buf, size_t n) {
    snprintf(buf, n, "%s (%s core, %s pool)", TPHEAL_BUILD_ID, BUILD_KIND, scn_pool_backend_name());
}

void cli_print_report(const cli_exe *x, const scn_scenario *s, const scn_run_opts *ro, const scn_run_out *r,
                      const char *replay_verdict, const char *schedule_file, const scn_shrink_result *shrunk) {
    char build[256];
    scn_report_ctx c;
    build_line(build, sizeof build);
    c.exe = x->argv0;
    c.model_exe = x->model_exe;
    c.build = build;
    c.verdict = replay_verdict;
    c.schedule_file = schedule_file;
    c.shrunk = shrunk;
    scn_report_print(stdout, s, ro, r, &c);
}

/* ---- re-executing the sibling build ------------------------------------------ */

/* One word of a system() line.  system() hands the line to /bin/sh on POSIX
 * and to cmd.exe on Windows, which does not know '...' quoting (the sibling
 * was never found there: issue 11).  POSIX: '...' with ' written '\''.
 * Windows: "..." (a file name cannot hold "; one in an option value is
 * written \" as the C runtime's argv parser reads it). */
static void shell_word(scn_text *cmd, const char *s) {
#ifdef _WIN32
    const char q = '"';
#else
    const char q = '\'';
#endif
    scn_text_printf(cmd, "%c", q);
    for (; *s; s++) {
#ifdef _WIN32
        if (*s == '"') scn_text_printf(cmd, "\\\"");
#else
        if (*s == '\'') scn_text_printf(cmd, "'\\''");
#endif
        else scn_text_printf(cmd, "%c", *s);
    }
    scn_text_printf(cmd, "%c", q);
}

int cli_run_sibling(const cli_exe *x, int argc, char **argv, const char *file) {
    const char *argv0 = x->argv0;
    scn_text cmd = {0}, exe = {0};
    const char *slash = strrchr(argv0, '/');
    int i, rc;
    bool skip_next = false;
#ifdef _WIN32
    const char *bslash = strrchr(argv0, '\\');
    if (bslash && (!slash || bslash > slash)) slash = bslash;
    /* cmd.exe /c strips the first and the last quote of a line that starts
     * with one: a pair around the whole line keeps the words' own quotes. */
    scn_text_printf(&cmd, "\"");
#endif
    /* next to this binary, with its own separator */
    if (slash) scn_text_printf(&exe, "%.*s%s", (int)(slash - argv0 + 1), argv0, SIBLING);
    else scn_text_printf(&exe, "%s", SIBLING);
    shell_word(&cmd, exe.s);
    scn_text_free(&exe);
    /* same command, options kept, files replaced by this one */
    scn_text_printf(&cmd, " %s", argv[1]);
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (skip_next) {
            scn_text_printf(&cmd, " ");
            shell_word(&cmd, a);
            skip_next = false;
            continue;
        }
        if (a[0] == '-' && a[1] == '-') {
            scn_text_printf(&cmd, " %s", a);
            skip_next = !cli_option_is_flag(a);
        }
    }
    scn_text_printf(&cmd, " ");
    shell_word(&cmd, file);
#ifdef _WIN32
    scn_text_printf(&cmd, "\"");
#endif
    fflush(stdout);
    rc = system(cmd.s);
    scn_text_free(&cmd);
#ifndef _WIN32
    if (rc == -1 || !WIFEXITED(rc)) return 1;
    rc = WEXITSTATUS(rc);
#else
    if (rc == 9009) rc = 127; /* cmd.exe's "is not recognized as a command" */
#endif
    if (rc == 127) {
        fprintf(stderr, "tpheal-harness: %s needs the %s build and %s was not found next to this binary\n",
                file, TPHEAL_FAIL_FAST ? "default" : "fail-fast", SIBLING);
        return 2;
    }
    return rc;
}
