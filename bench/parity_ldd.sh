#!/usr/bin/env bash
# Parity and timing of linkscope-ldd against the real ld.so / ldd.
#
#   bench/parity_ldd.sh [BUILD_DIR] [PROGRAM...]
#
# Default programs: /usr/lib/libtorch-test/op_registration_test (package
# libtorch-test: 287 objects, ~147k distinct bindings), /usr/bin/cmake,
# /usr/bin/clang-14. For each program:
#   - bindings: `linkscope-ldd --bindings` must equal, as a set, the bindings
#     ld.so prints in trace mode. Trace mode relocates only with LD_WARN set
#     (rtld.c), so the reference is
#       LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=1 LD_DEBUG=bindings
#       LD_DEBUG_OUTPUT=F /lib64/ld-linux-x86-64.so.2 PROGRAM
#     converted to `from\tto\tsymbol\tversion`; the vDSO's own lookups (not a
#     file) are left out of both sides.
#   - list: the default output must equal ldd's lines without load addresses
#     and without linux-vdso.so.1.
#   - unused: `linkscope-ldd --unused` must equal `ldd -u -r` (stdout).
#   - undefined: `linkscope-ldd --undefined` must equal the error lines of `ldd -r`.
# Then times, side by side (hyperfine when present): linkscope-ldd --bindings,
# ldd -r, and ld.so with LD_DEBUG=bindings. Finally a synthetic closure of
# N = 1k..10k DSOs (a chain, each binding into the next) to show linear work.
set -u
build=${1:-build}
shift || true
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(/usr/lib/libtorch-test/op_registration_test /usr/bin/cmake /usr/bin/clang-14)
tool=$build/examples/linkscope-ldd
[ -x "$tool" ] || { echo "no $tool (build the linkscope-ldd target first)" >&2; exit 2; }
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
rtld=/lib64/ld-linux-x86-64.so.2
if [ ! -e /usr/lib/libtorch-test/op_registration_test ] && command -v apt-get >/dev/null; then
  echo "installing libtorch-test ..." >&2
  apt-get install -y -q libtorch-test >/dev/null 2>&1 || echo "could not install libtorch-test" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH LD_PRELOAD

to_tsv() {  # LD_DEBUG=bindings lines -> TSV rows
  sed -n "s/^ *[0-9]*:\tbinding file \(.*\) \[0\] to \(.*\) \[0\]: \(normal\|protected\) symbol \`\([^']*\)'\( \[\(.*\)\]\)\?\$/\1\t\2\t\4\t\6/p" |
    grep -v 'linux-vdso'
}
strip_ldd() { grep -v linux-vdso | sed 's/ (0x[0-9a-f]*)$//'; }

