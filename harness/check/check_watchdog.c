/* The watchdog of a check (check_internal.h): every thread of a run is a
 * fiber on the calling OS thread, so a callback that blocks in a call the
 * scheduler does not see (a raw mutex, a blocking system call) or spins on
 * plain memory stops the whole run, and nothing in it can notice.  An OS
 * thread beside it can: when a run has not ended within the bound, it
 * prints the run's failure line and replay and ends the process. */
/* C11 with no extensions hides clock_gettime and the condition clock. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tpheal/check.h>

#include "check_internal.h"

struct check_watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned seconds;
    uint64_t generation; /* one per armed run */
    bool armed, stop;
    FILE *out;
    char report[1024];
};

static void *watch(void *arg) {
    check_watchdog *w = (check_watchdog *)arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        uint64_t gen;
        struct timespec until;
        if (!w->armed) {
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        gen = w->generation;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t)w->seconds;
        while (!w->stop && w->armed && w->generation == gen)
            if (pthread_cond_timedwait(&w->cv, &w->mu, &until) != 0) break;
        if (!w->stop && w->armed && w->generation == gen) {
            fputs(w->report, w->out);
            fflush(w->out);
            _exit(TPH_CHECK_FAILED);
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

check_watchdog *check_watchdog_start(unsigned seconds, FILE *out) {
    check_watchdog *w = calloc(1, sizeof *w);
    pthread_condattr_t ca;
    if (!w) return NULL;
    w->seconds = seconds;
    w->out = out;
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

void check_watchdog_arm(check_watchdog *w, const char *report) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    snprintf(w->report, sizeof w->report, "%s", report);
    w->generation++;
    w->armed = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void check_watchdog_disarm(check_watchdog *w) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->armed = false;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void check_watchdog_stop(check_watchdog *w) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
