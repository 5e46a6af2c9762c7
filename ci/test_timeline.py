"""`replay --timeline FILE.html`: the run as one self-contained page, loaded
in a real headless browser (Debian's chromium; ci/deps.sh browser, which
`make test` and .ci/run install).  The test reads the DOM the browser built
(--dump-dom) for the lanes, the trace marks, the severed band and the
failing check, and keeps the browser's screenshot under its tmp dir's
artifacts/ (pytest keeps the last runs' tmp dirs).

The browser is bounded at 120 s a call: a cold chromium start on a loaded
2-core runner measured 3-6 s."""
import re
import shutil

import pytest

import procs
from conftest import REPO, binary

# The corpus scenario whose default pool severs, made to fail: a bound it
# cannot meet (the repair comes with the first tick, ~420 ms); and a thread
# that awaits the repair, for a span of its own.
SCN = (REPO / "scenarios" / "default-pool-stall-healed-in-window.scn").read_text().replace(
    "expect blocked(healed) <= 520ms", "expect blocked(healed) <= 100ms") + \
    "thread Watcher\n  await repair-ran\nend\n"


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    if shutil.which("apt-get"):  # Debian/Ubuntu: ci/deps.sh installs it, so its absence is a broken setup
        pytest.fail("no chromium: run ci/deps.sh browser (make test installs it)")
    pytest.skip("no chromium on this system and no apt-get to install it")


def run(cmd, cwd=None):
    b = procs.run_bounded(cmd, 120, cwd=cwd, merge=False, reap=True)
    assert b.rc is not None, f"{cmd[0]} did not end within 120 s"
    return b


def write_timeline(tmp_path):
    scn = tmp_path / "stall-fails.scn"
    scn.write_text(SCN)
    page = tmp_path / "run.html"
    p = run([str(binary("harness/scenario/tpheal-harness")), "replay", "--seed", "1", "--strategy",
             "random", "--timeline", str(page), str(scn)])
    assert p.rc == 1, p.out + p.err  # the run fails, as made to
    assert f"timeline: {page}" in p.err
    return page, p.out


def test_the_page_is_self_contained_and_names_every_lane(tmp_path):
    page, report = write_timeline(tmp_path)
    html = page.read_text()
    # no network, no script, no font: nothing is fetched
    assert not re.search(r"<script|https?://(?!www\.w3\.org/2000/svg)|@import|url\(|<link", html), html[:500]
    lanes = re.findall(r'class="lane[^"]*" data-lane="([^"]+)"', html)
    assert "thread main" in lanes and "thread A" in lanes and "thread Watcher" in lanes, lanes
    assert any(l.startswith("worker ") and l.endswith(" of healer pool") for l in lanes), lanes
    assert any(l.startswith("worker ") and l.endswith(" of default") for l in lanes), lanes
    assert "default severed" in lanes, lanes
    # every record of the report's trace is a mark with its text on hover
    for rec in re.findall(r"^    (#\d+ t=\S+ .*)$", report, re.M):
        assert f"<title>{rec.replace('&', '&amp;').replace('<', '&lt;')}" in html, rec
    assert html.count('class="mark"') >= 30
    assert 'class="severed"' in html and "callback of wait Y" in html
    assert re.search(r'class="span await".*<title>await repair-ran \(line \d+\)', html)
    assert re.search(r'class="span labelled".*<title>`wait Y as healed`', html)
    assert 'id="failing-check"' in html and "failed (left " in html


def test_headless_chromium_draws_the_lanes_and_the_failing_check(tmp_path):
    exe = browser()
    page, _ = write_timeline(tmp_path)
    art = tmp_path / "artifacts"
    art.mkdir()
    flags = ["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = run([exe, *flags, "--dump-dom", page.as_uri()], cwd=tmp_path)
    assert dom.rc == 0, dom.err[-2000:]
    # the browser parsed the SVG: its DOM has the lanes, marks and the failing check
    assert dom.out.count('class="lane"') >= 4, dom.out[:2000]
    assert 'id="failing-check"' in dom.out and 'class="severed"' in dom.out
    assert dom.out.count('class="mark"') >= 30
    shot = art / "timeline.png"
    p = run([exe, *flags, f"--screenshot={shot}", "--window-size=1700,700", page.as_uri()], cwd=tmp_path)
    assert p.rc == 0 and shot.exists(), p.err[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000  # drawn, not blank
    shutil.copy(page, art / page.name)
