#!/bin/sh
# bench/winload_sharp.sh — the Windows loader on real files: the sharp npm
# package for win32-x64 (sharp .node -> libvips-cpp-8.18.8.dll ->
# libvips-42.dll, against KERNEL32 and the UCRT API sets), checked against
# x86_64-w64-mingw32-objdump -p and timed against it in one run.
#
#   bench/winload_sharp.sh [BUILD_DIR]   (default: build; needs npm, mingw objdump,
#                                          wine64 for the Windows root)
#
# Checks (scripts/real-parity, which CI runs too):
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
# scripts/fetch-real fetches the package (pinned by sha256) under $BUILD_DIR/real.
set -eu
build=${1:-build}
ldd=$(cd "$build/examples" && pwd)/linkscope-ldd
objdump=${OBJDUMP:-x86_64-w64-mingw32-objdump}
wine_root=/usr/lib/x86_64-linux-gnu/wine/x86_64-windows
[ -x "$ldd" ] || { echo "winload_sharp: $ldd not built" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$build/real
mkdir -p "$dir"
cd "$dir"
"$root/scripts/fetch-real" "$dir"   # pinned by sha256
lib=img-sharp-win32-x64-0.35.6/package/lib
node=$lib/sharp-win32-x64-0.35.6.node
files="$node $lib/libvips-cpp-8.18.8.dll $lib/libvips-42.dll"
# Correctness first, the same checks CI runs (checks 1-3 above, and the
# implib and Mach-O checks): scripts/real-parity.
status=0
"$root/scripts/real-parity" "$(dirname "$ldd")/.." "$dir" || status=1

# Timing: closure + import check of the .node, against objdump -p of the three files.
root_arg=""
[ -d "$wine_root" ] && root_arg="--windows-root $wine_root"
if command -v hyperfine >/dev/null 2>&1; then
  # (package alone: system DLLs assumed; with wine's tree: ~35 system DLLs read and checked too)
  hyperfine -N -i -w 3 -r 20 "$ldd --load-mode altered -r $node" "$ldd --load-mode altered $root_arg -r $node" \
    "$objdump -p $(echo $files)"
fi
exit $status
