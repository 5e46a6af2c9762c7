"""The tpheal-harness command line as a user meets it (issue 13): every
command it prints runs when pasted as printed, a seed replay carries the
whole run or is refused, the failure report shows the trace up to the failing
check and is the same bytes on every replay, help for every command, numbers
range-checked, and the scenario language's file-level conveniences.

Printed commands are run through a shell (shell=True) from the directory the
harness was started in, exactly as printed, and must reproduce the failure."""
import os
import pathlib
import re
import subprocess

import pytest

from conftest import REPO, build_dir

# A race on purpose: when B's cancel comes before the pool dispatches W, W
# never runs and the expectation fails -- for some seeds only (random walk:
# ~3 in 40; PCT depth 2: ~16 in 200), so a run prints reports, short
# failure lines, and their replay commands.
RACE = """# purpose: a race on purpose: the cancel wins for some seeds, so calls(W) == 1 fails for them
work W
thread A
  submit W
end
thread B
  cancel_pending W
end
expect calls(W) == 1
"""


def exe(name="tpheal-harness"):
    p = build_dir() / "harness" / "scenario" / name
    if not p.exists():
        pytest.fail(f"{p} is missing: build first (make test builds it)")
    return p


def sh(cmd, cwd, env=None, timeout=60):
    """cmd through /bin/sh, as a user pastes it."""
    return subprocess.run(cmd, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def run(args, cwd=None, timeout=60, env=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture
def race(tmp_path):
    (tmp_path / "race.scn").write_text(RACE)
    return tmp_path


def failure_of(out):
    """The `failures:` block of the first report in out."""
    m = re.search(r"^  failures:\n((?:    .*\n)+)", out, re.M)
    assert m, out
    return m.group(1)


def printed_commands(out):
    """Every replay command the output prints: the reports' `replay:` and
    `replay by seed:` lines and the short lines' `(replay: ...)`."""
    cmds = re.findall(r"^  (?:replay|replay by seed): (.*)$", out, re.M)
    cmds += re.findall(r"^FAILURE \S+ seed \d+ \w+: .*  \(replay: (.*)\)$", out, re.M)
    return cmds


# ---- items 2 and 3: printed commands run as pasted, and replay the same run ------

@pytest.mark.parametrize("how", ["relative", "absolute", "on-path"])
def test_printed_replay_commands_run_as_pasted_and_reproduce(race, how):
    h = exe()
    env = dict(os.environ)
    if how == "relative":
        argv0 = os.path.relpath(h, race)
    elif how == "absolute":
        argv0 = str(h)
    else:  # invoked by a name PATH finds: the printed bare name works there too
        env["PATH"] = f"{h.parent}{os.pathsep}{env.get('PATH', '')}"
        argv0 = "tpheal-harness"
    p = run([argv0, "run", "race.scn", "--seeds", "60", "--strategy", "both", "--depth", "2"],
            cwd=race, env=env)
    assert p.returncode == 1, p.stdout + p.stderr
    cmds = printed_commands(p.stdout)
    # random and pct full reports (schedule + seed each) and pct short lines
    assert any("--strategy random" in c for c in cmds) and any("--strategy pct" in c for c in cmds), cmds
    assert any("--schedule " in c for c in cmds), cmds
    assert len(cmds) >= 8, cmds
    for c in cmds:
        assert c.startswith(argv0 + " replay "), c
        q = sh(c, race, env=env)
        assert q.returncode == 1, (c, q.stdout, q.stderr)
        assert "expect `calls ( W ) == 1` failed (left 0, right 1)" in failure_of(q.stdout), (c, q.stdout)


def test_pct_failure_replays_as_pct_with_its_depth_and_steps(race):
    h = exe()
    # the report as the run ran (the seed's own run, not its shortest schedule's)
    p = run([h, "run", "race.scn", "--seeds", "60", "--strategy", "pct", "--depth", "2", "--shrink-seconds", "0"],
            cwd=race)
    c = next(c for c in printed_commands(p.stdout) if "--seed " in c)
    assert re.search(r" replay --seed \d+ --strategy pct --depth 2 --pct-steps \d+ race.scn$", c), c
    seed = re.search(r"--seed (\d+)", c).group(1)
    orig = re.search(rf"^  seed: {seed}  strategy: pct depth 2 steps \d+\n(?:.*\n)*?  status: .*interleaving: (\w+)$",
                     p.stdout, re.M)
    q = sh(c, race)
    assert q.returncode == 1
    # the same interleaving, not merely some failure
    assert f"interleaving: {orig.group(1)}" in q.stdout, (c, q.stdout)


def test_seed_without_its_strategy_is_refused_with_a_message(race):
    h = exe()
    for args, words in ((["--seed", "6"], "needs the run's strategy"),
                        (["--seed", "6", "--strategy", "pct"], "--depth D and --pct-steps K"),
                        (["--seed", "6", "--strategy", "pct", "--depth", "2"], "--pct-steps K"),
                        (["--seed", "6", "--strategy", "both"], "needs the run's strategy"),
                        (["--seed", "6", "--strategy", "random", "--depth", "2"], "PCT's"),
                        (["--schedule", "T1:2", "--seed", "3"], "a schedule is the whole run")):
        p = run([h, "replay", *args, "race.scn"], cwd=race)
        assert p.returncode == 2 and words in p.stderr, (args, p.stderr)
    help_text = run([h, "help", "replay"]).stdout
    for opt in ("--strategy", "--depth", "--pct-steps", "--schedule", "--schedule-file", "--trace"):
        assert opt in help_text, (opt, help_text)


def test_saved_schedule_file_is_named_by_the_replay_command(race):
    h = os.path.relpath(exe(), race)
    p = run([h, "run", "race.scn", "--seeds", "40", "--save-schedules", "."], cwd=race)
    files = sorted(race.glob("race-random-*.schedule"))
    assert p.returncode == 1 and files, p.stdout
    cmds = [c for c in printed_commands(p.stdout) if "--schedule-file" in c]
    assert len(cmds) == len(files), (cmds, files)
    for c in cmds:
        q = sh(c, race)
        assert q.returncode == 1 and "left 0, right 1" in q.stdout, (c, q.stdout + q.stderr)
    # --schedule STRING still works, with the same run
    sched = files[0].read_text().strip()
    q = run([h, "replay", "--schedule", sched, "race.scn"], cwd=race)
    assert q.returncode == 1 and "left 0, right 1" in q.stdout


# ---- item 4: the report shows the failing check's trace, the same bytes each time --

def test_report_shows_the_trace_up_to_the_failing_check_with_scenario_names(race):
    h = exe()
    p = run([h, "replay", "--seed", "4", "--strategy", "random", "race.scn"], cwd=race)
    assert p.returncode == 1, p.stdout
    m = re.search(r"^  trace up to the first failing check \(after record #(\d+), at t=(\d+)\.(\d{4})ms\):\n"
                  r"((?:    .*\n)+)", p.stdout, re.M)
    assert m, p.stdout
    last, recs = int(m.group(1)), m.group(4).splitlines()
    nums = [int(re.match(r"    #(\d+) t=\d+\.\d{4}ms ", r).group(1)) for r in recs]
    assert nums[-1] == last and nums == list(range(nums[0], last + 1)), recs
    text = m.group(4)
    # thread and object names from the scenario, not numbers
    assert re.search(r" B api/\S+ obj=W", text) and re.search(r" A api/SubmitThreadpoolWork obj=W", text), text
    # the failing check happened after these records, not at the runner's closes
    full = run([h, "replay", "--seed", "4", "--strategy", "random", "--trace", "race.scn"], cwd=race).stdout
    every = re.search(r"^  trace \(every record of the run\):\n((?:    .*\n)+)", full, re.M).group(1).splitlines()
    assert len(every) > last, "the run went on after the check (settle, closes)"
    assert every[:last] == recs[-last:] if last <= len(recs) else every[last - len(recs):last] == recs
    assert any("CloseThreadpoolWork" in r for r in every[last:]), every[last:]


def test_report_is_byte_identical_across_replays(race):
    h = exe()
    for extra in ([], ["--trace"]):
        outs = {run([h, "replay", "--seed", "4", "--strategy", "random", *extra, "race.scn"], cwd=race).stdout
                for _ in range(2)}
        assert len(outs) == 1, outs


# ---- item 5: help, numbers, exclusive options, the interleaving cap, progress ------

@pytest.mark.parametrize("cmd", ["run", "verify", "replay", "list", "bench", "stress-batch", "stress-faultloop"])
def test_every_command_has_help(cmd):
    h = exe()
    for args in ([cmd, "--help"], ["help", cmd], [cmd, "-h"]):
        p = run([h, *args])
        assert p.returncode == 0 and p.stdout.startswith(f"usage: tpheal-harness {cmd}"), (args, p.stdout)
    p = run([h, "help"])
    assert p.returncode == 0 and f"tpheal-harness {cmd}" in p.stdout


def test_every_command_the_synopsis_prints_answers_help():
    """What `help` lists is what answers `help X` and `X --help` (stress-faultloop,
    which stress prints as its replay, once answered "did you mean 'stress-faultloop'?")."""
    h = exe()
    listed = re.findall(r"^(?:usage:|      ) tpheal-harness ([a-z-]+)", run([h, "help"]).stdout, re.M)
    assert {"stress-batch", "stress-faultloop", "run", "replay"} <= set(listed), listed
    for cmd in listed:
        for args in (["help", cmd], [cmd, "--help"]):
            p = run([h, *args])
            assert p.returncode == 0 and p.stdout.startswith(f"usage: tpheal-harness {cmd}"), (args, p.stderr)


def test_faultloop_trace_prints_every_record_of_the_one_site(tmp_path):
    h = exe()
    # the healer's pool creation failed: the run goes on, the healer retried later
    scn = str(REPO / "scenarios" / "default-pool-stall-healed-in-window.scn")
    p = run([h, "stress-faultloop", "--seed", "1", "--only", "pool-create:1", "--trace", scn])
    assert p.returncode == 0, p.stderr
    assert "trace (every record of the run):\n#1 t=" in p.stderr, p.stderr
    records = re.findall(r"^#(\d+) t=", p.stderr, re.M)
    assert [int(n) for n in records] == list(range(1, len(records) + 1)) and len(records) > 5, records
    p = run([h, "stress-faultloop", "--seed", "1", "--trace", scn])
    assert p.returncode == 2 and "--trace prints one run's records: give it with --only KIND:N" in p.stderr


@pytest.mark.parametrize("args", [
    ["--seeds", "1e20"], ["--seeds", "18446744073709551616"], ["--seed", "18446744073709551616"],
    ["--seeds", "0"], ["--seeds", "-3"], ["--first-seed", "x"], ["--depth", "17"], ["--pct-steps", "0"],
    ["--seeds", "3", "--seed", "1"], ["--first-seed", "18446744073709551615", "--seeds", "2"],
])
def test_bad_numbers_and_clashing_options_exit_2(race, args):
    p = run([exe(), "run", "race.scn", *args], cwd=race)
    assert p.returncode == 2 and p.stderr.startswith("tpheal-harness: "), (args, p.stderr)
    assert not p.stdout, p.stdout  # nothing ran


def test_last_seed_is_accepted():
    p = run([exe(), "run", str(REPO / "scenarios" / "concurrent-cancels-out-of-order.scn"),
             "--seed", "18446744073709551615"])
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_free_running_run_declines_an_expected_deadlock(tmp_path):
    """On OS threads a deadlock never ends, so `run --mode native` must decline
    the scenario (as stress-batch does) instead of hanging.  Bound: the
    declining run starts no thread, so 60 s is never near; before the rule
    it had not returned after 60 s."""
    deadlock = REPO / "scenarios" / "work-wait-in-own-callback-deadlocks.scn"
    p = run([exe(), "run", str(deadlock), "--mode", "native", "--seeds", "3"])
    assert p.returncode == 3, p.stdout + p.stderr  # 3: nothing ran, all declined
    assert p.stdout.startswith(f"DECLINED {deadlock}"), p.stdout
    assert "a deadlock on OS threads hangs for good" in p.stdout
    # controlled mode still runs it and sees the deadlock in every run
    p = run([exe(), "run", str(deadlock), "--seeds", "3"])
    assert p.returncode == 0 and "DECLINED" not in p.stdout, p.stdout + p.stderr


def test_interleaving_count_past_its_cap_says_at_least():
    scn = str(REPO / "scenarios" / "concurrent-cancels-out-of-order.scn")
    p = run([exe(), "run", scn, "--seeds", "3000"], timeout=120)
    m = re.search(r"interleavings=(at least )?(\d+) classes=(at least )?(\d+)$", p.stdout, re.M)
    # 3000 seeds of this scenario make more interleavings than are counted
    assert p.returncode == 0 and m and m.group(1) == "at least " and m.group(2) == "2048", p.stdout
    small = run([exe(), "run", scn, "--seeds", "20"]).stdout
    m = re.search(r"interleavings=(\d+) classes=(\d+)$", small, re.M)
    # runs that differ only in independent steps' order are one class
    assert m and 1 <= int(m.group(2)) <= int(m.group(1)), small


def test_long_run_reports_progress_on_stderr(race, monkeypatch):
    env = dict(os.environ, TPHEAL_PROGRESS_SECONDS="0")
    scn = str(REPO / "scenarios" / "concurrent-cancels-out-of-order.scn")
    p = run([exe(), "run", scn, "--seeds", "200"], env=env)
    assert p.returncode == 0
    assert re.search(r"^tpheal-harness: \S+: random 64 of 200 seeds, 0 failures, \d+ s$", p.stderr, re.M), p.stderr
    assert "of 200 seeds" not in p.stdout


# ---- item 6: the scenario file's conveniences --------------------------------------

def test_bom_severed_expression_and_list_style_trace_points(tmp_path):
    h = exe()
    f = tmp_path / "bom.scn"
    f.write_bytes(b"\xef\xbb\xbf# purpose: a file saved with a byte order mark parses\n"
                  b"work W\nthread A\n  submit W\n  wait W\nend\n"
                  b"expect count(api/SubmitThreadpoolWork) == 1\n"
                  b"expect count(heal/entry-created, default) == 1\n"
                  b"expect severed(default) == 0\n")
    p = run([h, "run", str(f), "--seeds", "5"])
    assert p.returncode == 0 and "runs=5 failures=0" in p.stdout, p.stdout + p.stderr
    # every trace point `list` prints is a name the language takes
    listed = re.findall(r"^  (\w+/[\w-]+)( \*)?$", run([h, "list"], cwd=REPO).stdout, re.M)
    assert len(listed) > 20
    for name, pooled in listed:
        g = tmp_path / "pt.scn"
        g.write_text(f"# purpose: trace point {name} as list prints it\nthread A\n  tick\nend\n"
                     f"expect count({name}) >= 0\n")
        q = run([h, "run", str(g), "--seeds", "1"])
        assert q.returncode == 0, (name, q.stdout + q.stderr)
    g.write_text("# purpose: a trace point under the wrong target\nthread A\n  tick\nend\n"
                 "expect count(api/cancelled) >= 0\n")
    q = run([h, "run", str(g), "--seeds", "1"])
    assert q.returncode == 2 and f"{g}:5:14: trace point 'api/cancelled' is heal/cancelled" in q.stderr, q.stderr


def test_directory_and_missing_file_say_why(tmp_path):
    h = exe()
    p = run([h, "run", str(tmp_path)])
    assert p.returncode == 2 and f"{tmp_path}:0:0: cannot read the file: Is a directory" in p.stderr, p.stderr
    p = run([h, "run", str(tmp_path / "nope.scn")])
    assert p.returncode == 2 and "nope.scn:0:0: cannot open the file: No such file or directory" in p.stderr


def test_failfast_scenario_replay_names_the_sibling_and_runs_as_pasted(tmp_path):
    """A `build fail-fast` scenario runs on tpheal-harness-failfast (re-executed
    by the plain harness); its replay commands name that sibling, as invoked."""
    (tmp_path / "ff.scn").write_text(
        "# purpose: a fail-fast build scenario with a false expectation\nbuild fail-fast\n"
        "work W\nthread A\n  submit W\n  wait W\nend\nexpect calls(W) == 2\n")
    h = os.path.relpath(exe(), tmp_path)
    p = run([h, "run", "ff.scn", "--seed", "2", "--shrink-seconds", "0"], cwd=tmp_path)  # both commands: the run's
    assert p.returncode == 1 and "(fail-fast core, sim pool)" in p.stdout, p.stdout
    cmds = printed_commands(p.stdout)
    assert len(cmds) == 2, cmds
    for c in cmds:
        assert c.startswith(h + "-failfast replay "), c
        q = sh(c, tmp_path)
        assert q.returncode == 1 and "left 1, right 2" in q.stdout, (c, q.stdout + q.stderr)


# ---- issue 21 item 5: frictions a first user met ----------------------------------

def test_unknown_command_is_named_with_the_nearest_one():
    h = exe()
    p = run([h, "rnu", "x.scn"])
    assert p.returncode == 2 and "unknown command 'rnu' (did you mean 'run'?)" in p.stderr, p.stderr
    p = run([h, "frobnicate"])
    assert p.returncode == 2 and "unknown command 'frobnicate'" in p.stderr, p.stderr
    assert "did you mean" not in p.stderr
    p = run([h, "help", "repaly"])
    assert p.returncode == 2 and "did you mean 'replay'?" in p.stderr, p.stderr


@pytest.mark.parametrize("body, where, hint", [
    ("thread A\n  sleeep 1ms\nend\n", "3:3", "unknown operation 'sleeep' (did you mean 'sleep'?)"),
    ("thred A\nend\n", "2:1", "unknown word 'thred' (did you mean 'thread'?)"),
    ("thread A\n  submit_work_now W\nend\n", "3:3", "unknown operation 'submit_work_now' (tpheal-harness list"),
])
def test_misspelt_keyword_gets_did_you_mean(tmp_path, body, where, hint):
    f = tmp_path / "typo.scn"
    f.write_text("# purpose: a typo\n" + body)
    p = run([exe(), "run", str(f)])
    assert p.returncode == 2 and f"{f}:{where}: {hint}" in p.stderr, p.stderr


@pytest.mark.parametrize("args, words", [
    (["--preemptions", "1"], "read only by --strategy dfs"),
    (["--max-runs", "10", "--strategy", "pct"], "read only by --strategy dfs"),
    (["--por"], "read only by --strategy dfs"),
    (["--depth", "2"], "PCT's"),
    (["--pct-steps", "40", "--strategy", "random"], "PCT's"),
    (["--depth", "2", "--strategy", "dfs"], "PCT's"),
])
def test_an_option_its_strategy_does_not_read_is_refused(race, args, words):
    p = run([exe(), "run", "race.scn", "--seeds", "2", *args], cwd=race)
    assert p.returncode == 2 and words in p.stderr, (args, p.stderr)


def test_options_read_by_the_strategy_given_are_accepted(race):
    for args in (["--strategy", "dfs", "--preemptions", "0", "--max-runs", "5"],
                 ["--strategy", "both", "--depth", "2"], ["--strategy", "pct", "--pct-steps", "9"]):
        p = run([exe(), "run", "race.scn", "--seeds", "2", "--no-replay", *args], cwd=race)
        assert p.returncode in (0, 1), (args, p.stderr)


def test_a_scenario_with_no_require_warns_and_require_reach_makes_it_an_error(tmp_path):
    f = tmp_path / "goalless.scn"
    f.write_text("# purpose: nothing it must reach\nwork W\nthread A\n  submit W\nend\n"
                 "expect calls(W) == 1\n")
    p = run([exe(), "run", str(f), "--seeds", "3"])
    assert p.returncode == 0 and p.stdout.startswith("PASS "), p.stdout
    assert "warning: no `require` line" in p.stderr and "--require-reach" in p.stderr, p.stderr
    p = run([exe(), "run", str(f), "--seeds", "3", "--require-reach"])
    assert p.returncode == 4, (p.returncode, p.stdout)
    assert f"NOT-EXERCISED {f}: no `require` line (--require-reach)" in p.stdout, p.stdout
    # a scenario with a goal gets neither
    q = run([exe(), "run", str(REPO / "scenarios" / "default-pool-stall-healed-in-window.scn"),
             "--seeds", "2", "--require-reach"])
    assert "warning: no `require`" not in q.stderr and "no `require` line" not in q.stdout, q.stdout


def test_severed_without_start_delay_gets_a_note_pointing_to_it(tmp_path):
    src = (REPO / "scenarios" / "default-pool-stall-healed-in-window.scn").read_text()
    assert re.search(r"^pool default .*start-delay", src, re.M)
    cold = tmp_path / "no-delay.scn"
    cold.write_text(re.sub(r"^pool default .*$", "", src, flags=re.M))
    line = next(i for i, l in enumerate(cold.read_text().splitlines(), 1)
                if re.match(r"\s*(require|expect)\s+severed", l) or "severed(" in l)
    p = run([exe(), "run", str(cold), "--seeds", "1"])
    assert f"{cold}:{line}:" in p.stderr and "note: pool default has no start-delay" in p.stderr, p.stderr
    q = run([exe(), "run", str(REPO / "scenarios" / "default-pool-stall-healed-in-window.scn"),
             "--seeds", "1"])
    assert "note:" not in q.stderr, q.stderr
    assert "start-delay" in run([exe(), "list"]).stdout


def first_seed_with_verdict(h, race, rc):
    for seed in range(100):
        if run([h, "replay", "--seed", str(seed), "--strategy", "random", "race.scn"],
               cwd=race).returncode == rc:
            return seed
    pytest.fail(f"no seed in 0..99 of race.scn exits {rc}")


@pytest.mark.parametrize("verdict", [0, 1])
def test_replay_trace_shows_callbacks_starting_and_returning_and_keeps_the_schedule(race, verdict):
    h = exe()
    seed = first_seed_with_verdict(h, race, verdict)
    args = ["replay", "--seed", str(seed), "--strategy", "random", "race.scn"]
    plain = run([h, *args], cwd=race)
    traced = run([h, *args, "--trace"], cwd=race)
    starts = re.findall(r"^\s*#- t=\S+ (.+?) scenario/callback-start obj=W calls=(\d+)", traced.stdout, re.M)
    returns = re.findall(r"^\s*#- t=\S+ .+? scenario/callback-return obj=W calls=(\d+) running=0",
                         traced.stdout, re.M)
    assert len(starts) == len(returns), traced.stdout
    # the trace says the calls the verdict counted: calls(W) == 1 holds iff W started once
    assert (plain.returncode == 0) == (len(starts) == 1), (plain.stdout, traced.stdout)
    # --trace changes what is printed, not the run: the same verdict and interleaving
    assert plain.returncode == traced.returncode
    i_plain = re.findall(r"interleaving: (\w+)", plain.stdout)
    i_traced = re.findall(r"interleaving: (\w+)", traced.stdout)
    assert i_plain and i_plain == i_traced, (plain.stdout, traced.stdout)


def test_replay_continue_after_a_change_says_where_the_schedule_stopped_fitting(tmp_path):
    """An old failure's schedule after a change: plain replay diverges (exit 1,
    the run is not the recorded one); --continue replays what still fits, goes
    on seeded, says where the two parted, and prints a schedule that replays
    the continued run exactly."""
    h = exe()
    old = (REPO / "scenarios" / "work-cancel-pending.scn").read_text()
    (tmp_path / "s.scn").write_text(old)
    p = run([h, "replay", "--seed", "3", "--strategy", "random", "s.scn"], cwd=tmp_path)
    sched = re.search(r"^  schedule: (\S+)$", p.stdout, re.M).group(1)
    (tmp_path / "s.scn").write_text(old + "thread B\n  submit W\nend\n")  # the change
    p = run([h, "replay", "--schedule", sched, "s.scn"], cwd=tmp_path)
    assert p.returncode == 1 and "replay diverged at item" in p.stdout, p.stdout
    outs = [run([h, "replay", "--schedule", sched, "--continue", "s.scn"], cwd=tmp_path) for _ in range(2)]
    q = outs[0]
    assert q.returncode in (0, 1) and outs[1].stdout == q.stdout, q.stdout + q.stderr
    m = re.match(r"CONTINUED s\.scn: the schedule fit up to item (\d+), then (.*); went on as a random walk "
                 r"from seed 0 ", q.stdout)
    assert m and "not runnable" in m.group(2), q.stdout
    assert "replay diverged" not in q.stdout
    new = re.search(r"^  schedule: (\S+)$", q.stdout, re.M).group(1)
    r2 = run([h, "replay", "--schedule", new, "s.scn"], cwd=tmp_path)
    hash_of = lambda out: re.search(r"interleaving: ([0-9a-f]{16})", out).group(1)  # noqa: E731
    assert r2.returncode == q.returncode and hash_of(r2.stdout) == hash_of(q.stdout), r2.stdout
    # unchanged, the whole schedule fits
    (tmp_path / "s.scn").write_text(old)
    q = run([h, "replay", "--schedule", sched, "--continue", "s.scn"], cwd=tmp_path)
    assert q.stdout.startswith("CONTINUED s.scn: the whole schedule fit"), q.stdout
    # --continue needs a schedule; the continuation is a random walk from --seed
    assert run([h, "replay", "--continue", "--seed", "1", "s.scn"], cwd=tmp_path).returncode == 2
    assert run([h, "replay", "--schedule", sched, "--continue", "--strategy", "pct", "s.scn"],
               cwd=tmp_path).returncode == 2
