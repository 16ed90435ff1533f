#!/bin/sh
# bench/winload_sharp.sh — the Windows loader on real files: the sharp npm
# package for win32-x64 (sharp .node -> libvips-cpp-8.18.8.dll ->
# libvips-42.dll, against KERNEL32 and the UCRT API sets), checked against
# x86_64-w64-mingw32-objdump -p and timed against it in one run.
#
#   bench/winload_sharp.sh [BUILD_DIR]   (default: build; needs npm, mingw objdump,
#                                          wine64 for the Windows root)
#
# Checks:
#   1. every DLL each of the three files imports (objdump -p "DLL Name:")
#      is in linkscope-ldd's closure under the same name, and nothing else is
#      imported directly;
#   2. without a Windows root (system DLLs assumed): no finding except the
#      .node's delay-load of node.exe, which --executable node.exe answers;
#   3. with wine's PE tree as System32: every import of the application DLLs
#      resolves to an export of the DLL it names (the only missing DLL is
#      bcryptprimitives.dll, which wine 8.0 does not ship).
# Then: linkscope-ldd --undefined (closure + import check) against
# objdump -p over the same three files, which only prints the tables.
# The tarball is pinned by sha256 and unpacked under $BUILD_DIR/pe-real.
set -eu
build=${1:-build}
ldd=$(cd "$build/examples" && pwd)/linkscope-ldd
objdump=${OBJDUMP:-x86_64-w64-mingw32-objdump}
wine_root=/usr/lib/x86_64-linux-gnu/wine/x86_64-windows
[ -x "$ldd" ] || { echo "winload_sharp: $ldd not built" >&2; exit 2; }
dir=$build/pe-real
mkdir -p "$dir"
cd "$dir"
tgz=img-sharp-win32-x64-0.35.6.tgz
[ -f $tgz ] || npm pack --silent @img/sharp-win32-x64@0.35.6 >/dev/null
echo "06ef6ca2a5f796e0ee177765089e65c26eb5cbbe244e1843620c82846ce7bb37  $tgz" | sha256sum -c --quiet - ||
  { echo "winload_sharp: $tgz: sha256 mismatch" >&2; exit 1; }
mkdir -p sharp && tar xzf $tgz -C sharp
lib=sharp/package/lib
node=$lib/sharp-win32-x64-0.35.6.node
files="$node $lib/libvips-cpp-8.18.8.dll $lib/libvips-42.dll"
status=0

# 1. direct imports, per file: objdump's DLL names against the closure's needed lists (--json).
for f in $files; do
  "$objdump" -p "$f" | sed -n 's/^\tDLL Name: //p' | sort > theirs.txt
  "$ldd" --load-mode altered --json "$f" 2>/dev/null | /usr/bin/python3 -c '
import json,sys
d=json.load(sys.stdin)
# objdump -p 2.40 does not print the delay-import table: the normal imports only.
print("\n".join(sorted({n["name"] for n in d["needed"] if not n["delay_load"]})))' | sort > ours_nodelay.txt
  if cmp -s ours_nodelay.txt theirs.txt; then echo "same  direct DLLs of $(basename "$f"): $(wc -l < theirs.txt)"
  else echo "DIFF  direct DLLs of $(basename "$f")"; diff ours_nodelay.txt theirs.txt | head -5; status=1; fi
done

# 2. no Windows root: the only finding is node.exe (delay-load), gone with --executable.
"$ldd" --load-mode altered -r "$node" > findings.txt 2>/dev/null || true
if [ "$(cut -f1 findings.txt)" = "missing DLL: node.exe [delay-load]" ]; then echo "same  findings without a root: node.exe (delay-load) only"
else echo "DIFF  findings without a root:"; cat findings.txt; status=1; fi
touch "$lib/node.exe"  # an empty stand-in: the loader must skip it, not crash
"$ldd" --load-mode altered --executable "$lib/node.exe" -r "$node" > findings2.txt 2>/dev/null || true
rm -f "$lib/node.exe"
echo "info  with an empty node.exe as --executable: $(wc -l < findings2.txt) finding(s)"

# 3. wine's tree as System32: every application import resolves.
if [ -d "$wine_root" ]; then
  "$ldd" --load-mode altered --windows-root "$wine_root" -r "$node" 2>/dev/null | cut -f1 | sort > wine_findings.txt || true
  printf 'missing DLL: bcryptprimitives.dll\nmissing DLL: node.exe [delay-load]\n' | sort > wine_expected.txt
  if cmp -s wine_findings.txt wine_expected.txt; then echo "same  findings in wine's tree: bcryptprimitives.dll (absent from wine 8.0), node.exe (delay-load)"
  else echo "DIFF  findings in wine's tree:"; diff wine_findings.txt wine_expected.txt; status=1; fi
  bindings=$("$ldd" --load-mode altered --windows-root "$wine_root" --bindings "$node" 2>/dev/null | wc -l)
  echo "info  $bindings bindings in wine's tree"
fi

# Timing: closure + import check of the .node, against objdump -p of the three files.
root_arg=""
[ -d "$wine_root" ] && root_arg="--windows-root $wine_root"
if command -v hyperfine >/dev/null 2>&1; then
  # (package alone: system DLLs assumed; with wine's tree: ~35 system DLLs read and checked too)
  hyperfine -N -i -w 3 -r 20 "$ldd --load-mode altered -r $node" "$ldd --load-mode altered $root_arg -r $node" \
    "$objdump -p $(echo $files)"
fi
exit $status
