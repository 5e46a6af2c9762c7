/* The runner loop shared by both backends' mains.
 *   <runner> [--only PREFIX] [--outcomes FILE] [--list]
 * Exit status: the number of failed cases (capped at 100); 2 on bad usage. */
#include <stdio.h>
#include <string.h>

#include "conf.h"

static int usage(const char *prog, const char *why) {
    fprintf(stderr, "%s:1:1: %s\nusage: %s [--only PREFIX] [--outcomes FILE] [--list]\n", prog,
            why, prog);
    return 2;
}

int conf_run_all(const char *backend, conf_exec_fn exec, int argc, char **argv) {
    const char *only = NULL, *outcomes_path = NULL;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--outcomes") == 0 && i + 1 < argc) outcomes_path = argv[++i];
        else if (strcmp(argv[i], "--list") == 0) list = true;
        else return usage(argv[0], "unknown or incomplete argument");
    }
    size_t total = conf_case_total();
    if (list) {
        for (size_t i = 0; i < total; i++) printf("%s\n", conf_case_at(i)->name);
        return 0;
    }
    FILE *out = NULL;
    if (outcomes_path) {
        out = fopen(outcomes_path, "wb");
        if (!out) return usage(argv[0], "cannot write the --outcomes file");
    }

    size_t ran = 0, failed = 0, notes = 0;
    for (size_t i = 0; i < total; i++) {
        const conf_case *k = conf_case_at(i);
        if (only && strncmp(k->name, only, strlen(only)) != 0) continue;
        conf_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.case_name = k->name;
        /* Flushed before the case: a case that hangs is named by the last line. */
        printf("run  %s\n", k->name);
        fflush(stdout);
        exec(k, &ctx);
        ran++;
        if (ctx.failures) failed++;
        if (k->wine_note) notes++;
        printf("outcome %s%s\n", k->name, ctx.observed);
        if (out) fprintf(out, "outcome %s%s\n", k->name, ctx.observed);
        printf("%s %s\n", ctx.failures ? "FAIL" : "ok  ", k->name);
        fflush(stdout);
    }
    if (out) fclose(out);

    printf("conformance[%s]: %zu cases, %zu ran, %zu failed\n", backend, total, ran, failed);
    if (notes) {
        printf("conformance[%s]: documented Wine differences (%zu):\n", backend, notes);
        for (size_t i = 0; i < total; i++) {
            const conf_case *k = conf_case_at(i);
            if (k->wine_note && (!only || strncmp(k->name, only, strlen(only)) == 0))
                printf("  %s: %s\n", k->name, k->wine_note);
        }
    }
    return failed > 100 ? 100 : (int)failed;
}
