"""The installed package as users link it.  `cmake --install` into a fresh
prefix, then two programs built against it four ways -- find_package with
tpheal::tpheal (static) and tpheal::tpheal_shared, pkg-config with
`tpheal-shared` and `tpheal-static` -- and run from outside the build tree:

- the README's "Using the library" block, extracted and compiled as written;
- harness/check/example/check_example.c against tpheal::check (docs/check.md);
- ci/consumer/consumer.c, which does what a user does (cancels a pending
  wait and sees the healer repair the pool, one-shot and periodic timers with
  windows, a cancelling cleanup-group release and its pool's repair,
  teardown) and checks each step by the heal trace and callback counts.

A shared build runs without LD_LIBRARY_PATH (CMake's RPATH; -Wl,-rpath for
pkg-config, as the README says), and the ELF says which way it linked.
Real-time bound: each run gets 300 s; the consumer's own waits are 60 s each,
for events that take under a second on an idle machine.  The first of these
to run after issue 21's fix hung forever (an unseeded rt_choose).

The same for a Windows user (marked `windows`): the library alone cross-built
with mingw-w64 by docs/windows.md's recipe, installed, the same two programs
built against it the same four ways and run under Wine on its thread pool;
a DLL build with libtpheal.dll copied beside the .exe (CMake's
TARGET_RUNTIME_DLLS, or pkg-config's bindir), and without it the loader's
STATUS_DLL_NOT_FOUND naming the DLL."""
import os
import pathlib
import re
import shutil
import subprocess
import textwrap

import pytest

from conftest import REPO, WIN_BUILD, need_tools, need_wine_tools, run_bounded, wine_session

RUN_LIMIT_S = 300
PROGRAMS = {"readme": "done", "consumer": "consumer ok"}
WAYS = ["cmake-static", "cmake-shared", "pkgconfig-shared", "pkgconfig-static"]
# Each named for what it links, on every platform (cmake/install.cmake).
PC_FILES = {"tpheal-shared.pc", "tpheal-static.pc"}


