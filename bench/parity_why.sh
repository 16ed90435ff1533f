#!/usr/bin/env bash
# Parity and timing of linkscope-why against real links of LLVM programs.
#
#   bench/parity_why.sh [BUILD_DIR] [--quick]
#
# Three C++ programs are linked with clang++-14 against the LLVM-14 static
# archives (llvm-config-14 --link-static; LIBRARY_PATH unset):
#   1. prints llvm::sys::getDefaultTargetTriple() to llvm::outs(), --libs support
#   2. initializes all targets and creates a TargetMachine, --libs all
#      (Polly is dropped from the list when libPolly.a is not installed)
#   3. program 1 with its object after the archives
# The exact linker arguments come from `clang++-14 -fuse-ld=lld|bfd -###`,
# written one per line into a response file. Checks:
#   - lld: `linkscope-why @rsp --why-extract=a.tsv` == `ld.lld-14 @rsp
#     --why-extract=b.tsv --no-demangle`, byte for byte (all three programs);
#   - bfd: `linkscope-why --semantics=bfd --print-map-includes @rsp` == the
#     "Archive member included" section of `ld @rsp --no-demangle -Map=...`
#     (programs 1 and 2); program 3 must fail under bfd with the undefined
#     symbols GNU ld reports.
# Then times linkscope-why against the full ld.lld link (hyperfine when
# available) and prints the resolution throughput (--stats).
# --quick runs programs 1 and 3 only (for CI: well under a minute).
# Exit status: 0 all equal, 1 a difference, 2 missing tools (skipped).
set -u
build=build
quick=0
for a in "$@"; do
  case $a in
    --quick) quick=1 ;;
    *) build=$a ;;
  esac
done
tool=$(cd "$(dirname "$build/examples/linkscope-why")" 2>/dev/null && pwd)/linkscope-why
[ -x "$tool" ] || { echo "no $build/examples/linkscope-why (build the linkscope-why target first)" >&2; exit 2; }
for t in clang++-14 ld.lld-14 ld llvm-config-14 python3; do
  command -v "$t" >/dev/null || { echo "parity_why: $t missing, skipped" >&2; exit 2; }
done
[ -f "$(llvm-config-14 --libdir)/libLLVMSupport.a" ] || { echo "parity_why: LLVM-14 static archives missing (llvm-14-dev), skipped" >&2; exit 2; }
unset LIBRARY_PATH

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2

cat >p1.cpp <<'EOF'
#include "llvm/Support/Host.h"
#include "llvm/Support/raw_ostream.h"
int main() { llvm::outs() << llvm::sys::getDefaultTargetTriple() << "\n"; return 0; }
EOF
cat >p2.cpp <<'EOF'
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include <memory>
int main() {
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllAsmParsers();
  llvm::InitializeAllAsmPrinters();
  std::string err, triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!t) { llvm::errs() << err << "\n"; return 1; }
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(triple, "generic", "", opts, llvm::None));
  llvm::outs() << (tm ? "ok" : "fail") << "\n";
  return 0;
}
EOF

cxxflags=$(llvm-config-14 --cxxflags)
ldflags=$(llvm-config-14 --link-static --ldflags)
syslibs=$(llvm-config-14 --link-static --system-libs)
libs_support=$(llvm-config-14 --link-static --libs support)
libs_all=""
for l in $(llvm-config-14 --link-static --libs all); do
  name=${l#-l}
  if [ "$name" != "$l" ] && [ ! -f "$(llvm-config-14 --libdir)/lib$name.a" ]; then continue; fi  # Polly
  libs_all="$libs_all $l"
done

# rsp LINKER OUTPUT ARGS...: the linker arguments clang would pass, one per line.
rsp() {
  local linker=$1 out=$2
  shift 2
  clang++-14 -fuse-ld="$linker" "$@" -o "$out.exe" -### 2>&1 | tail -1 >"$out.cmd"
  python3 - "$out.cmd" "$out" <<'EOF'
import shlex, sys
args = shlex.split(open(sys.argv[1]).read())[1:]
def quote(a):
    return a if a and all(c not in a for c in " \t\n'\"\\") else "'" + a.replace("\\", "\\\\").replace("'", "'\\''") + "'"
open(sys.argv[2], "w").write("".join(quote(a) + "\n" for a in args))
EOF
}

status=0
programs="1 2 3"
[ $quick = 1 ] && programs="1 3"
clang++-14 $cxxflags -c p1.cpp -o p1.o || exit 2
[ $quick = 1 ] || clang++-14 $cxxflags -c p2.cpp -o p2.o || exit 2

map_section() { awk '/^Archive member included/ {p = 1; n = 0} p { n++; if (n > 2 && $0 == "") exit; print }' "$1"; }

for p in $programs; do
  case $p in
    1) args="p1.o $ldflags $libs_support $syslibs" ;;
    2) args="p2.o $ldflags $libs_all $syslibs" ;;
    3) args="$ldflags $libs_support $syslibs p1.o" ;;
  esac
  # shellcheck disable=SC2086
  rsp lld "p$p.lld.rsp" $args
  # shellcheck disable=SC2086
  rsp bfd "p$p.bfd.rsp" $args
  "$tool" @"p$p.lld.rsp" --why-extract="p$p.ours.tsv" >/dev/null 2>"p$p.ours.err"
  ld.lld-14 @"p$p.lld.rsp" --why-extract="p$p.lld.tsv" --no-demangle 2>"p$p.lld.err"
  rows=$(($(wc -l <"p$p.lld.tsv") - 1))
  archives=$(tail -n +2 "p$p.lld.tsv" | cut -f2 | sed 's/(.*//' | sort -u | wc -l)
  if cmp -s "p$p.ours.tsv" "p$p.lld.tsv"; then
    echo "program $p lld: --why-extract identical ($rows members from $archives archives)"
  else
    echo "program $p lld: --why-extract DIFFERS"; diff "p$p.ours.tsv" "p$p.lld.tsv" | head -10; status=1
  fi
  if [ "$p" != 3 ]; then
    ld @"p$p.bfd.rsp" --no-demangle -Map="p$p.map" 2>"p$p.bfd.err"
    map_section "p$p.map" >"p$p.bfd.includes"
    "$tool" --semantics=bfd --print-map-includes @"p$p.bfd.rsp" >"p$p.ours.includes" 2>/dev/null
    if cmp -s "p$p.ours.includes" "p$p.bfd.includes"; then
      echo "program $p bfd: -Map archive-member list identical ($(($(wc -l <"p$p.bfd.includes") - 2)) lines)"
    else
      echo "program $p bfd: -Map list DIFFERS"; diff "p$p.ours.includes" "p$p.bfd.includes" | head -10; status=1
    fi
    # How many members get a different first reason under the two semantics.
    python3 - "p$p.lld.tsv" "p$p.ours.includes" <<'EOF'
