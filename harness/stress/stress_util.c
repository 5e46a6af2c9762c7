/* Shared pieces of the stress subcommands (stress_util.h). */
#define _POSIX_C_SOURCE 200809L
#include "stress_util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(_WIN32)
#include <io.h>
#include <windows.h>
#define STRESS_WRITE(buf, n) _write(2, (buf), (unsigned)(n))
#else
#include <unistd.h>
#define STRESS_WRITE(buf, n) write(2, (buf), (n))
#endif

#include <tpheal/config.h>

#include "scn_clock.h"

#if defined(TPHEAL_ASAN) || defined(TPHEAL_TSAN)
#include <sanitizer/common_interface_defs.h>
#endif

uint64_t stress_splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t stress_run_seed(uint64_t base, uint64_t j) { return stress_splitmix64(base + j); }

/* ---- hash set ------------------------------------------------------------ */
void stress_hashset_init(stress_hashset *s) { memset(s, 0, sizeof *s); }

static bool hashset_put(uint64_t *slot, size_t cap, uint64_t v) {
    size_t i = (size_t)(stress_splitmix64(v) & (cap - 1));
    for (;;) {
        if (slot[i] == v) return false;
        if (slot[i] == 0) {
            slot[i] = v;
            return true;
        }
        i = (i + 1) & (cap - 1);
    }
}

bool stress_hashset_add(stress_hashset *s, uint64_t v) {
    if (v == 0) { /* 0 marks an empty slot, so it is kept aside */
        if (!s->has_zero) s->n++;
        s->has_zero = true;
        return true;
    }
    if ((s->n + 1) * 2 > s->cap) { /* keep the load under one half */
        size_t cap = s->cap ? s->cap * 2 : 1024;
        uint64_t *slot = calloc(cap, sizeof *slot);
        if (!slot) return false;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) hashset_put(slot, cap, s->slot[i]);
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
    }
    if (hashset_put(s->slot, s->cap, v)) s->n++;
    return true;
}

void stress_hashset_free(stress_hashset *s) {
    free(s->slot);
    stress_hashset_init(s);
}

/* ---- wall clock ------------------------------------------------------------ */
uint64_t stress_wall_ms(void) { return (uint64_t)(scn_wall_seconds() * 1000.0); }

/* ---- crash line -------------------------------------------------------------
 * Written from a signal handler or a sanitizer's death callback, so it is
 * formatted by hand into a static buffer and written with one write(2):
 * nothing here may allocate or take a lock.  The driver (ci/stress.py) reads
 * it to name the seed of a crash, a sanitizer report or a timeout (it sends
 * SIGABRT to a batch that overran). */
static char crash_path[512];
static volatile uint64_t crash_seed, crash_j;
/* The command the run path prints for the current run (its replay, or the
 * model hint of a free-running one), owned by the caller; NULL: none. */
static const char *volatile crash_cmd_label;
static const char *volatile crash_cmd;
static volatile sig_atomic_t crash_armed, crash_written;

static size_t put_str(char *buf, size_t at, size_t cap, const char *s) {
    while (*s && at + 1 < cap) buf[at++] = *s++;
    return at;
}

static size_t put_hex(char *buf, size_t at, size_t cap, uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    for (int shift = 60; shift >= 0 && at + 1 < cap; shift -= 4)
        buf[at++] = digits[(v >> shift) & 15u];
    return at;
}

static size_t put_dec(char *buf, size_t at, size_t cap, uint64_t v) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < 24);
    while (n && at + 1 < cap) buf[at++] = tmp[--n];
    return at;
}

static void crash_say(void) {
    if (!crash_armed || crash_written) return;
    crash_written = 1;
    char buf[700];
    size_t n = put_str(buf, 0, sizeof buf, "\ntph-stress: crashed in run ");
    n = put_str(buf, n, sizeof buf, crash_path);
    n = put_str(buf, n, sizeof buf, " seed=0x");
    n = put_hex(buf, n, sizeof buf, crash_seed);
    n = put_str(buf, n, sizeof buf, " j=");
    n = put_dec(buf, n, sizeof buf, crash_j);
    n = put_str(buf, n, sizeof buf, "\n");
    if (STRESS_WRITE(buf, n) < 0) { /* nothing left to report it to */
        return;
    }
    /* The command in pieces: it is as long as the paths in it, and no
     * buffer of ours may be allocated here. */
    const char *label = crash_cmd_label, *cmd = crash_cmd;
    if (!label || !cmd) return;
    const char *piece[] = {"tph-stress: ", label, ": ", cmd, "\n"};
    for (size_t i = 0; i < sizeof piece / sizeof piece[0]; i++)
        if (STRESS_WRITE(piece[i], strlen(piece[i])) < 0) return;
}

static void crash_signal(int sig) {
    crash_say();
    signal(sig, SIG_DFL);
    raise(sig);
}

void stress_crash_install(const char *scenario_path) {
    size_t n = strlen(scenario_path);
    if (n >= sizeof crash_path) n = sizeof crash_path - 1;
    memcpy(crash_path, scenario_path, n);
    crash_path[n] = '\0';
    crash_armed = 1;
    signal(SIGABRT, crash_signal);
#if defined(TPHEAL_ASAN) || defined(TPHEAL_TSAN)
    /* The sanitizers own SIGSEGV and friends: they print their report and
     * then call this before the process dies. */
    __sanitizer_set_death_callback(crash_say);
#else
    signal(SIGSEGV, crash_signal);
    signal(SIGFPE, crash_signal);
    signal(SIGILL, crash_signal);
#if defined(SIGBUS)
    signal(SIGBUS, crash_signal);
#endif
#endif
}

void stress_crash_current(uint64_t seed, uint64_t j) {
    crash_seed = seed;
    crash_j = j;
}

void stress_crash_command(const char *label, const char *cmd) {
    crash_cmd_label = label;
    crash_cmd = cmd;
}

bool stress_wrong_build(const char *path, bool needs_fail_fast) {
    bool mine = TPHEAL_FAIL_FAST != 0;
    if (needs_fail_fast == mine) return false;
    fprintf(stderr, "%s: needs the %s core: run it with tpheal-harness%s\n", path,
            needs_fail_fast ? "fail-fast" : "default", needs_fail_fast ? "-failfast" : "");
    return true;
}

/* ---- options ----------------------------------------------------------------- */
bool stress_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    if (!text || !*text || *text == '-') goto bad;
    /* Decimal or 0x-hex, like ci/stress_plan.py: a leading 0 is not octal. */
    bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    unsigned long long v = strtoull(hex ? text + 2 : text, &end, hex ? 16 : 10);
    if (errno || !end || *end) goto bad;
    *out = (uint64_t)v;
    return true;
bad:
    fprintf(stderr, "%s: %s: '%s' is not an unsigned integer (decimal or 0x-hex)\n", cmd, opt,
            text ? text : "");
    return false;
}