status=0
for p in "${programs[@]}"; do
  [ -e "$p" ] || { echo "== $p: missing, skipped"; continue; }
  echo "== $p"
  rm -f "$tmp"/dbg.*
  LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$tmp/dbg" "$rtld" "$p" >/dev/null 2>&1
  cat "$tmp"/dbg.* | to_tsv | LC_ALL=C sort -u >"$tmp/ref.tsv"
  "$tool" --bindings "$p" 2>"$tmp/err" | LC_ALL=C sort -u >"$tmp/ours.tsv"
  ref=$(wc -l <"$tmp/ref.tsv") ours=$(wc -l <"$tmp/ours.tsv")
  only_ours=$(LC_ALL=C comm -23 "$tmp/ours.tsv" "$tmp/ref.tsv" | wc -l)
  only_ref=$(LC_ALL=C comm -13 "$tmp/ours.tsv" "$tmp/ref.tsv" | wc -l)
  objects=$("$tool" "$p" 2>/dev/null | wc -l)
  if [ "$only_ours" -eq 0 ] && [ "$only_ref" -eq 0 ]; then
    echo "bindings: SAME ($ours distinct bindings, $objects objects listed)"
  else
    echo "bindings: DIFFER (ld.so $ref, linkscope $ours; only linkscope $only_ours, only ld.so $only_ref)"
    LC_ALL=C comm -3 "$tmp/ours.tsv" "$tmp/ref.tsv" | head -20
    status=1
  fi
  ldd "$p" 2>/dev/null | strip_ldd >"$tmp/ldd.txt"
  "$tool" "$p" 2>/dev/null >"$tmp/list.txt"
  if cmp -s "$tmp/ldd.txt" "$tmp/list.txt"; then echo "list: SAME as ldd"; else echo "list: DIFFER"; diff "$tmp/ldd.txt" "$tmp/list.txt" | head; status=1; fi
  ldd -u -r "$p" >"$tmp/u_ref.txt" 2>/dev/null
  "$tool" --unused "$p" >"$tmp/u_ours.txt" 2>/dev/null
  if cmp -s "$tmp/u_ref.txt" "$tmp/u_ours.txt"; then
    echo "unused: SAME as ldd -u -r ($(grep -c '^	' "$tmp/u_ref.txt") listed: $(grep '^	' "$tmp/u_ref.txt" | xargs -n1 basename 2>/dev/null | tr '\n' ' '))"
  else
    echo "unused: DIFFER"; diff "$tmp/u_ref.txt" "$tmp/u_ours.txt" | head; status=1
  fi
  ldd -r "$p" 2>/dev/null | grep -v '^	' | LC_ALL=C sort -u >"$tmp/r_ref.txt"
  "$tool" --undefined "$p" 2>/dev/null | LC_ALL=C sort -u >"$tmp/r_ours.txt"
  if cmp -s "$tmp/r_ref.txt" "$tmp/r_ours.txt"; then
    echo "undefined: SAME as ldd -r ($(wc -l <"$tmp/r_ref.txt") lines)"
  else
    echo "undefined: DIFFER"; diff "$tmp/r_ref.txt" "$tmp/r_ours.txt" | head; status=1
  fi
  "$tool" --stats --bindings "$p" 2>&1 >/dev/null | grep ' objects, '
  /usr/bin/time -f "linkscope-ldd --bindings: %e s wall, %U s user, %S s sys, %R minor faults, %M KB max RSS" \
    "$tool" --bindings "$p" 2>&1 >/dev/null | tail -1
  /usr/bin/time -f "ldd -r:                   %e s wall, %U s user, %S s sys, %R minor faults, %M KB max RSS" \
    ldd -r "$p" 2>&1 >/dev/null | tail -1
  if command -v hyperfine >/dev/null; then
    hyperfine -N -w 1 -r 5 --style basic --export-markdown "$tmp/t.md" \
      -n "linkscope-ldd --bindings" "$tool --bindings $p" \
      -n "ldd -r" "ldd -r $p" \
      -n "ld.so LD_DEBUG=bindings (trace)" \
      "env LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=$tmp/hf $rtld $p" \
      2>/dev/null | grep -E "Time|±|faster|  [0-9.]+ ± " || true
    cat "$tmp/t.md"
    rm -f "$tmp"/hf.*
  fi
done

# A synthetic closure of N DSOs: libn00000.so needs libn00001.so ... each
# function gNNNNN calls gNNNNN+1. One template is built with gcc and renamed
# in place (same-length names), so making 10k files takes seconds; the renamed
# files' hash sections are stale, so ld.so cannot run them: this part times
# linkscope alone, to show that the work grows linearly with the closure.
if command -v gcc >/dev/null && command -v python3 >/dev/null; then
  echo "== synthetic closures (linear growth)"
  mkdir -p "$tmp/chain"
  (cd "$tmp/chain" &&
    echo 'int g00001(void); int g00000(void) { return g00001() + 1; }' >t.c &&
    echo 'int g00001(void) { return 1; }' >n.c &&
    gcc -shared -fPIC n.c -o libn00001.so -Wl,-soname,libn00001.so &&
    gcc -shared -fPIC t.c -o tpl.so -Wl,-soname,libn00000.so -L. -l:libn00001.so)
  for n in 1000 2000 5000 10000; do
    python3 - "$tmp/chain" "$n" <<'EOF'
import sys, os
d, n = sys.argv[1], int(sys.argv[2])
tpl = open(os.path.join(d, "tpl.so"), "rb").read()
for i in range(n):
    b = tpl.replace(b"libn00001.so", b"libn%05d.so" % (i + 1) if i + 1 < n else b"libc.so.6\0\0\0")
    b = b.replace(b"libn00000.so", b"libn%05d.so" % i).replace(b"g00001", b"g%05d" % (i + 1)).replace(b"g00000", b"g%05d" % i)
    open(os.path.join(d, "libn%05d.so" % i), "wb").write(b)
EOF
    /usr/bin/time -f "N=$n objects: %e s wall, %U s user, %S s sys" \
      "$tool" --no-env --library-path "$tmp/chain" --stats --bindings "$tmp/chain/libn00000.so" 2>&1 >/dev/null |
      grep -E 'objects' | tr '\n' ' '
    echo
  done
fi
exit $status
