/* The worked example of docs/check.md: user code on tpheal with two real
 * bugs, each beside its fix, checked with <tpheal/check.h>.  One binary,
 * one ctest case per check (CMakeLists.txt here):
 *     check_example NAME [--runs N] [--seed S]
 *
 * config_race: a service loads its configuration on the pool and, to
 * answer its first request early, submits the request's work right after
 * the load's -- trusting the pool to run work in submission order, one
 * item at a time.  The Windows pool promises neither: two workers take the
 * two items, and the request's callback may read the configuration before
 * the load's callback has written it.  The fix orders them: the request is
 * submitted once the load has drained (tph_work_wait).
 *
 * close_in_callback: a fire-and-forget job closes its own work object at
 * the end of its callback, so that nobody has to, and the owner's shutdown
 * waits for the job.  A close drains its object's callbacks first --
 * including the one making the call, which therefore waits for itself, and
 * the owner waits for it: a deadlock on every schedule.  The fix leaves the
 * close to the owner, whose close drains the job first.
 *
 * withdraw_race and transfer_deadlock use the user's own lock beside the
 * pool (tph_lock, <tpheal/lock.h>), a scheduling point under the check:
 * their comments below. */
#include <string.h>

#include <tpheal/check.h>
#include <tpheal/tpheal.h>

/* ---- config_race ---------------------------------------------------------- */

typedef struct service {
    int config_version; /* written by the load's callback, read by the request's */
    int handled;
    tph_work *load, *request;
} service;

static void load_config(tph_work *w, void *ctx) {
    service *s = (service *)ctx;
    (void)w;
    s->config_version = 7;
}

static void handle_request(tph_work *w, void *ctx) {
    service *s = (service *)ctx;
    (void)w;
    TPH_CHECK(s->config_version == 7);
    s->handled++;
}

static void config_race(bool fixed) {
    service s;
    memset(&s, 0, sizeof s);
    TPH_CHECK(tph_work_create(&s.load, load_config, &s, NULL) == TPH_OK);
    TPH_CHECK(tph_work_create(&s.request, handle_request, &s, NULL) == TPH_OK);
    TPH_CHECK(tph_work_submit(s.load) == TPH_OK);
    if (fixed) TPH_CHECK(tph_work_wait(s.load) == TPH_OK);
    TPH_CHECK(tph_work_submit(s.request) == TPH_OK);
    TPH_CHECK(tph_work_close(s.request) == TPH_OK);
    TPH_CHECK(tph_work_close(s.load) == TPH_OK);
    TPH_CHECK(s.handled == 1);
}

static void config_race_bug(void *arg) {
    (void)arg;
    config_race(false);
}
static void config_race_fixed(void *arg) {
    (void)arg;
    config_race(true);
}

/* ---- close_in_callback ---------------------------------------------------- */

typedef struct job {
    tph_work *work;
    int ran;
    bool close_itself;
} job;

static void run_job(tph_work *w, void *ctx) {
    job *j = (job *)ctx;
    j->ran++;
    if (j->close_itself) tph_work_close(w);
}

/* The job outlives the function that starts it (its callback may run
 * later), so it is not on that function's stack; a check resets what it
 * reads at its start, as every run is a fresh process. */
static job the_job;

static void close_in_callback(bool fixed) {
    job *j = &the_job;
    memset(j, 0, sizeof *j);
    j->close_itself = !fixed;
    TPH_CHECK(tph_work_create(&j->work, run_job, j, NULL) == TPH_OK);
    TPH_CHECK(tph_work_submit(j->work) == TPH_OK);
    /* Shutdown: the owner waits for the job; with the fix it also closes it. */
    if (fixed) TPH_CHECK(tph_work_close(j->work) == TPH_OK);
    else TPH_CHECK(tph_work_wait(j->work) == TPH_OK);
    TPH_CHECK(j->ran == 1);
}

static void close_in_callback_bug(void *arg) {
    (void)arg;
    close_in_callback(false);
}
static void close_in_callback_fixed(void *arg) {
    (void)arg;
    close_in_callback(true);
}

/* ---- withdraw_race -------------------------------------------------------- */

/* Two payments from one account run as work items.  Each reads the balance
 * under the account's lock, decides, and writes the new balance under the
 * lock again -- every access is locked, and still both can see 100, both
 * pay 60, and the second write loses the first: check-then-act across two
 * sections (the `counter -= val` race of microsoft/coyote#355).  The fix
 * decides and writes in one section. */
typedef struct account {
    tph_lock *lock;
    int balance; /* under lock */
    int paid;    /* under lock */
    bool one_section;
} account;

static void pay_60(tph_work *w, void *ctx) {
    account *a = (account *)ctx;
    int seen;
    (void)w;
    TPH_CHECK(tph_lock_acquire(a->lock) == TPH_OK);
    seen = a->balance;
    if (!a->one_section) {
        TPH_CHECK(tph_lock_release(a->lock) == TPH_OK);
        TPH_CHECK(tph_lock_acquire(a->lock) == TPH_OK);
    }
    if (seen >= 60) {
        a->balance = seen - 60;
        a->paid++;
    }
    TPH_CHECK(tph_lock_release(a->lock) == TPH_OK);
}

static account the_account;

static void withdraw_race(bool fixed) {
    account *a = &the_account;
    tph_work *pay;
    memset(a, 0, sizeof *a);
    a->balance = 100;
    a->one_section = fixed;
    TPH_CHECK(tph_lock_create(&a->lock) == TPH_OK);
    TPH_CHECK(tph_work_create(&pay, pay_60, a, NULL) == TPH_OK);
    TPH_CHECK(tph_work_submit(pay) == TPH_OK);
    TPH_CHECK(tph_work_submit(pay) == TPH_OK);
    TPH_CHECK(tph_work_close(pay) == TPH_OK);
    TPH_CHECK(a->balance + 60 * a->paid == 100);
    TPH_CHECK(tph_lock_close(a->lock) == TPH_OK);
}

