"""Every linkscope-* CLI's --json against its schema (issue 15, docs/JSON.md).

Each CLI is run with --json over fixtures made here with gcc and ar (ELF
objects, archives, a versioned DSO and its consumer, a program whose library
is missing, an unreadable file, an archive member) and, for linkscope-implib,
mingw's import library libkernel32.a. Each run must print exactly one JSON
document that validates against schema/linkscope-X.schema.json (Draft
2020-12, python3-jsonschema from Debian: run with /usr/bin/python3). The test
also checks what a schema cannot: every "member" is `lib.a(member.o)`, and
every "symbol" beside a non-null "version" is `name@VER` or `name@@VER`.

Schemas are taken from schema/ as they exist: a CLI without a schema file is
skipped, so schema/linkscope-nm and -check are validated once they land.

Environment: LINKSCOPE_CLI_DIR, the folder holding the CLIs (scripts/test-all
sets it; default: build/examples of this checkout).
"""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (run with /usr/bin/python3)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schema"
KERNEL32 = pathlib.Path("/usr/x86_64-w64-mingw32/lib/libkernel32.a")
# A real PE image (wine64's, which test-all installs): its imports and exports.
WINE_DLL = pathlib.Path("/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/version.dll")
MEMBER = re.compile(r"^.+\(.+\)$")

SOURCES = {
    "a.c": "int dup_data[4] = {1};\nint a_func(int x) { return x + dup_data[0]; }\n",
    "b.c": "int dup_data[8];\nint a_func(int x) { return x; }\nint b_func(void) { return 2; }\n",
    "u.c": "int unused_func(void) { return 0; }\n",
    "main.c": "extern int a_func(int);\nextern int b_func(void);\nint main(void) { return a_func(1) + b_func(); }\n",
    "ver.c": (
        '__asm__(".symver foo_v1,foo@VERS_1");\n'
        '__asm__(".symver foo_v2,foo@@VERS_2");\n'
        "int foo_v1(void) { return 1; }\nint foo_v2(void) { return 2; }\nint bar(void) { return 3; }\n"
    ),
    "ver.map": "VERS_1 { global: foo; bar; local: *; };\nVERS_2 { global: foo; } VERS_1;\n",
    "use.c": "extern int foo(void);\nextern int bar(void);\nint main(void) { return foo() + bar(); }\n",
    "ghost.c": "int ghost_func(void) { return 0; }\n",
    "noexist.c": "extern int ghost_func(void);\nint main(void) { return ghost_func(); }\n",
    "helper.c": "int helper_add(int x) { return x + 1; }\n",
    "s.c": "extern int helper_add(int);\nint s_func(int x) { return helper_add(x); }\n",
    # C++ for --demangle: a namespace, a class, templates, an extern "C" function;
    # libdm.so has every symbol @@VERS_2, libdm2.so none.
    "dm_a.cpp": (
        "namespace ns {\nint add(int a, int b) { return a + b; }\n"
        "template <typename T> T twice(T v) { return v + v; }\n"
        "template int twice<int>(int);\ntemplate double twice<double>(double);\n}\n"
        'extern "C" int c_func(int x) { return x; }\n'
    ),
    "dm_b.cpp": (
        "namespace ns {\nstruct widget { int get() const; static long count(const char* s); };\n"
        "int widget::get() const { return 7; }\nlong widget::count(const char* s) { return s != nullptr; }\n}\n"
    ),
    "dm.map": "VERS_2 { global: *; };\n",
    "usedm.cpp": (
        "namespace ns {\nint add(int, int);\ntemplate <typename T> T twice(T);\n"
        "struct widget { int get() const; static long count(const char* s); };\n}\n"
        'extern "C" int c_func(int);\n'
        'int main() { ns::widget w; return ns::add(1, 2) + ns::twice(3) + w.get() + (int)ns::widget::count("x") + c_func(0); }\n'
    ),
    "undef.cpp": "namespace ns { int missing(double); }\nint call_missing() { return ns::missing(1.0); }\n",
    "useu.cpp": "int call_missing();\nint main() { return call_missing(); }\n",
}

