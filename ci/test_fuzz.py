"""The scenario parser, fuzzed for a bounded time (libFuzzer + ASan + UBSan)
from the committed seed corpus: no crash, no leak, no hang (-timeout=5 per
input).  A finding leaves its input under build/fuzz/artifacts/, which is
the reproduction: `build/fuzz/fuzz_scenario_parse ARTIFACT`."""
import os

import pytest

from conftest import REPO, build_dir, run_bounded

SECONDS = int(os.environ.get("TPHEAL_FUZZ_SECONDS", "30"))


@pytest.mark.slow
def test_scenario_parser_fuzz():
    out = build_dir() / "fuzz"
    rc, log = run_bounded(["sh", str(REPO / "harness/fuzz/run_fuzz.sh"), str(out), str(SECONDS)],
                          timeout=SECONDS + 180)
    tail = "\n".join(log.splitlines()[-25:])
    assert rc is not None, f"the fuzz run hung past its bound\n{tail}"
    assert rc == 0, f"libFuzzer found a crash, leak or timeout (exit {rc})\n{tail}"
    runs = [l for l in log.splitlines() if "stat::number_of_executed_units" in l]
    print(runs[-1] if runs else tail)
    assert runs, f"libFuzzer printed no final stats: did it run?\n{tail}"
