#!/bin/sh
# Builds cmocka for the mingw-w64 target from Debian's source package and
# installs it under <build-dir>/cmocka-mingw (static library + CMake config).
# Debian has no mingw cmocka package; its own source builds as is (about 20 s).
# Idempotent: a finished install (the stamp file) is reused.
#   usage: ci/windows/build-cmocka-mingw.sh <build-dir>
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: $0 <build-dir>}
mkdir -p "$build"
build=$(cd "$build" && pwd)
prefix="$build/cmocka-mingw"
stamp="$prefix/.built"
if [ -f "$stamp" ]; then
    echo "cmocka-mingw: cached in $prefix"
    exit 0
fi
src_root="$build/cmocka-src"
mkdir -p "$src_root"

# A deb-src entry, once: a copy of the machine's own deb822 entries with the
# type changed (Debian 12: bookworm on its mirror; an Ubuntu CI runner: its
# release), so the source comes from where the binaries come from.  Root is
# needed for apt; once the source is unpacked (src_root) apt is not used.
if ! ls -d "$src_root"/cmocka-*/ >/dev/null 2>&1; then
    list=/etc/apt/sources.list.d/tpheal-deb-src.sources
    if [ -z "$(apt-cache showsrc cmocka 2>/dev/null)" ]; then
        if [ ! -f "$list" ]; then
            for f in /etc/apt/sources.list.d/*.sources; do
                [ -f "$f" ] && [ "$f" != "$list" ] || continue
                sed -n 's/^Types: deb$/Types: deb-src/; /^Types:/,$p' "$f"
                echo
            done > "$list"
            if [ ! -s "$list" ] && [ -f /etc/apt/sources.list ]; then
                rm -f "$list"
                sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list \
                    > /etc/apt/sources.list.d/tpheal-deb-src.list
            fi
        fi
        apt-get update -qq
    fi
    (cd "$src_root" && apt-get source --download-only -qq cmocka && \
        for d in *.dsc; do dpkg-source --no-check -x "$d" >/dev/null; done)
fi
src=$(ls -d "$src_root"/cmocka-*/ | head -n 1)

cmake -S "$src" -B "$build/cmocka-build" \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64.cmake" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DWITH_STATIC_LIB=ON -DBUILD_SHARED_LIBS=OFF \
    -DUNIT_TESTING=OFF -DWITH_EXAMPLES=OFF -DPICKY_DEVELOPER=OFF >/dev/null
cmake --build "$build/cmocka-build" -j"$(nproc)" >/dev/null
cmake --install "$build/cmocka-build" >/dev/null
touch "$stamp"
echo "cmocka-mingw: installed in $prefix"
