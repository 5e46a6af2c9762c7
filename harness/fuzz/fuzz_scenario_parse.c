/* libFuzzer target: the scenario parser must never crash, hang or leak on any
 * bytes, and must either return a scenario or an error with a position.
 * Built and run by run_fuzz.sh (clang -fsanitize=fuzzer,address,undefined). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scn_ast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    scn_error err;
    scn_scenario *s = scn_parse("fuzz.scn", (const char *)data, size, &err);
    if (s == NULL) {
        /* every refusal says where and why */
        if (err.msg[0] == '\0' || err.line < 1 || err.col < 1) abort();
    } else {
        if (s->nthreads == 0 || strncmp(s->path, "fuzz.scn", 9) != 0) abort();
        scn_free(s);
    }
    return 0;
}
