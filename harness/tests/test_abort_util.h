/* A stop that must abort: the callee runs in a forked child whose stderr is
 * a pipe, and the child must die of SIGABRT having written `want` last --
 * after nothing but a sanitizer's own lines ("==pid==...": ASan warns of an
 * impossible allocation before it returns NULL).  A caller forks before it
 * starts any thread, so the child is a copy of a process with one thread
 * and no lock left held.  No fork on Windows: the test skips there, the
 * stops being the same code the POSIX builds test. */
#ifndef TPHEAL_TEST_ABORT_UTIL_H
#define TPHEAL_TEST_ABORT_UTIL_H

#if !defined(_WIN32)
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void expect_abort(void (*fn)(void), const char *want) {
    int fds[2], status = 0;
    char text[512];
    size_t got = 0;
    ssize_t n;
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &no_core); /* the abort is expected: no core file */
        (void)dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        fn();
        _exit(0); /* fn must not return */
    }
    close(fds[1]);
    while (got < sizeof text - 1 && (n = read(fds[0], text + got, sizeof text - 1 - got)) > 0) got += (size_t)n;
    text[got] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fail_msg("child %s %d, stderr \"%s\"", WIFSIGNALED(status) ? "killed by signal" : "exited with",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), text);
    if (got < strlen(want) || strcmp(text + got - strlen(want), want) != 0 ||
        (got > strlen(want) && strncmp(text, "==", 2) != 0))
        fail_msg("stderr \"%s\", want \"%s\"", text, want);
}
#else
static void expect_abort(void (*fn)(void), const char *want) {
    (void)fn;
    (void)want;
    skip();
}
#endif

#endif
