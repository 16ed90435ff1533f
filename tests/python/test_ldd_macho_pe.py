"""linkscope.ldd on Mach-O and PE files (issue 21): dyld and the Windows loader.

Fixtures are made here at test time: Mach-O images with clang-14 and
ld64.lld-14 (a libSystem .tbd stub stands in for the SDK), PE images with
x86_64-w64-mingw32-gcc. Checked:
- to_dict() (and to_dict(demangle=True)) equals `linkscope-ldd --json
  [--demangle]` on the same file with the same options: one writer
  (report/ldd_macho.hpp, report/ldd_pe.hpp);
- each document validates against schema/linkscope-ldd.schema.json;
- the direct dependencies are what the real tools list: `llvm-otool-14 -L`
  (without the image's own id, `llvm-otool-14 -D`) and the `DLL Name:` lines
  of `x86_64-w64-mingw32-objdump -p`, also on a real DLL of wine when present;
- a library that was deleted after the link is missing (and found again
  through a search folder); the imports it should have satisfied are
  undefined, as `llvm-objdump-14 --macho --lazy-bind` and objdump's import and
  export tables give them.
"""
import json
import os
import pathlib
import re

import pytest

import linkscope
from toolchain import build, have, run as output

ROOT = pathlib.Path(__file__).resolve().parents[2]
WINE = pathlib.Path("/usr/lib/x86_64-linux-gnu/wine/x86_64-windows")
MACHO_TOOLS = ("clang-14", "ld64.lld-14", "llvm-otool-14", "llvm-objdump-14")
PE_TOOLS = ("x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-objdump")

MACHO_SOURCES = {
    "dm.cpp": 'namespace ns { int add(int a, int b) { return a + b; } }\nextern "C" int c_func(int x) { return x; }\n',
    "ghost.cpp": 'extern "C" int ghost_func(int x) { return x; }\n',
    "app.cpp": (
        'namespace ns { int add(int, int); }\nextern "C" int c_func(int);\nextern "C" int printf(const char*, ...);\n'
        'int main() { printf("x"); return ns::add(1, 2) + c_func(0); }\n'
    ),
    "missing.cpp": (
        'namespace ns { int add(int, int); }\nextern "C" int c_func(int);\nextern "C" int ghost_func(int);\n'
        "int main() { return ns::add(1, 2) + c_func(0) + ghost_func(3); }\n"
    ),
    "libSystem.tbd": (
        "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos, arm64-macos ]\n"
        "install-name: '/usr/lib/libSystem.B.dylib'\ncurrent-version: 1311\n"
        "exports:\n  - targets: [ x86_64-macos, arm64-macos ]\n    symbols: [ _printf, dyld_stub_binder ]\n...\n"
    ),
}

# libghost.dylib is moved away after the link: missing next to the program,
# found again with DYLD_LIBRARY_PATH=gone.
MACHO_SCRIPT = r"""
set -e
M="-arch x86_64 -platform_version macos 11.0 11.0"
for f in dm ghost app missing; do clang-14 -target x86_64-apple-macos11 -c $f.cpp -o $f.o; done
ld64.lld-14 -dylib $M -install_name @rpath/libdm.dylib -current_version 1.2.3 -compatibility_version 1.0 dm.o -L. -lSystem -o libdm.dylib
ld64.lld-14 -dylib $M -install_name @rpath/libghost.dylib ghost.o -o libghost.dylib
ld64.lld-14 -execute $M -rpath @loader_path app.o libdm.dylib -L. -lSystem -o app
ld64.lld-14 -execute $M -rpath @loader_path missing.o libdm.dylib libghost.dylib -L. -lSystem -o app_missing
mkdir -p gone sdk/usr/lib
mv libghost.dylib gone/
cp libSystem.tbd sdk/usr/lib/libSystem.B.tbd
"""

