/* The DFS search's fairness demotion.  Fair stateless model checking
 * (Musuvathi & Qadeer, PLDI 2008), in the form this scheduler needs.  A
 * search that never preempts never takes the CPU from a thread that stays
 * runnable: a pool worker whose callback re-arms its own wait on a set
 * event runs forever, the thread that would release the group is never
 * picked, and the run ends as a "livelock" a
 * real machine never shows (group-release-cancelling-stops-rearms.scn, from
 * the first DFS run).  So a thread that has kept the CPU for fair_bound
 * picks in a row while another was runnable is demoted -- CHESS's yield
 * with lowered priority: it is not an option again until every thread
 * runnable at that moment or since has been picked once (or is blocked).
 * The switch away from it is free: it does not count against the
 * preemption bound, because it is what any fair scheduler does, not a
 * preemption the search chose.  A livelock that survives this is reported
 * as one under fair scheduling (sched_core.c).
 *
 * fair_bound is 1,024 picks: three times the longest streak of the
 * corpus's correct runs (measured at P = 1, 1,000 runs a scenario: 331
 * picks, many-pools-churn.scn), so fairness leaves the tree of every
 * scenario that terminates as it was, and far below max_steps (1,000,000),
 * so a spinner is demoted ~970 times before a run is called a livelock.
 * It was 4,096; every run of a re-arming scenario spins until a demotion,
 * and at a quarter of the spin group-release-stops-rearms at P = 2 is
 * complete in 9,186 runs (it stopped at 20,000 before). */
#include <stdlib.h>

#include "sched_dfs_internal.h"

void sched_dfs_set_fair_bound(sched_dfs *d, uint64_t picks) { d->fair_bound = picks; }
uint64_t sched_dfs_fair_switches(const sched_dfs *d) { return d->fair_switches; }
uint64_t sched_dfs_fair_runs(const sched_dfs *d) { return d->fair_runs; }
uint64_t sched_dfs_max_streak(const sched_dfs *d) { return d->max_streak; }

/* Per thread id: the pick it was demoted at and the pick it last had. */
bool sched_dfs_fair_spawned(sched_dfs *d, rt_thread *t) {
    if (t->id >= d->tcap) {
        size_t cap = d->tcap ? d->tcap * 2 : 32;
        uint64_t *a, *b;
        while (cap <= t->id) cap *= 2;
        a = realloc(d->demoted_at, cap * sizeof *a);
        if (a) d->demoted_at = a;
        b = a ? realloc(d->last_pick, cap * sizeof *b) : NULL;
        if (b) d->last_pick = b;
        if (!a || !b) {
            /* thread 1 is spawned before the run has a fiber to end:
             * the next pick ends it */
            d->oom = true;
            return false;
        }
        d->tcap = cap;
    }
    d->demoted_at[t->id] = 0;
    d->last_pick[t->id] = 0;
    return true;
}

/* The current thread, still runnable, has kept the CPU fair_bound picks in
 * a row: demoted (once a run counts in fair_runs). */
void sched_dfs_fair_demote(sched_dfs *d, rt_thread *cur) {
    if (d->fair_bound && d->streak >= d->fair_bound && !d->demoted_at[cur->id]) {
        d->demoted_at[cur->id] = d->seq;
        d->ndemoted++;
        d->fair_switches++;
        if (!d->run_was_demoted) d->fair_runs++;
        d->run_was_demoted = true;
    }
}

/* A demoted thread is an option again once every other runnable thread has
 * been picked since its demotion; the demotion ends there. */
bool sched_dfs_fair_eligible(sched_dfs *d, sched *s, rt_thread *t) {
    uint64_t at = d->demoted_at[t->id];
    uint32_t i;
    if (!at) return true;
    for (i = 0; i < s->nrunnable; i++) {
        rt_thread *u = s->runnable[i];
        if (u != t && d->last_pick[u->id] <= at) return false;
    }
    d->demoted_at[t->id] = 0; /* everyone else has had its turn */
    d->ndemoted--;
    return true;
}

/* Every runnable thread waits for another (each was demoted while the
 * others ran): all demotions lapse, everyone is an option. */
void sched_dfs_fair_lapse(sched_dfs *d, sched *s) {
    uint32_t i;
    for (i = 0; i < s->nrunnable; i++) {
        rt_thread *t = s->runnable[i];
        if (d->demoted_at[t->id]) d->demoted_at[t->id] = 0;
    }
    d->ndemoted = 0;
}

void sched_dfs_fair_picked(sched_dfs *d, rt_thread *t, bool kept) {
    d->last_pick[t->id] = d->seq;
    if (kept) {
        if (++d->streak > d->max_streak) d->max_streak = d->streak;
    } else {
        d->streak = 0;
    }
}
