/* The campaign loop (scn_campaign.h): which runs it makes, in which order,
 * with which options, what stops it, and PCT's one k. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rt_sched.h"
#include "sched_dfs.h"
#include "scn_ast.h"
#include "scn_campaign.h"
#include "scn_run.h"

static scn_scenario *parse(const char *text) {
    scn_error e;
    scn_scenario *s = scn_parse("t.scn", text, strlen(text), &e);
    if (!s) fail_msg("%d:%d: %s", e.line, e.col, e.msg);
    return s;
}

/* Two threads racing on one work object: passes, with choices to make. */
static const char race[] = "# purpose: x\nwork W\nthread A\n  submit W\n  wait W\nend\n"
                           "thread B\n  submit W\n  wait W\nend\nexpect calls(W) >= 1\n";
static const char false_expectation[] = "# purpose: x\nwork W\nthread A\n  submit W\n  wait W\nend\n"
                                        "expect calls(W) == 2\n";

#define MAX_SEEN 64
typedef struct seen {
    size_t n;
    uint64_t j[MAX_SEEN], seed[MAX_SEEN], pct_steps[MAX_SEEN], before;
    int strategy[MAX_SEEN];
    bool passed[MAX_SEEN];
    size_t stop_after; /* the observer says stop after this many runs (0: never) */
} seen;

static void before(void *ctx, uint64_t j, const scn_run_opts *ro) {
    seen *w = (seen *)ctx;
    (void)j;
    (void)ro;
    w->before++;
}

static bool after(void *ctx, uint64_t j, const scn_run_opts *ro, const scn_run_out *r) {
    seen *w = (seen *)ctx;
    if (w->n < MAX_SEEN) {
        w->j[w->n] = j;
        w->seed[w->n] = ro->seed;
        w->pct_steps[w->n] = ro->pct_steps;
        w->strategy[w->n] = (int)ro->strategy;
        w->passed[w->n] = r->passed;
    }
    w->n++;
    return !(w->stop_after && w->n >= w->stop_after);
}

static void seeded_runs_each_seed_of_each_strategy_in_order(void **state) {
    scn_scenario *s = parse(race);
    scn_campaign_opts o;
    seen w;
    scn_campaign_observer obs = {&w, before, after, NULL};
    scn_campaign_result res;
    size_t i;
    (void)state;
    memset(&o, 0, sizeof o);
    memset(&w, 0, sizeof w);
    o.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_RANDOM) | SCN_CAMPAIGN_BIT(SCHED_STRATEGY_PCT);
    o.first_seed = 10;
    o.runs = 4;
    o.depth = 3;
    o.tail_on_failure = true;
    assert_int_equal(scn_campaign_run(s, &o, &obs, &res), SCN_CAMPAIGN_DONE);
    assert_int_equal(res.runs, 8);
    assert_int_equal(res.failures, 0);
    assert_int_equal(w.n, 8);
    assert_int_equal(w.before, 8);
    /* random first, then PCT with the probe's k, seeds 10..13 each */
    assert_int_equal(res.pct_steps, scn_campaign_pct_steps(s));
    assert_true(res.pct_steps > 0 && res.pct_steps != SCHED_PCT_DEFAULT_STEPS);
    for (i = 0; i < 8; i++) {
        assert_int_equal(w.j[i], i % 4);
        assert_int_equal(w.seed[i], 10 + i % 4);
        assert_int_equal(w.strategy[i], i < 4 ? SCHED_STRATEGY_RANDOM : SCHED_STRATEGY_PCT);
        if (i >= 4) assert_int_equal(w.pct_steps[i], res.pct_steps);
    }
    scn_campaign_result_free(&res);
    /* a given k is used as given */
    o.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_PCT);
    o.pct_steps = 7;
    memset(&w, 0, sizeof w);
    scn_campaign_run(s, &o, &obs, &res);
    assert_int_equal(res.pct_steps, 7);
    assert_int_equal(w.pct_steps[0], 7);
    scn_campaign_result_free(&res);
    scn_free(s);
}

static uint64_t odd_seed(void *ctx, sched_strategy_kind st, uint64_t j) {
    (void)ctx;
    (void)st;
    return 2 * j + 1;
}

static void a_seed_function_picks_the_seeds(void **state) {
    scn_scenario *s = parse(race);
    scn_campaign_opts o;
    seen w;
    scn_campaign_observer obs = {&w, NULL, after, NULL};
    scn_campaign_result res;
    (void)state;
    memset(&o, 0, sizeof o);
    memset(&w, 0, sizeof w);
    o.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_RANDOM);
    o.runs = 3;
    o.seed_at = odd_seed;
    scn_campaign_run(s, &o, &obs, &res);
    assert_int_equal(w.n, 3);
    assert_int_equal(w.seed[0], 1);
    assert_int_equal(w.seed[2], 5);
    scn_campaign_result_free(&res);
    scn_free(s);
}