static void withdraw_race_bug(void *arg) {
    (void)arg;
    withdraw_race(false);
}
static void withdraw_race_fixed(void *arg) {
    (void)arg;
    withdraw_race(true);
}

/* ---- transfer_deadlock ----------------------------------------------------- */

/* Two transfers in opposite directions, each taking the source account's
 * lock and then the destination's: when each holds its first lock, each
 * waits for the other's.  The fix takes the two locks in one global order
 * (by account number). */
typedef struct ledger {
    tph_lock *lock[2];
    int balance[2];
    bool ordered;
} ledger;

typedef struct transfer {
    ledger *l;
    int from, to;
} transfer;

static void run_transfer(tph_work *w, void *ctx) {
    transfer *t = (transfer *)ctx;
    ledger *l = t->l;
    int first = t->from, second = t->to;
    (void)w;
    if (l->ordered && first > second) {
        first = t->to;
        second = t->from;
    }
    TPH_CHECK(tph_lock_acquire(l->lock[first]) == TPH_OK);
    TPH_CHECK(tph_lock_acquire(l->lock[second]) == TPH_OK);
    l->balance[t->from] -= 10;
    l->balance[t->to] += 10;
    TPH_CHECK(tph_lock_release(l->lock[second]) == TPH_OK);
    TPH_CHECK(tph_lock_release(l->lock[first]) == TPH_OK);
}

static ledger the_ledger;
static transfer the_transfers[2];

static void transfer_deadlock(bool fixed) {
    ledger *l = &the_ledger;
    tph_work *w[2];
    int i;
    memset(l, 0, sizeof *l);
    l->ordered = fixed;
    for (i = 0; i < 2; i++) {
        l->balance[i] = 100;
        TPH_CHECK(tph_lock_create(&l->lock[i]) == TPH_OK);
        the_transfers[i].l = l;
        the_transfers[i].from = i;
        the_transfers[i].to = 1 - i;
        TPH_CHECK(tph_work_create(&w[i], run_transfer, &the_transfers[i], NULL) == TPH_OK);
    }
    TPH_CHECK(tph_work_submit(w[0]) == TPH_OK);
    TPH_CHECK(tph_work_submit(w[1]) == TPH_OK);
    for (i = 0; i < 2; i++) TPH_CHECK(tph_work_close(w[i]) == TPH_OK);
    TPH_CHECK(l->balance[0] == 100 && l->balance[1] == 100);
    for (i = 0; i < 2; i++) TPH_CHECK(tph_lock_close(l->lock[i]) == TPH_OK);
}

static void transfer_deadlock_bug(void *arg) {
    (void)arg;
    transfer_deadlock(false);
}
static void transfer_deadlock_fixed(void *arg) {
    (void)arg;
    transfer_deadlock(true);
}

/* ---- spin_wait ------------------------------------------------------------ */

/* A callback waits for its owner's hand-off by polling a flag.  On OS
 * threads that works, slowly and by luck (a plain flag, no ordering);
 * under the check every thread is a fiber of one OS thread, so when the
 * callback starts polling before the owner set the flag, the owner never
 * runs again: the run stops, and the check's watchdog reports it with the
 * seed.  The fix waits on an event through tpheal (tph_handle_wait), a
 * scheduling point the owner's set ends. */
typedef struct handoff {
    volatile int ready; /* the bug's flag */
    int value;
    tph_handle *given;  /* the fix's event */
    bool use_event;
} handoff;

static void take_handoff(tph_work *w, void *ctx) {
    handoff *h = (handoff *)ctx;
    (void)w;
    if (h->use_event) {
        bool signalled = false;
        TPH_CHECK(tph_handle_wait(h->given, 0xFFFFFFFFu, &signalled) == TPH_OK && signalled);
    } else {
        while (!h->ready) {
        }
    }
    TPH_CHECK(h->value == 42);
}

static handoff the_handoff;

static void spin_wait(bool fixed) {
    handoff *h = &the_handoff;
    tph_work *w;
    memset(h, 0, sizeof *h);
    h->use_event = fixed;
    TPH_CHECK(tph_event_create(&h->given, true, false) == TPH_OK);
    TPH_CHECK(tph_work_create(&w, take_handoff, h, NULL) == TPH_OK);
    TPH_CHECK(tph_work_submit(w) == TPH_OK);
    h->value = 42;
    h->ready = 1;
    TPH_CHECK(tph_event_set(h->given) == TPH_OK);
    TPH_CHECK(tph_work_close(w) == TPH_OK);
    TPH_CHECK(tph_handle_close(h->given) == TPH_OK);
}

static void spin_wait_bug(void *arg) {
    (void)arg;
    spin_wait(false);
}
static void spin_wait_fixed(void *arg) {
    (void)arg;
    spin_wait(true);
}

int main(int argc, char **argv) {
    static const tph_check_case cases[] = {
        {"config_race_bug", config_race_bug, NULL},
        {"config_race_fixed", config_race_fixed, NULL},
        {"close_in_callback_bug", close_in_callback_bug, NULL},
        {"close_in_callback_fixed", close_in_callback_fixed, NULL},
        {"withdraw_race_bug", withdraw_race_bug, NULL},
        {"withdraw_race_fixed", withdraw_race_fixed, NULL},
        {"transfer_deadlock_bug", transfer_deadlock_bug, NULL},
        {"transfer_deadlock_fixed", transfer_deadlock_fixed, NULL},
        {"spin_wait_bug", spin_wait_bug, NULL},
        {"spin_wait_fixed", spin_wait_fixed, NULL},
    };
    return tph_check_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
