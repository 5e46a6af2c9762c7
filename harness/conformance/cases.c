/* The matrix in one fixed order: work and pools, waits, timers, the rest. */
#include "cases.h"

typedef struct family {
    const conf_case *cases;
    const size_t *count;
} family;

static const family families[] = {
    {conf_cases_work, &conf_cases_work_count},
    {conf_cases_wait, &conf_cases_wait_count},
    {conf_cases_timer, &conf_cases_timer_count},
    {conf_cases_misc, &conf_cases_misc_count},
};

size_t conf_case_total(void) {
    size_t n = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) n += *families[f].count;
    return n;
}

const conf_case *conf_case_at(size_t index) {
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (index < *families[f].count) return &families[f].cases[index];
        index -= *families[f].count;
    }
    return NULL;
}