SCRIPT = r"""
set -e
for f in a b u main use helper s; do gcc -fPIC -c $f.c -o $f.o; done
ar rcs liba.a a.o
ar rcs libb.a b.o u.o
ar rcs libhelper.a helper.o
gcc -shared -fPIC a.c -o liba.so -Wl,-soname,liba.so
gcc -shared -fPIC ver.c -o libver.so.1 -Wl,--version-script=ver.map -Wl,-soname,libver.so.1
gcc -shared -fPIC ver.c -o libver2.so -Wl,--version-script=ver.map -Wl,-soname,libver2.so
gcc use.c -o use ./libver.so.1 -Wl,-rpath,'$ORIGIN'
gcc -shared -fPIC ghost.c -o libghost.so -Wl,-soname,libghost.so
gcc noexist.c -o noexist -L. -lghost
rm libghost.so
gcc -shared s.o libhelper.a -o libS.so -Wl,-soname,libS.so
gcc -shared s.o -o libS_undef.so -Wl,-soname,libS_undef.so
head -c 100 liba.so > truncated.so
head -c 200 libb.a > truncated.a
printf 'just some text\n' > notes.txt
cp liba.so unreadable.so && chmod 000 unreadable.so
mkdir -p prefix/lib && cp libhelper.a prefix/lib/
for f in dm_a dm_b usedm undef; do g++ -fPIC -O1 -c $f.cpp -o $f.o; done
ar rcs libdm.a dm_a.o dm_b.o
cp dm_a.o dm_a2.o
g++ -shared dm_a.o dm_b.o -o libdm.so -Wl,--version-script=dm.map -Wl,-soname,libdm.so
g++ -shared dm_a.o dm_b.o -o libdm2.so -Wl,-soname,libdm2.so
g++ -shared undef.o -o libundef.so -Wl,-soname,libundef.so
g++ usedm.o -o usedm ./libdm.so -Wl,-rpath,'$ORIGIN'
g++ useu.cpp -o useu ./libundef.so -Wl,--allow-shlib-undefined -Wl,-rpath,'$ORIGIN'
"""


@pytest.fixture(scope="module")
def cli_dir():
    d = pathlib.Path(os.environ.get("LINKSCOPE_CLI_DIR", ROOT / "build" / "examples"))
    if not (d / "linkscope-ldd").exists():
        pytest.fail(f"no linkscope-ldd in {d} (set LINKSCOPE_CLI_DIR)")
    return d


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    if shutil.which("gcc") is None or shutil.which("g++") is None or shutil.which("ar") is None:
        pytest.skip("gcc, g++ and ar are needed")
    d = tmp_path_factory.mktemp("json_schemas")
    for name, text in SOURCES.items():
        (d / name).write_text(text)
    subprocess.run(["sh", "-c", SCRIPT], cwd=d, check=True)
    return d


