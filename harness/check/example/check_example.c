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
 * close to the owner, whose close drains the job first. */
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

int main(int argc, char **argv) {
    static const tph_check_case cases[] = {
        {"config_race_bug", config_race_bug, NULL},
        {"config_race_fixed", config_race_fixed, NULL},
        {"close_in_callback_bug", close_in_callback_bug, NULL},
        {"close_in_callback_fixed", close_in_callback_fixed, NULL},
    };
    return tph_check_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
