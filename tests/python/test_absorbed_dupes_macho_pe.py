"""linkscope.absorbed and linkscope.dupes on Mach-O and PE files.

Fixtures are made here at test time with clang-14 and ld64.lld-14 (a
libSystem .tbd stub stands in for the SDK) and with x86_64-w64-mingw32-gcc.
Checked:
- to_dict() equals `linkscope-absorbed --json` / `linkscope-dupes --json`
  with the same options (one writer, report/);
- the verdicts are the trial links' (the C++ tests in tests/resolve check
  them in depth): a hidden copy is not needed, a consumer that calls into the
  archive needs it, as the consumer link without the archive fails;
- dupes names the copy each importer binds to, as llvm-objdump's bind table
  and objdump -p's import table say.
"""
import json
import subprocess

import pytest

import linkscope
from toolchain import build, run as output

MACHO_TOOLS = ("clang-14", "ld64.lld-14", "llvm-ar-14", "llvm-lipo-14", "llvm-objdump-14")
PE_TOOLS = ("x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-ar", "x86_64-w64-mingw32-objdump")

SOURCES = {
    "a.c": "int helper_add(int x) { return x + 41; }\nint helper_unused(void) { return 7; }\n",
    "s.c": "int helper_add(int);\nint s_api(int x) { return helper_add(x) * 2; }\n",
    "main2.c": "int s_api(int);\nint helper_add(int);\nint main(void) { return s_api(1) + helper_add(1) == 126 ? 0 : 1; }\n",
    "fmt.c": "int fmt_format(int x) { return x + 1; }\n",
    "vendor.c": "int fmt_format(int x) { return x + 2; }\n",
    "app.c": "int fmt_format(int);\nint main(void) { return fmt_format(1); }\n",
    "libSystem.tbd": (
        "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos, arm64-macos ]\n"
        "install-name: '/usr/lib/libSystem.B.dylib'\nexports:\n"
        "  - targets: [ x86_64-macos, arm64-macos ]\n    symbols: [ dyld_stub_binder ]\n...\n"
    ),
}

MACHO_SCRIPT = """
for arch in x86_64 arm64; do
  C="clang-14 -target $arch-apple-macos11 -c"
  L="ld64.lld-14 -arch $arch -platform_version macos 11.0 11.0 -L. -lSystem"
  mkdir -p $arch
  $C -fvisibility=hidden a.c -o $arch/a.o
  $C s.c -o $arch/s.o; $C main2.c -o $arch/main2.o; $C fmt.c -o $arch/fmt.o; $C vendor.c -o $arch/vendor.o; $C app.c -o $arch/app.o
  llvm-ar-14 rcs --format=darwin $arch/libA.a $arch/a.o
  $L -dylib $arch/s.o -force_load $arch/libA.a -install_name @rpath/libS.dylib -o $arch/libS.dylib
  $L -dylib $arch/fmt.o -install_name @rpath/libfmt.dylib -o $arch/libfmt.dylib
  $L -dylib $arch/vendor.o -install_name @rpath/libvendor.dylib -o $arch/libvendor.dylib
  $L -execute $arch/app.o $arch/libfmt.dylib $arch/libvendor.dylib -rpath @loader_path -o $arch/app1
  $L -execute $arch/app.o $arch/libvendor.dylib $arch/libfmt.dylib -rpath @loader_path -o $arch/app2
  if $L -execute $arch/main2.o $arch/libS.dylib -o $arch/without 2>/dev/null; then echo linked >$arch/without.status; fi
  $L -execute $arch/main2.o $arch/libS.dylib $arch/libA.a -o $arch/with
done
llvm-lipo-14 -create x86_64/libS.dylib arm64/libS.dylib -output libS.dylib
llvm-lipo-14 -create x86_64/libA.a arm64/libA.a -output libA.a
"""

PE_SCRIPT = """
G=x86_64-w64-mingw32-gcc
$G -c a.c -o a.o && x86_64-w64-mingw32-ar rcs libA.a a.o
$G -c s.c -o s.o && $G -c main2.c -o main2.o
printf 'EXPORTS\\ns_api\\n' > s.def
$G -shared -o S.dll s.o libA.a s.def -Wl,--out-implib,libS.dll.a
$G -shared fmt.c -o fmt.dll -Wl,--out-implib,libfmt.dll.a
$G -shared vendor.c -o vendor.dll -Wl,--out-implib,libvendor.dll.a
$G app.c -L. -lfmt -lvendor -o app1.exe
$G app.c -L. -lvendor -lfmt -o app2.exe
if $G main2.o -L. -lS -o without.exe 2>/dev/null; then echo linked >without.status; fi
$G main2.o -L. -lS libA.a -o with.exe
"""