# (CLI, arguments, expected exit codes): paths are relative to the fixture folder.
RUNS = [
    ("linkscope-dupes", ["liba.so", "libb.a"], {1}),
    ("linkscope-dupes", ["liba.so", "a.o", "libb.a", "libver.so.1"], {1}),
    ("linkscope-dupes", ["libver.so.1", "libver2.so"], {1}),
    ("linkscope-dupes", ["--abi-only", "liba.so", "libb.a"], {1}),
    ("linkscope-dupes", ["--closure", "use", "use", "libver.so.1", "liba.so"], {0, 1}),
    ("linkscope-dupes", ["liba.so", "missing.so"], {2}),
    ("linkscope-dupes", ["liba.so", "truncated.a"], {2}),
    ("linkscope-absorbed", ["libS.so", "libhelper.a", "libb.a"], {0, 1}),
    ("linkscope-absorbed", ["libS_undef.so", "libhelper.a"], {1}),
    ("linkscope-absorbed", ["--consumer", "main.o", "liba.so", "liba.a", "libb.a"], {0, 1}),
    ("linkscope-absorbed", ["--cmake-libs", "helper;kineto;fmt::fmt", "--prefix", "prefix", "libS_undef.so"], {2}),
    ("linkscope-absorbed", ["--allow-unevaluated", "--cmake-libs",
                            "helper;kineto;fmt::fmt;$<LINK_ONLY:helper>;-lhelper;-Wl,--as-needed;debug;x_d;$<$<CONFIG:Debug>:y>",
                            "--prefix", "prefix", "libS_undef.so"], {0, 1}),
    ("linkscope-absorbed", ["libS.so", "missing.a"], {2}),
    ("linkscope-absorbed", ["notes.txt", "libhelper.a"], {2}),
    ("linkscope-ldd", ["./use"], {0}),
    ("linkscope-ldd", ["./noexist"], {1}),
    ("linkscope-ldd", ["./use", "./noexist", "truncated.so", "missing-file"], {2}),
    ("linkscope-ldd", ["truncated.so"], {2}),
    ("linkscope-ldd", ["notes.txt"], {2}),
    ("linkscope-ldd", ["--windows-root", str(WINE_DLL.parent), str(WINE_DLL)], {0, 1}),
    ("linkscope-why", ["main.o", "liba.a", "libb.a"], {1}),
    ("linkscope-why", ["--semantics=bfd", "main.o", "liba.a", "libb.a"], {1}),
    ("linkscope-why", ["main.o", "libb.a"], {0}),
    ("linkscope-why", ["main.o", "libhelper.a"], {1}),
    ("linkscope-why", ["main.o", "liba.a"], {1}),
    ("linkscope-why", ["main.o", "missing.a"], {2}),
    ("linkscope-why", ["main.o", "truncated.a"], {2}),
    # --demangle: "demangled" beside mangled names (DEMANGLE_RUNS checks the values).
    ("linkscope-dupes", ["--demangle", "libdm.so", "libdm2.so"], {1}),
    ("linkscope-dupes", ["--demangle", "libdm.so", "libdm.a"], {1}),
    ("linkscope-absorbed", ["--demangle", "libdm.so", "libdm.a"], {0, 1}),
    ("linkscope-absorbed", ["--demangle", "--consumer", "usedm.o", "libdm2.so", "libdm.a"], {0, 1}),
    ("linkscope-ldd", ["--demangle", "./usedm"], {0}),
    ("linkscope-ldd", ["--demangle", "./useu"], {0, 1}),
    ("linkscope-ldd", ["--demangle", "./usedm", "./useu"], {0, 1}),
    ("linkscope-why", ["--demangle", "usedm.o", "libdm.a"], {0, 1}),
    ("linkscope-why", ["--demangle", "usedm.o", "undef.o", "libdm.a"], {1}),
    ("linkscope-why", ["--demangle", "usedm.o", "dm_a.o", "dm_a2.o"], {1}),
    ("linkscope-floors", ["use", "liba.so", "libver.so.1"], {0}),
    ("linkscope-floors", ["--max-glibc", "2.17", "use"], {1}),  # __libc_start_main@GLIBC_2.34
    ("linkscope-floors", ["--policy", str(ROOT / "tests" / "data" / "auditwheel" / "manylinux-policy.json"), "use"], {0}),
    ("linkscope-floors", ["use", "notes.txt", "missing-file", "truncated.so"], {2}),
    ("linkscope-implib", [str(KERNEL32)], {0}),
    ("linkscope-implib", ["--symbols", str(KERNEL32)], {0}),
    ("linkscope-implib", ["--pe", str(WINE_DLL)], {0}),
    ("linkscope-implib", ["--needs", "--consumer", str(WINE_DLL), str(KERNEL32)], {0, 1}),
    ("linkscope-implib", ["notes.txt", str(KERNEL32)], {2}),
    ("linkscope-implib", ["missing.lib"], {2}),
    ("linkscope-ar", ["t", "liba.a"], {0}),
    ("linkscope-ar", ["t", "liba.a", "libb.a", "missing.a", "notes.txt"], {2}),
    ("linkscope-ar", ["--print-armap", "libb.a"], {0}),
    ("linkscope-ar", ["--find", "a_func", "liba.a", "libb.a"], {0}),
    ("linkscope-ar", ["t", "truncated.a"], {2}),
]


def run_id(run):
    return " ".join([run[0], *run[1]])


