#!/usr/bin/env bash
# The README's promise, checked as a new user meets it: a fresh clone on a
# bare Debian 12 (only compilers, make, cmake, git, python3, clang and
# Debian's nodejs), then the README's two commands, `make stress` and
# `make test`, each of which must install what it lacks (ci/deps.sh).  A
# bare Debian 12 failed three tests for want of npm, which Debian ships
# apart from nodejs: nothing but a machine without it could have shown that.
#   ci/matrix/bare-chroot.sh ensure     debootstrap the pristine chroot if missing
#   ci/matrix/bare-chroot.sh run        clone HEAD into a throw-away copy of it and
#                                       run `make stress` then `make test` there
#   ci/matrix/bare-chroot.sh down       unmount and drop the throw-away copy
# Every run starts from the pristine chroot: the copy is an overlay on it
# (a full copy where overlayfs is refused), removed afterwards, so what one
# run's deps.sh installed cannot hide a missing step from the next.
# What is cloned is HEAD, committed work only: the check is of what lands.
# TPHEAL_BARE_ROOT (default /var/chroot/bare-bookworm) is the pristine
# chroot; TPHEAL_BARE_SCRATCH (default $TPHEAL_BARE_ROOT.run) the copy;
# STRESS_SECONDS (default 20) bounds the stress pass.  Logs and the
# `bare: ...` summary lines go to TPHEAL_BARE_OUT (default build/matrix/bare).
# Root is needed (debootstrap, chroot, mounts): sudo -n is used when not root.
set -euo pipefail
root=${TPHEAL_BARE_ROOT:-/var/chroot/bare-bookworm}
scratch=${TPHEAL_BARE_SCRATCH:-$root.run}
mirror=${TPHEAL_BARE_MIRROR:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${TPHEAL_BARE_OUT:-$here/build/matrix/bare}
# The issue's "bare": what a developer has before reading the README.
pkgs=(gcc g++ make cmake git python3 clang nodejs)

sudo_() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo -n "$@"; fi; }

ensure() {
  [[ -f $root/.tpheal-bare-ready ]] && return 0
  if [[ ! -x $root/usr/bin/apt-get ]]; then
    command -v debootstrap >/dev/null || { sudo_ apt-get update -q >/dev/null; sudo_ apt-get install -y --no-install-recommends debootstrap >/dev/null; }
    echo "bare-chroot: debootstrap bookworm into $root" >&2
    sudo_ mkdir -p "$root"
    sudo_ debootstrap --variant=minbase bookworm "$root" "$mirror" >&2
  fi
  mounts "$root"
  sudo_ chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive sh -c \
    "apt-get update -q >/dev/null && apt-get install -y --no-install-recommends ${pkgs[*]} >/dev/null && apt-get clean"
  unmount "$root"
  sudo_ touch "$root/.tpheal-bare-ready"
}

mounts() {
  # /proc: wine finds ntdll.so through /proc/self/exe (sid-chroot.sh);
  # /dev/shm: wineserver and Python semaphores.
  local d
  for d in proc sys dev dev/pts dev/shm; do
    mountpoint -q "$1/$d" || sudo_ mount --bind "/$d" "$1/$d"
  done
}
unmount() {
  local d
  for d in dev/shm dev/pts dev sys proc; do
    # lazily when busy (measured: dev/pts right after a killed run)
    ! mountpoint -q "$1/$d" || sudo_ umount "$1/$d" || sudo_ umount -l "$1/$d"
  done
}

down() {
  [[ -d $scratch ]] || return 0
  unmount "$scratch/merged"
  ! mountpoint -q "$scratch/merged" || sudo_ umount "$scratch/merged"
  sudo_ rm -rf "$scratch"
}

up() {
  down
  sudo_ mkdir -p "$scratch"/{upper,work,merged}
  if ! sudo_ mount -t overlay overlay \
       -o "lowerdir=$root,upperdir=$scratch/upper,workdir=$scratch/work" "$scratch/merged" 2>/dev/null; then
    echo "bare-chroot: overlayfs refused; copying the chroot" >&2
    sudo_ cp -a "$root/." "$scratch/merged/"
  fi
  local m=$scratch/merged
  # The host's name service and, when it has any, its local CAs (a
  # network that re-signs https, as some CI sandboxes do): the network is
  # the machine's, not the distribution's.  ca-certificates itself is
  # deps.sh's to install; its postinst picks these up.
  sudo_ cp /etc/resolv.conf "$m/etc/resolv.conf"
  [[ ! -f /etc/hosts ]] || sudo_ cp /etc/hosts "$m/etc/hosts"
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    sudo_ mkdir -p "$m/usr/local/share/ca-certificates"
    sudo_ cp /usr/local/share/ca-certificates/*.crt "$m/usr/local/share/ca-certificates/"
  fi
  mounts "$m"
  sudo_ git clone -q --no-hardlinks "$here" "$m/src"
  sudo_ git -C "$m/src" checkout -q "$(git -C "$here" rev-parse HEAD)"
}

# step NAME CMD...: run CMD in the clone, log it, print `bare: NAME PASS|FAIL Ns`.
step() {
  local name=$1 t0=$SECONDS rc=0
  shift
  sudo_ chroot "$scratch/merged" env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    bash -c 'cd /src && "$@"' bash "$@" >"$out/$name.log" 2>&1 || rc=$?
  local verdict=$([[ $rc -eq 0 ]] && echo PASS || echo FAIL)
  echo "bare: $name $verdict $((SECONDS - t0))s" | tee -a "$out/results.txt"
  # pytest's last line carries the counts; stress.py's its verdict.
  tail -n 3 "$out/$name.log" | sed 's/^/    /'
  return $rc
}

run() {
  ensure
  mkdir -p "$out"
  : >"$out/results.txt"
  trap down EXIT
  up
  local fail=0
  step stress make stress STRESS_SECONDS="${STRESS_SECONDS:-20}" || fail=1
  step test make test || fail=1
  return $fail
}

case "${1:-}" in
  ensure) ensure ;;
  run) run ;;
  down) down ;;
  *) echo "usage: $0 ensure | run | down" >&2; exit 2 ;;
esac
