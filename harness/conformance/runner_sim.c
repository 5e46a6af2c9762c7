/* The conformance runner on the simulated pool (harness/sim) with the native
 * runtime: each case is one simulated process on real threads and the real
 * clock, so the same timing allowances hold as on Windows.
 *
 * The stall is switched off in every pool: a real pool cannot be made to
 * stall on demand, so no case depends on it and the model's stall must not
 * fire in cases that cancel queued waits. */
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "rt_native.h"
#include "sim.h"

typedef struct sim_case_run {
    const conf_case *k;
    conf_ctx *ctx;
} sim_case_run;

static void case_main(void *arg) {
    sim_case_run *run = (sim_case_run *)arg;
    sim_config cfg = sim_config_default();
    sim_stall never;
    memset(&never, 0, sizeof never);
    never.mode = SIM_STALL_NEVER;
    cfg.default_pool_stall = never;
    cfg.private_pool_stall = never;
    sim_process_begin(&cfg);
    run->k->run(run->ctx);
    /* The real pool would have crashed or silently ignored a misuse; the
     * model records it.  A case that misuses the API is a broken case. */
    for (size_t i = 0; i < sim_misuse_count(); i++) {
        sim_misuse m;
        char text[256];
        if (!sim_misuse_get(i, &m)) continue;
        (void)sim_misuse_format(&m, text, sizeof text);
        fprintf(stderr, "%s: sim reports misuse: %s\n", run->ctx->case_name, text);
        run->ctx->failures++;
    }
    sim_process_end();
}

static void exec_sim(const conf_case *k, conf_ctx *ctx) {
    sim_case_run run;
    run.k = k;
    run.ctx = ctx;
    rt_native_options o;
    rt_native_options_default(&o);
    if (rt_native_run(case_main, &run, &o) != 0) {
        rt_native_result r;
        rt_native_last_result(&r);
        fprintf(stderr, "%s: the simulated process ended: %s\n", k->name, r.reason);
        ctx->failures++;
    }
    if (sim_process_active()) sim_process_end();
}

int main(int argc, char **argv) {
    printf("conformance[sim]: running on the simulated pool, native runtime\n");
    return conf_run_all("sim", exec_sim, argc, argv);
}
