#!/usr/bin/env python3
"""Check that docs/ARCHITECTURE.md is true of include/linkscope/.

1. Every header under include/linkscope/ is named in docs/ARCHITECTURE.md (by its
   path below include/linkscope/, e.g. `elf/file.hpp`), and every header the doc
   names exists.
2. Every header includes only headers of its own layer or of the layers below it:

       core -> symbols -> ar -> elf | coff | macho -> resolve -> report

   elf, coff and macho are independent of one another; coff and macho may use ar.
   The umbrella headers (linkscope.hpp, formats.hpp, resolve.hpp) may include any.

Exit 1 with one line per problem.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "include" / "linkscope"
DOC = ROOT / "docs" / "ARCHITECTURE.md"
UMBRELLAS = {"linkscope.hpp", "formats.hpp", "resolve.hpp"}
RANK = {"core": 0, "symbols": 1, "ar": 2, "elf": 3, "coff": 3, "macho": 3, "resolve": 4, "report": 5}
# Same-rank folders that may include each other (user -> used).
ALLOWED_SIDEWAYS = set()
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+[<"]linkscope/([^">]+)[">]', re.M)

problems = []
headers = sorted(str(p.relative_to(INCLUDE)) for p in INCLUDE.rglob("*.hpp"))

if not DOC.is_file():
    problems.append(f"{DOC.relative_to(ROOT)}: missing")
    doc = ""
else:
    doc = DOC.read_text(encoding="utf-8")
for h in headers:
    if not re.search(r"(?<![\w/])" + re.escape(h) + r"(?![\w])", doc):
        problems.append(f"docs/ARCHITECTURE.md does not name include/linkscope/{h}")
for named in sorted(set(re.findall(r"`((?:core|symbols|ar|elf|coff|macho|resolve|report)/[\w/.-]+\.hpp)`", doc))):
    if named not in headers:
        problems.append(f"docs/ARCHITECTURE.md names {named}, which does not exist")

for h in headers:
    if h in UMBRELLAS:
        continue
    layer = h.split("/")[0]
    if layer not in RANK:
        problems.append(f"include/linkscope/{h}: folder '{layer}' is not a known layer (add it to {pathlib.Path(__file__).name} and the doc)")
        continue
    text = (INCLUDE / h).read_text(encoding="utf-8")
    for used in INCLUDE_RE.findall(text):
        used_layer = used.split("/")[0]
        if used in UMBRELLAS or used_layer not in RANK:
            problems.append(f"include/linkscope/{h} includes linkscope/{used}: not a layer header")
            continue
        if used_layer == layer:
            continue
        if RANK[used_layer] < RANK[layer]:
            continue
        if RANK[used_layer] == RANK[layer] and (layer, used_layer) in ALLOWED_SIDEWAYS:
            continue
        problems.append(f"include/linkscope/{h} ({layer}) includes linkscope/{used} ({used_layer}): "
                        f"a layer includes only the layers below it")

for p in problems:
    print(p, file=sys.stderr)
print(f"architecture: {len(headers)} headers, " + ("doc and layering hold" if not problems else f"{len(problems)} problem(s)"))
sys.exit(1 if problems else 0)
