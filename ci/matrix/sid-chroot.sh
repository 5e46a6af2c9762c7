#!/usr/bin/env bash
# A Debian sid chroot: the newest gcc, clang, cmocka and wine Debian has, so
# the Linux jobs' gate scripts run against the toolchains the hosted runners
# move to before a runner image change breaks the PR gate (issue 11: gcc 15's
# and cmocka 2.0's new diagnostics, clang's ASan defaults, were all found
# only after the runners moved).
#   ci/matrix/sid-chroot.sh ensure          create the chroot if missing, install/refresh packages
#   ci/matrix/sid-chroot.sh run CMD...      run CMD inside, in a copy of this tree at /src
#   ci/matrix/sid-chroot.sh versions        print the toolchain versions inside
#   ci/matrix/sid-chroot.sh down            unmount what run/versions mounted
# Idempotent: an existing chroot with every package is left as it is.
# TPHEAL_SID_ROOT (default /var/chroot/sid) is where it lives; root is needed
# (debootstrap, chroot, mounts): sudo -n is used when not root.
set -euo pipefail
root=${TPHEAL_SID_ROOT:-/var/chroot/sid}
mirror=${TPHEAL_SID_MIRROR:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")/../.." && pwd)
# What the Linux jobs install (ci/deps.sh's names) plus the Wine job's.
pkgs=(ca-certificates cmake make gcc clang libclang-rt-dev llvm libcmocka-dev pkg-config
      python3 python3-pytest git gcc-mingw-w64-x86-64 wine wine64 dpkg-dev)

sudo_() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo -n "$@"; fi; }

ensure() {
  if [[ ! -x $root/usr/bin/apt-get ]]; then
    command -v debootstrap >/dev/null || { sudo_ apt-get update -q >/dev/null; sudo_ apt-get install -y --no-install-recommends debootstrap >/dev/null; }
    echo "sid-chroot: debootstrap sid into $root" >&2
    sudo_ mkdir -p "$root"
    sudo_ debootstrap --variant=minbase sid "$root" "$mirror" >&2
  fi
  # The archive this machine reaches may be a dated mirror whose sid Release
  # file is past its Valid-Until (measured: "expired 26 days ago"): apt
  # would refuse it, debootstrap does not check.
  echo 'Acquire::Check-Valid-Until "false";' | sudo_ tee "$root/etc/apt/apt.conf.d/99tpheal-no-valid-until" >/dev/null
  local missing=()
  for p in "${pkgs[@]}"; do
    sudo_ chroot "$root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "sid-chroot: installing ${missing[*]}" >&2
  sudo_ chroot "$root" env DEBIAN_FRONTEND=noninteractive sh -c \
    "apt-get update -q >/dev/null && apt-get install -y --no-install-recommends ${missing[*]} >/dev/null"
}

mounted() { mountpoint -q "$root/$1"; }

# /proc is needed by more than it seems: wine finds ntdll.so through
# /proc/self/exe ("could not load ntdll.so: (null)" without it).
mounts() {
  for m in proc sys dev dev/pts; do
    mounted "$m" || sudo_ mount --bind "/$m" "$root/$m"
  done
}

run() {
  ensure
  mounts
  # A copy, not a bind mount: builds inside write build/ dirs that must not
  # collide with the host's (other compiler, other CMake cache).  The
  # chroot's own build dirs are kept between runs; the rest is replaced.
  sudo_ mkdir -p "$root/src"
  sudo_ find "$root/src" -mindepth 1 -maxdepth 1 ! -name 'build*' -exec rm -rf {} +
  tar -C "$here" --exclude='./build*' --exclude=node_modules --exclude=./.git -cf - . |
    sudo_ tar -C "$root/src" -xf -
  sudo_ chroot "$root" env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    TPHEAL_IN_SID=1 CI="${CI:-}" bash -c 'cd /src && "$@"' bash "$@"
}

versions() {
  ensure
  mounts
  sudo_ chroot "$root" sh -c 'gcc --version | head -1; clang --version | head -1; cmake --version | head -1;
    dpkg-query -W -f="libcmocka-dev \${Version}\n" libcmocka-dev; (wine --version || wine64 --version) 2>/dev/null;
    x86_64-w64-mingw32-gcc --version | head -1; python3 -m pytest --version'
}

case "${1:-}" in
  ensure) ensure ;;
  run) shift; run "$@" ;;
  versions) versions ;;
  down) for m in dev/pts dev sys proc; do ! mounted "$m" || sudo_ umount "$root/$m"; done ;;
  *) echo "usage: $0 ensure | run CMD... | versions | down" >&2; exit 2 ;;
esac
