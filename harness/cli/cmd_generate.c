/* tpheal-harness generate: programs nobody wrote (docs/generate.md).  Draws
 * programs (seed, index), runs each as a scenario under the seeded
 * strategies with every oracle of the runner, and shrinks each failing one
 * -- the program by delta debugging, then the schedule to the fewest
 * preemptions by the bounded search -- into a scenario file with its replay
 * command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen_check.h"

typedef struct gen_options {
    uint64_t seed, programs, first, seeds, max_failures, shrink_runs;
    double seconds;
    unsigned strategies, depth;
    const char *out;
    bool json, print, shrink;
} gen_options;

static int bad(const char *opt, const char *why) {
    fprintf(stderr, "tpheal-harness generate: %s: %s\n", opt, why);
    return 2;
}

static int parse(int argc, char **argv, gen_options *o) {
    int i;
    memset(o, 0, sizeof *o);
    o->programs = 100;
    o->seeds = 4;
    o->max_failures = 3;
    o->shrink_runs = 20000;
    o->strategies = STRATEGIES_SEEDED;
    o->depth = 3;
    o->shrink = true;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t *num = NULL;
        if (strcmp(a, "--json") == 0) { o->json = true; continue; }
        if (strcmp(a, "--print") == 0) { o->print = true; continue; }
        if (strcmp(a, "--no-shrink") == 0) { o->shrink = false; continue; }
        if (strcmp(a, "--seed") == 0) num = &o->seed;
        else if (strcmp(a, "--programs") == 0) num = &o->programs;
        else if (strcmp(a, "--first") == 0) num = &o->first;
        else if (strcmp(a, "--seeds") == 0) num = &o->seeds;
        else if (strcmp(a, "--max-failures") == 0) num = &o->max_failures;
        else if (strcmp(a, "--shrink-runs") == 0) num = &o->shrink_runs;
        if (num) {
            if (!v || !cli_parse_u64(v, num)) return bad(a, "needs a whole decimal number");
            if (num != &o->seed && num != &o->first && *num == 0) return bad(a, "needs a positive number");
            i++;
            continue;
        }
        if (strcmp(a, "--seconds") == 0) {
            uint64_t s;
            if (!v || !cli_parse_u64(v, &s) || s == 0) return bad(a, "needs a positive whole number of seconds");
            o->seconds = (double)s;
            i++;
        } else if (strcmp(a, "--depth") == 0) {
            uint64_t d;
            if (!v || !cli_parse_u64(v, &d) || d == 0 || d > 64) return bad(a, "needs 1..64");
            o->depth = (unsigned)d;
            i++;
        } else if (strcmp(a, "--strategy") == 0) {
            if (v && strcmp(v, "random") == 0) o->strategies = STRATEGY_BIT(SCHED_STRATEGY_RANDOM);
            else if (v && strcmp(v, "pct") == 0) o->strategies = STRATEGY_BIT(SCHED_STRATEGY_PCT);
            else if (v && strcmp(v, "both") == 0) o->strategies = STRATEGIES_SEEDED;
            else return bad(a, "is random, pct or both");
            i++;
        } else if (strcmp(a, "--out") == 0) {
            if (!v || !*v) return bad(a, "needs a directory");
            o->out = v;
            i++;
        } else {
            return bad(a, "unknown option (tpheal-harness help generate)");
        }
    }
    return 0;
}

static void program_path(const gen_options *o, uint64_t seed, uint64_t index, const char *tail, char *buf, size_t n) {
    if (o->out) snprintf(buf, n, "%s/gen-%llu-%llu%s.scn", o->out, (unsigned long long)seed, (unsigned long long)index, tail);
    else snprintf(buf, n, "gen-%llu-%llu%s.scn", (unsigned long long)seed, (unsigned long long)index, tail);
}

static bool write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "tpheal-harness generate: cannot write %s: %s\n", path, strerror(errno));
        if (f) fclose(f);
        return false;
    }
    return true;
}

static size_t count_lines(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* What a failing program's report says: the failure, the shrunk program and
 * its schedule at the fewest preemptions, and the commands. */
typedef struct shrunk {
    char *text;        /* the shrunk scenario, ready for scenarios/ */
    size_t lines;
    int preemptions;   /* of its schedule; -1 when the search found none within 3 */
    uint64_t runs;     /* spent shrinking */
    char replay[4096]; /* the command that replays the shrunk program's failure */
} shrunk;