/* --max-failures counts over the whole campaign (PCT does not start after
 * random reached it), and an observer's false stops it at once. */
static void failures_and_the_observer_stop_it(void **state) {
    scn_scenario *s = parse(false_expectation);
    scn_campaign_opts o;
    seen w;
    scn_campaign_observer obs = {&w, NULL, after, NULL};
    scn_campaign_result res;
    (void)state;
    memset(&o, 0, sizeof o);
    memset(&w, 0, sizeof w);
    o.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_RANDOM) | SCN_CAMPAIGN_BIT(SCHED_STRATEGY_PCT);
    o.runs = 5;
    o.depth = 3;
    o.max_failures = 2;
    o.tail_on_failure = true;
    assert_int_equal(scn_campaign_run(s, &o, &obs, &res), SCN_CAMPAIGN_STOPPED);
    assert_int_equal(res.runs, 2);
    assert_int_equal(res.failures, 2);
    assert_false(w.passed[0]);
    assert_int_equal(res.pct_steps, 0); /* PCT never began */
    scn_campaign_result_free(&res);
    o.max_failures = 0;
    memset(&w, 0, sizeof w);
    w.stop_after = 3;
    assert_int_equal(scn_campaign_run(s, &o, &obs, &res), SCN_CAMPAIGN_STOPPED);
    assert_int_equal(res.runs, 3);
    scn_campaign_result_free(&res);
    scn_free(s);
}

/* The bounded search: run j is leaf j + 1 of the tree, until the tree is
 * done; the search object outlives the loop for its figures. */
static void the_search_runs_every_leaf_once(void **state) {
    scn_scenario *s = parse(race);
    scn_campaign_opts o;
    seen w;
    scn_campaign_observer obs = {&w, NULL, after, NULL};
    scn_campaign_result res;
    size_t i;
    (void)state;
    memset(&o, 0, sizeof o);
    memset(&w, 0, sizeof w);
    o.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_DFS);
    o.runs = 100000;
    o.preemptions = 0;
    o.tail_on_failure = true;
    assert_int_equal(scn_campaign_run(s, &o, &obs, &res), SCN_CAMPAIGN_DONE);
    assert_non_null(res.dfs);
    assert_true(sched_dfs_complete(res.dfs));
    assert_int_equal(res.runs, sched_dfs_runs(res.dfs));
    assert_true(res.runs > 1 && res.runs == w.n);
    for (i = 0; i < w.n && i < MAX_SEEN; i++) {
        assert_int_equal(w.strategy[i], SCHED_STRATEGY_DFS);
        assert_int_equal(w.seed[i], i + 1);
    }
    scn_campaign_result_free(&res);
    /* --max-runs stops the search short of the tree */
    o.runs = 2;
    memset(&w, 0, sizeof w);
    assert_int_equal(scn_campaign_run(s, &o, &obs, &res), SCN_CAMPAIGN_DONE);
    assert_int_equal(res.runs, 2);
    assert_false(sched_dfs_complete(res.dfs));
    scn_campaign_result_free(&res);
    scn_free(s);
}

static bool go_on(void *ctx, uint64_t j, const scn_run_opts *ro, const scn_run_out *r) {
    (void)j;
    (void)ro;
    assert_non_null(r->failures);
    ((seen *)ctx)->before++;
    return true;
}

/* A run that cannot start (a schedule string the scheduler rejects) ends
 * the campaign with its reason, unless the observer goes on past it. */
static void a_refused_run_ends_it_unless_the_observer_goes_on(void **state) {
    scn_scenario *s = parse(race);
    scn_campaign_opts o;
    seen w;
    scn_campaign_observer obs = {&w, NULL, after, NULL};
    scn_campaign_result res;
    (void)state;
    memset(&o, 0, sizeof o);
    memset(&w, 0, sizeof w);
    o.strategies = SCN_CAMPAIGN_BIT(SCHED_STRATEGY_RANDOM);
    o.runs = 3;
    o.schedule = "not a schedule";
    assert_int_equal(scn_campaign_run(s, &o, &obs, &res), SCN_CAMPAIGN_BAD_RUN);
    assert_non_null(res.reason);
    assert_int_equal(res.runs, 0);
    scn_campaign_result_free(&res);
    obs.refused = go_on;
    assert_int_equal(scn_campaign_run(s, &o, &obs, &res), SCN_CAMPAIGN_DONE);
    assert_int_equal(w.before, 3); /* told of each */
    assert_int_equal(w.n, 0);
    scn_campaign_result_free(&res);
    scn_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seeded_runs_each_seed_of_each_strategy_in_order),
        cmocka_unit_test(a_seed_function_picks_the_seeds),
        cmocka_unit_test(failures_and_the_observer_stop_it),
        cmocka_unit_test(the_search_runs_every_leaf_once),
        cmocka_unit_test(a_refused_run_ends_it_unless_the_observer_goes_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
