"""linkscope.open: the header facts and the symbol tables, against readelf and linkscope-nm --json."""
import json
import re
import shutil
import subprocess

import pytest

import linkscope

SYSTEM_LIBS = ["/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libc.so.6"]


def readelf_dynamic(path):
    out = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out)
    soname = re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]", out)
    rpath = re.findall(r"\(RPATH\)\s+Library rpath: \[(.*)\]", out)
    runpath = re.findall(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", out)
    first = lambda v: v[0] if v else None  # noqa: E731
    return needed, first(soname), first(rpath), first(runpath)


def test_header_facts(fixtures):
    f = linkscope.open(str(fixtures / "prog"))
    assert (f.format, f.arch, f.bits, f.endian) == ("elf", "x86_64", 64, "little")
    assert f.kind in ("pie", "executable")
    assert f.interp == "/lib64/ld-linux-x86-64.so.2"
    assert linkscope.open(str(fixtures / "lib" / "liba.so")).kind == "shared"
    assert linkscope.open(str(fixtures / "a.o")).kind == "relocatable"
    assert linkscope.open("/etc/passwd").format == "unknown"


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf missing")
@pytest.mark.parametrize("name", ["prog", "lib/libb.so", "lib/libver.so.1", "a.o"])
def test_dynamic_names_equal_readelf(fixtures, name):
    path = fixtures / name
    f = linkscope.open(str(path))
    needed, soname, rpath, runpath = readelf_dynamic(path)
    assert (f.needed, f.soname, f.rpath, f.runpath) == (needed, soname, rpath, runpath)
    # rpaths: what ld.so searches, DT_RUNPATH's entries, else DT_RPATH's.
    searched = runpath if runpath is not None else rpath
    assert f.rpaths == ([] if searched is None else searched.split(":"))


@pytest.mark.parametrize("lib", SYSTEM_LIBS)
def test_system_library_names_equal_readelf(lib):
    f = linkscope.open(lib)
    assert (f.needed, f.soname, f.rpath, f.runpath) == readelf_dynamic(lib)


def nm_json_set(run_cli, path, *flags):
    doc = json.loads(run_cli("linkscope-nm", *flags, "--json", path).stdout)
    (obj,) = doc["objects"]
    rows = set()
    for s in obj["symbols"]:
        rows.add((s["name"], s.get("version"), s["defined"],
                  int(s["value"], 16) if s["defined"] else None, s["size"] if s["defined"] else None))
    return rows


def module_set(symbols, keep_local=True):
    return {(s.name, s.version, s.defined, s.value if s.defined else None, s.size if s.defined else None)
            for s in symbols if keep_local or s.binding != "local"}


@pytest.mark.parametrize("name", ["lib/libver.so.1", "lib/libb.so", "prog"])
def test_dynamic_symbols_equal_nm_json(fixtures, run_cli, name):
    path = str(fixtures / name)
    syms = linkscope.open(path).symbols()
    assert len(syms) == len(list(syms))
    assert module_set(syms) == nm_json_set(run_cli, path, "-D")


@pytest.mark.parametrize("lib", SYSTEM_LIBS)
def test_system_dynamic_symbols_equal_nm_json(run_cli, lib):
    assert module_set(linkscope.open(lib).symbols()) == nm_json_set(run_cli, lib, "-D")


def test_static_symbols_equal_nm_json(fixtures, run_cli):
    # nm leaves out section and file symbols (and so does its --json).
    path = str(fixtures / "a.o")
    syms = [s for s in linkscope.open(path).symbols("static") if s.type not in ("section", "file")]
    assert module_set(syms) == nm_json_set(run_cli, path)


def test_versions(fixtures):
    syms = {(s.name, s.version, s.default_version) for s in linkscope.open(str(fixtures / "lib/libver.so.1")).symbols()
            if s.defined and s.name in ("foo", "bar")}
    assert syms == {("foo", "VERS_1", False), ("foo", "VERS_2", True), ("bar", "VERS_1", True)}


def test_symbol_fields_and_names(fixtures):
    syms = linkscope.open(str(fixtures / "lib/liba.so")).symbols()
    by_name = {s.name: s for s in syms}
    assert by_name["a_func"].type == "func" and by_name["a_func"].binding == "global"
    assert by_name["a_value"].type == "object" and by_name["a_value"].size == 4
    assert syms.names() == [s.name for s in syms]
    assert syms[-1] == list(syms)[-1]
    with pytest.raises(IndexError):
        syms[len(syms)]


def test_symbols_outlive_file(fixtures):
    syms = linkscope.open(str(fixtures / "lib/liba.so")).symbols()  # the File is gone at once
    assert "a_func" in syms.names()
