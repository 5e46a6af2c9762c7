/* The DFS search's state (sched_dfs.h), private to the three files that
 * share it: the tree of choices and the preemption bound (strategy_dfs.c),
 * the fairness demotion (strategy_dfs_fair.c), and the partial-order
 * reduction -- dependency, sleep sets, backtrack points
 * (strategy_dfs_por.c).  One struct, because a run's pick goes through all
 * three and a node of the tree carries the reduction's sets. */
#ifndef TPHEAL_SCHED_DFS_INTERNAL_H
#define TPHEAL_SCHED_DFS_INTERNAL_H

#include "sched_dfs.h"
#include "sched_internal.h"

/* The partial-order reduction's most threads and keys a step may carry:
 * thread ids index 64-bit masks and vector clocks; a step touching more
 * objects than POR_MAXK is taken to touch everything.  Its keys are
 * POR_KEYS: slot 0 is always POR_ALL, so the time every step reads never
 * competes with the objects for room. */
#define POR_MAXT 64u
#define POR_MAXK 8u
#define POR_KEYS (POR_MAXK + 1u)
#define POR_ALL 0u /* object 0: virtual time; every step reads it, a clock read writes it on step time */

/* A step's footprint: a thread asleep at a node, or one explored there. */
typedef struct por_entry {
    uint32_t thread;
    uint32_t fresh; /* keys >= fresh: objects first touched after the node (another run may number them otherwise) */
    uint8_t nkeys;
    uint16_t wmask; /* bit i: key[i] written */
    uint32_t key[POR_KEYS];
    /* The bound: the branch that explored this thread first paid for it
     * and for the switch away from it after its step; `slack` is what it
     * had left for the rest.  Asleep in a later branch only while that
     * branch has spent (since `base`, its preemptions at the node) no more
     * than `slack`: past it, the explored branch could not have covered
     * the same trace within the bound. */
    int32_t slack;
    uint32_t base;
} por_entry;

typedef struct dfs_node {
    uint32_t n;              /* options */
    uint32_t chosen;         /* index taken in the current prefix */
    uint32_t preempt_before; /* preemptions on the path above this node */
    uint8_t kind;            /* SCHED_ITEM_PICK or SCHED_ITEM_CHOOSE */
    /* Options after the first spend one of the bound: a pick's when option 0
     * continues the current thread, a delay's (rt_choose_delay) late value. */
    uint8_t costly;
    /* partial-order reduction, picks only (thread-id bit masks) */
    uint64_t opts, bt, done; /* the options; the backtrack set; explored */
    uint32_t cur;            /* the current thread when it is an option, else 0 */
    uint32_t pick;           /* the thread taken in the current prefix */
    uint32_t fresh;          /* objects numbered when the node was made */
    por_entry *ent;          /* [0, nsleep): asleep on arrival; then one per explored thread */
    uint16_t nsleep, nent, capent;
} dfs_node;

typedef struct por_ev {
    uint32_t thread;
    uint32_t node;  /* the pick node of the point before it, + 1; 0 = none (forced) */
    uint32_t block; /* the first step of this thread's run of steps */
    uint32_t nodes; /* the tree's nodes when it was picked, its pick node included */
    uint8_t nkeys, overflow;
    uint16_t wmask;
    uint32_t key[POR_KEYS];
} por_ev;

struct sched_dfs {
    unsigned bound;
    uint64_t fair_bound;  /* 0 = no fairness (tests show what it prevents) */
    dfs_node *nodes;
    size_t len, cap;
    size_t pos;         /* the running run's next node */
    unsigned preempt;   /* the running run's preemptions */
    uint64_t last_spend;/* the running run's choice points up to its last one off the default */
    uint64_t runs, max_depth;
    unsigned max_used;
    bool done;
    uint32_t *scratch;  /* sorted runnable ids */
    size_t scratch_cap;
    /* Fairness (per run): picks so far, how many in a row the current
     * thread kept the CPU while another was runnable, and per thread id the
     * pick at which it was demoted (0 = not demoted) and last picked. */
    uint64_t seq, streak;
    uint64_t *demoted_at, *last_pick;
    size_t tcap;
    unsigned ndemoted;
    uint64_t fair_switches, fair_runs; /* over the search */
    uint64_t max_streak;               /* longest streak any run had */
    bool run_was_demoted, oom, too_many;
    /* partial-order reduction (sleep sets + DPOR, see below) */
    bool por;
    por_ev *ev;            /* this run's steps */
    uint32_t *evclock;     /* POR_MAXT per step: its vector clock */
    size_t nev, evcap;
    bool open, pending_clock;
    uint32_t pick_node;    /* the pick node of the point being made, + 1 */
    uint32_t step_nodes;   /* the tree's nodes when the running step was picked */
    /* A run is redundant from its first step of a sleeping thread on: every
     * run below that pick is too, so nodes at or past `cut` (that step's
     * `nodes`) add no backtrack and take no other option.  UINT32_MAX: none. */
    uint32_t cut;
    uint32_t tclock[POR_MAXT][POR_MAXT];
    uintptr_t *hkey;       /* object address -> number (first-touch order) */
    uint32_t *hval;
    size_t hcap;
    uintptr_t *skey;       /* the addresses in hkey, sorted: rt_forget's range lookup */
    size_t nskey, skcap;
    uint32_t nobj, objcap;
    uint32_t *obj_w;       /* per object: last writing step + 1 */
    uint32_t *obj_r;       /* per object x POR_MAXT: last reading step + 1 since that write */
    por_entry *sleep;      /* the sleep set of the running run */
    size_t nsl, slcap;
    bool run_blocked;
    uint64_t blocked_runs, races, pruned;
    char error[160];
};

static inline unsigned popcount64(uint64_t m) {
    unsigned n = 0;
    for (; m; m &= m - 1) n++;
    return n;
}
static inline uint64_t tbit(uint32_t id) { return (uint64_t)1 << (id - 1); }
static inline uint32_t lowest_id(uint64_t m) {
    uint32_t id = 1;
    while (!(m & 1u)) {
        m >>= 1;
        id++;
    }
    return id;
}

/* strategy_dfs.c: a run left its own prefix; ends the run. */
SCHED_NORETURN void sched_dfs_diverged(sched *, sched_dfs *, const char *what);
dfs_node *sched_dfs_new_node(sched *, sched_dfs *);

/* strategy_dfs_fair.c (d->fair_bound; its comment says why) */
bool sched_dfs_fair_spawned(sched_dfs *, rt_thread *); /* false: out of memory (d->oom) */
void sched_dfs_fair_demote(sched_dfs *, rt_thread *cur); /* cur runnable: its streak may cost it the CPU */
bool sched_dfs_fair_eligible(sched_dfs *, sched *, rt_thread *);
void sched_dfs_fair_lapse(sched_dfs *, sched *); /* every runnable thread was demoted: none is */
void sched_dfs_fair_picked(sched_dfs *, rt_thread *, bool kept); /* kept: the runnable current thread again */

/* strategy_dfs_por.c (d->por; the hooks of sched_internal.h are there too) */
void sched_dfs_por_fail(sched *, const char *what);
void sched_dfs_por_run_start(sched *, sched_dfs *);
uint32_t sched_dfs_por_next(const sched_dfs *, const dfs_node *);
uint32_t sched_dfs_por_choice(sched *, sched_dfs *, uint64_t opts, uint32_t cur);

#endif
