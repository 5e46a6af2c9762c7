/* PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS 2010).  Each
 * thread gets a random priority when spawned; the highest-priority runnable
 * thread always runs; d-1 change points are drawn uniformly in [1, k]
 * before the run, and at the i-th one the thread about to run is demoted
 * below every other.  One run then hits a depth-d bug with probability
 * >= 1 / (n * k^(d-1)).
 * Steps are counted at choice points only (two or more runnable), like
 * Shuttle, so k is sched_result.choice_points of earlier runs; the caller
 * passes it in (sched_options.pct_steps) rather than the scheduler
 * remembering it, because a seed must replay alone.
 *
 * Pure PCT is unfair: a high-priority thread spinning (rt_yield, an atomic
 * load in a loop) on a flag a lower one must set runs forever and the run
 * ends as a false livelock after max_steps.  So, like Coyote's and
 * Lockstep's "fair PCT", once a run is past 2k choice points -- every change
 * point is long behind, the guarantee is spent -- it continues as a random
 * walk. */
#include "sched_internal.h"

static void pct_run_start(sched *s) {
    sched_pct_state *p = &s->st.pct;
    uint64_t k = s->opt.pct_steps ? s->opt.pct_steps : SCHED_PCT_DEFAULT_STEPS;
    unsigned i, j;
    p->depth = s->opt.pct_depth;
    if (p->depth < 1) p->depth = 1;
    if (p->depth > SCHED_PCT_MAX_DEPTH) p->depth = SCHED_PCT_MAX_DEPTH;
    p->nchange = p->depth - 1;
    p->next_change = 0;
    p->count = 0;
    /* Demoted priorities d-1, d-2, ... lie below every initial priority
     * (>= 2^32, see pct_thread_spawned), later demotions lower still. */
    p->low = p->depth;
    p->fair_after = k * 2u;
    for (i = 0; i < p->nchange; i++) {
        uint64_t c = 1u + (k > UINT32_MAX ? pcg32_next(&s->rng) % k : pcg32_bounded(&s->rng, (uint32_t)k));
        for (j = i; j > 0 && p->change[j - 1] > c; j--) p->change[j] = p->change[j - 1];
        p->change[j] = c;
    }
}

static void pct_thread_spawned(sched *s, rt_thread *t) {
    /* Random 32-bit rank above the demotion range; the id breaks ties so
     * priorities stay distinct. */
    t->priority = (uint64_t)((pcg32_next(&s->rng) >> 1) + 1u) << 32 | t->id;
}

static rt_thread *highest(sched *s) {
    rt_thread *best = s->runnable[0];
    uint32_t i;
    for (i = 1; i < s->nrunnable; i++)
        if (s->runnable[i]->priority > best->priority) best = s->runnable[i];
    return best;
}

static rt_thread *pct_pick(sched *s) {
    sched_pct_state *p = &s->st.pct;
    rt_thread *best;
    if (++p->count > p->fair_after) return s->runnable[pcg32_bounded(&s->rng, s->nrunnable)];
    best = highest(s);
    while (p->next_change < p->nchange && p->change[p->next_change] <= p->count) {
        best->priority = p->low--;
        p->next_change++;
        best = highest(s);
    }
    return best;
}

const sched_strategy sched_strategy_pct = {"pct", pct_run_start, pct_thread_spawned, pct_pick, NULL, NULL};
