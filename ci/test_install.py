"""The installed package works for a consumer: `find_package(tpheal)` gives
tpheal::tpheal, and pkg-config gives the same library; both build and run a
program that creates, arms and closes a wait."""
import os
import subprocess
import textwrap

from conftest import run_bounded

CONSUMER = textwrap.dedent("""
    #include <tpheal/tpheal.h>
    #include <stdio.h>
    int main(void) {
        tph_pool *p = NULL;
        if (tph_pool_create(&p) != TPH_OK) return 1;
        if (tph_pool_set_thread_limits(p, 2, 1) != TPH_EINVAL) return 2;
        if (tph_pool_close(p) != TPH_OK) return 3;
        puts("consumer ok");
        return 0;
    }
""")


def test_find_package_and_pkg_config(builddir, tmp_path):
    prefix = tmp_path / "prefix"
    rc, out = run_bounded(["cmake", "--install", str(builddir), "--prefix", str(prefix)], 120)
    assert rc == 0, out
    src = tmp_path / "consumer"
    src.mkdir()
    (src / "main.c").write_text(CONSUMER)
    (src / "CMakeLists.txt").write_text(textwrap.dedent("""
        cmake_minimum_required(VERSION 3.20)
        project(consumer C)
        find_package(tpheal REQUIRED)
        add_executable(consumer main.c)
        target_link_libraries(consumer PRIVATE tpheal::tpheal)
    """))
    b = tmp_path / "b"
    rc, out = run_bounded(["cmake", "-S", str(src), "-B", str(b), f"-DCMAKE_PREFIX_PATH={prefix}"], 120)
    assert rc == 0, out
    rc, out = run_bounded(["cmake", "--build", str(b)], 120)
    assert rc == 0, out
    rc, out = run_bounded([str(b / "consumer")], 60)
    assert rc == 0 and "consumer ok" in out, out

    pc_dir = next(prefix.glob("lib*/pkgconfig"))
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc_dir))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "--static", "tpheal"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    exe = tmp_path / "consumer_pc"
    rc, out = run_bounded(["cc", "-std=c11", str(src / "main.c"), "-o", str(exe), *flags], 120)
    assert rc == 0, out
    lib_dir = pc_dir.parent
    rc, out = run_bounded([str(exe)], 60, env=dict(os.environ, LD_LIBRARY_PATH=str(lib_dir)))
    assert rc == 0 and "consumer ok" in out, out
