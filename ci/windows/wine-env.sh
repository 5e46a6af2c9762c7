# Sourced by the Windows scripts: the Wine environment for one build directory.
# The prefix lives inside the build directory (first boot ~10 s, 0.7 GB), so a
# clean build directory is a clean Windows; nothing touches ~/.wine.
#   wine_build=<build-dir>; . ci/windows/wine-env.sh
# (POSIX `.` takes no arguments, hence the variable.)
: "${wine_build:?set wine_build=<build-dir> before sourcing wine-env.sh}"
WINEPREFIX="$(cd "$wine_build" && pwd)/wineprefix"
WINEDEBUG=-all
# No Mono/Gecko install prompts at boot: the tests need neither.
WINEDLLOVERRIDES="mscoree,mshtml="
WINEARCH=win64
export WINEPREFIX WINEDEBUG WINEDLLOVERRIDES WINEARCH
if command -v wine >/dev/null 2>&1; then TPHEAL_WINE=wine
elif command -v wine64 >/dev/null 2>&1; then TPHEAL_WINE=wine64
elif [ -x /usr/lib/wine/wine64 ]; then TPHEAL_WINE=/usr/lib/wine/wine64
else TPHEAL_WINE=""; fi
if command -v wineserver >/dev/null 2>&1; then TPHEAL_WINESERVER=wineserver
elif [ -x /usr/lib/wine/wineserver ]; then TPHEAL_WINESERVER=/usr/lib/wine/wineserver
else TPHEAL_WINESERVER=""; fi
export TPHEAL_WINE TPHEAL_WINESERVER