PE_SOURCES = {
    "dm.c": (
        '__declspec(dllexport) int add(int a, int b) __asm__("_ZN2ns3addEii");\n'
        "int add(int a, int b) { return a + b; }\n__declspec(dllexport) int c_func(int x) { return x; }\n"
    ),
    "dm_lacking.c": "__declspec(dllexport) int c_func(int x) { return x; }\n",
    "ghost.c": "__declspec(dllexport) int ghost_func(int x) { return x; }\n",
    "app.c": (
        '__declspec(dllimport) int add(int a, int b) __asm__("_ZN2ns3addEii");\n'
        "__declspec(dllimport) int c_func(int x);\nint main(void) { return add(1, 2) + c_func(0); }\n"
    ),
    "missing.c": (
        "__declspec(dllimport) int c_func(int x);\n__declspec(dllimport) int ghost_func(int x);\n"
        "int main(void) { return ghost_func(1) + c_func(0); }\n"
    ),
}

# ghost.dll is moved away after the link (found again with PATH=gone);
# lacking/ holds app.exe beside a dm.dll without ns::add.
PE_SCRIPT = r"""
set -e
G=x86_64-w64-mingw32-gcc
$G -shared dm.c -o dm.dll -Wl,--out-implib,libdm.dll.a
$G -shared ghost.c -o ghost.dll -Wl,--out-implib,libghost.dll.a
$G app.c -o app.exe -L. -ldm
$G missing.c -o missing.exe -L. -ldm -lghost
mkdir -p gone lacking
mv ghost.dll gone/
cp app.exe lacking/
$G -shared dm_lacking.c -o lacking/dm.dll
"""


@pytest.fixture(scope="module")
def macho(tmp_path_factory):
    return build(tmp_path_factory, MACHO_TOOLS, "ldd_macho", MACHO_SOURCES, MACHO_SCRIPT)


@pytest.fixture(scope="module")
def pe(tmp_path_factory):
    return build(tmp_path_factory, PE_TOOLS, "ldd_pe", PE_SOURCES, PE_SCRIPT)


def cli_json(run_cli, path, *flags):
    return json.loads(run_cli("linkscope-ldd", "--json", *flags, path).stdout)


# (file, linkscope.ldd keywords, linkscope-ldd flags); "{d}" is the fixture folder.
MACHO_CASES = [
    ("app", {}, []),
    ("app_missing", {}, []),
    ("app", {"root": "{d}/sdk"}, ["--root", "{d}/sdk"]),
    ("app_missing", {"dyld_library_path": ["{d}/gone"]}, ["--dyld-library-path", "{d}/gone"]),
    ("libdm.dylib", {"executable": "{d}/app", "root": "{d}/sdk"}, ["--executable", "{d}/app", "--root", "{d}/sdk"]),
]
PE_CASES = [
    ("app.exe", {}, []),
    ("missing.exe", {}, []),
    ("missing.exe", {"windows_path": ["{d}/gone"]}, ["--path", "{d}/gone"]),
    ("lacking/app.exe", {}, []),
    ("app.exe", {"load_mode": "python", "dll_dirs": ["{d}/lacking"]}, ["--load-mode", "python", "--dll-dir", "{d}/lacking"]),
    ("app.exe", {"windows_root": str(WINE)}, ["--windows-root", str(WINE)]),
]


def expand(d, kwargs, flags):
    def sub(v):
        if isinstance(v, list):
            return [sub(x) for x in v]
        return v.replace("{d}", str(d))
    return {k: sub(v) for k, v in kwargs.items()}, [sub(f) for f in flags]


def check_parity(run_cli, d, name, kwargs, flags):
    kwargs, flags = expand(d, kwargs, flags)
    path = str(d / name)
    r = linkscope.ldd(path, **kwargs)
    assert r.to_dict() == cli_json(run_cli, path, *flags)
    assert r.to_dict(demangle=True) == cli_json(run_cli, path, "--demangle", *flags)
    return r


@pytest.mark.parametrize("name,kwargs,flags", MACHO_CASES)
def test_macho_to_dict_equals_cli_json(macho, run_cli, name, kwargs, flags):
    r = check_parity(run_cli, macho, name, kwargs, flags)
    assert r.format == "macho" and r.to_dict()["format"] == "mach-o"


@pytest.mark.parametrize("name,kwargs,flags", PE_CASES)
def test_pe_to_dict_equals_cli_json(pe, run_cli, name, kwargs, flags):
    if "windows_root" in kwargs and not WINE.is_dir():
        pytest.skip(f"no {WINE} (wine64)")
    r = check_parity(run_cli, pe, name, kwargs, flags)
    assert r.format == "pe" and r.to_dict()["format"] == "pe"