static void shrink_one(const cli_exe *x, const gen_options *o, const gen_program *orig, const gen_search *how,
                       const gen_failure *f, shrunk *out) {
    gen_program p = *orig;
    char path[1024], purpose[160];
    scn_text text = {0}, comments = {0}, cmd = {0};
    gen_failure sf;
    memset(out, 0, sizeof *out);
    out->preemptions = -1;
    program_path(o, orig->seed, orig->index, "-shrunk", path, sizeof path);
    out->runs = gen_shrink_program(&p, path, how, f->signature, o->shrink_runs);
    gen_emit(&p, "shrinking", NULL, &text);
    memset(&sf, 0, sizeof sf);
    out->preemptions = gen_shrink_schedule(path, text.s, f->signature, o->shrink_runs, &sf, &out->runs);
    if (out->preemptions >= 0) {
        scn_replay_by_schedule(&cmd, x->argv0, sf.schedule, NULL, path);
    } else {
        /* no schedule within 3 preemptions: the seeded run that fails it */
        gen_failure_free(&sf);
        if (gen_find_failure(path, text.s, how, f->signature, &sf, &out->runs, NULL, 0))
            scn_replay_by_seed(&cmd, x->argv0, &sf.how, path);
    }
    snprintf(out->replay, sizeof out->replay, "%s", cmd.s ? cmd.s : "(the shrunk program no longer fails)");
    scn_text_free(&text);
    snprintf(purpose, sizeof purpose, "generated program %llu/%llu, shrunk", (unsigned long long)orig->seed,
             (unsigned long long)orig->index);
    scn_text_printf(&comments, "# fails: %s\n", f->signature);
    scn_text_printf(&comments, "# found by: tpheal-harness generate --seed %llu --first %llu --programs 1\n",
                    (unsigned long long)orig->seed, (unsigned long long)orig->index);
    if (out->preemptions >= 0) scn_text_printf(&comments, "# schedule: %d preemption(s) at the fewest\n", out->preemptions);
    gen_emit(&p, purpose, comments.s, &text);
    out->text = scn_text_take(&text);
    out->lines = out->text ? count_lines(out->text) : 0;
    gen_failure_free(&sf);
    scn_text_free(&comments);
    scn_text_free(&cmd);
}

/* runs: the search's runs so far, the failing one included (what the
 * sabotage sweep's generate catcher reports as its schedules to the catch). */
static void report_failure(const cli_exe *x, const gen_options *o, const gen_program *p, const gen_failure *f,
                           const shrunk *sh, const char *path, uint64_t runs) {
    scn_text cmd = {0};
    scn_replay_by_seed(&cmd, x->argv0, &f->how, path);
    if (o->json) {
        scn_json j;
        scn_json_begin(&j, stdout, "generate-failure");
        scn_json_u64(&j, "seed", p->seed);
        scn_json_u64(&j, "index", p->index);
        scn_json_str(&j, "program", path);
        scn_json_str(&j, "signature", f->signature);
        /* the verdict's data, as run --json's failure objects state it: the
         * driver reads these, never the signature's prose */
        scn_json_str(&j, "status", f->status >= 0 ? sched_status_name((sched_status)f->status) : "native");
        scn_failures_json(&j, &f->list);
        scn_json_str(&j, "strategy", cli_strategy_name(f->how.strategy));
        scn_json_u64(&j, "run_seed", f->how.seed);
        scn_json_u64(&j, "runs", runs);
        scn_json_str(&j, "replay", cmd.s);
        if (sh) {
            scn_json_u64(&j, "shrunk_lines", sh->lines);
            scn_json_u64(&j, "shrink_runs", sh->runs);
            if (sh->preemptions >= 0) scn_json_u64(&j, "preemptions", (uint64_t)sh->preemptions);
            scn_json_str(&j, "shrunk_replay", sh->replay);
            scn_json_str(&j, "shrunk", sh->text);
        }
        scn_json_end(&j);
    } else {
        printf("FAIL generated program %llu/%llu (%s seed %llu): %s\n", (unsigned long long)p->seed,
               (unsigned long long)p->index, cli_strategy_name(f->how.strategy), (unsigned long long)f->how.seed,
               f->failures ? f->failures : "");
        printf("  replay: %s\n", cmd.s);
        if (sh) {
            char bound[8];
            snprintf(bound, sizeof bound, sh->preemptions >= 0 ? "%d" : "> 3", sh->preemptions);
            printf("  shrunk to %zu lines in %llu runs; schedule at %s preemption(s)\n", sh->lines,
                   (unsigned long long)sh->runs, bound);
            printf("  replay shrunk: %s\n", sh->replay);
            printf("%s", sh->text);
        }
    }
    scn_text_free(&cmd);
}

