#!/bin/sh
# `make windows`: the Windows build of core + harness + tests, cross-compiled
# with mingw-w64 and run under Wine.
#   usage: ci/windows/run.sh [build-dir]      (default: build-win)
# Environment: TPHEAL_WIN_BUILD_TYPE (Debug), TPHEAL_WIN_CTEST_ARGS (extra ctest args),
#              TPHEAL_WIN_JOBS (parallel build/test jobs, default nproc).
# Steps, each timed: cmocka for mingw (cached), configure, build, Wine prefix
# up (server + boot before ctest), ctest, Wine down (always, via trap).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-win}
mkdir -p "$build"
build=$(cd "$build" && pwd)
jobs=${TPHEAL_WIN_JOBS:-$(nproc)}

for tool in x86_64-w64-mingw32-gcc cmake; do
    command -v "$tool" >/dev/null || { echo "windows: $tool not found (apt-get install gcc-mingw-w64-x86-64 cmake)" >&2; exit 1; }
done
wine_build=$build
. "$here/wine-env.sh"
[ -n "$TPHEAL_WINE" ] || { echo "windows: wine not found (apt-get install wine wine64)" >&2; exit 1; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
timings=""
last_step="" # seconds taken by the last step
step() { # step <name> <start>
    last_step=$(elapsed "$2")
    timings="$timings$(printf '  %-22s %6ss' "$1" "$last_step")
"
    echo "windows: $1 done in ${last_step}s"
}

t0=$(now)
t=$(now); "$here/build-cmocka-mingw.sh" "$build"; step cmocka-mingw "$t"

cmocka_lib="$build/cmocka-mingw/lib/libcmocka-static.a" # cmocka 1.1.5 (Debian 12)
[ -f "$cmocka_lib" ] || cmocka_lib="$build/cmocka-mingw/lib/libcmocka.a" # later releases
t=$(now)
cmake -S "$root" -B "$build" \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64.cmake" \
    -DCMAKE_BUILD_TYPE="${TPHEAL_WIN_BUILD_TYPE:-Debug}" -DTPHEAL_WERROR=ON \
    -DCMOCKA_INCLUDE_DIR="$build/cmocka-mingw/include" \
    -DCMOCKA_LIBRARY="$cmocka_lib" \
    -Dcmocka_DIR="$build/cmocka-mingw/no-config" >/dev/null
step configure "$t"

# Keep going past a target that does not cross-compile yet: everything that
# does build still gets tested, and the build failure still fails the run.
t=$(now)
build_rc=0
cmake --build "$build" -j"$jobs" -- -k >"$build/build.log" 2>&1 || build_rc=$?
step build "$t"
build_time=$last_step
if [ "$build_rc" -ne 0 ]; then
    echo "windows: BUILD FAILED (exit $build_rc); errors (full log: $build/build.log):"
    grep -E 'error|Error [0-9]' "$build/build.log" | head -40
fi

trap '"$here/wine-down.sh" "$build"' EXIT INT TERM
t=$(now); "$here/wine-up.sh" "$build"; step wine-up "$t"

t=$(now)
rc=0
# shellcheck disable=SC2086
(cd "$build" && ctest --output-on-failure -j"$jobs" --timeout 300 ${TPHEAL_WIN_CTEST_ARGS:-}) || rc=$?
step ctest "$t"
test_time=$last_step

echo "windows: timings"
printf '%s' "$timings"
printf '  %-22s %6ss\n' total "$(elapsed "$t0")"
echo "windows: build ${build_time}s (exit $build_rc), tests under wine ${test_time}s (ctest exit $rc)"
[ "$build_rc" -eq 0 ] || exit "$build_rc"
exit "$rc"
