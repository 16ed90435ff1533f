"""linkscope.why: to_dict() equals linkscope-why --json; why_extract equals ld.lld's --why-extract."""
import json
import shutil
import subprocess

import pytest

import linkscope


@pytest.fixture(scope="module")
def link(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    d = tmp_path_factory.mktemp("why")
    files = {
        "main.c": "extern int a_func(void);\nint main_func(void) { return a_func(); }\n",
        "a.c": "extern int b_func(void);\nint a_func(void) { return b_func(); }\n",
        "b.c": "int b_func(void) { return 2; }\n",
        "u.c": "int unused_func(void) { return 3; }\n",
    }
    for name, text in files.items():
        (d / name).write_text(text)
    subprocess.run(["sh", "-c", "set -e; for f in main a b u; do gcc -c $f.c -o $f.o; done;"
                    " ar rcs libA.a a.o; ar rcs libB.a b.o; ar rcs libU.a u.o"], cwd=d, check=True)
    return d


def args_of(d):
    return [str(d / "main.o"), "-L" + str(d), "-lA", str(d / "libB.a"), str(d / "libU.a")]


@pytest.mark.parametrize("semantics", ["lld", "bfd"])
def test_why_equals_cli_json(link, run_cli, semantics):
    args = args_of(link)
    r = linkscope.why(args, semantics=semantics)
    cli = json.loads(run_cli("linkscope-why", "--json", f"--semantics={semantics}", *args).stdout)
    assert r.to_dict() == cli
    assert [e["symbol"] for e in r.extracted] == ["a_func", "b_func"]
    assert r.unused_members == [str(link / "libU.a") + "(u.o)"]


def test_why_extract_equals_lld(link, run_cli):
    args = args_of(link)
    r = linkscope.why(args)
    assert r.why_extract == run_cli("linkscope-why", "--why-extract=-", *args).stdout
    lld = shutil.which("ld.lld-14") or shutil.which("ld.lld")
    if lld is None:
        pytest.skip("no ld.lld")
    out = link / "lld-why.tsv"
    subprocess.run([lld, "--no-demangle", "-o", str(link / "a.out"), "-e", "main_func", f"--why-extract={out}", *args],
                   check=True, capture_output=True)
    assert r.why_extract == out.read_text()


def test_why_errors(link):
    with pytest.raises(linkscope.Error) as e:
        linkscope.why([str(link / "main.o"), "-lnosuchlibrary"])
    assert e.value.file is not None and "nosuchlibrary" in e.value.file
    with pytest.raises(linkscope.Error) as e:
        linkscope.why([str(link / "main.o")], semantics="gold")
    assert e.value.code == "usage"
    with pytest.raises(TypeError):
        linkscope.why("main.o")


def test_bfd_finds_libraries_in_gnu_lds_directories(link, run_cli):
    """-lc with no -L: GNU ld semantics search ld's built-in directories (as
    linkscope-why --semantics=bfd does); lld semantics do not, as ld.lld."""
    if shutil.which("ld") is None or "elf_x86_64" not in subprocess.run(["ld", "--verbose"], capture_output=True,
                                                                         text=True).stdout:
        pytest.skip("no x86-64 GNU ld here")
    args = [str(link / "main.o"), str(link / "libA.a"), str(link / "libB.a"), "-lc"]
    r = linkscope.why(args, semantics="bfd")
    assert r.to_dict() == json.loads(run_cli("linkscope-why", "--json", "--semantics=bfd", *args).stdout)
    assert [e["symbol"] for e in r.extracted] == ["a_func", "b_func"]
    with pytest.raises(linkscope.Error) as e:
        linkscope.why(args, semantics="lld")
    assert e.value.file == "-lc" and "unable to find library" in str(e.value)