int cmd_generate(const cli_exe *x, int argc, char **argv) {
    gen_options o;
    gen_search how;
    uint64_t i, runs = 0, failing = 0, done = 0;
    double t0;
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    /* programs are searched and shrunk by controlled runs: the model only */
    if (!scn_pool_is_model() && !o.print) return bad("generate", "needs the model of the pool (tpheal-harness)");
    if (o.first > UINT64_MAX - o.programs) return bad("--first", "with --programs runs past 2^64");
    memset(&how, 0, sizeof how);
    how.strategies = o.strategies;
    how.seeds = o.seeds;
    how.depth = o.depth;
    t0 = scn_wall_seconds();
    for (i = o.first; i - o.first < o.programs; i++) {
        gen_program p;
        scn_text text = {0};
        char path[1024], purpose[96], perr[300] = "";
        gen_failure f;
        const char *illegal;
        if (o.seconds > 0 && scn_wall_seconds() - t0 >= o.seconds) break;
        gen_program_draw(&p, o.seed, i);
        illegal = gen_program_illegal(&p);
        snprintf(purpose, sizeof purpose, "generated program %llu/%llu", (unsigned long long)o.seed, (unsigned long long)i);
        gen_emit(&p, purpose, NULL, &text);
        program_path(&o, o.seed, i, "", path, sizeof path);
        done++;
        if (illegal) {
            /* the draw broke its own rules: a defect of the generator */
            fprintf(stderr, "tpheal-harness generate: program %llu/%llu is illegal: %s\n", (unsigned long long)o.seed,
                    (unsigned long long)i, illegal);
            scn_text_free(&text);
            return 1;
        }
        if (o.print) {
            printf("%s", text.s);
            scn_text_free(&text);
            continue;
        }
        if (gen_find_failure(path, text.s, &how, NULL, &f, &runs, perr, sizeof perr)) {
            shrunk sh;
            failing++;
            if (o.out) write_file(path, text.s);
            if (o.shrink) {
                shrink_one(x, &o, &p, &how, &f, &sh);
                if (o.out && sh.text) {
                    char spath[1024];
                    program_path(&o, o.seed, i, "-shrunk", spath, sizeof spath);
                    write_file(spath, sh.text);
                }
            }
            report_failure(x, &o, &p, &f, o.shrink ? &sh : NULL, path, runs);
            if (o.shrink) free(sh.text);
            gen_failure_free(&f);
        } else if (*perr) {
            fprintf(stderr, "tpheal-harness generate: the generator wrote a program that does not parse: %s\n", perr);
            scn_text_free(&text);
            return 1;
        }
        scn_text_free(&text);
        if (failing >= o.max_failures) break;
    }
    if (o.print) return 0;
    {
        double secs = scn_wall_seconds() - t0;
        if (o.json) {
            scn_json j;
            scn_json_begin(&j, stdout, "generate-summary");
            scn_json_u64(&j, "seed", o.seed);
            scn_json_u64(&j, "programs", done);
            scn_json_u64(&j, "runs", runs);
            scn_json_u64(&j, "failing_programs", failing);
            scn_json_fixed(&j, "seconds", 2, secs);
            scn_json_end(&j);
        } else {
            printf("%s generate seed %llu: %llu programs, %llu runs, %llu failing; %.1f programs/s, %.0f schedules/s\n",
                   failing ? "FAIL" : "PASS", (unsigned long long)o.seed, (unsigned long long)done,
                   (unsigned long long)runs, (unsigned long long)failing, secs > 0 ? (double)done / secs : 0.0,
                   secs > 0 ? (double)runs / secs : 0.0);
        }
    }
    return failing ? 1 : 0;
}
