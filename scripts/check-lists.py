#!/usr/bin/env python3
"""Check that the meson lists name exactly the tests, CLIs and src/ files in the tree
(CMake globs them; meson needs them listed), and that the allow-lists embedded in
resolve/allow_list.hpp are data/allow/*.txt (scripts/gen-allow-lists.py --check)."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
ok = True


def listed(meson_file: pathlib.Path, var: str) -> set:
    text = meson_file.read_text()
    m = re.search(var + r"\s*=\s*\[(.*?)\]", text, re.S)
    return set(re.findall(r"'([^']+)'", m.group(1))) if m else set()


tests = {str(p.relative_to(root / "tests").with_suffix("")) for p in (root / "tests").glob("*/test_*.cpp")}
examples = {p.stem for p in (root / "examples").glob("linkscope-*.cpp")}
sources = {str(p.relative_to(root)) for p in (root / "src").glob("*.cpp")}
for name, have, want in (("meson.build", listed(root / "meson.build", "linkscope_sources"), sources),
                         ("tests/meson.build", listed(root / "tests/meson.build", "linkscope_tests"), tests),
                         ("examples/meson.build", listed(root / "examples/meson.build", "linkscope_examples"), examples)):
    if have != want:
        ok = False
        print(f"{name}: missing {sorted(want - have)}, extra {sorted(have - want)}", file=sys.stderr)
print("meson lists: " + ("in sync" if ok else "OUT OF SYNC"))
# The default allow-lists embedded in resolve/allow_list.hpp equal data/allow/*.txt.
import subprocess
if subprocess.run([sys.executable, str(root / "scripts/gen-allow-lists.py"), "--check"]).returncode != 0:
    ok = False
sys.exit(0 if ok else 1)
