"""demangle=True in the module: ldd's to_dict(), dupes, absorbed and why equal
the CLI's --json --demangle, and every "demangled" is c++filt's reading of the
mangled name (the oracle), on a g++ fixture."""
import json
import shutil
import subprocess

import pytest

import linkscope


@pytest.fixture(scope="module")
def cxx(tmp_path_factory):
    if shutil.which("g++") is None or shutil.which("c++filt") is None:
        pytest.skip("g++ or c++filt is not installed")
    d = tmp_path_factory.mktemp("demangle")
    (d / "lib.cpp").write_text(
        "namespace ns { int widget(int x) { return x + 1; }\n"
        "template <class T> T twice(T v) { return v + v; }\n"
        "template int twice<int>(int);\n"
        "struct box { int get() const; }; int box::get() const { return 3; } }\n"
        'extern "C" int c_func(void) { return 4; }\n')
    (d / "other.cpp").write_text("namespace ns { int widget(int x) { return x - 1; } }\n")
    (d / "app.cpp").write_text(
        "namespace ns { int widget(int); template <class T> T twice(T); struct box { int get() const; }; }\n"
        'extern "C" int c_func(void);\n'
        "int main() { ns::box b; return ns::widget(1) + ns::twice(2) + b.get() + c_func(); }\n")
    subprocess.run(["sh", "-c", """set -e
g++ -shared -fPIC lib.cpp -o libw.so -Wl,-soname,libw.so
g++ -shared -fPIC other.cpp -o libother.so -Wl,-soname,libother.so
g++ -c -fPIC lib.cpp -o lib.o
g++ -c -fPIC other.cpp -o other.o
g++ -c app.cpp -o app.o
ar rcs libw.a lib.o
ar rcs libother.a other.o
g++ app.o -o app -L. -lw -Wl,-rpath,'$ORIGIN'
g++ -shared -fPIC -o libwhole.so -Wl,--whole-archive libw.a -Wl,--no-whole-archive -Wl,-soname,libwhole.so
"""], cwd=d, check=True)
    return d


def cli_json(run_cli, tool, *args, codes=(0, 1)):
    return json.loads(run_cli(tool, "--json", "--demangle", *args, check_codes=codes).stdout)


def demangled_pairs(node):
    """Every (symbol-or-name, demangled) pair in a document."""
    out = []
    if isinstance(node, dict):
        if isinstance(node.get("demangled"), str):
            name = node.get("name") or node.get("symbol")
            out.append((name.split("@")[0], node["demangled"]))
        elif isinstance(node.get("demangled"), dict):
            out.extend(node["demangled"].items())
        for v in node.values():
            out.extend(demangled_pairs(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(demangled_pairs(v))
    return out


def check_oracle(doc):
    pairs = demangled_pairs(doc)
    assert pairs, "no demangled name in the document"
    names = [n for n, _ in pairs]
    filt = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True,
                          check=True).stdout.splitlines()
    assert [d for _, d in pairs] == filt
    assert all(n != "c_func" for n in names)


def without_demangled(node):
    if isinstance(node, dict):
        return {k: without_demangled(v) for k, v in node.items() if k != "demangled"}
    if isinstance(node, list):
        return [without_demangled(v) for v in node]
    return node


def test_ldd_demangle(cxx, run_cli):
    r = linkscope.ldd(str(cxx / "app"))
    doc = r.to_dict(demangle=True)
    assert doc == cli_json(run_cli, "linkscope-ldd", cxx / "app")
    check_oracle(doc)
    assert without_demangled(doc) == r.to_dict()


def test_dupes_demangle(cxx, run_cli):
    paths = [str(cxx / "libw.so"), str(cxx / "libother.so")]
    doc = linkscope.dupes(paths, demangle=True).to_dict()
    assert doc == cli_json(run_cli, "linkscope-dupes", *paths)
    check_oracle(doc)
    assert without_demangled(doc) == linkscope.dupes(paths).to_dict()


def test_absorbed_demangle(cxx, run_cli):
    doc = linkscope.absorbed(cxx / "libwhole.so", [cxx / "libw.a"], demangle=True).to_dict()
    assert doc == cli_json(run_cli, "linkscope-absorbed", cxx / "libwhole.so", cxx / "libw.a")
    check_oracle(doc)


def test_why_demangle(cxx, run_cli):
    args = [str(cxx / "app.o"), str(cxx / "libw.a"), str(cxx / "libother.a")]
    r = linkscope.why(args, demangle=True)
    assert r.to_dict() == cli_json(run_cli, "linkscope-why", *args)
    check_oracle(r.to_dict())
    plain = linkscope.why(args)
    assert without_demangled(r.to_dict()) == plain.to_dict()
    assert r.why_extract == plain.why_extract  # ld.lld's TSV stays mangled
