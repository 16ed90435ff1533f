"""linkscope-check --json against schema/linkscope-check.schema.json (docs/JSON.md).

A conda prefix made here with gcc and ar holds one finding of each package
kind: a declared dependency nobody has (unused), one whose archive is linked
into lib/libapp.so (statically linked), one whose library lib/libapp.so
carries a copy of (statically linked), and two packages exporting the same
strong definitions (a duplicate; ld.so takes the copy bin/tool loads first).
Per file: a missing library, an unused NEEDED, an RPATH outside the prefix.
Each run prints one document that validates against the schema; an input
error is the error document. Expected values come from the generator (which
code went where) and from ld.so (LD_DEBUG=bindings) for the winner.

Environment: LINKSCOPE_CLI_DIR (default: build/examples of this checkout).
"""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (run with /usr/bin/python3)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schema" / "linkscope-check.schema.json").read_text())

SOURCES = {
    "bar.c": "int bar_table[4] = {1, 2, 3, 4};\nint bar_compute(int i) { return bar_table[i & 3]; }\n",
    "shr.c": "int shr_func(int x) { return x * 3; }\n",
    "qux.c": "int qux_func(void) { return 5; }\n",
    "fmt.c": "int fmt_vformat(int x) { return x + 1; }\nint fmt_format(int x) { return fmt_vformat(x); }\n",
    "gone.c": "int gone_func(void) { return 1; }\n",
    "app.c": "int bar_compute(int); int shr_func(int); int gone_func(void);\n"
             "int app_run(int x) { return bar_compute(x) + shr_func(x) + gone_func(); }\n",
    "tool.c": "#include <stdio.h>\nint fmt_format(int);\nint main(void) { printf(\"%d\\n\", fmt_format(1)); return 0; }\n",
}
SCRIPT = """set -e; mkdir -p env/lib env/bin env/conda-meta
gcc -c -fPIC bar.c -o bar.o; ar rcs env/lib/libbar.a bar.o
gcc -shared -fPIC -o env/lib/libshr.so shr.c
gcc -shared -fPIC -o env/lib/libqux.so qux.c
gcc -shared -fPIC -o env/lib/libfmt.so fmt.c
gcc -shared -fPIC -o env/lib/libvendor.so fmt.c
gcc -shared -fPIC -o libgone.so gone.c
gcc -shared -fPIC -o env/lib/libapp.so app.c shr.c env/lib/libbar.a -Wl,--exclude-libs,ALL -L. -lgone
gcc -o env/bin/tool tool.c -Lenv/lib -Wl,--no-as-needed -lvendor -lfmt -lqux \
    -Wl,--disable-new-dtags,-rpath,/opt/elsewhere/lib:'$ORIGIN/../lib'
"""
PACKAGES = {
    "app": ["lib/libapp.so", "bin/tool"], "libbar": ["lib/libbar.a"], "libshr": ["lib/libshr.so"],
    "libqux": ["lib/libqux.so"], "libfmt": ["lib/libfmt.so"], "vendor": ["lib/libvendor.so"], "unrelated": [],
}


@pytest.fixture(scope="module")
def cli():
    d = pathlib.Path(os.environ.get("LINKSCOPE_CLI_DIR", ROOT / "build" / "examples"))
    tool = d / "linkscope-check"
    if not tool.exists():
        pytest.skip(f"{tool} not built")
    return str(tool)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    if shutil.which("gcc") is None or shutil.which("ar") is None:
        pytest.skip("gcc and ar are needed")
    d = tmp_path_factory.mktemp("json_check")
    for name, text in SOURCES.items():
        (d / name).write_text(text)
    subprocess.run(["sh", "-c", SCRIPT], cwd=d, check=True)
    env = d / "env"
    for name, files in PACKAGES.items():
        (env / "conda-meta" / f"{name}-1.0-0.json").write_text(json.dumps({"name": name, "files": files}))
    return env


def run(cli, *args):
    r = subprocess.run([cli, "--json", "--no-dpkg", *args], capture_output=True, text=True)
    doc = json.loads(r.stdout)  # exactly one document, or this raises
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    return r.returncode, doc


def test_schema_is_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_whole_prefix(cli, prefix):
    status, doc = run(cli, str(prefix))
    assert status == 1
    files = {f["relative"]: f for f in doc["files"]}
    assert set(files) == {"lib/libapp.so", "lib/libshr.so", "lib/libqux.so", "lib/libfmt.so", "lib/libvendor.so",
                          "bin/tool"}
    assert [m["name"] for m in files["lib/libapp.so"]["missing"]] == ["libgone.so"]
    # ldd -u -r: libqux.so is never bound to, nor is libfmt.so (libvendor.so comes first with fmt_format).
    ldd = subprocess.run(["ldd", "-u", "-r", str(prefix / "bin" / "tool")], capture_output=True, text=True).stdout
    unused = sorted(os.path.basename(line.strip()) for line in ldd.splitlines() if line.startswith("\t"))
    assert unused == ["libfmt.so", "libqux.so"]
    assert sorted(files["bin/tool"]["unused"]) == unused
    assert [r["entry"] for r in files["bin/tool"]["rpaths"] if r["outside"]] == ["/opt/elsewhere/lib"]


def test_package_findings(cli, prefix):
    status, doc = run(cli, "--package", "app", "--declared", "libbar,libshr,libqux,libfmt,vendor,unrelated",
                      str(prefix))
    assert status == 1
    # libqux is NEEDED by bin/tool, so it is used as a package even though bin/tool binds nothing in it.
    assert doc["unused_declared"] == ["unrelated"]
    linked = {d["package"]: d["evidence"] for d in doc["statically_linked"]}
    assert set(linked) == {"libbar", "libshr"}
    assert [(e["file"], e["copy_of"], sorted(e["symbols"])) for e in linked["libbar"]] == \
        [("lib/libapp.so", "lib/libbar.a", ["bar_compute", "bar_table"])]
    assert [(e["file"], e["copy_of"], e["symbols"]) for e in linked["libshr"]] == \
        [("lib/libapp.so", "lib/libshr.so", ["shr_func"])]
    # ld.so's own choice for bin/tool's fmt_format: the winner the check names.
    env = dict(os.environ, LD_DEBUG="bindings")
    trace = subprocess.run([str(prefix / "bin" / "tool")], env=env, capture_output=True, text=True).stderr
    bound = [line for line in trace.splitlines() if "normal symbol `fmt_format'" in line and "/bin/tool" in line]
    assert bound and "libvendor.so" in bound[-1]
    dups = [(d["file_a"], d["file_b"], d["symbols"], d["winner"], d["consumer"]) for d in doc["duplicates"]]
    assert dups == [("lib/libfmt.so", "lib/libvendor.so", ["fmt_format", "fmt_vformat"], "lib/libvendor.so",
                     "bin/tool")]


def test_input_errors_are_documents(cli, prefix, tmp_path):
    status, doc = run(cli, str(tmp_path / "no-such-prefix"))
    assert status == 2 and doc["error"] and doc["file"].endswith("no-such-prefix")
    status, doc = run(cli, str(prefix), str(tmp_path / "no-such-file"))
    assert status == 2 and doc["file"].endswith("no-such-file")
