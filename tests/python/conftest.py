"""pytest setup for the Python module's tests (tests/python).

Environment (scripts/test-all sets both):
  LINKSCOPE_CLI_DIR   the folder holding the linkscope-* CLIs whose --json the
                      module must equal (default: build/examples of this checkout)
  PYTHONPATH          must reach the built module (BUILD/python for CMake)

Fixtures are made at test time with gcc, as the C++ tests make theirs.
"""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds and installs the package (pip into a fresh venv)")


@pytest.fixture(scope="session")
def cli_dir():
    d = pathlib.Path(os.environ.get("LINKSCOPE_CLI_DIR", ROOT / "build" / "examples"))
    if not (d / "linkscope-ldd").exists():
        pytest.fail(f"no linkscope-ldd in {d} (set LINKSCOPE_CLI_DIR)")
    return d


@pytest.fixture(scope="session")
def run_cli(cli_dir):
    def run(tool, *args, check_codes=(0, 1)):
        p = subprocess.run([str(cli_dir / tool), *map(str, args)], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"})
        assert p.returncode in check_codes, (tool, args, p.returncode, p.stderr)
        return p
    return run


SOURCES = {
    "a.c": "int a_value = 7;\nint a_func(int x) { return x + a_value; }\n",
    "ver.c": (
        '__asm__(".symver foo_v1,foo@VERS_1");\n'
        '__asm__(".symver foo_v2,foo@@VERS_2");\n'
        "int foo_v1(void) { return 1; }\nint foo_v2(void) { return 2; }\nint bar(void) { return 3; }\n"
    ),
    "ver.map": "VERS_1 { global: foo; bar; local: *; };\nVERS_2 { global: foo; } VERS_1;\n",
    "b.c": "extern int a_func(int);\nextern int foo(void);\nint b_func(int x) { return a_func(x) + foo(); }\n",
    "unused.c": "int unused_func(void) { return 0; }\n",
    "gone.c": "int gone_func(void) { return 1; }\nint kept_func(void) { return 2; }\n",
    "gone2.c": "int kept_func(void) { return 2; }\n",
    "prog.c": (
        "#include <stdio.h>\nextern int b_func(int);\nextern int gone_func(void);\n"
        'int main(void) { printf("%d %d\\n", b_func(1), gone_func()); return 0; }\n'
    ),
    "noexist.c": "extern int ghost_func(void);\nint main(void) { return ghost_func(); }\n",
    "ghost.c": "int ghost_func(void) { return 0; }\n",
}


@pytest.fixture(scope="session")
def fixtures(tmp_path_factory):
    """A small closure: prog -> libb (-> liba, libver@VERS_2), libunused, libgone
    (rebuilt without gone_func: one undefined symbol); lib/ found through
    RUNPATH $ORIGIN/lib; noexist needs libghost.so, which is removed."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    d = tmp_path_factory.mktemp("fixtures")
    for name, text in SOURCES.items():
        (d / name).write_text(text)
    (d / "lib").mkdir()
    script = """
set -e
gcc -shared -fPIC a.c -o lib/liba.so -Wl,-soname,liba.so
gcc -shared -fPIC ver.c -o lib/libver.so.1 -Wl,--version-script=ver.map -Wl,-soname,libver.so.1
gcc -shared -fPIC b.c -o lib/libb.so -Wl,-soname,libb.so -Llib -la lib/libver.so.1 -Wl,-rpath,'$ORIGIN'
gcc -shared -fPIC unused.c -o lib/libunused.so -Wl,-soname,libunused.so
gcc -shared -fPIC gone.c -o lib/libgone.so -Wl,-soname,libgone.so
gcc prog.c -o prog -Llib -Wl,--no-as-needed -lb -lunused -lgone -Wl,-rpath-link,lib \
    -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib'
gcc -shared -fPIC gone2.c -o lib/libgone.so -Wl,-soname,libgone.so
gcc -shared -fPIC ghost.c -o libghost.so -Wl,-soname,libghost.so
gcc noexist.c -o noexist -L. -lghost
rm libghost.so
gcc -c a.c -o a.o
head -c 100 lib/liba.so > truncated.so
"""
    subprocess.run(["sh", "-c", script], cwd=d, check=True)
    return d
