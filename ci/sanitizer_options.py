"""The sanitizer options the sanitizer builds' unit tests run with in `make test`
(ci/test_unit.py), written once: the sabotage sweep and the mutant runner run
the same executables as their sanitizer layer, and a defect only these options
show must be caught there as it is in CI.

detect_stack_use_after_return: clang >= 15's default, on here for every
compiler (Debian 12's clang is 14): the scheduler once read an abandoned
fiber's stack and only that option saw it."""

ASAN_OPTIONS = "detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1"
UBSAN_OPTIONS = "print_stacktrace=1:halt_on_error=1"


def unit_env(base: dict) -> dict:
    """base (a copy of the environment) with the options set, unless the caller's
    environment sets them itself."""
    env = dict(base)
    env.setdefault("ASAN_OPTIONS", ASAN_OPTIONS)
    env.setdefault("UBSAN_OPTIONS", UBSAN_OPTIONS)
    return env