def test_documents_validate_against_schema(macho, pe):
    jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (run with /usr/bin/python3)")
    schema = json.loads((ROOT / "schema" / "linkscope-ldd.schema.json").read_text())
    for d, cases in ((macho, MACHO_CASES), (pe, PE_CASES)):
        for name, kwargs, _ in cases:
            if "windows_root" in kwargs and not WINE.is_dir():
                continue
            kwargs, _ = expand(d, kwargs, [])
            for demangle in (False, True):
                doc = linkscope.ldd(str(d / name), **kwargs).to_dict(demangle=demangle)
                jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)


def otool_dependencies(path):
    # `llvm-otool-14 -L`: one tab-indented line per dylib command; a dylib's
    # own LC_ID_DYLIB comes first, and `-D` prints it.
    listed = [line.strip().rsplit(" (compatibility version", 1)[0]
              for line in output("llvm-otool-14", "-L", path).splitlines() if line.startswith("\t")]
    own = output("llvm-otool-14", "-D", path).splitlines()[1:]
    if own and listed and listed[0] == own[0]:
        listed = listed[1:]
    return listed


@pytest.mark.parametrize("name", ["app", "app_missing", "libdm.dylib"])
def test_macho_dependencies_equal_otool(macho, name):
    path = str(macho / name)
    expected = otool_dependencies(path)
    assert expected, "otool lists no dependency"
    r = linkscope.ldd(path, root=str(macho / "sdk"))
    assert r.needed == expected
    assert [lib["name"] for lib in r.to_dict()["libs"] if lib["loaded_by"] == path] == expected


def objdump_dll_names(path):
    return re.findall(r"^\tDLL Name: (.+)$", output("x86_64-w64-mingw32-objdump", "-p", path), re.M)


