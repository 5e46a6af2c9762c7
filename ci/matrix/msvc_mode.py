#!/usr/bin/env python3
"""The clang MSVC-mode pass: every C file the Windows build compiles, parsed
by clang as the MSVC target sees it (_MSC_VER set, __GNUC__ not:
`--target=x86_64-pc-windows-msvc -fms-compatibility -fms-extensions`), with
the warnings MSVC /W4 raises mapped to clang's as closely as clang allows,
all as errors.  No MSVC here: this finds the MSVC-only code paths' syntax
errors and most /W4 warnings before the Windows job does; what it cannot
prove is listed in docs/toolchain-matrix.md.

The file set and each file's -I/-D come from a configure-only mingw-w64
cross build (build/msvc-mode, compile_commands.json): the Windows build's
sources differ by WIN32 only, never by compiler (CMakeLists.txt, cmake/).
The Windows headers are mingw-w64's (ci/matrix/msvc-shim/ makes them
readable to clang in MSVC mode), cmocka.h the host's.

  ci/matrix/msvc_mode.py [--build DIR] [--jobs N] [--file PATH]...
Exit 0 clean, 1 a diagnostic (printed), 2 the pass could not run."""
import argparse
import concurrent.futures
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
SHIM = REPO / "ci" / "matrix" / "msvc-shim"
MINGW_INCLUDE = pathlib.Path("/usr/share/mingw-w64/include")

# MSVC /W4 warning -> the clang flags closest to it.  Listed, not just
# -Weverything, so each clang diagnostic stands for an MSVC one; the
# warnings with no clang counterpart are in docs/toolchain-matrix.md.
W4_MAP = {
    "C4100 C4101 C4189 C4018 C4389 C4706 C4013 C4047 C4057 C4090 C4133": ["-Wall", "-Wextra"],
    "C4244 (64-bit to 32-bit, and integer to floating point)": [
        "-Wshorten-64-to-32", "-Wimplicit-int-float-conversion", "-Wfloat-conversion"],
    "C4267 (size_t to a smaller integer)": ["-Wshorten-64-to-32"],
    "C4305 (double constant to float)": ["-Wimplicit-float-conversion"],
    "C4310 (cast truncates a constant)": ["-Wconstant-conversion"],
    "C4456 C4457 C4459 (a declaration hides another)": ["-Wshadow"],
    "C4701 C4703 (possibly uninitialized local)": ["-Wsometimes-uninitialized", "-Wconditional-uninitialized"],
    "C4702 (unreachable code)": ["-Wunreachable-code"],
    "C4996 (deprecated; POSIX names: msvc-shim/ucrt_deprecated.h)": ["-Wdeprecated-declarations"],
}
BASE = ["--target=x86_64-pc-windows-msvc", "-fms-compatibility", "-fms-extensions",
        "-fsyntax-only", "-std=c11", "-D_CRT_SECURE_NO_WARNINGS", "-Werror",
        "-isystem", str(SHIM), "-isystem", str(MINGW_INCLUDE),
        "-include", str(SHIM / "ucrt_deprecated.h")]


def warning_flags():
    out = []
    for flags in W4_MAP.values():
        out += [f for f in flags if f not in out]
    return out


def clang():
    for c in (os.environ.get("TPHEAL_MSVC_MODE_CLANG"), "clang"):
        if c and shutil.which(c):
            return shutil.which(c)
    return None


def configure(build: pathlib.Path) -> pathlib.Path:
    """compile_commands.json of a configure-only mingw-w64 cross build."""
    cc = build / "compile_commands.json"
    inc = build / "cmocka-include"
    inc.mkdir(parents=True, exist_ok=True)
    shutil.copy("/usr/include/cmocka.h", inc / "cmocka.h")
    # Configured every time (a re-run over a cache takes seconds): a kept
    # compile_commands.json missed a -D that a CMakeLists.txt had gained
    # since, and the pass failed on the file that uses it.
    r = subprocess.run(["cmake", "-S", str(REPO), "-B", str(build),
                        f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'cmake' / 'mingw-w64.cmake'}",
                        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", "-DCMAKE_BUILD_TYPE=Release",
                        f"-DCMOCKA_INCLUDE_DIR={inc}", f"-DCMOCKA_LIBRARY={inc / 'cmocka.h'}",
                        f"-Dcmocka_DIR={build / 'no-config'}"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"msvc-mode: configuring {build} failed:\n{r.stdout}{r.stderr}")
    return cc


def expand(args, cwd):
    """Response files (@includes_C.rsp: CMake's way with this toolchain)."""
    out = []
    for a in args:
        if a.startswith("@"):
            out += expand(shlex.split((pathlib.Path(cwd) / a[1:]).read_text()), cwd)
        else:
            out.append(a)
    return out


def file_flags(entry) -> list[str]:
    """The -I, -isystem and -D of one compile command (no GCC flags)."""
    args = expand(entry.get("arguments") or shlex.split(entry["command"]), entry["directory"])
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-I", "-isystem", "-D") and i + 1 < len(args):
            out += [a, args[i + 1]]
            i += 2
            continue
        if a.startswith(("-I", "-D")) and len(a) > 2:
            out.append(a)
        i += 1
    return out


def check(cc, entry):
    src = entry["file"]
    cmd = [cc, *BASE, *warning_flags(), *file_flags(entry), src]
    r = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
    return src, r.returncode, r.stdout + r.stderr


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(REPO / "build" / "msvc-mode"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--file", action="append", default=[], help="only these sources")
    a = ap.parse_args(argv)
    cc = clang()
    if cc is None or not MINGW_INCLUDE.is_dir() or shutil.which("x86_64-w64-mingw32-gcc") is None:
        print("msvc-mode: needs clang and mingw-w64 (ci/deps.sh windows)", file=sys.stderr)
        return 2
    entries = json.loads(configure(pathlib.Path(a.build).resolve()).read_text())
    seen, todo = set(), []
    for e in entries:
        if e["file"].endswith(".c") and e["file"] not in seen:
            seen.add(e["file"])
            todo.append(e)
    if a.file:
        want = {str(pathlib.Path(f).resolve()) for f in a.file}
        todo = [e for e in todo if str(pathlib.Path(e["file"]).resolve()) in want]
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for src, rc, out in ex.map(lambda e: check(cc, e), todo):
            if rc != 0:
                bad += 1
                print(f"msvc-mode: FAIL {os.path.relpath(src, REPO)}\n{out}")
    print(f"msvc-mode: {len(todo)} files, {bad} with diagnostics "
          f"({' '.join(warning_flags())})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
