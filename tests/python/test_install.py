"""`pip install --no-build-isolation .` of this checkout into a fresh venv, without the network."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.slow
def test_pip_install_into_fresh_venv(tmp_path):
    base = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    venv = tmp_path / "venv"
    subprocess.run([base, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    p = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", "--no-index", str(ROOT)],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    probe = (
        "import linkscope, json\n"
        "print(linkscope.__file__)\n"
        "f = linkscope.open('/usr/bin/ls')\n"
        "r = linkscope.ldd('/usr/bin/ls')\n"
        "print(json.dumps([f.format, f.arch, len(f.symbols()), len(r.bindings) > 0]))\n"
    )
    out = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True,
                         env=env, cwd=tmp_path, check=True).stdout.splitlines()
    assert out[0].startswith(str(venv)), out
    fmt, arch, count, bound = __import__("json").loads(out[1])
    assert (fmt, arch, bound) == ("elf", "x86_64", True) and count > 10
    site = next((venv / "lib").glob("python3*/site-packages/linkscope"))
    assert sorted(p.name for p in site.iterdir() if p.name != "__pycache__")[:3] == [
        "__init__.py", "__init__.pyi", next(p.name for p in site.iterdir() if p.name.startswith("_core"))]
    assert (site / "py.typed").exists()
    # Only the module: no C++ headers or .pc files in the venv.
    assert not any((venv / "include").rglob("linkscope*"))
