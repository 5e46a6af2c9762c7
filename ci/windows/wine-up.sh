#!/bin/sh
# Starts a persistent wineserver for <build-dir>'s prefix and boots the prefix,
# BEFORE ctest: a first wine call made from inside ctest (server just started,
# prefix not booted) was seen to hang ctest for good (toolchain.md).
# Also silences crash dialogs and dumps (AeDebug), so a crashing test exits
# non-zero instead of waiting for a debugger.
#   usage: ci/windows/wine-up.sh <build-dir>
set -eu
here=$(cd "$(dirname "$0")" && pwd)
wine_build=${1:?usage: $0 <build-dir>}
. "$here/wine-env.sh"
[ -n "$TPHEAL_WINE" ] || { echo "wine-up: wine not found" >&2; exit 1; }
mkdir -p "$WINEPREFIX"
# Fails when this prefix's server is already up (a previous run that was not
# torn down): that server is as good as a new one, and wineboot below fails
# loudly if there is none.
"$TPHEAL_WINESERVER" -p 2>/dev/null || true
"$TPHEAL_WINE" wineboot -i >/dev/null 2>&1 || "$TPHEAL_WINE" wineboot >/dev/null 2>&1
if [ ! -f "$WINEPREFIX/.tpheal-aedebug" ]; then
    "$TPHEAL_WINE" reg add 'HKLM\Software\Microsoft\Windows NT\CurrentVersion\AeDebug' \
        /v Debugger /d false /f >/dev/null 2>&1
    "$TPHEAL_WINE" reg add 'HKLM\Software\Microsoft\Windows NT\CurrentVersion\AeDebug' \
        /v Auto /t REG_SZ /d 1 /f >/dev/null 2>&1
    "$TPHEAL_WINE" reg add 'HKCU\Software\Wine\WineDbg' /v ShowCrashDialog /t REG_DWORD /d 0 /f \
        >/dev/null 2>&1
    touch "$WINEPREFIX/.tpheal-aedebug"
fi
echo "wine-up: prefix $WINEPREFIX ready"