def schema_of(tool):
    path = SCHEMAS / f"{tool}.schema.json"
    if not path.exists():
        pytest.skip(f"no {path.relative_to(ROOT)}")
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def walk(node, path="$"):
    """Yield (path, object) for every JSON object in the document."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{path}[{i}]")


def check_keys(doc):
    """What a schema cannot say: members are lib.a(member.o); a versioned symbol has @VER."""
    assert doc.get("version") == 1 and next(iter(doc)) == "version", "\"version\": 1 must be the first key"
    for path, obj in walk(doc):
        member = obj.get("member")
        if member is not None:
            assert MEMBER.match(member), f"{path}.member = {member!r} is not lib.a(member.o)"
            if "name" in obj and "symbol" not in obj:
                assert member.endswith("(" + obj["name"] + ")"), f"{path}: name {obj['name']!r} is not {member!r}'s member"
        symbol, version = obj.get("symbol"), obj.get("version")
        if isinstance(symbol, str) and isinstance(version, str) and path != "$":
            assert symbol.endswith("@" + version), f"{path}.symbol = {symbol!r} lacks @{version}"
            if "name" in obj:
                assert symbol in (obj["name"] + "@" + version, obj["name"] + "@@" + version), (path, obj)


def run_json(cli_dir, cwd, tool, args):
    p = subprocess.run([str(cli_dir / tool), "--json", *args], cwd=cwd, capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"})
    # One document, then a newline, and nothing else on stdout (docs/JSON.md rule 1).
    assert p.stdout.endswith("}\n") and p.stdout.count("\n") == 1, (tool, args, p.stdout[:300], p.stderr)
    return p, json.loads(p.stdout)


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_document_validates(run, cli_dir, fx):
    tool, args, codes = run
    schema = schema_of(tool)
    p, doc = run_json(cli_dir, fx, tool, args)
    assert p.returncode in codes, (tool, args, p.returncode, p.stderr)
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    check_keys(doc)
    if p.returncode == 2 and tool == "linkscope-absorbed" and "--allow-unevaluated" not in args and any(
            c["status"] in ("cmake-target", "generator-expression") for c in doc.get("cmake_libs", [])):
        # --cmake-libs entries only CMake can evaluate: the whole report, exit 2 (docs/JSON.md rule 4).
        assert "can be evaluated only by CMake" in p.stderr, p.stderr
    elif p.returncode == 2:
        # An input error stays in the document, and stderr still says it.
        assert "error" in json.dumps(doc) and ": error: " in p.stderr, (doc, p.stderr)


def test_dupes_values(cli_dir, fx):
    """The keys hold what the real tools say: nm -D's name@@VER, ar t's members."""
    _, doc = run_json(cli_dir, fx, "linkscope-dupes", ["libver.so.1", "libver2.so"])
    nm = subprocess.run(["nm", "-D", "--defined-only", "libver.so.1"], cwd=fx, capture_output=True, text=True,
                        check=True).stdout.split()
    (foo,) = [d for d in doc["duplicates"] if d["symbol"] == "foo"]
    assert "foo@@VERS_2" in nm
    assert [(s["file"], s["symbol"], s["name"], s["version"]) for s in foo["definitions"]] == [
        ("libver.so.1", "foo@@VERS_2", "foo", "VERS_2"), ("libver2.so", "foo@@VERS_2", "foo", "VERS_2")]
    _, doc = run_json(cli_dir, fx, "linkscope-dupes", ["liba.so", "libb.a"])
    members = subprocess.run(["ar", "t", "libb.a"], cwd=fx, capture_output=True, text=True, check=True).stdout.split()
    holder = [m for m in members
              if re.search(r" [BD] dup_data$", subprocess.run(f"ar p libb.a {m} > m.o && nm m.o", shell=True, cwd=fx,
                                                              capture_output=True, text=True).stdout, re.M)]
    (data,) = [d for d in doc["duplicates"] if d["symbol"] == "dup_data"]
    assert [(s["file"], s.get("member")) for s in data["definitions"]] == [
        ("liba.so", None), ("libb.a", f"libb.a({holder[0]})")]
    assert data["abi_break"]


def test_ldd_values(cli_dir, fx):
    """A versioned binding is name@VER, as ld.so's LD_DEBUG=bindings prints [VER]."""
    _, doc = run_json(cli_dir, fx, "linkscope-ldd", ["./use"])
    trace = subprocess.run(["./use"], cwd=fx, capture_output=True, text=True,
                           env={"LD_DEBUG": "bindings", "LD_BIND_NOW": "1"}).stderr
    assert re.search(r"normal symbol `foo' \[VERS_2\]", trace)
    (foo,) = [b for b in doc["bindings"] if b["name"] == "foo"]
    assert (foo["symbol"], foo["version"]) == ("foo@VERS_2", "VERS_2")


