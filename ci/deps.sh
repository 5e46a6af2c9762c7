#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks for tpheal, or -- when not
# root -- prints the exact apt-get line and fails.  Idempotent and quiet when
# everything is present, so every make target can call it.
#   ci/deps.sh            packages for build, test and stress
#   ci/deps.sh windows    + the mingw-w64 / wine toolchain
set -euo pipefail
pkgs=(cmake make gcc clang libclang-rt-14-dev libcmocka-dev pkg-config
      python3 python3-pytest python3-pytest-xdist python3-pytest-timeout git ccache)
if [[ "${1:-}" == windows || "${1:-}" == all ]]; then
  pkgs+=(gcc-mingw-w64-x86-64 wine wine64 dpkg-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ! command -v npm >/dev/null 2>&1; then
  echo "ci/deps.sh: note: npm not found; the workflow lint and the sabotage report viewer need Node.js + npm" >&2
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0
line="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "tpheal needs these Debian packages; run as root:" >&2
  echo "  apt-get update && $line" >&2
  exit 1
fi
echo "ci/deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
$line >/dev/null
