"""linkscope.ldd: the result equals linkscope-ldd --json (and --bindings) on the same files."""
import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess

import pytest

import linkscope

SYSTEM_PROGRAMS = ["/usr/bin/ls", "/usr/bin/python3"]


def cli_json(run_cli, path, *flags):
    return json.loads(run_cli("linkscope-ldd", "--json", "--no-env", *flags, path).stdout)


@pytest.mark.parametrize("name", ["prog", "noexist", "lib/libb.so"])
def test_to_dict_equals_cli_json(fixtures, run_cli, name):
    path = str(fixtures / name)
    assert linkscope.ldd(path).to_dict() == cli_json(run_cli, path)


@pytest.mark.parametrize("path", SYSTEM_PROGRAMS)
def test_system_program_equals_cli_json(run_cli, path):
    assert linkscope.ldd(path).to_dict() == cli_json(run_cli, path)


def test_library_path_and_root(fixtures, run_cli):
    path = str(fixtures / "noexist")
    # libghost.so is gone; a folder of ours on the library path does not hold it either.
    r = linkscope.ldd(path, library_path=[str(fixtures / "lib")])
    assert r.to_dict() == cli_json(run_cli, path, "--library-path", str(fixtures / "lib"))
    assert r.missing == ["libghost.so"]
    r = linkscope.ldd("/usr/bin/ls", root="/", use_cache=False)
    assert r.to_dict() == cli_json(run_cli, "/usr/bin/ls", "--root", "/", "--no-cache")


def test_paths_may_be_pathlike(fixtures, run_cli):
    """open() and ldd() take os.PathLike wherever they take a path, as the
    other functions do: the same results as with str."""
    prog = fixtures / "noexist"
    assert linkscope.open(prog).needed == linkscope.open(str(prog)).needed
    r = linkscope.ldd(prog, library_path=[fixtures / "lib"], root=pathlib.Path("/"))
    assert r.to_dict() == cli_json(run_cli, str(prog), "--library-path", str(fixtures / "lib"), "--root", "/")
    with pytest.raises(TypeError):
        linkscope.ldd(3)
    with pytest.raises(TypeError):
        linkscope.open(None)


def real_ldd(*args, cwd):
    p = subprocess.run(["ldd", *args], capture_output=True, text=True, cwd=cwd)
    return p.stdout.splitlines()


@pytest.mark.skipif(not os.path.exists("/lib64/ld-linux-x86-64.so.2") or shutil.which("ldd") is None,
                    reason="no x86-64 ld.so here")
def test_findings_equal_real_ldd(fixtures, monkeypatch):
    # The oracle is glibc's ld.so in trace mode (ldd), on the same files.
    monkeypatch.chdir(fixtures)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    r = linkscope.ldd("./prog")
    closure = [line.split(" (0x")[0].strip() for line in real_ldd("./prog", cwd=fixtures)
               if "linux-vdso" not in line]
    assert [name if name == path else f"{name} => {path}" for name, path in r.closure] == closure
    unused = [line.strip() for line in real_ldd("-u", "-r", "./prog", cwd=fixtures)[1:]]
    assert r.unused == unused and len(unused) == 2
    undefined = [line for line in real_ldd("-r", "./prog", cwd=fixtures) if line.startswith("undefined symbol")]
    assert [f"undefined symbol: {u.symbol}\t({u.from_})" for u in r.undefined] == undefined
    assert r.missing == []
    versioned = [b for b in r.bindings if b.symbol == "foo"]
    assert [(b.to.rsplit("/", 1)[1], b.version) for b in versioned] == [("libver.so.1", "VERS_2")]
    assert linkscope.ldd(str(fixtures / "noexist")).missing == ["libghost.so"]


def test_bindings_equal_cli_tsv(fixtures, run_cli):
    for path in [str(fixtures / "prog"), "/usr/bin/ls"]:
        rows = run_cli("linkscope-ldd", "--bindings", "--no-env", path).stdout.splitlines()
        assert ["\t".join(b) for b in linkscope.ldd(path).bindings] == rows


def test_closure_only(fixtures):
    r = linkscope.ldd(str(fixtures / "prog"), bindings=False)
    assert r.bindings == [] and len(r.closure) >= 5


def test_threads_give_the_same_answer():
    # The work runs with the GIL released; concurrent calls must not interfere.
    want = linkscope.ldd("/usr/bin/python3").to_dict()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: linkscope.ldd("/usr/bin/python3").to_dict(), range(4)))
    assert all(g == want for g in got)