@pytest.fixture(scope="module")
def macho(tmp_path_factory):
    return build(tmp_path_factory, MACHO_TOOLS, "absorbed_macho", SOURCES, MACHO_SCRIPT)


@pytest.fixture(scope="module")
def pe(tmp_path_factory):
    return build(tmp_path_factory, PE_TOOLS, "absorbed_pe", SOURCES, PE_SCRIPT)


def cli_json(run_cli, tool, *args):
    return json.loads(run_cli(tool, "--json", *args).stdout)


@pytest.mark.parametrize("arch", ["x86_64", "arm64"])
def test_macho_absorbed_equals_cli_and_trial_links(macho, run_cli, arch):
    # the consumer link fails without the archive: it calls helper_add itself
    assert not (macho / arch / "without.status").exists()
    assert (macho / arch / "with").exists()
    # the universal pair, judged for one slice
    r = linkscope.absorbed(macho / "libS.dylib", [macho / "libA.a"], [macho / arch / "main2.o"], arch=arch)
    assert r.to_dict() == cli_json(run_cli, "linkscope-absorbed", "--arch", arch, "--consumer",
                                   macho / arch / "main2.o", macho / "libS.dylib", macho / "libA.a")
    doc = r.to_dict()
    assert doc["format"] == "macho" and doc["arch"] == arch
    assert r.needed and doc["archives"][0]["evidence"] == ["_helper_add"]
    # without that consumer the hidden copy is not needed
    alone = linkscope.absorbed(macho / arch / "libS.dylib", [macho / arch / "libA.a"])
    assert not alone.needed and alone.to_dict()["archives"][0]["verdict"] == "not-needed"
    assert alone.to_dict() == cli_json(run_cli, "linkscope-absorbed", macho / arch / "libS.dylib", macho / arch / "libA.a")


@pytest.mark.parametrize("arch", ["x86_64", "arm64"])
def test_macho_dupes_importers_equal_bind_tables(macho, run_cli, arch):
    d = macho / arch
    files = [d / "app1", d / "app2", d / "libfmt.dylib", d / "libvendor.dylib"]
    r = linkscope.dupes(files)
    assert r.to_dict() == cli_json(run_cli, "linkscope-dupes", *files)
    (dup,) = [x for x in r.to_dict()["duplicates"] if x["symbol"] == "_fmt_format"]
    expected = []
    for app in ("app1", "app2"):
        binds = output("llvm-objdump-14", "--macho", "--lazy-bind", d / app)
        (row,) = [line.split() for line in binds.splitlines() if line.endswith(" _fmt_format")]
        expected.append({"importer": str(d / app), "binds_to": str(d / (row[-2] + ".dylib"))})
    assert dup["importers"] == expected


def test_pe_absorbed_equals_cli_and_trial_links(pe, run_cli):
    assert not (pe / "without.status").exists() and (pe / "with.exe").exists()
    exports = output("x86_64-w64-mingw32-objdump", "-p", pe / "S.dll")
    assert "] helper_add" not in exports
    r = linkscope.absorbed(pe / "S.dll", [pe / "libA.a"], [pe / "main2.o"])
    assert r.to_dict() == cli_json(run_cli, "linkscope-absorbed", "--consumer", pe / "main2.o", pe / "S.dll", pe / "libA.a")
    assert r.to_dict()["format"] == "pe" and r.needed
    alone = linkscope.absorbed(pe / "S.dll", [pe / "libA.a"]).to_dict()
    assert alone["archives"][0]["verdict"] == "not-needed"
    assert alone["archives"][0]["members"][0]["status"] == "hidden"


def test_pe_dupes_importers_equal_objdump(pe, run_cli):
    files = [pe / "app1.exe", pe / "app2.exe", pe / "fmt.dll", pe / "vendor.dll"]
    r = linkscope.dupes(files)
    assert r.to_dict() == cli_json(run_cli, "linkscope-dupes", *files)
    (dup,) = r.to_dict()["duplicates"]
    expected = []
    for exe in ("app1.exe", "app2.exe"):
        dll = None
        for line in output("x86_64-w64-mingw32-objdump", "-p", pe / exe).splitlines():
            if "DLL Name: " in line:
                dll = line.split("DLL Name: ")[1].strip()
            if line.endswith(" fmt_format"):
                break
        expected.append({"importer": str(pe / exe), "binds_to": str(pe / dll)})
    assert dup["importers"] == expected
