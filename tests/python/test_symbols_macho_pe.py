"""File.symbols() and File's loader facts on Mach-O, PE and COFF (issue 21).

Fixtures are made here at test time: Mach-O objects and dylibs with clang-14
and ld64.lld-14 (x86_64 and arm64, a universal dylib with llvm-lipo-14; a
libSystem .tbd stub stands in for the SDK), a DLL and an object with
x86_64-w64-mingw32-gcc. Every expected value comes from the real tools, never
from linkscope:
- Mach-O: `llvm-nm-14` (nm on macOS): 'static' is its whole list, 'dynamic'
  its -g list; defined/undefined from --defined-only and -u; an upper-case
  letter (external) is a binding other than 'local'. needed, soname and
  rpaths from `llvm-otool-14 -L`, `-D` and `-l`.
- PE DLL: 'dynamic' is the export table of `x86_64-w64-mingw32-objdump -p`
  (defined) and its import tables' names (undefined); 'static' is GNU nm's
  list (binutils-multiarch), lower case for locals, w/v for weak.
- COFF object: GNU nm as above.
- LINKSCOPE_REAL_DIR (scripts/fetch-real DIR): a real sharp .node against
  llvm-nm-14 and a real DLL against objdump -p; skipped when it is not set.
"""
import collections
import os
import pathlib
import re
import subprocess

import pytest

import linkscope
from toolchain import build, have, run

MACHO_TOOLS = ("clang-14", "ld64.lld-14", "llvm-lipo-14", "llvm-ar-14", "llvm-nm-14", "llvm-otool-14")
PE_TOOLS = ("x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-objdump", "x86_64-w64-mingw32-strip", "nm")

# Locals, a weak definition, a private extern, a common, data, an import.
MACHO_SOURCE = r"""
int a_value = 7;
int a_common;
static int hidden_counter;
__attribute__((weak)) int weak_fn(void) { return 1; }
__attribute__((visibility("hidden"))) int pext_fn(void) { return 2; }
extern int printf(const char*, ...);
static int local_fn(int x) { return x + hidden_counter; }
int a_func(int x) { printf("x"); return local_fn(x) + a_value + pext_fn() + a_common; }
"""
LIBSYSTEM_TBD = (
    "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos, arm64-macos ]\n"
    "install-name: '/usr/lib/libSystem.B.dylib'\ncurrent-version: 1311\n"
    "exports:\n  - targets: [ x86_64-macos, arm64-macos ]\n    symbols: [ _printf, dyld_stub_binder ]\n...\n"
)
MACHO_SCRIPT = r"""
set -e
for a in x86_64 arm64; do
  clang-14 -target $a-apple-macos11 -fcommon -c a.c -o a_$a.o
  ld64.lld-14 -dylib -arch $a -platform_version macos 11.0 11.0 -install_name @rpath/liba.dylib \
    -rpath @loader_path/../lib -rpath /opt/build/lib a_$a.o -L. -lSystem -o liba_$a.dylib
done
ld64.lld-14 -execute -arch x86_64 -platform_version macos 11.0 11.0 -e _a_func a_x86_64.o liba_x86_64.dylib \
  -L. -lSystem -o prog_x86_64
llvm-lipo-14 -create liba_x86_64.dylib liba_arm64.dylib -output liba_fat.dylib
for a in x86_64 arm64; do llvm-ar-14 rcs --format=darwin liba_$a.a a_$a.o; done
llvm-lipo-14 -create liba_x86_64.a liba_arm64.a -output liba_fat.a
"""

PE_SOURCES = {
    "d.c": (
        "__declspec(dllexport) int d_value = 3;\n"
        "__declspec(dllexport) int d_func(int x) { return x + d_value; }\n"
        "static int d_local(int x) { return x * 2; }\n"
        "__declspec(dllexport) int d_twice(int x) { return d_local(x); }\n"
        "extern int __attribute__((weak)) maybe_there(int);\n"
        "int internal_fn(int x) { return maybe_there ? maybe_there(x) : x; }\n"
    ),
    "imp.c": "#include <stdlib.h>\n__declspec(dllexport) void *use_malloc(size_t n) { return malloc(n); }\n",
}
PE_SCRIPT = r"""
set -e
x86_64-w64-mingw32-gcc -shared d.c imp.c -o d.dll
x86_64-w64-mingw32-gcc -c d.c -o d.obj
x86_64-w64-mingw32-strip -o d_stripped.dll d.dll
"""


@pytest.fixture(scope="module")
def macho(tmp_path_factory):
    return build(tmp_path_factory, MACHO_TOOLS, "sym_macho", {"a.c": MACHO_SOURCE, "libSystem.tbd": LIBSYSTEM_TBD},
                 MACHO_SCRIPT)


