#!/bin/sh
# bench/macho_fetch.sh — real macOS binaries from npm, listed by linkscope-nm
# and by llvm-nm-14 (nm on macOS is llvm-nm), which must agree byte for byte;
# then both are timed on the 20 MB libvips-cpp dylib in one run.
#
#   bench/macho_fetch.sh [BUILD_DIR]     (default: build; needs npm, llvm-nm-14)
#
# The packages are pinned and their tarballs checked against sha256 sums; the
# binaries are unpacked under $BUILD_DIR/macho-real and never committed.
#   @img/sharp-darwin-x64@0.35.6      lib/sharp-darwin-x64-0.35.6.node   (bundle)
#   @img/sharp-darwin-arm64@0.35.6    lib/sharp-darwin-arm64-0.35.6.node (bundle)
#   @img/sharp-libvips-darwin-x64@1.3.5  lib/libvips-cpp.8.18.8.dylib    (20 MB dylib)
#   @img/sharp-libvips-darwin-arm64@1.3.5  lib/libvips-cpp.8.18.8.dylib  (18 MB; test_dyld [real] only)
set -eu
build=${1:-build}
nm_ours=$build/examples/linkscope-nm
nm_llvm=${LLVM_NM:-llvm-nm-14}
[ -x "$nm_ours" ] || { echo "macho_fetch: $nm_ours not built" >&2; exit 2; }
dir=$build/macho-real
mkdir -p "$dir"
cd "$dir"

fetch() {  # package@version tarball sha256
  if [ ! -f "$2" ]; then npm pack --silent "$1" >/dev/null; fi
  echo "$3  $2" | sha256sum -c --quiet - || { echo "macho_fetch: $2: sha256 mismatch" >&2; exit 1; }
  mkdir -p "${2%.tgz}"
  tar xzf "$2" -C "${2%.tgz}"
}
fetch @img/sharp-darwin-x64@0.35.6 img-sharp-darwin-x64-0.35.6.tgz \
  ade99fc9cd018cb229d2fbaf39b75ea8b3031ccea4a3cc69cdf45cdaad003c5e
fetch @img/sharp-darwin-arm64@0.35.6 img-sharp-darwin-arm64-0.35.6.tgz \
  eced7e4ac797fbd5010a5f79f65db13baf4e0dc82815df63a2a17051667463aa
fetch @img/sharp-libvips-darwin-x64@1.3.5 img-sharp-libvips-darwin-x64-1.3.5.tgz \
  7738f7ad3b97c4ff5bbb9ccc272e71717ba7b55c224fdd30fedfbf5a3ede20d4
fetch @img/sharp-libvips-darwin-arm64@1.3.5 img-sharp-libvips-darwin-arm64-1.3.5.tgz \
  621dcd7e48eabaa250f822f6cba9aabc77fc1349c448e1c2e46837c9049f4e70

files="img-sharp-darwin-x64-0.35.6/package/lib/sharp-darwin-x64-0.35.6.node
img-sharp-darwin-arm64-0.35.6/package/lib/sharp-darwin-arm64-0.35.6.node
img-sharp-libvips-darwin-x64-1.3.5/package/lib/libvips-cpp.8.18.8.dylib"
nm_ours=$(cd - >/dev/null && cd "$(dirname "$nm_ours")" && pwd)/linkscope-nm

status=0
for f in $files; do
  for flags in "" -g -u --defined-only -p -n -r -j -m -P -A -a -D -C -S "-g -p" "-u -m" "-g -j" "-P -g" \
      "-A -g" "-C -g" "-D -g" "-S -g" "-n -g" "-r -g"; do
    "$nm_ours" $flags "$f" > ours.txt 2>/dev/null || true
    "$nm_llvm" $flags "$f" > theirs.txt 2>/dev/null || true
    if cmp -s ours.txt theirs.txt; then
      echo "same  nm $flags $(basename "$f"): $(wc -l < theirs.txt) lines"
    else
      echo "DIFF  nm $flags $(basename "$f")"
      diff ours.txt theirs.txt | head -5
      status=1
    fi
  done
done

# The export trie and bind tables of the same files against llvm-objdump-14
# (tests/macho/test_exports and test_binds, their [real] cases), and nm's
# flag sets again through test_macho_nm [real].
real=""
for f in $files; do real="$real$(pwd)/$f:"; done
# The dyld emulator's [real] case needs both libvips-cpp slices (test_dyld: the npm layout).
real="$real$(pwd)/img-sharp-libvips-darwin-arm64-1.3.5/package/lib/libvips-cpp.8.18.8.dylib:"
for t in test_exports test_binds test_dyld test_macho_nm; do
  bin=$(dirname "$nm_ours")/../tests/$t
  if [ -x "$bin" ]; then
    LINKSCOPE_MACHO_REAL=$real "$bin" '[real]' >/dev/null 2>&1 && echo "same  $t [real]" || { echo "DIFF  $t [real]"; status=1; }
  fi
done

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
