"""linkscope.floors: to_dict() equals linkscope-floors --json with the same limits,
and the floors themselves agree with objdump -T, objdump -p and llvm-objdump-14."""
import json
import re
import shutil
import subprocess

import pytest

import linkscope

from conftest import ROOT

POLICY = ROOT / "tests" / "data" / "auditwheel" / "manylinux-policy.json"


def cli_doc(run_cli, *args, codes=(0, 1)):
    return json.loads(run_cli("linkscope-floors", "--json", *args, check_codes=codes).stdout)


@pytest.fixture(scope="module")
def foreign(tmp_path_factory):
    """A mingw-w64 DLL (PE) and clang-14 Mach-O objects for two architectures,
    when those toolchains are installed (None otherwise)."""
    d = tmp_path_factory.mktemp("floors_foreign")
    (d / "f.c").write_text("int f(int x) { return x + 1; }\n")
    made = {}
    if shutil.which("x86_64-w64-mingw32-gcc"):
        subprocess.run(["x86_64-w64-mingw32-gcc", "-shared", "f.c", "-o", "f.dll"], cwd=d, check=True)
        made["dll"] = d / "f.dll"
    if shutil.which("clang-14"):
        for target, name in (("x86_64-apple-macos10.15", "f_x86_64.o"), ("arm64-apple-macos11", "f_arm64.o")):
            subprocess.run(["clang-14", "-target", target, "-c", "f.c", "-o", name], cwd=d, check=True)
            made[name] = d / name
    return made


def test_floors_equals_cli(fixtures, run_cli):
    paths = [fixtures / "prog", fixtures / "lib" / "libb.so", fixtures / "lib" / "libver.so.1"]
    r = linkscope.floors(paths)
    assert r.to_dict() == cli_doc(run_cli, *paths)
    assert [f["file"] for f in r.files] == [str(p) for p in paths]
    assert r.exceeded is False and r.errors == []


def test_floors_limits_equal_cli(fixtures, run_cli):
    prog = fixtures / "prog"
    r = linkscope.floors([prog], max_glibc="2.17", max_versions={"VERS": "1"}, max_isa="baseline")
    doc = cli_doc(run_cli, "--max-glibc", "2.17", "--max-version", "VERS=1", "--max-isa", "baseline", prog)
    assert r.to_dict() == doc
    # The oracle: every GLIBC_ version objdump -T lists for prog above 2.17 is
    # in "exceeded", and none at or below it.
    if shutil.which("objdump") is None:
        pytest.skip("objdump is not installed")
    dump = subprocess.run(["objdump", "-T", str(prog)], capture_output=True, text=True, check=True).stdout
    versions = {v for v in re.findall(r"\bGLIBC_([0-9][0-9.]*)\b", dump)}

    def key(v):
        return tuple(int(x) for x in v.split("."))

    above = sorted(("GLIBC_" + v for v in versions if key(v) > (2, 17)), key=lambda s: key(s[6:]))
    glibc = [e for e in r.files[0]["exceeded"] if e["family"] == "GLIBC"]
    if above:
        assert r.exceeded is True
        assert [a["version"] for a in glibc[0]["above"]] == above
        assert glibc[0]["highest"] == above[-1]
    else:
        assert glibc == []


def test_floors_policy_and_directory_equal_cli(fixtures, run_cli):
    r = linkscope.floors([fixtures / "lib"], policy=POLICY, require_policy="manylinux_2_17")
    doc = cli_doc(run_cli, "--policy", POLICY, "--require-policy", "manylinux_2_17", fixtures / "lib")
    assert r.to_dict() == doc
    # A folder is searched for binaries, in path order, as the CLI does.
    found = sorted(str(p) for p in (fixtures / "lib").iterdir() if p.is_file() and p.read_bytes()[:4] == b"\x7fELF")
    assert [f["file"] for f in r.files] == found
    assert "policy" in r.set


def test_floors_unreadable_files_are_error_elements(fixtures, run_cli):
    paths = [fixtures / "prog", fixtures / "truncated.so", fixtures / "no-such-file", fixtures / "a.c"]
    r = linkscope.floors(paths)
    assert r.to_dict() == cli_doc(run_cli, *paths, codes=(2,))
    assert [e["file"] for e in r.errors] == [str(p) for p in paths[1:]]
    assert all(e["error"] for e in r.errors)


