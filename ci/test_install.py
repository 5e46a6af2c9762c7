"""The installed package as users link it.  `cmake --install` into a fresh
prefix, then two programs built against it four ways -- find_package with
tpheal::tpheal (static) and tpheal::tpheal_shared, pkg-config with `tpheal`
(shared) and `tpheal-static` -- and run from outside the build tree:

- the README's "Using the library" block, extracted and compiled as written;
- ci/consumer/consumer.c, which does what a user does (cancels a pending
  wait and sees the healer repair the pool, one-shot and periodic timers with
  windows, a cancelling cleanup-group release and its pool's repair,
  teardown) and checks each step by the heal trace and callback counts.

A shared build runs without LD_LIBRARY_PATH (CMake's RPATH; -Wl,-rpath for
pkg-config, as the README says), and the ELF says which way it linked.
Real-time bound: each run gets 300 s; the consumer's own waits are 60 s each,
for events that take under a second on an idle machine.  The first of these
to run after issue 21's fix hung forever (an unseeded rt_choose)."""
import os
import re
import subprocess
import textwrap

import pytest

from conftest import REPO, run_bounded

RUN_LIMIT_S = 300
PROGRAMS = {"readme": "done", "consumer": "consumer ok"}
WAYS = ["cmake-static", "cmake-shared", "pkgconfig-shared", "pkgconfig-static"]


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

    libdir = pkg("--variable=libdir", "tpheal")[0]
    for prog in PROGRAMS:
        for way, flags in [("pkgconfig-shared", pkg("--cflags", "--libs", "tpheal")
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


def test_the_package_says_what_a_linux_user_gets(installed):
    """Off Windows the library is the core over the modelled pool: the CMake
    package says so when found, and the pkg-config Description too."""
    assert "modelled Windows" in installed["configure"], installed["configure"]
    env = installed["env"]
    for name in ("tpheal", "tpheal-static"):
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
    libs = subprocess.run(["pkg-config", "--libs", "tpheal"], env=installed["env"],
                          capture_output=True, text=True, check=True).stdout
    assert "simpool" not in libs and "tpheal_rt" not in libs, libs