DEMANGLE_RUNS = [r for r in RUNS if "--demangle" in r[1]]


def cxxfilt(names):
    """c++filt (binutils) on each name: the expected "demangled" values."""
    out = subprocess.run(["c++filt"], input="".join(n + "\n" for n in names), capture_output=True, text=True,
                         check=True).stdout
    return dict(zip(names, out.split("\n")))


@pytest.mark.parametrize("run", DEMANGLE_RUNS, ids=run_id)
def test_demangled_values(run, cli_dir, fx):
    """With --demangle, "demangled" is c++filt's output for each mangled name, and absent for C names."""
    if shutil.which("c++filt") is None:
        pytest.skip("c++filt is needed")
    tool, args, _ = run
    _, doc = run_json(cli_dir, fx, tool, args)
    plain_args = [a for a in args if a != "--demangle"]
    _, plain = run_json(cli_dir, fx, tool, plain_args)
    assert "demangled" not in json.dumps(plain), "demangled without --demangle"
    rows, lists = [], []
    for path, obj in walk(doc):
        if isinstance(obj.get("symbol"), str):
            rows.append((path, obj, obj.get("name", obj["symbol"])))
        for key in ("evidence", "symbols"):
            if isinstance(obj.get(key), list):
                lists.append((path, obj, obj[key]))
    names = [n for _, _, n in rows] + [s for _, _, l in lists for s in l]
    expected = cxxfilt(names)
    mangled = plain_c = 0
    for path, obj, name in rows:
        if name.startswith("_Z"):
            mangled += 1
            assert obj.get("demangled") == expected[name], (path, obj)
        else:
            plain_c += 1
            assert "demangled" not in obj, (path, obj)
    for path, obj, items in lists:
        table = obj.get("demangled", {})
        for s in items:
            if s.startswith("_Z"):
                mangled += 1
                assert table.get(s) == expected[s], (path, s, table)
            else:
                plain_c += 1
                assert s not in table, (path, s, table)
        assert set(table) <= set(items), (path, table)
    assert mangled > 0, "the fixture's C++ names did not reach the document"
    if tool != "linkscope-why":
        assert plain_c > 0, "no C name in the document (c_func) to check the absence of demangled on"


def test_renamed_key_fails(fx):
    """additionalProperties: false everywhere, so a renamed key does not validate."""
    schema = schema_of("linkscope-absorbed")
    doc = {"version": 1, "shared": "libS.so", "format": "elf", "shared_has_symtab": True, "shared_unresolved": 0,
           "missing_needed": [], "archives": []}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    doc["file"] = doc.pop("shared")
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)


def test_every_schema_is_valid_and_installed():
    schemas = sorted(SCHEMAS.glob("*.schema.json"))
    assert schemas, "schema/ is empty"
    for path in schemas:
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", path
    for build_file in ("CMakeLists.txt", "meson.build"):
        assert "schema" in (ROOT / build_file).read_text(), f"{build_file} does not install schema/"


def test_ar_values(cli_dir, fx):
    # linkscope-ar --json t over two archives: one document whose members are
    # `ar t`'s, each as lib.a(member) with its own name beside it.
    p, doc = run_json(cli_dir, fx, "linkscope-ar", ["t", "liba.a", "libb.a"])
    assert p.returncode == 0
    assert [a["file"] for a in doc["archives"]] == ["liba.a", "libb.a"]
    for archive in doc["archives"]:
        names = subprocess.run(["ar", "t", archive["file"]], cwd=fx, capture_output=True, text=True,
                               check=True).stdout.split()
        assert [m["name"] for m in archive["members"]] == names
        assert [m["member"] for m in archive["members"]] == [f"{archive['file']}({n})" for n in names]
