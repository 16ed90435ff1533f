#!/bin/sh
# bench/macho_fetch.sh — real macOS binaries from npm, listed by linkscope-nm
# and by llvm-nm-14 (nm on macOS is llvm-nm), which must agree byte for byte;
# then both are timed on the 20 MB libvips-cpp dylib in one run.
#
#   bench/macho_fetch.sh [BUILD_DIR]     (default: build; needs npm, llvm-nm-14)
#
# scripts/fetch-real fetches the packages (pinned, sha256-checked) and unpacks
# them under $BUILD_DIR/real; they are never committed.
#   @img/sharp-darwin-x64@0.35.6      lib/sharp-darwin-x64-0.35.6.node   (bundle)
#   @img/sharp-darwin-arm64@0.35.6    lib/sharp-darwin-arm64-0.35.6.node (bundle)
#   @img/sharp-libvips-darwin-x64@1.3.5  lib/libvips-cpp.8.18.8.dylib    (20 MB dylib)
#   @img/sharp-libvips-darwin-arm64@1.3.5  lib/libvips-cpp.8.18.8.dylib  (18 MB; test_dyld [real] only)
set -eu
build=${1:-build}
nm_ours=$build/examples/linkscope-nm
nm_llvm=${LLVM_NM:-llvm-nm-14}
[ -x "$nm_ours" ] || { echo "macho_fetch: $nm_ours not built" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$build/real
mkdir -p "$dir"
cd "$dir"

"$root/scripts/fetch-real" "$dir"   # pinned by sha256

nm_ours=$(cd - >/dev/null && cd "$(dirname "$nm_ours")" && pwd)/linkscope-nm
# Correctness first, the same checks CI runs (nm flag sets against llvm-nm-14,
# the [real] Catch2 cases, the PE checks): scripts/real-parity.
status=0
"$root/scripts/real-parity" "$(dirname "$nm_ours")/.." "$dir" || status=1

vips=img-sharp-libvips-darwin-x64-1.3.5/package/lib/libvips-cpp.8.18.8.dylib
if command -v hyperfine >/dev/null 2>&1; then
  hyperfine -N -w 3 -r 20 "$nm_ours $vips" "$nm_llvm $vips"
else
  for tool in "$nm_ours" "$nm_llvm"; do
    start=$(date +%s%N)
    for _ in 1 2 3 4 5 6 7 8 9 10; do "$tool" "$vips" > /dev/null; done
    end=$(date +%s%N)
    echo "$(basename "$tool"): $(( (end - start) / 10000000 )) ms per run (mean of 10)"
  done
fi
exit $status
