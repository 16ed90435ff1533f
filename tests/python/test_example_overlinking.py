"""examples/python/overlinking.py on a small conda-style prefix made with gcc."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_overlinking_example(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    p = tmp_path / "prefix"
    (p / "lib").mkdir(parents=True)
    (p / "bin").mkdir()
    (p / "conda-meta").mkdir()
    (tmp_path / "a.c").write_text("int a_func(void) { return 1; }\n")
    (tmp_path / "c.c").write_text("int c_func(void) { return 3; }\n")
    (tmp_path / "b.c").write_text("extern int a_func(void);\nint b_func(void) { return a_func(); }\n")
    (tmp_path / "m.c").write_text("extern int b_func(void);\nint main(void) { return b_func(); }\n")
    subprocess.run(["sh", "-c", f"""set -e
gcc -shared -fPIC a.c -o {p}/lib/liba.so.1 -Wl,-soname,liba.so.1
ln -s liba.so.1 {p}/lib/liba.so
gcc -shared -fPIC c.c -o {p}/lib/libc_.so -Wl,-soname,libc_.so
gcc -shared -fPIC b.c -o {p}/lib/libb.so -Wl,-soname,libb.so -L{p}/lib -la -Wl,-rpath,'$ORIGIN'
gcc m.c -o {p}/bin/m -L{p}/lib -lb -Wl,-rpath-link,{p}/lib -Wl,-rpath,'$ORIGIN/../lib'
"""], cwd=tmp_path, check=True)

    def meta(name, files, depends):
        (p / "conda-meta" / f"{name}-1.0-0.json").write_text(
            json.dumps({"name": name, "version": "1.0", "build": "0", "files": files, "depends": depends}))

    meta("a", ["lib/liba.so.1", "lib/liba.so"], [])
    meta("c", ["lib/libc_.so"], [])
    # b binds to a without depending on it (overlinking) and depends on c,
    # which it never uses (overdepending); m depends on b and uses it: clean.
    meta("b", ["lib/libb.so"], ["c 1.0"])
    meta("m", ["bin/m"], ["b >=1"])
    env = dict(os.environ)
    out = subprocess.run([sys.executable, str(ROOT / "examples/python/overlinking.py"), str(p)],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines() == [
        "lib/libb.so: overlinking: binds to lib/liba.so.1 of package a, not a run dependency of b",
        "b: overdepending: run dependency c ships libraries that nothing of b binds to",
    ]
    # Declared as it is used: nothing to report.
    meta("b", ["lib/libb.so"], ["a"])
    out = subprocess.run([sys.executable, str(ROOT / "examples/python/overlinking.py"), str(p)],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "no overlinking" in out.stdout, out.stdout + out.stderr