def test_floors_bad_limits_raise(fixtures):
    prog = [fixtures / "prog"]
    for kwargs in ({"max_glibc": "two"}, {"max_isa": "v9"}, {"macos_target": "eleven"}, {"windows_target": "x"},
                   {"forbid_crt": ["libc"]}, {"require_policy": "manylinux_2_17"},
                   {"policy": POLICY, "require_policy": "manylinux_9_99"}):
        with pytest.raises(linkscope.Error) as e:
            linkscope.floors(prog, **kwargs)
        assert e.value.code == "usage", kwargs
    with pytest.raises(linkscope.Error) as e:
        linkscope.floors(prog, policy=fixtures / "a.c")
    assert e.value.file == str(fixtures / "a.c")
    with pytest.raises(TypeError):
        linkscope.floors(prog, require_archs="x86_64")
    with pytest.raises(TypeError):
        linkscope.floors(str(fixtures / "prog"))


def test_floors_pe_equals_cli_and_objdump(foreign, run_cli):
    if "dll" not in foreign:
        pytest.skip("x86_64-w64-mingw32-gcc is not installed")
    dll = foreign["dll"]
    r = linkscope.floors([dll], windows_target="5.1", forbid_crt=["msvcrt"])
    assert r.to_dict() == cli_doc(run_cli, "--windows-target", "5.1", "--forbid-crt", "msvcrt", dll)
    pe = r.files[0]
    assert pe["format"] == "pe" and pe["dll"] is True
    dump = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(dll)], capture_output=True, text=True,
                          check=True).stdout
    fields = dict(re.findall(r"^(Major\w+|Minor\w+)\s+([0-9a-fA-F]+)", dump, re.M))
    assert pe["os_version"] == f"{int(fields['MajorOSystemVersion'])}.{int(fields['MinorOSystemVersion'])}"
    assert pe["subsystem_version"] == f"{int(fields['MajorSubsystemVersion'])}.{int(fields['MinorSubsystemVersion'])}"
    imported = sorted(re.findall(r"DLL Name: (\S+)", dump))
    assert sorted(pe["imports"]) == imported
    assert r.set["windows"] == {"version": pe["windows"], "file": str(dll)}


def test_floors_macho_equals_cli_and_llvm_objdump(foreign, run_cli):
    objs = [foreign[n] for n in ("f_x86_64.o", "f_arm64.o") if n in foreign]
    if len(objs) != 2:
        pytest.skip("clang-14 is not installed")
    r = linkscope.floors(objs, macos_target="10.15", require_archs=["x86_64", "arm64"])
    assert r.to_dict() == cli_doc(run_cli, "--macos-target", "10.15", "--require-archs", "x86_64,arm64", *objs)
    for f, obj in zip(r.files, objs):
        dump = subprocess.run(["llvm-objdump-14", "--macho", "--private-headers", str(obj)], capture_output=True,
                              text=True, check=True).stdout
        minos = re.search(r"^\s*minos\s+(\S+)", dump, re.M).group(1)
        assert f["slices"][0]["platforms"][0]["minos"] == minos
    # arm64 needs 11.0, above the 10.15 target; each thin file lacks the other arch.
    assert r.files[1]["above_macos_target"] == ["arm64"] and r.files[0]["above_macos_target"] == []
    assert r.files[0]["missing_archs"] == ["arm64"] and r.exceeded is True
    assert r.set["macos_minos"] == {"version": r.files[1]["macos_minos"], "file": str(objs[1])}


def test_file_floors_is_the_one_file_document(fixtures, run_cli, foreign):
    """File.floors(**limits) is linkscope-floors --json of that one file; the
    highest GLIBC_ version it names is objdump -T's."""
    prog = fixtures / "prog"
    r = linkscope.open(prog).floors(max_glibc="2.2.5")
    assert r.to_dict() == cli_doc(run_cli, "--max-glibc", "2.2.5", prog)
    assert [f["file"] for f in r.files] == [str(prog)]
    if shutil.which("objdump"):
        dump = subprocess.run(["objdump", "-T", str(prog)], capture_output=True, text=True, check=True).stdout
        versions = sorted({tuple(int(x) for x in v.split(".")) for v in re.findall(r"\bGLIBC_([0-9][0-9.]*)\b", dump)})
        glibc = [e for e in r.files[0]["exceeded"] if e["family"] == "GLIBC"]
        if versions and versions[-1] > (2, 2, 5):
            assert glibc[0]["highest"] == "GLIBC_" + ".".join(map(str, versions[-1]))
    for name in ("dll", "f_arm64.o"):
        if name in foreign:
            f = linkscope.open(foreign[name])
            assert f.floors().to_dict() == cli_doc(run_cli, foreign[name])