@pytest.fixture(scope="module")
def pe(tmp_path_factory):
    return build(tmp_path_factory, PE_TOOLS, "sym_pe", PE_SOURCES, PE_SCRIPT)


def assert_error(code, call, *args, **kwargs):
    with pytest.raises(linkscope.Error) as e:
        call(*args, **kwargs)
    assert e.value.code == code


# ---- the oracles -------------------------------------------------------------

NM_ROW = re.compile(r"^(?:[0-9a-f]+| +) (\S) (.+)$")


def nm_rows(*args):
    """(letter, name) per row of a BSD-format nm listing."""
    rows = []
    for line in run(*args).splitlines():
        m = NM_ROW.match(line)
        if m:
            rows.append((m.group(1), m.group(2)))
    return rows


def llvm_nm(path, *flags, arch=None):
    return nm_rows("llvm-nm-14", *flags, *(["--arch", arch] if arch else []), path)


def llvm_nm_expected(path, *flags, arch=None):
    """{(name, defined)} and {name: external} from llvm-nm-14; defined and
    undefined are the --defined-only and -u lists."""
    every = llvm_nm(path, *flags, arch=arch)
    # -u prints the names alone (llvm-nm's just-symbols format).
    undefined = set(run("llvm-nm-14", "-u", *flags, *(["--arch", arch] if arch else []), path).split())
    defined = {n for _, n in llvm_nm(path, "--defined-only", *flags, arch=arch)}
    assert undefined.isdisjoint(defined) and undefined | defined == {n for _, n in every}
    pairs = collections.Counter((n, n in defined) for _, n in every)
    external = {n: letter.isupper() for letter, n in every}
    return pairs, external


def module_pairs(symbols, skip_kinds=()):
    return collections.Counter((s.name, s.defined) for s in symbols if s.type not in skip_kinds)


def assert_macho_like_llvm_nm(path, arch=None):
    f = linkscope.open(str(path), arch=arch) if arch else linkscope.open(str(path))
    static = f.symbols("static")
    pairs, external = llvm_nm_expected(path, arch=arch)
    assert module_pairs(static) == pairs
    assert {s.name: s.binding != "local" for s in static} == external
    dynamic = f.symbols("dynamic")
    if f.kind == "relocatable":
        assert len(dynamic) == 0
    else:
        g_pairs, g_external = llvm_nm_expected(path, "-g", arch=arch)
        assert module_pairs(dynamic) == g_pairs
        assert all(g_external.values()) and all(s.binding in ("global", "weak") for s in dynamic)
    return f


def objdump_tables(path):
    """(export names, {dll: [imported names]}) from objdump -p."""
    text = run("x86_64-w64-mingw32-objdump", "-p", path)
    exports = []
    m = re.search(r"\[Ordinal/Name Pointer\] Table\n((?:\t\[ *\d+\] .*\n)*)", text)
    if m:
        exports = re.findall(r"\] (\S+)", m.group(1))
    imports = collections.defaultdict(list)
    dll = None
    for line in text.splitlines():
        dm = re.match(r"\tDLL Name: (\S+)", line)
        if dm:
            dll = dm.group(1)
            continue
        im = re.match(r"\t[0-9a-f]+\s+[0-9]+\s+(\S+)$", line)
        if dll and im:
            imports[dll].append(im.group(1))
    return exports, dict(imports)


def gnu_nm_expected(path):
    """Counters of (name, defined) and of (name, binding) from GNU nm (every
    target); 'N' (a debugging symbol) says nothing of the binding."""
    rows = nm_rows("nm", path)
    pairs = collections.Counter((n, letter not in "Uwv") for letter, n in rows)
    bindings = collections.Counter(
        (n, "weak" if letter in "wWvV" else "global" if letter.isupper() else "local")
        for letter, n in rows if letter != "N")
    return pairs, bindings, {n for letter, n in rows if letter == "N"}


def assert_coff_like_gnu_nm(f):
    # GNU nm leaves out FILE symbols (-a shows them, under their aux name).
    static = [s for s in f.symbols("static") if s.type != "file"]
    pairs, bindings, debug = gnu_nm_expected(f.path)
    assert module_pairs(static) == pairs
    assert collections.Counter((s.name, s.binding) for s in static if s.name not in debug) == bindings


# ---- Mach-O --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["a_x86_64.o", "a_arm64.o", "liba_x86_64.dylib", "liba_arm64.dylib", "prog_x86_64"])
def test_macho_thin_symbols_equal_llvm_nm(macho, name):
    f = assert_macho_like_llvm_nm(macho / name)
    assert f.format == "macho" and f.archs == []


