"""A worker's copy of the tree: the tracked files synced into its own
directory (only what differs is rewritten, so builds stay incremental), its
CMake build (and, when the fallback has one, the sanitizer build beside it),
the unit executables and harness that build makes, and how each kind of
catcher is run there.  docs/sabotage.md, "What a sweep does" 1-2."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import sys

import manifest as mf
from sweep_config import Bad, pytest_python
from sweep_kinds import parse_generate_json, parse_harness, pytest_kind, unit_kind
from sweep_procs import run_bounded
from sweep_results import Run

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # ci/
from sanitizer_options import unit_env  # noqa: E402  (make test's, ci/test_unit.py)

# Unit tests whose races are deliberate (each report is checked by the test):
# TSan must not end them at the first.
RACES_ON_PURPOSE = frozenset({"test_race"})


class Worker:
    """A copy of the tracked files and its own build directory."""

    def __init__(self, idx, checkout, workroot, files, cfg, jobs, source=None,
                 build="build", cmake_args=None):
        self.idx = idx
        self.checkout = source or checkout
        self.dir = workroot / f"w{idx}"
        self.src = self.dir / "src"
        self.build = self.dir / build
        self.cmake_args = list(cfg["cmakeArgs"] if cmake_args is None else cmake_args)
        self.files = files
        self.cfg = cfg
        self.jobs = jobs
        self.units = {}       # executable -> command
        self.fallback_units = []  # executables whose ctest name has a unit prefix
        self.harness = None
        self.built_all = False
        self.objects = None   # {object: sha256} of the unpatched build (sweep_objects.snapshot)
        # The sanitizer build of the same copy (its own build dir), when the
        # fallback includes it; built only when a run reaches its catchers.
        self.san = None
        if cfg.get("fallbackSanitizer") and "asan" in cfg["fallbackLayers"] and cmake_args is None:
            self.san = Worker(idx, checkout, workroot, files, cfg, jobs, source,
                              build="build-san", cmake_args=cfg["sanitizerCmakeArgs"])

    def sync(self):
        """Make src an exact copy of the checkout's tracked files, writing only
        what differs so the build stays incremental."""
        self.src.mkdir(parents=True, exist_ok=True)
        listing = self.dir / "tracked.txt"
        old = set(listing.read_text().splitlines()) if listing.exists() else set()
        for rel in self.files:
            s, d = self.checkout / rel, self.src / rel
            if not s.is_file():
                continue
            data = s.read_bytes()
            if d.is_file() and d.read_bytes() == data:
                continue
            d.parent.mkdir(parents=True, exist_ok=True)
            d.write_bytes(data)
            shutil.copymode(s, d)
        for rel in old - set(self.files):
            (self.src / rel).unlink(missing_ok=True)
        listing.write_text("\n".join(self.files))

    def configure(self):
        # compile_commands.json maps each source to its objects
        # (sweep_objects.py); a copy configured without it is configured again.
        if (self.build / "CMakeCache.txt").exists() and (self.build / "compile_commands.json").exists():
            return
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        # With ccache, restoring a file after its entry and building the second
        # copy are cache hits instead of compiles (see build_env).
        launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
        rc, out, _ = run_bounded(["cmake", "-S", str(self.src), "-B", str(self.build)] + gen
                                 + launcher + self.cmake_args + ["-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], 600,
                                 env=self.build_env())
        if rc != 0:
            raise Bad(f"sweep: configuring the copy failed:\n{out[-4000:]}")

    def build_env(self):
        """ccache settings shared by every copy: the base dir makes the copies'
        absolute paths relative to the build dir (identical in every copy), and
        the cwd is not hashed, so one copy's compile is the other's hit."""
        env = dict(os.environ)
        root = str(self.dir.parent)
        env.update(CCACHE_DIR=os.path.join(root, "ccache"), CCACHE_BASEDIR=root,
                   CCACHE_NOHASHDIR="true", CCACHE_MAXSIZE="2G")
        return env

    def cmake_build(self, targets):
        cmd = ["cmake", "--build", str(self.build), "-j", str(self.jobs)]
        if targets:
            cmd += ["--target"] + sorted(set(targets))
        rc, out, secs = run_bounded(cmd, 900, env=self.build_env())
        return rc == 0, out, secs

    ADD_TEST_RE = re.compile(r'^add_test\(\[=\[(.+?)\]=\]\s+"([^"]+)"((?:\s+"[^"]*")*)\)', re.M)

    def discover(self):
        """Unit executables from the CTestTestfile.cmake files configure wrote
        (ctest --show-only leaves out the command of a test whose executable
        is not built yet, and the first build needs the names)."""
        self.units = {}
        self.fallback_units = []
        for f in sorted(self.build.rglob("CTestTestfile.cmake")):
            for m in self.ADD_TEST_RE.finditer(f.read_text(encoding="utf-8", errors="replace")):
                name, exe_path = m.group(1), m.group(2)
                args = re.findall(r'"([^"]*)"', m.group(3) or "")
                exe = pathlib.Path(exe_path).name
                self.units[exe] = [exe_path] + args
                if any(name.startswith(p) for p in self.cfg["unitPrefixes"]) \
                        and exe not in self.cfg["fallbackExclude"]:
                    self.fallback_units.append(exe)
        h = self.cfg["harnessTarget"]
        hits = [p for p in self.build.rglob(h) if p.is_file() and os.access(p, os.X_OK)]
        self.harness = str(sorted(hits, key=lambda p: len(str(p)))[0]) if hits else None

    def scenarios(self):
        d = self.src / self.cfg["scenarioDir"]
        return sorted(p.name for p in d.glob("*.scn")) if d.is_dir() else []

    def targets_for(self, catchers):
        t = set()
        for c in catchers:
            if c.kind == "asan":
                continue  # built in the sanitizer copy (san_targets)
            if c.kind == "unit":
                t.add(c.name)
            else:
                t.update(self.cfg["harnessTargets"])
        return t

    def san_targets(self, catchers):
        out = set()
        for c in catchers:
            if c.kind == "asan":
                out |= set(self.cfg["harnessTargets"]) if c.name.endswith(".scn") else {c.name}
        return out

    def san_fallback_targets(self):
        """What the sanitizer copy's fallback catchers need: its unit
        executables, and the harness when scenarios run there too."""
        extra = set(self.cfg["harnessTargets"]) if self.cfg["sanitizerScenarioSeeds"] else set()
        return set(self.fallback_units) | extra

    def fallback_targets(self):
        """What the fallback set needs: every unit executable it runs (when
        the unit layer is in it) and the harness -- not the whole tree (the
        installable libraries, the conformance and bench programs cannot
        catch anything here)."""
        units = set(self.fallback_units) if "unit" in self.cfg["fallbackLayers"] else set()
        return units | set(self.cfg["harnessTargets"])

    def command(self, c):
        if c.kind == "asan":
            if self.san is None:
                raise Bad(f"sweep: catcher '{c.label}' needs the sanitizer build "
                          f"(fallbackSanitizer is off, or fallbackLayers leaves asan out)")
            if c.name.endswith(".scn"):  # a scenario in the sanitizer build
                return self.san.command(mf.Catcher("scenario", c.name, seeds=c.seeds,
                                                   strategy=c.strategy, args=c.args))
            return self.san.command(mf.Catcher("unit", c.name, args=c.args))
        if c.kind == "pytest":
            if not (self.src / c.name).is_file():
                raise Bad(f"sweep: no pytest file '{c.name}' in the tree")
            return [part.format(python=pytest_python(), file=c.name, build=str(self.build))
                    for part in self.cfg["pytestCommand"]] + list(c.args)
        if c.kind == "unit":
            cmd = self.units.get(c.name)
            if not cmd:
                raise Bad(f"sweep: no unit-test executable '{c.name}' in the build "
                          f"(known: {', '.join(sorted(self.units)) or 'none'})")
            return list(cmd) + list(c.args)
        if not self.harness:
            raise Bad(f"sweep: the harness target '{self.cfg['harnessTarget']}' was not built")
        if c.kind == "generate":
            return self.generate_command(c)
        scn = self.src / self.cfg["scenarioDir"] / c.name
        if not scn.is_file():
            raise Bad(f"sweep: scenario '{c.name}' not found in {self.cfg['scenarioDir']}/")
        out = []
        for part in self.cfg["scenarioCommand"]:
            if part == "{args...}":
                out += list(c.args)
                continue
            out.append(part.format(harness=self.harness, scenario=str(scn),
                                   seeds=c.seeds or self.cfg["defaultSeeds"],
                                   strategy=c.strategy or self.cfg["defaultStrategy"]))
        if "{args...}" not in self.cfg["scenarioCommand"]:
            out += list(c.args)
        return out

    def generate_command(self, c):
        """`tpheal-harness generate` over master seed c.name: the configured
        command with the catcher's programs, seeds and strategy (else the
        generate* keys'), then its args."""
        return [part.format(harness=self.harness, seed=c.name,
                            programs=c.programs or self.cfg["generatePrograms"],
                            seeds=c.seeds or self.cfg["generateSeeds"],
                            strategy=c.strategy or self.cfg["generateStrategy"])
                for part in self.cfg["generateCommand"]] + list(c.args)

    def run(self, c, bound):
        cmd = self.command(c)
        env = None
        if c.kind == "asan":
            # as ci/test_unit.py runs the sanitizer build
            env = unit_env(os.environ)
            # when the sanitizer build is a TSan one (mutants.py --sanitizer
            # thread): its scenario runs report a race as the run's failure
            # (docs/races.md) and test_race checks each of its deliberate
            # races' reports itself (as ci/test_races.py runs it), so TSan
            # must not end either process at the first report
            env.setdefault("TSAN_OPTIONS", "halt_on_error=0:exitcode=66"
                           if c.name.endswith(".scn") or c.name in RACES_ON_PURPOSE
                           else "halt_on_error=1:exitcode=66")
        if c.kind == "pytest":
            # the suite's pytest driver, against this copy's build
            env = dict(os.environ, TPHEAL_BUILD_DIR=str(self.build), PYTHONDONTWRITEBYTECODE="1")
        rc, out, secs = run_bounded(cmd, bound, cwd=self.src, env=env, fresh=True)
        if c.kind == "pytest":
            failed = rc != 0
            return Run(c.label, cmd, failed, pytest_kind(rc) if failed else None, secs, out, rc,
                       note=f"pytest exit {rc}" if failed and rc is not None else "")
        if c.kind == "unit" or (c.kind == "asan" and not c.name.endswith(".scn")):
            failed = rc != 0
            kind = unit_kind(rc, out) if failed else None
            return Run(c.label, cmd, failed, kind, secs, out, rc)
        parse = parse_generate_json if c.kind == "generate" else parse_harness
        failed, kind, scheds, seed, note = parse(rc, out)
        return Run(c.label, cmd, failed, kind, secs, out, rc, scheds, seed, note)
