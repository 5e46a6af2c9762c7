#!/usr/bin/env bash
# make matrix: the Linux gate jobs (ci/gate.sh) across toolchains and build
# types, on this machine (Debian 12: gcc 12, clang 14, cmocka 1.1) and in a
# Debian sid chroot (ci/matrix/sid-chroot.sh: the newest gcc, clang, cmocka
# 2.0 and wine), so a runner image's compiler moving ahead does not find
# the gate's failures first (issue 11).  The bare cell runs the README's
# two commands in a fresh clone on a bare Debian 12 (ci/matrix/bare-chroot.sh),
# so a missing install step cannot land.  docs/toolchain-matrix.md says what
# each cell covers and what none can (MSVC itself).
#   ci/matrix/run.sh [CELL...]     default: every cell; a cell is WHERE:JOB:CC:TYPE
# Results: build/matrix/results.txt, one `CELL PASS|FAIL seconds` line each.
# STRESS_SECONDS (default 30) bounds the sanitizer cells' stress pass.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=build/matrix
mkdir -p "$out"
export STRESS_SECONDS=${STRESS_SECONDS:-30}
cells=("$@")
if [[ ${#cells[@]} -eq 0 ]]; then
  cells=(
    host:linux:gcc:Release
    host:linux:clang:Debug
    sid:linux:gcc:RelWithDebInfo
    sid:linux:gcc:Release
    sid:linux:clang:Debug
    sid:noheal:gcc:RelWithDebInfo
    sid:asan:clang:RelWithDebInfo
    sid:tsan:clang:RelWithDebInfo
    sid:wine:gcc:Debug
    bare:readme:gcc:RelWithDebInfo
  )
fi
: >"$out/results.txt"
fail=0
for cell in "${cells[@]}"; do
  IFS=: read -r where job cc type <<<"$cell"
  name="$where-$job-$cc-$type"
  # One build root per cell: builds of other compilers or types never share a cache.
  env=(TPHEAL_GATE_BUILD="build/matrix/$name" TPHEAL_BUILD_TYPE="$type" CC="$cc"
       TPHEAL_GATE_REPORTS="build/matrix/$name/reports" STRESS_SECONDS="$STRESS_SECONDS"
       TPHEAL_WIN_BUILD_TYPE="$type")
  t0=$SECONDS
  echo "matrix: $cell ..."
  case $where in
    host) env "${env[@]}" ci/gate.sh "$job" >"$out/$name.log" 2>&1 ;;
    sid) ci/matrix/sid-chroot.sh run env "${env[@]}" ci/gate.sh "$job" >"$out/$name.log" 2>&1 ;;
    # The README's commands as written: make's defaults (gcc, RelWithDebInfo).
    bare) TPHEAL_BARE_OUT="$out/$name" ci/matrix/bare-chroot.sh run >"$out/$name.log" 2>&1 ;;
    *) echo "matrix: unknown place $where" >&2; exit 2 ;;
  esac
  rc=$?
  verdict=$([[ $rc -eq 0 ]] && echo PASS || echo FAIL)
  [[ $rc -eq 0 ]] || fail=1
  echo "$cell $verdict $((SECONDS - t0))s" | tee -a "$out/results.txt"
  grep -E '^(gate|bare): ' "$out/$name.log" | sed 's/^/    /'
done
if [[ -x ci/matrix/sid-chroot.sh ]]; then
  ci/matrix/sid-chroot.sh versions >"$out/sid-versions.txt" 2>&1 || true
  ci/matrix/sid-chroot.sh down || true
fi
exit $fail
