"""Helpers the Mach-O/PE tests share: which tools are installed, fixtures
built at test time by a shell script, and a tool's stdout."""
import shutil
import subprocess

import pytest


def have(*tools):
    return all(shutil.which(t) for t in tools)


def build(tmp_path_factory, tools, name, sources, script):
    """Write `sources` into a fresh folder and run `script` there (sh -e);
    skip the test when one of `tools` is not installed."""
    if not have(*tools):
        pytest.skip("needs " + ", ".join(tools))
    d = tmp_path_factory.mktemp(name)
    for f, text in sources.items():
        (d / f).write_text(text)
    p = subprocess.run(["sh", "-c", script], cwd=d, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return d


def run(*args):
    """stdout of a tool that must succeed."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, check=True).stdout
