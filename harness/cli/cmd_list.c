/* tpheal-harness list: the corpus and the language's words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- list -------------------------------------------------------------------------- */

static void list_scenarios(const char *dir) {
    char **names;
    size_t n, i;
    if (!scn_scenario_names(dir, &names, &n)) {
        printf("scenarios: (no directory %s)\n", dir);
        return;
    }
    printf("scenarios in %s (%s pool):\n", dir, scn_pool_backend_name());
    for (i = 0; i < n; i++) {
        scn_text path = {0};
        scn_error e;
        scn_scenario *s;
        char why[256];
        scn_text_printf(&path, "%s/%s", dir, names[i]);
        s = scn_parse_file(path.s, &e);
        if (s && scn_pool_unsupported(s, why, sizeof why))
            printf("  %-44s %s  [declined here: %s]\n", names[i], s->purpose, why);
        else if (s)
            printf("  %-44s %s%s\n", names[i], s->purpose, s->fail_fast_build ? "  [fail-fast build]" : "");
        else
            printf("  %-44s (does not parse: %d:%d: %s)\n", names[i], e.line, e.col, e.msg);
        scn_free(s);
        scn_text_free(&path);
    }
    scn_scenario_names_free(names, n);
}

int cmd_list(int argc, char **argv) {
    size_t i;
    int k;
    list_scenarios(argc > 2 ? argv[2] : "scenarios");
    printf("trace points (target/name; * = carries a pool):\n");
    for (i = 0; i < scn_trace_point_count(); i++)
        printf("  %s/%s%s\n", scn_trace_point_target((int)i), scn_trace_point_name((int)i),
               scn_trace_point_has_pool((int)i) ? " *" : "");
    printf("operations (operand kinds):\n");
    for (k = 0; k < SCN_OP_KIND_COUNT; k++) {
        unsigned m = scn_op_operand_kinds((scn_op_kind)k);
        int j;
        printf("  %-20s", scn_op_name((scn_op_kind)k));
        for (j = 0; j < SCN_OBJ_KIND_COUNT; j++)
            if (m & (1u << j)) printf(" %s", scn_obj_kind_name((scn_obj_kind)j));
        printf("\n");
    }
    printf("object kinds:");
    for (k = 0; k < SCN_OBJ_KIND_COUNT; k++) printf(" %s", scn_obj_kind_name((scn_obj_kind)k));
    printf("\nentry fields:");
    for (k = 0; k < SCN_FIELD_COUNT; k++) printf(" %s", scn_field_name((scn_field)k));
    printf("\npool options: min N, max N (private), stall always|never|N%%, start-delay D -- a pool "
           "severs only while its first worker has not started: a stall scenario needs start-delay\n");
    printf("faults:");
    for (k = 0; k < SCN_FAULT_KIND_COUNT; k++) printf(" %s", scn_fault_name((scn_fault_kind)k));
    printf("\n");
    return 0;
}
