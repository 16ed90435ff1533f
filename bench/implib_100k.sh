#!/usr/bin/env bash
# A short-import .lib with 100k members (llvm-dlltool-14 from a generated
# .def), and the question "which DLL does __imp_X come from, and how is it
# imported" answered three ways:
#   - llvm-nm-14 -A over the library, grep for the symbol (the member name of
#     a short import is the DLL name);
#   - linkscope-implib --symbols (full parse of every member, TSV), grep;
#   - in-process: bench_implib (Google Benchmark: parse, hash_index lookup
#     against a linear scan), when the bench target is built.
#
#   bench/implib_100k.sh [BUILD_DIR]
set -u
build=${1:-build}
tool=$build/examples/linkscope-implib
[ -x "$tool" ] || { echo "no $tool" >&2; exit 2; }
dir=${TMPDIR:-/tmp}/linkscope_bench_implib
mkdir -p "$dir"
if [ ! -f "$dir/big.lib" ]; then
  { echo "LIBRARY big.dll"; echo "EXPORTS"; for i in $(seq 0 99999); do
      if [ $((i % 10)) -eq 0 ]; then echo "  big_function_$i DATA"; else echo "  big_function_$i"; fi; done; } >"$dir/big.def"
  llvm-dlltool-14 -m i386:x86-64 -d "$dir/big.def" -l "$dir/big.lib" || exit 2
fi
now() { date +%s.%N; }
sym=__imp_big_function_77777
echo "library: $dir/big.lib ($(wc -c <"$dir/big.lib") bytes)"
t0=$(now); a=$(llvm-nm-14 -A "$dir/big.lib" | grep -F " $sym" | head -1); t1=$(now)
b=$("$tool" --symbols "$dir/big.lib" | awk -F'\t' -v s="${sym#__imp_}" '$2 == s'); t2=$(now)
echo "llvm-nm-14 -A | grep:           $(echo "$t1 - $t0" | bc) s   -> $a"
echo "linkscope-implib --symbols | awk: $(echo "$t2 - $t1" | bc) s   -> $b"
[ -x "$build/bench/bench_implib" ] && "$build/bench/bench_implib" --benchmark_min_time=0.2
exit 0
