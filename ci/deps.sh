#!/usr/bin/env bash
# Installs what a Debian or Ubuntu machine lacks for tpheal: only what the
# build and the tests use, by names that do not change with the compiler's
# version (libclang-rt-dev, not libclang-rt-14-dev: Ubuntu 24.04 and later
# have no -14).  Root runs apt-get itself; anyone else through `sudo -n` (a
# GitHub runner's user has password-less sudo).  Idempotent and quiet when
# everything is present, so every make target and ci/gate.sh can call it.
#   ci/deps.sh            build, unit tests, scenarios, sanitizers, stress, fuzz
#   ci/deps.sh windows    + mingw-w64 and Wine (make windows, the Wine job)
#   ci/deps.sh node       + Node.js and npm (make test: the workflow lint and the
#                           sabotage report's schema and viewer, from the npm registry)
#   ci/deps.sh soak       + stress-ng (make soak's competing load)
#   ci/deps.sh browser    + chromium (ci/test_timeline.py loads `replay --timeline`'s
#                           page in a headless browser and keeps its screenshot)
#   ci/deps.sh all        windows + node + browser (what .ci/run and make test install)
# Groups combine: `ci/deps.sh windows node soak`.
# What uses what: cmake/make/gcc the builds; clang + libclang-rt-dev the
# sanitizer and fuzz builds (and the clang MSVC-mode pass); llvm for llvm-symbolizer,
# without which clang's TSan prints every frame as `<null>` and a race report
# names neither access site (a bare Debian 12 failed harness.test_race in the
# race build for the lack of it: clang does not pull it in); libcmocka-dev the
# unit tests; pkg-config ci/test_install.py; python3-pytest the driver and
# python3-pytest-xdist its two workers in make test; git
# ci/test_sabotage.py; ccache the sabotage sweep's restores (ci/sabotage/sweep.py
# uses it when present: docs/sabotage.md); gcc-mingw-w64-x86-64 (its headers serve the MSVC-mode
# pass too), wine and dpkg-dev (cmocka's source package) the Windows build.
# Debian ships npm apart from nodejs (a bare Debian 12 with nodejs failed three
# tests for the lack of it); ca-certificates because `npm ci` fetches over
# https and a minbase Debian has no CA bundle.  npm is looked for on PATH,
# not by package: a GitHub runner's and NodeSource's Node carry their own npm,
# and Debian's npm package conflicts with NodeSource's nodejs.
set -euo pipefail
pkgs=(cmake make gcc clang libclang-rt-dev llvm libcmocka-dev pkg-config python3 python3-pytest python3-pytest-xdist git ccache)
node=0
for group in "$@"; do
  case "$group" in
    windows) pkgs+=(gcc-mingw-w64-x86-64 wine wine64 dpkg-dev) ;;
    node) node=1 ;;
    soak) pkgs+=(stress-ng) ;;
    browser) pkgs+=(chromium) ;;
    all) pkgs+=(gcc-mingw-w64-x86-64 wine wine64 dpkg-dev chromium); node=1 ;;
    *) echo "usage: $0 [windows] [node] [soak] [browser] | all" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ $node -eq 1 ]] && ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm ca-certificates)
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
