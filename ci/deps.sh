#!/usr/bin/env bash
# Installs what a Debian or Ubuntu machine lacks for tpheal: only what the
# build and the tests use, by names that do not change with the compiler's
# version (libclang-rt-dev, not libclang-rt-14-dev: Ubuntu 24.04 and later
# have no -14).  Root runs apt-get itself; anyone else through `sudo -n` (a
# GitHub runner's user has password-less sudo).  Idempotent and quiet when
# everything is present, so every make target and ci/gate.sh can call it.
#   ci/deps.sh            build, unit tests, scenarios, sanitizers, stress, fuzz
#   ci/deps.sh windows    + mingw-w64 and Wine (make windows, the Wine job)
#   ci/deps.sh all        both (what .ci/run installs)
# What uses what: cmake/make/gcc the builds; clang + libclang-rt-dev the
# sanitizer and fuzz builds (and the clang MSVC-mode pass); libcmocka-dev the
# unit tests; pkg-config ci/test_install.py; python3-pytest the driver; git
# ci/test_sabotage.py; ccache the sabotage sweep's restores (ci/sabotage/sweep.py
# uses it when present: docs/sabotage.md); gcc-mingw-w64-x86-64 (its headers serve the MSVC-mode
# pass too), wine and dpkg-dev (cmocka's source package) the Windows build.
set -euo pipefail
pkgs=(cmake make gcc clang libclang-rt-dev libcmocka-dev pkg-config python3 python3-pytest git ccache)
case "${1:-}" in
  "") ;;
  windows|all) pkgs+=(gcc-mingw-w64-x86-64 wine wine64 dpkg-dev) ;;
  *) echo "usage: $0 [windows|all]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ! command -v npm >/dev/null 2>&1; then
  echo "ci/deps.sh: note: npm not found; the workflow lint and the sabotage report viewer need Node.js + npm" >&2
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "tpheal needs these packages; as root (or with sudo):" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "ci/deps.sh: installing ${missing[*]}" >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
