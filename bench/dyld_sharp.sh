#!/bin/sh
# bench/dyld_sharp.sh — the dyld emulator on real files: the sharp npm
# packages for darwin-x64 and darwin-arm64 (sharp .node -> @rpath
# libvips-cpp.8.18.8.dylib, against libSystem, libc++ and the frameworks),
# laid out as npm lays them out, checked and timed against llvm-objdump in
# one run (issue 17's benchmark).
#
#   bench/dyld_sharp.sh [BUILD_DIR]   (default: build; needs npm, llvm-objdump-14, hyperfine)
#
# Checks, per architecture:
#   1. the .node's @rpath/libvips-cpp.8.18.8.dylib resolves through its
#      LC_RPATH @loader_path/../../sharp-libvips-darwin-ARCH/lib;
#   2. the binds of the .node that llvm-objdump-14 --bind/--lazy-bind/
#      --weak-bind names libvips-cpp (its dylib column, "libvips-cpp.8.18")
#      are exactly the .node's rows into that file in linkscope-ldd
#      --bindings, and none is undefined.
# Then: linkscope-ldd --bindings on the .node (closure, every import resolved
# two-level) against llvm-objdump-14 --macho --bind --lazy-bind --weak-bind
# --exports-trie over the same two files, which only lists the tables.
# scripts/fetch-real fetches the packages (pinned by sha256) under $BUILD_DIR/real.
set -eu
build=${1:-build}
ldd=$(cd "$build/examples" && pwd)/linkscope-ldd
objdump=${OBJDUMP:-llvm-objdump-14}
[ -x "$ldd" ] || { echo "dyld_sharp: $ldd not built" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(cd "$build" && pwd)/real
mkdir -p "$dir"
"$root/scripts/fetch-real" "$dir"   # pinned by sha256
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
layout=$work/node_modules/@img
mkdir -p "$layout"
status=0
for arch in x64 arm64; do
  cp -r "$dir/img-sharp-darwin-$arch-0.35.6/package" "$layout/sharp-darwin-$arch"
  cp -r "$dir/img-sharp-libvips-darwin-$arch-1.3.5/package" "$layout/sharp-libvips-darwin-$arch"
  node=$layout/sharp-darwin-$arch/lib/sharp-darwin-$arch-0.35.6.node
  vips=$layout/sharp-libvips-darwin-$arch/lib/libvips-cpp.8.18.8.dylib
  "$ldd" --bindings "$node" > "$work/ours.$arch" 2> "$work/ours.err.$arch" || true
  # 1. found through the rpath
  if "$ldd" "$node" | grep -q "libvips-cpp.8.18.8.dylib => $vips"; then
    echo "same: $arch: @rpath/libvips-cpp.8.18.8.dylib => the sibling package's lib/"
  else
    echo "DIFF: $arch: libvips-cpp not found through the LC_RPATH"; status=1
  fi
  # 2. the binds llvm-objdump names libvips-cpp, against ours into that file
  "$objdump" --macho --bind --lazy-bind --weak-bind "$node" |
    awk 'NF >= 2 && $(NF-1) ~ /^libvips-cpp/ { print $NF }' | sort -u > "$work/theirs.syms.$arch"
  awk -F '\t' -v n="$node" -v v="$vips" '$1 == n && $2 == v { print $3 }' "$work/ours.$arch" | sort -u > "$work/ours.syms.$arch"
  if [ -s "$work/theirs.syms.$arch" ] && cmp -s "$work/theirs.syms.$arch" "$work/ours.syms.$arch" &&
     ! "$ldd" --undefined "$node" | grep -q .; then
    echo "same: $arch: $(wc -l < "$work/theirs.syms.$arch") symbols bound into libvips-cpp, none undefined"
  else
    echo "DIFF: $arch: binds into libvips-cpp differ from llvm-objdump's, or some are undefined"; status=1
  fi
done

if command -v hyperfine >/dev/null 2>&1; then
  for arch in x64 arm64; do
    node=$layout/sharp-darwin-$arch/lib/sharp-darwin-$arch-0.35.6.node
    vips=$layout/sharp-libvips-darwin-$arch/lib/libvips-cpp.8.18.8.dylib
    hyperfine -N -w 3 -r 20 --export-json "$work/h.$arch.json" "$ldd --bindings $node" \
      "$objdump --macho --bind --lazy-bind --weak-bind --exports-trie $node $vips" > /dev/null
    /usr/bin/python3 - "$work/h.$arch.json" "$arch" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
ours, theirs = r[0], r[1]
cpu = lambda x: x["user"] + x["system"]
print(f"{sys.argv[2]}: linkscope-ldd --bindings {ours['mean']*1000:.1f} ms (CPU {cpu(ours)*1000:.1f} ms), "
      f"llvm-objdump {theirs['mean']*1000:.1f} ms (CPU {cpu(theirs)*1000:.1f} ms): "
      f"{theirs['mean']/ours['mean']:.1f}x wall, {cpu(theirs)/cpu(ours):.1f}x CPU (goal >= 5x)")
PY
  done
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
