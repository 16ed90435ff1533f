"""linkscope.check: to_dict() equals linkscope-check --json (stats.milliseconds aside)."""
import json
import pathlib
import re
import shutil
import subprocess

import pytest

import linkscope


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    t = tmp_path_factory.mktemp("check")
    p = t / "prefix"
    (p / "lib").mkdir(parents=True)
    (p / "bin").mkdir()
    (p / "conda-meta").mkdir()
    (t / "a.c").write_text("int a_func(void) { return 1; }\n")
    (t / "c.c").write_text("int c_func(void) { return 3; }\n")
    (t / "b.c").write_text("extern int a_func(void);\nint b_func(void) { return a_func(); }\n")
    (t / "m.c").write_text("extern int b_func(void);\nextern int a_func(void);\n"
                           "int main(void) { return b_func() + a_func(); }\n")
    subprocess.run(["sh", "-c", f"""set -e
gcc -shared -fPIC a.c -o {p}/lib/liba.so -Wl,-soname,liba.so
gcc -shared -fPIC c.c -o {p}/lib/libc_.so -Wl,-soname,libc_.so
gcc -shared -fPIC b.c -o {p}/lib/libb.so -Wl,-soname,libb.so -L{p}/lib -la -Wl,-rpath,'$ORIGIN'
gcc m.c -o {p}/bin/m -L{p}/lib -Wl,--no-as-needed -lb -la -lc_ -Wl,-rpath-link,{p}/lib -Wl,-rpath,'$ORIGIN/../lib'
"""], cwd=t, check=True)
    for name, files in {"a": ["lib/liba.so"], "b": ["lib/libb.so"], "c": ["lib/libc_.so"], "m": ["bin/m"]}.items():
        (p / "conda-meta" / f"{name}-1.0-0.json").write_text(
            json.dumps({"name": name, "version": "1.0", "build": "0", "files": files, "depends": []}))
    return p


def cli_doc(run_cli, *args):
    doc = json.loads(run_cli("linkscope-check", "--json", *args).stdout)
    doc["stats"].pop("milliseconds")
    return doc


def module_doc(result):
    doc = result.to_dict()
    doc["stats"].pop("milliseconds")
    return doc


def test_check_equals_cli(prefix, run_cli):
    assert module_doc(linkscope.check(str(prefix))) == cli_doc(run_cli, str(prefix))


def test_check_declared_equals_cli(prefix, run_cli):
    r = linkscope.check(str(prefix), [str(prefix / "bin/m")], declared=["b", "c"], dpkg=False)
    assert module_doc(r) == cli_doc(run_cli, "--declared", "b,c", "--no-dpkg", str(prefix), str(prefix / "bin/m"))
    # m binds a_func in liba.so, of package a, which is not declared.
    assert r.undeclared == ["a"]


def test_check_package_equals_cli(prefix, run_cli):
    r = linkscope.check(str(prefix), package="b", undefined=True)
    assert module_doc(r) == cli_doc(run_cli, "--package", "b", "--undefined", str(prefix))
    assert [f["relative"] for f in r.files] == ["lib/libb.so"]


def test_check_errors(prefix):
    with pytest.raises(linkscope.Error) as e:
        linkscope.check(str(prefix), [str(prefix / "bin/nothing")])
    assert e.value.file == str(prefix / "bin/nothing") and e.value.code == "not_found"


def test_check_allow_lists_equal_cli(prefix, run_cli, tmp_path):
    # default_allow=False and allow= are --no-default-allow and --allow; the
    # default ELF list read back as a user's file (--allow-file) gives the
    # default document.
    r = linkscope.check(str(prefix), default_allow=False, allow=["libc.so*"], dpkg=False)
    assert module_doc(r) == cli_doc(run_cli, "--no-default-allow", "--allow", "libc.so*", "--no-dpkg", str(prefix))
    linux = pathlib.Path(__file__).resolve().parents[2] / "data/allow/linux.txt"
    assert cli_doc(run_cli, "--no-default-allow", "--allow-file", str(linux), "--no-dpkg", str(prefix)) == \
        module_doc(linkscope.check(str(prefix), dpkg=False))
    bare = module_doc(linkscope.check(str(prefix), default_allow=False, dpkg=False))
    assert bare["findings"] > module_doc(r)["findings"]
    # allow_file= is --allow-file: data/allow/linux.txt gives the default document.
    assert module_doc(linkscope.check(str(prefix), default_allow=False, allow_file=[linux], dpkg=False)) == \
        module_doc(linkscope.check(str(prefix), dpkg=False))


def test_check_allow_file_errors(prefix, run_cli, tmp_path):
    # A control character is an error at its offset, as linkscope-check says.
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"libc.so*\nlib\x01m.so\n")
    with pytest.raises(linkscope.Error) as e:
        linkscope.check(str(prefix), allow_file=[bad], dpkg=False)
    cli = run_cli("linkscope-check", "--allow-file", str(bad), "--no-dpkg", str(prefix), check_codes=(2,))
    assert e.value.file == str(bad)
    assert e.value.offset == 12
    assert "offset 0xc" in cli.stderr
    with pytest.raises(linkscope.Error) as e:
        linkscope.check(str(prefix), allow_file=[tmp_path / "absent.txt"], dpkg=False)
    assert e.value.code == "not_found"


def test_check_floors_equals_cli(prefix, run_cli):
    r = linkscope.check(str(prefix), max_versions={"GLIBC": "2.17"}, dpkg=False)
    assert module_doc(r) == cli_doc(run_cli, "--max-glibc", "2.17", "--no-dpkg", str(prefix))
    # The oracle: objdump -T lists m's GLIBC references above 2.17.
    if shutil.which("objdump") is None:
        pytest.skip("objdump is not installed")
    dump = subprocess.run(["objdump", "-T", str(prefix / "bin/m")], capture_output=True, text=True, check=True).stdout
    above = sorted({"GLIBC_" + v for v in re.findall(r"\(?GLIBC_([0-9.]+)\)?", dump)
                    if tuple(int(x) for x in v.split(".")) > (2, 17)})
    assert above  # __libc_start_main@GLIBC_2.34 on glibc >= 2.34
    m = next(f for f in r.files if f["relative"] == "bin/m")
    got = sorted(a["version"] for v in m["floors"] for a in v["above"])
    assert got == above
    with pytest.raises(linkscope.Error):
        linkscope.check(str(prefix), max_versions={"GLIBC": "new"})


def test_check_jobs_same_document(prefix):
    one = module_doc(linkscope.check(str(prefix), jobs=1))
    assert module_doc(linkscope.check(str(prefix), jobs=2)) == one
    assert module_doc(linkscope.check(str(prefix), jobs=0)) == one
    assert one["stats"]["files"] >= 4
    with pytest.raises(linkscope.Error) as e:
        linkscope.check(str(prefix), jobs=-1)
    assert e.value.code == "usage"
