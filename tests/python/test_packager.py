"""linkscope.dupes and linkscope.absorbed: to_dict() equals linkscope-dupes / linkscope-absorbed --json."""
import json
import shutil
import subprocess

import pytest

import linkscope


@pytest.fixture(scope="module")
def packager(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    d = tmp_path_factory.mktemp("packager")
    files = {
        "d1.c": "int dup_func(void) { return 1; }\nint dup_data[4];\nint only1(void) { return 0; }\n",
        "d2.c": "int dup_func(void) { return 2; }\nint dup_data[8];\nint only2(void) { return 0; }\n",
        "a.c": "int a_func(void) { return 1; }\n",
        "u.c": "int unrelated_func(void) { return 2; }\n",
        "s.c": "extern int a_func(void);\nint s_func(void) { return a_func(); }\n",
        "consumer.c": "extern int s_func(void);\nint use(void) { return s_func(); }\n",
    }
    for name, text in files.items():
        (d / name).write_text(text)
    subprocess.run(["sh", "-c", """set -e
gcc -shared -fPIC d1.c -o libd1.so
gcc -shared -fPIC d2.c -o libd2.so
gcc -fPIC -c d1.c -o d1.o
gcc -fPIC -c a.c -o a.o
gcc -fPIC -c u.c -o u.o
ar rcs libA.a a.o
ar rcs libU.a u.o
gcc -shared -fPIC s.c -o libS.so libA.a
gcc -fPIC -c consumer.c -o consumer.o
"""], cwd=d, check=True)
    return d


def cli_json(run_cli, tool, *args):
    return json.loads(run_cli(tool, "--json", *args).stdout)


def test_dupes_equal_cli(packager, run_cli):
    paths = [str(packager / n) for n in ("libd1.so", "libd2.so", "d1.o")]
    r = linkscope.dupes(paths)
    assert r.to_dict() == cli_json(run_cli, "linkscope-dupes", *paths)
    names = [d["symbol"] for d in r.duplicates]
    assert "dup_func" in names and "dup_data" in names
    (data,) = [d for d in r.duplicates if d["symbol"] == "dup_data"]
    assert data["abi_break"] and data["sizes_differ"]
    assert linkscope.dupes(paths, abi_only=True).to_dict() == cli_json(run_cli, "linkscope-dupes", "--abi-only", *paths)


def test_dupes_errors(packager):
    with pytest.raises(linkscope.Error) as e:
        linkscope.dupes([str(packager / "libd1.so")])
    assert e.value.code == "usage"
    with pytest.raises(linkscope.Error) as e:
        linkscope.dupes([str(packager / "libd1.so"), "/nonexistent.so"])
    assert e.value.file == "/nonexistent.so"
    with pytest.raises(TypeError):
        linkscope.dupes(str(packager / "libd1.so"))


def test_absorbed_equal_cli(packager, run_cli):
    s = str(packager / "libS.so")
    archives = [str(packager / "libA.a"), str(packager / "libU.a")]
    r = linkscope.absorbed(s, archives)
    assert r.to_dict() == cli_json(run_cli, "linkscope-absorbed", s, *archives)
    verdicts = {a["file"]: a["verdict"] for a in r.archives}
    assert r.file == s
    # libA.a(a.o) went into libS.so with default visibility: S exports a_func
    # itself (GNU nm -D says so), so a consumer needs S, not the archive.
    exported = subprocess.run(["nm", "-D", "--defined-only", s], capture_output=True, text=True).stdout
    assert " T a_func" in exported
    assert verdicts[archives[0]] == "re-exported" and not r.needed
    consumer = str(packager / "consumer.o")
    r = linkscope.absorbed(s, archives, consumers=[consumer])
    assert r.to_dict() == cli_json(run_cli, "linkscope-absorbed", s, *archives, "--consumer", consumer)


def test_absorbed_errors(packager):
    with pytest.raises(linkscope.Error) as e:
        linkscope.absorbed(str(packager / "libS.so"), [])
    assert e.value.code == "usage"
    with pytest.raises(linkscope.Error) as e:
        linkscope.absorbed(str(packager / "libS.so"), [str(packager / "missing.a")])
    assert e.value.file == str(packager / "missing.a")


def test_absorbed_cmake_libs_equal_cli(packager, run_cli):
    """cmake_libs= judges a CMake library list as linkscope-absorbed --cmake-libs:
    the same document, and an entry only CMake can evaluate raises unless
    allow_unevaluated=True (the CLI exits 2)."""
    s = str(packager / "libS.so")
    prefix = packager / "prefix"
    (prefix / "lib").mkdir(parents=True, exist_ok=True)
    shutil.copy(packager / "libA.a", prefix / "lib" / "libA.a")
    entries = ["A", "$<LINK_ONLY:A>", "-lA", "-Wl,--as-needed", "kineto-NOTFOUND", "debug", "A_d", "fmt::fmt"]
    r = linkscope.absorbed(s, cmake_libs=entries, prefix=prefix, allow_unevaluated=True)
    cli = json.loads(run_cli("linkscope-absorbed", "--json", "--allow-unevaluated", "--cmake-libs", ";".join(entries),
                             "--prefix", str(prefix), s, check_codes=(0, 1)).stdout)
    assert r.to_dict() == cli
    status = {c["name"]: c["status"] for c in r.cmake_libs}
    assert status["-Wl,--as-needed"] == "flag" and status["A_d"] == "debug-only" and status["fmt::fmt"] == "cmake-target"
    # libA.a is re-exported by libS.so (nm -D: T a_func), however it is named.
    assert status["A"] == status["$<LINK_ONLY:A>"] == status["-lA"] == "re-exported"
    with pytest.raises(linkscope.Error) as e:
        linkscope.absorbed(s, cmake_libs=entries, prefix=prefix)
    assert e.value.code == "usage" and "only by CMake" in str(e.value)
