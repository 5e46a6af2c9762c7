#!/bin/sh
# Stops the wineserver of <build-dir>'s prefix (and every wine process in it).
#   usage: ci/windows/wine-down.sh <build-dir>
set -u
here=$(cd "$(dirname "$0")" && pwd)
wine_build=${1:?usage: $0 <build-dir>}
. "$here/wine-env.sh"
[ -n "$TPHEAL_WINESERVER" ] && "$TPHEAL_WINESERVER" -k 2>/dev/null
exit 0