@pytest.mark.parametrize("arch", ["x86_64", "arm64"])
def test_macho_universal_slice_equals_llvm_nm(macho, arch):
    f = assert_macho_like_llvm_nm(macho / "liba_fat.dylib", arch=arch)
    assert f.arch == arch and f.archs == ["x86_64", "arm64"]
    # symbols(arch=) reads another slice of the same File.
    other = "arm64" if arch == "x86_64" else "x86_64"
    pairs, _ = llvm_nm_expected(macho / "liba_fat.dylib", arch=other)
    assert module_pairs(f.symbols("static", arch=other)) == pairs


def test_macho_universal_default_is_first_slice(macho):
    f = linkscope.open(str(macho / "liba_fat.dylib"))
    first = run("llvm-lipo-14", "-archs", macho / "liba_fat.dylib").split()[0]
    assert f.arch == first
    pairs, _ = llvm_nm_expected(macho / "liba_fat.dylib", arch=first)
    assert module_pairs(f.symbols("static")) == pairs


def test_macho_universal_archive(macho):
    # A universal static library: its slices are archives, not images.
    f = linkscope.open(str(macho / "liba_fat.a"), arch="arm64")
    assert f.archs == run("llvm-lipo-14", "-archs", macho / "liba_fat.a").split()
    assert (f.format, f.arch, f.kind) == ("macho", "arm64", "archive")
    assert_error("unsupported", f.symbols)


def test_macho_binding_and_type(macho):
    syms = {s.name: s for s in linkscope.open(str(macho / "a_x86_64.o")).symbols("static")}
    # The source says: weak_fn weak, pext_fn a private extern, local_fn static,
    # a_common a common, printf an import.
    assert syms["_weak_fn"].binding == "weak" and syms["_weak_fn"].type == "func"
    assert syms["_pext_fn"].visibility == "hidden" and syms["_pext_fn"].binding == "global"
    assert syms["_local_fn"].binding == "local" and syms["_local_fn"].type == "func"
    assert syms["_a_value"].type == "object" and syms["_a_value"].defined
    assert syms["_a_common"].type == "common" and syms["_a_common"].size == 4
    assert not syms["_printf"].defined and syms["_printf"].type == "notype"
    dylib = {s.name: s for s in linkscope.open(str(macho / "liba_x86_64.dylib")).symbols("static")}
    # ld turns a private extern into a local ("was a private external").
    assert dylib["_pext_fn"].binding == "local"


def otool_lines(*args):
    return [l.strip() for l in run("llvm-otool-14", *args).splitlines()[1:] if l.strip()]


def test_macho_file_facts_equal_otool(macho):
    lib = macho / "liba_x86_64.dylib"
    f = linkscope.open(str(lib))
    assert (f.kind, f.bits, f.endian) == ("shared", 64, "little")
    assert f.soname == otool_lines("-D", lib)[0] == "@rpath/liba.dylib"
    # otool -L lists the id first for a dylib.
    assert f.needed == [l.split(" (")[0] for l in otool_lines("-L", lib)][1:]
    rpaths = re.findall(r"cmd LC_RPATH\n\s+cmdsize \d+\n\s+path (\S+)", run("llvm-otool-14", "-l", lib))
    assert f.rpaths == rpaths == ["@loader_path/../lib", "/opt/build/lib"]
    assert f.rpath == ":".join(rpaths) and f.runpath is None
    prog = linkscope.open(str(macho / "prog_x86_64"))
    assert prog.kind == "executable" and prog.soname is None
    assert prog.needed == [l.split(" (")[0] for l in otool_lines("-L", macho / "prog_x86_64")]
    dylinker = re.search(r"cmd LC_LOAD_DYLINKER\n\s+cmdsize \d+\n\s+name (\S+)", run("llvm-otool-14", "-l", macho / "prog_x86_64"))
    assert prog.interp == dylinker.group(1)
    assert linkscope.open(str(macho / "a_x86_64.o")).kind == "relocatable"


def test_macho_arch_errors(macho):
    assert_error("not_found", linkscope.open, str(macho / "liba_fat.dylib"), arch="ppc")
    assert_error("not_found", linkscope.open, str(macho / "liba_x86_64.dylib"), arch="arm64")
    assert_error("not_found", linkscope.open(str(macho / "liba_x86_64.dylib")).symbols, arch="arm64")
    # Cut inside the load commands: an error, never a partial answer.
    cut = macho / "liba_cut.dylib"
    cut.write_bytes((macho / "liba_x86_64.dylib").read_bytes()[:100])
    with pytest.raises(linkscope.Error):
        linkscope.open(str(cut))


# ---- PE and COFF ---------------------------------------------------------------

