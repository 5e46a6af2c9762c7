#!/bin/sh
# Builds the scenario-parser fuzz target with clang + libFuzzer (ASan, UBSan)
# and runs it for a bounded time on a scratch copy of the committed corpus.
#   harness/fuzz/run_fuzz.sh OUTDIR [SECONDS]        (default 30 s)
# Exit status: libFuzzer's (0 = no crash found).  New inputs go to
# OUTDIR/corpus, never into the committed harness/fuzz/corpus/.
set -eu
out=${1:?usage: run_fuzz.sh OUTDIR [SECONDS]}
secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../scenario
mkdir -p "$out/corpus" "$out/artifacts" "$out/include/tpheal"
# The parser's name tables read the core's result list (tpheal/error.h), whose
# config.h CMake generates; this build stands alone, so it writes the defaults.
sed -e 's/@TPHEAL_SELF_HEAL_01@/1/' -e 's/@TPHEAL_FAIL_FAST_01@/0/' \
    "$here/../../core/include/tpheal/config.h.in" > "$out/include/tpheal/config.h"
# The parser is scn_parse.c and its parts, scn_parse_*.c (scn_parse_internal.h).
clang -std=c11 -g -O1 -Wall -Wextra -Werror \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$src" -I"$out/include" -I"$here/../../core/include" "$here/fuzz_scenario_parse.c" \
    "$src"/scn_parse*.c "$src/scn_lex.c" "$src/scn_names.c" "$src/scn_suggest.c" \
    -o "$out/fuzz_scenario_parse"
cp "$here"/corpus/* "$out/corpus/" 2>/dev/null || true
exec "$out/fuzz_scenario_parse" -max_total_time="$secs" -max_len=8192 -timeout=5 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$out/corpus"
