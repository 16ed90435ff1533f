#!/usr/bin/env bash
# The packager's questions on real Debian packages (not in CI: needs the
# big packages). Installs libtorch1.13 and llvm-14-dev when missing.
#   bench/real_absorb.sh [BUILD_DIR]
# 1. A program using LLVM links against libLLVM-14.so alone: every LLVM static
#    archive must come out not-needed / re-exported / unrelated (never needed),
#    and the real link without any archive must succeed.
# 2. libtorch_cpu.so: fmt and kineto symbols in its dynamic table; duplicates
#    against the distribution's libfmt.so.9; the TorchConfig-style
#    "kineto;fmt::fmt-header-only;..." list checked under /usr.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
need=()
dpkg-query -W -f='${Status}' libtorch1.13 2>/dev/null | grep -q 'ok installed' || need+=(libtorch1.13 libtorch-dev)
dpkg-query -W -f='${Status}' llvm-14-dev 2>/dev/null | grep -q 'ok installed' || need+=(llvm-14-dev)
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
[ -x "$build/examples/linkscope-absorbed" ] || {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLINKSCOPE_BUILD_TESTS=OFF -DLINKSCOPE_BUILD_FUZZ=OFF >/dev/null
  cmake --build "$build" >/dev/null; }
bin=$build/examples
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
status=0

echo "## 1. LLVM: a program linked against libLLVM-14.so alone"
cat >"$work/triple.cpp" <<'CPP'
#include <llvm/Support/Host.h>
#include <llvm/Support/raw_ostream.h>
int main() { llvm::outs() << llvm::sys::getDefaultTargetTriple() << "\n"; }
CPP
unset LIBRARY_PATH
if clang++-14 $(llvm-config-14 --cxxflags) "$work/triple.cpp" -o "$work/triple" -L/usr/lib/llvm-14/lib -lLLVM-14 2>"$work/link.err"; then
  echo "real link against libLLVM-14.so alone: ok ($("$work/triple"))"
else
  echo "real link against libLLVM-14.so alone: FAILED"; cat "$work/link.err"; status=1
fi
clang++-14 $(llvm-config-14 --cxxflags) -c "$work/triple.cpp" -o "$work/triple.o"
start=$(date +%s.%N)
"$bin/linkscope-absorbed" --json --consumer "$work/triple.o" /usr/lib/llvm-14/lib/libLLVM-14.so /usr/lib/llvm-14/lib/libLLVM*.a >"$work/llvm.json"
code=$?
end=$(date +%s.%N)
python3 - "$work/llvm.json" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
c = collections.Counter(a["verdict"] for a in r["archives"])
print(f"archives: {len(r['archives'])}; verdicts: {dict(c)}")
for a in r["archives"]:
    if a["verdict"] == "needed":
        print("  NEEDED:", a["path"], a["evidence"][:5])
PY
printf 'linkscope-absorbed over %s archives: %.2f s, exit %s\n' "$(ls /usr/lib/llvm-14/lib/libLLVM*.a | wc -l)" "$(echo "$end - $start" | bc)" "$code"
[ "$code" -eq 0 ] || { echo "expected no archive to be needed (the real link needs none)"; status=1; }

echo
echo "## 2. libtorch_cpu.so.1.13: kineto and fmt"
torch=/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13
echo "dynamic symbols mentioning kineto: $("$bin/linkscope-nm" -D --defined-only "$torch" | grep -ci kineto)"
echo "dynamic symbols in namespace fmt (_ZN3fmt): $("$bin/linkscope-nm" -D --defined-only "$torch" | grep -c ' _ZN3fmt')"
echo "undefined fmt references (bound to libfmt.so.9 at run time): $("$bin/linkscope-nm" -D -u "$torch" | grep -c '_ZN3fmt')"
echo "reference: nm -D agrees: $(nm -D --defined-only "$torch" | grep -c ' _ZN3fmt') defined, $(nm -D -u "$torch" | grep -c _ZN3fmt) undefined"
"$bin/linkscope-dupes" "$torch" /usr/lib/x86_64-linux-gnu/libfmt.so.9 | tail -1
echo '$ linkscope-absorbed --allow-unevaluated --cmake-libs "kineto;fmt::fmt-header-only;fmt;gloo;pthreadpool" --prefix /usr' "$torch"
"$bin/linkscope-absorbed" --allow-unevaluated --cmake-libs "kineto;fmt::fmt-header-only;fmt;gloo;pthreadpool" --prefix /usr "$torch"
echo "exit $?"
exit $status