import sys, re
lld = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    ref, member, sym = line.split("\t")
    lld[member] = (ref, sym)
text = open(sys.argv[2]).read().split("\n\n", 1)[1]
bfd = {}
for m in re.finditer(r"(\S+)\s+(?:(\S+) )?\((.*)\)\n", text):
    bfd[m.group(1)] = (m.group(2) or "", m.group(3))
same_set = set(lld) == set(bfd)
differ = sum(1 for k in lld if k in bfd and lld[k] != bfd[k])
print(f"  lld vs bfd: same member set: {same_set}; members with a different first reason: {differ}")
EOF
  else
    ld @"p$p.bfd.rsp" --no-demangle -o p3.bfd.out 2>"p3.bfd.err"
    ld_status=$?
    grep -o "undefined reference to \`[^']*'" p3.bfd.err | sed "s/.*\`//; s/'\$//" | sort -u >p3.bfd.undef
    "$tool" --semantics=bfd @"p3.bfd.rsp" >/dev/null 2>p3.ours.bfd.err
    our_status=$?
    sed -n 's/^linkscope-why: undefined symbol: \([^ ]*\) .*/\1/p' p3.ours.bfd.err | sort -u >p3.ours.undef
    if [ $ld_status -ne 0 ] && [ $our_status -eq 1 ] && [ -s p3.bfd.undef ] && cmp -s p3.ours.undef p3.bfd.undef; then
      echo "program 3 bfd: GNU ld fails, linkscope-why reports the same $(wc -l <p3.bfd.undef) undefined symbols"
    else
      echo "program 3 bfd: MISMATCH (ld exit $ld_status, ours $our_status)"; diff p3.ours.undef p3.bfd.undef; status=1
    fi
  fi
done

echo
echo "timing (linkscope-why @rsp --why-extract vs the full ld.lld-14 link of the same rsp):"
for p in $programs; do
  [ "$p" = 3 ] && continue
  if command -v hyperfine >/dev/null; then
    hyperfine -N -w 1 -r 5 --export-json "p$p.json" \
      "$tool @p$p.lld.rsp --why-extract=p$p.t.tsv" "ld.lld-14 @p$p.lld.rsp --why-extract=p$p.u.tsv --no-demangle" \
      >/dev/null 2>&1
    python3 - "p$p.json" "$p" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
ours, lld = r[0]["mean"], r[1]["mean"]
print(f"  program {sys.argv[2]}: linkscope-why {ours*1e3:.0f} ms (user {r[0]['user']*1e3:.0f} ms), "
      f"ld.lld {lld*1e3:.0f} ms (user {r[1]['user']*1e3:.0f} ms): {lld/ours:.1f}x faster")
EOF
  else
    TIMEFORMAT=%R
    o=$( { time "$tool" @"p$p.lld.rsp" --why-extract=p$p.t.tsv >/dev/null 2>&1; } 2>&1 )
    l=$( { time ld.lld-14 @"p$p.lld.rsp" --why-extract=p$p.u.tsv --no-demangle >/dev/null 2>&1; } 2>&1 )
    echo "  program $p: linkscope-why ${o}s, ld.lld ${l}s"
  fi
  "$tool" @"p$p.lld.rsp" --stats >/dev/null 2>"p$p.stats"; sed 's/^/  /' "p$p.stats"
done
exit $status
