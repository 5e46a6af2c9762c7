/* The case tables of each family (cases_*.c), joined in cases.c. */
#ifndef TPHEAL_CONF_CASES_H
#define TPHEAL_CONF_CASES_H
#include "conf.h"

extern const conf_case conf_cases_work[];
extern const size_t conf_cases_work_count;
extern const conf_case conf_cases_wait[];
extern const size_t conf_cases_wait_count;
extern const conf_case conf_cases_timer[];
extern const size_t conf_cases_timer_count;
extern const conf_case conf_cases_misc[]; /* I/O, cleanup groups, events */
extern const size_t conf_cases_misc_count;

#endif