def readme_program() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("## Using the library", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```c\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the README's 'Using the library' has one C block"
    return blocks[0]


@pytest.fixture(scope="module")
def installed(builddir, tmp_path_factory):
    root = tmp_path_factory.mktemp("install")
    prefix = root / "prefix"
    rc, out = run_bounded(["cmake", "--install", str(builddir), "--prefix", str(prefix)], 120)
    assert rc == 0, out
    src = root / "src"
    src.mkdir()
    (src / "readme.c").write_text(readme_program())
    (src / "consumer.c").write_text((REPO / "ci" / "consumer" / "consumer.c").read_text())
    (src / "check_example.c").write_text(
        (REPO / "harness" / "check" / "example" / "check_example.c").read_text())
    (src / "CMakeLists.txt").write_text(textwrap.dedent("""
        cmake_minimum_required(VERSION 3.20)
        project(consumer C)
        set(CMAKE_C_STANDARD 11)
        find_package(tpheal REQUIRED)
        foreach(prog readme consumer)
          add_executable(${prog}-cmake-static ${prog}.c)
          target_link_libraries(${prog}-cmake-static PRIVATE tpheal::tpheal)
          add_executable(${prog}-cmake-shared ${prog}.c)
          target_link_libraries(${prog}-cmake-shared PRIVATE tpheal::tpheal_shared)
        endforeach()
        add_executable(check_example check_example.c)
        target_link_libraries(check_example PRIVATE tpheal::check)
    """))
    b = root / "b"
    rc, configure = run_bounded(["cmake", "-S", str(src), "-B", str(b),
                                 f"-DCMAKE_PREFIX_PATH={prefix}"], 120)
    assert rc == 0, configure
    rc, out = run_bounded(["cmake", "--build", str(b)], 300)
    assert rc == 0, out

    pc_dir = next(prefix.glob("lib*/pkgconfig"))
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc_dir))

    def pkg(*args):
        return subprocess.run(["pkg-config", *args], env=env, capture_output=True, text=True,
                              check=True).stdout.split()

    libdir = pkg("--variable=libdir", "tpheal-shared")[0]
    for prog in PROGRAMS:
        for way, flags in [("pkgconfig-shared", pkg("--cflags", "--libs", "tpheal-shared")
                            + [f"-Wl,-rpath,{libdir}"]),
                           ("pkgconfig-static", pkg("--cflags", "--libs", "tpheal-static"))]:
            rc, out = run_bounded(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror",
                                   str(src / f"{prog}.c"), "-o", str(b / f"{prog}-{way}"),
                                   *flags], 120)
            assert rc == 0, out
    return {"bin": b, "prefix": prefix, "configure": configure, "pc_dir": pc_dir, "env": env}


def needed(exe) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*?)\]", out)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_installed_program_runs(installed, prog, way):
    exe = installed["bin"] / f"{prog}-{way}"
    libs = needed(exe)
    if way.endswith("shared"):
        assert any(l.startswith("libtpheal.so") for l in libs), libs
    else:
        assert not any(l.startswith("libtpheal") for l in libs), libs
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env.pop("TPHEAL_TRACE", None)
    rc, out = run_bounded([str(exe)], RUN_LIMIT_S, env=env)
    assert rc is not None, f"{exe.name} did not end within {RUN_LIMIT_S} s:\n{out}"
    assert rc == 0 and PROGRAMS[prog] in out, out


def test_installed_checker_finds_the_example_bug_and_passes_its_fix(installed):
    """tpheal::check from the installed package, as docs/check.md's example
    links it: the buggy check fails with its TPH_CHECK's line and a replay
    the same binary reproduces; the fixed one passes its 200 runs."""
    exe = installed["bin"] / "check_example"
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "TPHEAL_CHECK_REPLAY")}
    rc, out = run_bounded([str(exe), "config_race_fixed"], RUN_LIMIT_S, env=env)
    assert rc == 0 and "200 runs" in out and out.rstrip().endswith("passed"), out
    rc, out = run_bounded([str(exe), "config_race_bug"], RUN_LIMIT_S, env=env)
    assert rc == 1, out
    replay = re.search(r'replay: TPHEAL_CHECK_REPLAY="([^"]+)"', out)
    assert replay and "TPH_CHECK(s->config_version == 7) failed" in out, out
    rc, again = run_bounded([str(exe), "config_race_bug"], RUN_LIMIT_S,
                            env=dict(env, TPHEAL_CHECK_REPLAY=replay.group(1)))
    assert rc == 1 and "TPH_CHECK(s->config_version == 7) failed" in again, again


def test_the_package_says_what_a_linux_user_gets(installed):
    """Off Windows the library is the core over the modelled pool: the CMake
    package says so when found, and the pkg-config Description too."""
    assert "modelled Windows" in installed["configure"], installed["configure"]
    env = installed["env"]
    assert {p.name for p in installed["pc_dir"].glob("*.pc")} == PC_FILES
    for name in ("tpheal-shared", "tpheal-static"):
        desc = subprocess.run(["pkg-config", "--print-variables", name], env=env,
                              capture_output=True, text=True, check=True)
        assert desc.returncode == 0
        pc = (installed["pc_dir"] / f"{name}.pc").read_text()
        assert re.search(r"^Description: .*modelled Windows pool", pc, re.M), pc


def test_shared_library_carries_its_backend(installed):
    """A consumer of the .so links nothing else of the project: the model and
    the runtime are inside it, not on the consumer's link line twice."""
    targets = next(installed["prefix"].glob("lib*/cmake/tpheal/tphealTargets.cmake")).read_text()
    shared = re.search(r"set_target_properties\(tpheal::tpheal_shared PROPERTIES\n(.*?)\n\)",
                       targets, re.S).group(1)
    assert "tpheal_simpool" not in shared and "tpheal_rt" not in shared, shared
    libs = subprocess.run(["pkg-config", "--libs", "tpheal-shared"], env=installed["env"],
                          capture_output=True, text=True, check=True).stdout
    assert "simpool" not in libs and "tpheal_rt" not in libs, libs


# ---- the mingw-w64 package under Wine: what a Windows user links --------------------

MINGW_CC = "x86_64-w64-mingw32-gcc"
# docs/windows.md's configure line for the library alone (relative to the
# repository; test_the_windows_recipe_is_documented reads it there).
MINGW_CONFIGURE = ("-DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake", "-DCMAKE_BUILD_TYPE=Release",
                   "-DTPHEAL_BUILD_HARNESS=OFF", "-DTPHEAL_BUILD_TESTS=OFF")
DLL = "libtpheal.dll"
# The loader's "a DLL the program imports was not found" (ntstatus.h), seen
# from Linux as its low byte: Wine's exit status is the Windows one mod 256.
STATUS_DLL_NOT_FOUND = 0xC0000135


@pytest.fixture(scope="module")
def mingw_installed(tmp_path_factory):
    """The library alone cross-built by the recipe and installed into a fresh
    prefix, the two programs built against it four ways, and a booted Wine
    prefix (build-win's: 0.7 GB, booted once).  The library's build tree is
    kept in build-win/library-alone: built from nothing it took 42 s at a load
    average of 16 (the core compiled twice, static and DLL), rebuilt ~3 s."""
    need_wine_tools()
    need_tools("pkg-config")
    root = tmp_path_factory.mktemp("mingw")
    lib, prefix, src, b = WIN_BUILD / "library-alone", root / "prefix", root / "src", root / "b"
    for cmd in (["cmake", "-S", str(REPO), "-B", str(lib),
                 *(a.replace("cmake/", f"{REPO}/cmake/") for a in MINGW_CONFIGURE)],
                ["cmake", "--build", str(lib), "--parallel", "2"],
                ["cmake", "--install", str(lib), "--prefix", str(prefix)]):
        rc, out = run_bounded(cmd, 600)
        assert rc == 0, f"{' '.join(cmd)}:\n{out[-4000:]}"
    src.mkdir()
    (src / "readme.c").write_text(readme_program())
    (src / "consumer.c").write_text((REPO / "ci" / "consumer" / "consumer.c").read_text())
    (src / "check_example.c").write_text(
        (REPO / "harness" / "check" / "example" / "check_example.c").read_text())
    # The DLL build copies what it imports beside itself, as docs/windows.md says.
    (src / "CMakeLists.txt").write_text(textwrap.dedent("""
        cmake_minimum_required(VERSION 3.21)
        project(consumer C)
        set(CMAKE_C_STANDARD 11)
        find_package(tpheal REQUIRED)
        foreach(prog readme consumer)
          add_executable(${prog}-cmake-static ${prog}.c)
          target_link_libraries(${prog}-cmake-static PRIVATE tpheal::tpheal)
          add_executable(${prog}-cmake-shared ${prog}.c)
          target_link_libraries(${prog}-cmake-shared PRIVATE tpheal::tpheal_shared)
          add_custom_command(TARGET ${prog}-cmake-shared POST_BUILD
            COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_RUNTIME_DLLS:${prog}-cmake-shared>
                    $<TARGET_FILE_DIR:${prog}-cmake-shared>
            COMMAND_EXPAND_LISTS)
        endforeach()
    """))
    rc, out = run_bounded(["cmake", "-S", str(src), "-B", str(b), f"-DCMAKE_PREFIX_PATH={prefix}",
                           f"-DCMAKE_TOOLCHAIN_FILE={REPO}/cmake/mingw-w64.cmake"], 120)
    assert rc == 0, out
    rc, out = run_bounded(["cmake", "--build", str(b)], 300)
    assert rc == 0, out
    pc_dir = next(prefix.glob("lib*/pkgconfig"))
    # PKG_CONFIG_LIBDIR, not _PATH: the host's .pc files are not the target's.
    env = dict(os.environ, PKG_CONFIG_LIBDIR=str(pc_dir))
    env.pop("PKG_CONFIG_PATH", None)

    def pkg(*args):
        return subprocess.run(["pkg-config", *args], env=env, capture_output=True, text=True,
                              check=True).stdout.split()

    pdir = b / "pkgconfig"  # apart from CMake's, so each shared way brings its own DLL
    pdir.mkdir()
    for prog in PROGRAMS:
        for way, pc in (("pkgconfig-shared", "tpheal-shared"), ("pkgconfig-static", "tpheal-static")):
            rc, out = run_bounded([MINGW_CC, "-std=c11", "-Wall", "-Wextra", "-Werror", str(src / f"{prog}.c"),
                                   "-o", str(pdir / f"{prog}-{way}.exe"), *pkg("--cflags", "--libs", pc)], 120)
            assert rc == 0, out
    shutil.copy(pathlib.Path(pkg("--variable=bindir", "tpheal-shared")[0]) / DLL, pdir)
    with wine_session() as w:
        yield {"bin": b, "pdir": pdir, "prefix": prefix, "pc_dir": pc_dir, "wine": w}


def dll_imports(exe) -> list[str]:
    out = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(exe)], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"DLL Name: (\S+)", out)


def mingw_exe(m, prog, way):
    return (m["pdir"] if way.startswith("pkgconfig") else m["bin"]) / f"{prog}-{way}.exe"


def wine_run(m, exe, cwd, env=None):
    w = m["wine"]
    try:
        p = subprocess.run([w["wine"], str(exe)], env=env or w["env"], cwd=cwd, capture_output=True,
                           timeout=RUN_LIMIT_S)
    except subprocess.TimeoutExpired as e:
        return None, ((e.stdout or b"") + (e.stderr or b"")).decode("utf-8", "replace")
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


@pytest.mark.windows
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_mingw_program_runs_under_wine(mingw_installed, prog, way):
    """The Windows build of a user's program: a DLL build imports libtpheal.dll
    and finds it beside itself, a static one imports nothing of the project;
    both run on Wine's thread pool."""
    m = mingw_installed
    exe = mingw_exe(m, prog, way)
    imports = [d.lower() for d in dll_imports(exe)]
    if way.endswith("shared"):
        assert DLL in imports, imports
        assert (exe.parent / DLL).is_file(), f"{DLL} not beside {exe.name}"
    else:
        assert not any(d.startswith("libtpheal") for d in imports), imports
    rc, out = wine_run(m, exe, exe.parent)
    assert rc is not None, f"{exe.name} did not end within {RUN_LIMIT_S} s under Wine:\n{out}"
    assert rc == 0 and PROGRAMS[prog] in out, f"{exe.name}: exit {rc}\n{out}"


@pytest.mark.windows
def test_mingw_dll_program_without_its_dll(mingw_installed, tmp_path):
    """A DLL build moved away from libtpheal.dll does not start: the loader's
    STATUS_DLL_NOT_FOUND (Wine: exit 53, its low byte) and, with Wine's
    default debug channels, a message naming the DLL (docs/windows.md)."""
    m = mingw_installed
    exe = shutil.copy(mingw_exe(m, "readme", "pkgconfig-shared"), tmp_path)
    env = {k: v for k, v in m["wine"]["env"].items() if k != "WINEDEBUG"}
    rc, out = wine_run(m, exe, tmp_path, env)
    assert rc == STATUS_DLL_NOT_FOUND & 0xFF, f"exit {rc}:\n{out}"
    assert DLL in out and "not found" in out, out


@pytest.mark.windows
def test_mingw_package_names_say_what_they_link(mingw_installed):
    """The same two .pc files as off Windows: tpheal-shared links the DLL's
    import library, tpheal-static the archive by path, and the DLL is where
    tpheal-shared's bindir says."""
    m = mingw_installed
    assert {p.name for p in m["pc_dir"].glob("*.pc")} == PC_FILES
    shared = (m["pc_dir"] / "tpheal-shared.pc").read_text()
    static = (m["pc_dir"] / "tpheal-static.pc").read_text()
    assert re.search(r"^Libs: -L\$\{libdir\} -ltpheal$", shared, re.M), shared
    assert re.search(r"^Libs: \$\{libdir\}/libtpheal\.a$", static, re.M), static
    assert (m["prefix"] / "lib" / "libtpheal.dll.a").is_file() and (m["prefix"] / "bin" / DLL).is_file()


def test_the_windows_recipe_is_documented():
    """docs/windows.md gives the configure line the mingw cases above follow,
    and README.md points to it."""
    doc = (REPO / "docs" / "windows.md").read_text()
    line = next((l for l in doc.splitlines() if "cmake -S . -B" in l and "mingw-w64.cmake" in l), "")
    assert all(a in line for a in MINGW_CONFIGURE), f"docs/windows.md's configure line: {line!r}"
    assert "docs/windows.md" in (REPO / "README.md").read_text()