def pe_imports_of(path, dll):
    text = output("x86_64-w64-mingw32-objdump", "-p", path)
    block = text.split(f"\tDLL Name: {dll}\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[-1] for line in block.splitlines() if line.strip() and "vma:" not in line]


def pe_exports_of(path):
    text = output("x86_64-w64-mingw32-objdump", "-p", path)
    block = text.split("[Ordinal/Name Pointer] Table\n", 1)[1].split("\n\n", 1)[0]
    return [line.split("]", 1)[1].strip() for line in block.splitlines() if "]" in line]


def test_pe_dependencies_equal_objdump(pe):
    for name in ("app.exe", "missing.exe", "lacking/app.exe"):
        path = str(pe / name)
        expected = objdump_dll_names(path)
        assert expected, "objdump lists no DLL"
        assert linkscope.ldd(path).needed == expected


@pytest.mark.skipif(not (WINE / "version.dll").is_file(), reason="no wine64 DLLs")
def test_real_wine_dll_dependencies_equal_objdump(run_cli):
    if not have("x86_64-w64-mingw32-objdump"):
        pytest.skip("needs x86_64-w64-mingw32-objdump")
    path = str(WINE / "version.dll")
    r = linkscope.ldd(path, windows_root=str(WINE))
    assert r.needed == objdump_dll_names(path)
    assert r.missing == []
    assert r.to_dict() == cli_json(run_cli, path, "--windows-root", str(WINE))


def test_macho_missing_dylib(macho, run_cli):
    path = str(macho / "app_missing")
    gone = macho / "gone" / "libghost.dylib"
    ghost_id = output("llvm-otool-14", "-D", gone).splitlines()[1]
    assert ghost_id in otool_dependencies(path)
    r = linkscope.ldd(path)
    assert r.missing == [ghost_id]
    assert (ghost_id, None) in r.closure
    # dyld's "Symbol not found": every import bound to the missing dylib
    # (llvm-objdump names a dylib by its base name without the extension).
    binds = output("llvm-objdump-14", "--macho", "--bind", "--lazy-bind", path)
    into_ghost = [line.split()[-1] for line in binds.splitlines() if " libghost " in line]
    assert into_ghost
    assert sorted(u.symbol for u in r.undefined) == sorted(into_ghost)
    assert run_cli("linkscope-ldd", path).returncode == 1
    # Found again through DYLD_LIBRARY_PATH.
    r = linkscope.ldd(path, dyld_library_path=[str(gone.parent)])
    assert r.missing == [] and r.undefined == []
    assert os.path.samefile(dict(r.closure)[ghost_id], gone)


def test_pe_missing_dll(pe, run_cli):
    path = str(pe / "missing.exe")
    assert "ghost.dll" in objdump_dll_names(path)
    assert not (pe / "ghost.dll").exists()
    r = linkscope.ldd(path)
    assert r.missing == ["ghost.dll"]
    assert ("ghost.dll", None) in r.closure
    assert run_cli("linkscope-ldd", path).returncode == 1
    r = linkscope.ldd(path, windows_path=[str(pe / "gone")])
    assert r.missing == []
    assert os.path.samefile(dict(r.closure)["ghost.dll"], pe / "gone" / "ghost.dll")


def test_pe_missing_export(pe):
    # What app.exe imports from dm.dll that lacking/dm.dll does not export.
    path = str(pe / "lacking" / "app.exe")
    exported = pe_exports_of(str(pe / "lacking" / "dm.dll"))
    expected = [s for s in pe_imports_of(path, "dm.dll") if s not in exported]
    assert expected
    r = linkscope.ldd(path)
    assert r.missing == []
    assert sorted(u.symbol for u in r.undefined) == sorted(expected)
    assert linkscope.ldd(str(pe / "app.exe")).undefined == []


def test_bad_load_mode(pe):
    with pytest.raises(linkscope.Error) as e:
        linkscope.ldd(str(pe / "app.exe"), load_mode="sideways")
    assert e.value.code == "usage"


def check_doc(doc):
    doc = dict(doc)
    doc["stats"] = {k: v for k, v in doc["stats"].items() if k != "milliseconds"}
    return doc


def test_check_macos_target_equals_cli(macho, run_cli):
    # Every image was linked with -platform_version macos 11.0: above 10.15,
    # not above 11.0 (llvm-otool-14 -l's minos is the oracle).
    minos = re.findall(r"^\s*minos (\S+)$", output("llvm-otool-14", "-l", macho / "app"), re.M)
    assert minos == ["11.0"]
    r = linkscope.check(str(macho), macos_target="10.15", dpkg=False)
    cli = json.loads(run_cli("linkscope-check", "--json", "--no-dpkg", "--macos-target", "10.15", str(macho)).stdout)
    assert check_doc(r.to_dict()) == check_doc(cli)
    images = {f["relative"]: f for f in r.files}
    for name in ("app", "libdm.dylib"):
        floors = images[name]["floors"]
        assert [(v["family"], v["max"], v["highest"]) for v in floors] == [("macOS", "10.15", "11.0")]
    assert all(f["floors"] == [] for f in linkscope.check(str(macho), macos_target="11.0", dpkg=False).files)
    with pytest.raises(linkscope.Error) as e:
        linkscope.check(str(macho), macos_target="eleven")
    assert e.value.code == "usage"


def pe_floor(path):
    # The higher of the OS and subsystem versions objdump -p prints.
    dump = output("x86_64-w64-mingw32-objdump", "-p", path)
    field = {k: int(v) for k, v in re.findall(r"^(M\w+(?:OSystem|Subsystem)Version)\s+(\d+)$", dump, re.M)}
    return max((field["MajorOSystemVersion"], field["MinorOSystemVersion"]),
               (field["MajorSubsystemVersion"], field["MinorSubsystemVersion"]))


def test_check_windows_target_equals_cli(pe, run_cli):
    floor = pe_floor(pe / "app.exe")
    below = f"{floor[0]}.{floor[1] - 1}" if floor[1] > 0 else f"{floor[0] - 1}.9"
    r = linkscope.check(str(pe), windows_target=below, dpkg=False)
    cli = json.loads(run_cli("linkscope-check", "--json", "--no-dpkg", "--windows-target", below, str(pe)).stdout)
    assert check_doc(r.to_dict()) == check_doc(cli)
    app = next(f for f in r.files if f["relative"] == "app.exe")
    assert [v["max"] for v in app["floors"]] == [below]
    at = f"{floor[0]}.{floor[1]}"
    app_at = next(f for f in linkscope.check(str(pe), windows_target=at, dpkg=False).files if f["relative"] == "app.exe")
    assert app_at["floors"] == []
    with pytest.raises(linkscope.Error) as e:
        linkscope.check(str(pe), windows_target="x")
    assert e.value.code == "usage"
