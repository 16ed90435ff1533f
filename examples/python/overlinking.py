#!/usr/bin/env python3
"""conda-build-style overlinking / overdepending check of a prefix, with linkscope.

usage: overlinking.py PREFIX

For each package of PREFIX/conda-meta/*.json and each ELF file it ships:
- overlinking: the file binds to a library of the prefix whose package is not
  among the package's run dependencies (conda-build's "overlinking" error);
- a NEEDED library that ld.so would not find;
and per package, overdepending: a run dependency that ships shared libraries
none of which any file of the package binds to. Exit 1 when anything is found.
"""
import json
import os
import pathlib
import sys

import linkscope

prefix = pathlib.Path(sys.argv[1]).resolve()
packages, owner = {}, {}
for rec in (prefix / "conda-meta").glob("*.json"):
    meta = json.loads(rec.read_text())
    packages[meta["name"]] = {d.split()[0] for d in meta.get("depends", [])}
    owner.update({f: meta["name"] for f in meta.get("files", [])})

findings, used, checked = [], {name: set() for name in packages}, set()
for rel, pkg in sorted(owner.items()):
    path = str(prefix / rel)
    try:
        f = linkscope.open(path)
        if f.format != "elf" or f.kind == "relocatable":
            continue
        result = linkscope.ldd(path, library_path=[str(prefix / "lib")])
    except linkscope.Error as e:
        findings.append(f"{rel}: cannot check: {e}")
        continue
    checked.add(pkg)
    real = {lib["path"]: lib["realpath"] for lib in result.to_dict()["libs"]}
    for name in result.missing:
        findings.append(f"{rel}: {name}: not found")
    for target in sorted({b.to for b in result.bindings if b.from_ == path}):
        lib_rel = os.path.relpath(real.get(target) or target, prefix)
        dep = owner.get(lib_rel)
        if dep is None or dep == pkg:
            continue  # the system's, or the package's own
        used[pkg].add(dep)
        if dep not in packages[pkg]:
            findings.append(f"{rel}: overlinking: binds to {lib_rel} of package {dep}, not a run dependency of {pkg}")

ships_libs = {p for f, p in owner.items() if ".so" in pathlib.Path(f).name}
for pkg in sorted(checked):
    deps = packages[pkg]
    for dep in sorted((deps & ships_libs) - used[pkg]):
        findings.append(f"{pkg}: overdepending: run dependency {dep} ships libraries that nothing of {pkg} binds to")

print("\n".join(findings) if findings else f"{prefix}: no overlinking, no overdepending")
sys.exit(1 if findings else 0)