def test_pe_dynamic_is_export_and_import_tables(pe):
    f = linkscope.open(str(pe / "d.dll"))
    exports, imports = objdump_tables(pe / "d.dll")
    assert sorted(exports) == ["d_func", "d_twice", "d_value", "use_malloc"]
    dynamic = f.symbols()
    assert sorted(s.name for s in dynamic if s.defined) == sorted(exports)
    assert collections.Counter(s.name for s in dynamic if not s.defined) == \
        collections.Counter(n for names in imports.values() for n in names)
    assert all(s.binding == "global" for s in dynamic)
    kinds = {s.name: s.type for s in dynamic if s.defined}
    assert kinds["d_value"] == "object" and kinds["d_func"] == "func"


def test_pe_file_facts_equal_objdump(pe):
    f = linkscope.open(str(pe / "d.dll"))
    text = run("x86_64-w64-mingw32-objdump", "-p", pe / "d.dll")
    assert (f.format, f.arch, f.kind, f.bits) == ("pe", "x86_64", "shared", 64)
    assert f.needed == re.findall(r"\tDLL Name: (\S+)", text)
    assert f.soname == re.search(r"\nName\s+[0-9a-f]+\s+(\S+)", text).group(1) == "d.dll"
    assert f.rpaths == [] and f.rpath is None and f.interp is None


def test_pe_static_is_coff_symbol_table(pe):
    f = linkscope.open(str(pe / "d.dll"))
    assert_coff_like_gnu_nm(f)
    # Stripped: no COFF symbol table (GNU nm: "no symbols"); the exports stay.
    stripped = linkscope.open(str(pe / "d_stripped.dll"))
    assert len(stripped.symbols("static")) == 0
    assert "no symbols" in subprocess.run(["nm", pe / "d_stripped.dll"], capture_output=True, text=True).stderr
    assert sorted(s.name for s in stripped.symbols() if s.defined) == sorted(objdump_tables(pe / "d.dll")[0])


def test_coff_object_symbols_equal_gnu_nm(pe):
    f = linkscope.open(str(pe / "d.obj"))
    assert (f.format, f.arch, f.kind) == ("coff", "x86_64", "relocatable")
    assert_coff_like_gnu_nm(f)
    assert len(f.symbols("dynamic")) == 0
    syms = {s.name: s for s in f.symbols("static")}
    assert syms["maybe_there"].binding == "weak" and not syms["maybe_there"].defined
    assert syms["d_local"].binding == "local" and syms["d_local"].type == "func"


def test_arch_is_for_macho_only(pe):
    assert_error("usage", linkscope.open, str(pe / "d.dll"), arch="x86_64")
    assert_error("usage", linkscope.open(str(pe / "d.dll")).symbols, arch="x86_64")
    assert_error("usage", linkscope.open(str(pe / "d.dll")).symbols, "both")


# ---- real files (scripts/fetch-real) ----------------------------------------------

def real_file(relative):
    base = os.environ.get("LINKSCOPE_REAL_DIR")
    if not base:
        pytest.skip("LINKSCOPE_REAL_DIR is not set (scripts/fetch-real DIR)")
    path = pathlib.Path(base) / relative
    if not path.exists():
        pytest.skip(f"{path} is not there")
    return path


@pytest.mark.parametrize("relative", [
    "img-sharp-darwin-x64-0.35.6/package/lib/sharp-darwin-x64-0.35.6.node",
    "img-sharp-darwin-arm64-0.35.6/package/lib/sharp-darwin-arm64-0.35.6.node",
])
def test_real_node_equals_llvm_nm(relative):
    if not have("llvm-nm-14"):
        pytest.skip("needs llvm-nm-14")
    f = assert_macho_like_llvm_nm(real_file(relative))
    assert f.kind == "bundle" and len(f.symbols()) > 100


def test_real_dll_exports_equal_objdump():
    if not have("x86_64-w64-mingw32-objdump"):
        pytest.skip("needs x86_64-w64-mingw32-objdump")
    path = real_file("img-sharp-win32-x64-0.35.6/package/lib/libvips-42.dll")
    exports, imports = objdump_tables(path)
    dynamic = linkscope.open(str(path)).symbols()
    assert len(exports) > 100
    assert collections.Counter(s.name for s in dynamic if s.defined) == collections.Counter(exports)
    assert collections.Counter(s.name for s in dynamic if not s.defined) == \
        collections.Counter(n for names in imports.values() for n in names)


# ---- check(jobs=) over Mach-O and PE files ------------------------------------------

@pytest.mark.parametrize("fixture", ["macho", "pe"])
def test_check_jobs_same_document(fixture, request):
    prefix = request.getfixturevalue(fixture)

    def doc(jobs):
        d = linkscope.check(str(prefix), conda=False, dpkg=False, jobs=jobs).to_dict()
        d["stats"].pop("milliseconds", None)
        return d

    one = doc(1)
    assert any(f["format"] == fixture for f in one["files"])
    assert doc(2) == one and doc(0) == one
