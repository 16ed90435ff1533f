#!/usr/bin/env bash
# Scaling table: generated inputs at 10k, 100k, 1M and 10M symbols.
#
#   bench/scaling.sh [BUILD_DIR] [SIZES...]
#
# linkscope-gen writes an ELF .so (N versioned exports, DT_HASH + DT_GNU_HASH)
# and a GNU ar archive (N symbols, 4 per member) for each size into
# $SCALING_DIR (default /tmp/linkscope-scaling; 10M needs about 2.6 GB).
# At the smallest size the files are checked first: readelf -a, nm -D / nm -s
# and llvm-nm-14 must accept them without a word on stderr, and our listings
# must equal nm's. Then, per size, each command runs 3 times; the table gives
# the best wall time, the CPU time (user+sys) of that run, max RSS
# (/usr/bin/time), and both per symbol:
#   linkscope-nm -D lib.so, linkscope-ar --print-armap lib.a,
#   linkscope-ar --find (last symbol) lib.a, linkscope-index-time lib.so
#   (symbol table load, hash_index build, one lookup per symbol).
# Goal: 10M within 11x of 1M (checked on CPU time, the machine is shared).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build-bench}
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(10000 100000 1000000 10000000)
dir=${SCALING_DIR:-/tmp/linkscope-scaling}
gen=$build/bench/linkscope-gen
itime=$build/bench/linkscope-index-time
nm_tool=$build/examples/linkscope-nm
ar_tool=$build/examples/linkscope-ar
for t in "$gen" "$itime" "$nm_tool" "$ar_tool"; do
  [ -x "$t" ] || { echo "scaling: $t not built (cmake --build $build --target linkscope-gen linkscope-index-time linkscope-nm linkscope-ar)" >&2; exit 2; }
done
mkdir -p "$dir"
avail_kb=$(df -Pk "$dir" | awk 'NR == 2 {print $4}')
max=0
for n in "${sizes[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
need_kb=$((max * 300 / 1024))  # ~55 B/symbol .so + ~190 B/symbol .a, with margin
if [ "$avail_kb" -lt "$need_kb" ]; then
  echo "scaling: $dir has $((avail_kb / 1024)) MB free, $((need_kb / 1024)) MB needed" >&2
  exit 2
fi

fail=0
check_valid() {  # n
  local so=$dir/lib$1.so a=$dir/lib$1.a w=$dir/check
  for cmd in "readelf -a $so" "llvm-readelf-14 -a $so" "nm -D $so" "llvm-nm-14 -D $so" "readelf -a $a" "nm -s $a" "llvm-nm-14 --print-armap $a"; do
    if ! $cmd >"$w.out" 2>"$w.err" || [ -s "$w.err" ]; then
      echo "INVALID: \`$cmd\`: $(head -c 300 "$w.err")"
      fail=1
    fi
  done
  nm -D "$so" >"$w.nm"
  "$nm_tool" -D "$so" | cmp -s - "$w.nm" || { echo "MISMATCH: linkscope-nm -D vs nm -D at $1"; fail=1; }
  nm -s "$a" | awk '/^Archive index:$/ {p = 1} p {print} p && /^$/ {exit}' >"$w.nm"
  "$ar_tool" --print-armap "$a" | cmp -s - "$w.nm" || { echo "MISMATCH: linkscope-ar --print-armap vs nm -s at $1"; fail=1; }
  rm -f "$w".*
}

# measure LABEL N CMD...: best of 3 by wall time; sets global row text.
rows=()
declare -A cpu_ms
measure() {
  local label=$1 n=$2
  shift 2
  local best_wall="" best_cpu="" best_rss="" out
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S %M" -o "$dir/time" "$@" >"$dir/out" 2>/dev/null
    t1=$(date +%s%N)
    local wall=$(((t1 - t0) / 1000))  # us
    read -r user sys rss <"$dir/time"
    local cpu
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%d", (u + s) * 1000}')
    if [ -z "$best_wall" ] || [ "$wall" -lt "$best_wall" ]; then best_wall=$wall best_cpu=$cpu best_rss=$rss; fi
  done
  cpu_ms["$label,$n"]=$best_cpu
  out=$(head -c 200 "$dir/out" | tr '\n' ' ')
  rows+=("$(awk -v l="$label" -v n="$n" -v w="$best_wall" -v c="$best_cpu" -v r="$best_rss" -v o="$out" 'BEGIN {
    printf "| %s | %d | %.1f | %d | %.1f | %.1f | %.1f |", l, n, w / 1000, c, w * 1000 / n, r / 1024, r * 1024 / n
    if (l ~ /index/) printf " %s", o
  }')")
}

for n in "${sizes[@]}"; do
  so=$dir/lib$n.so a=$dir/lib$n.a
  t0=$(date +%s%N)
  "$gen" so "$n" "$so" && "$gen" ar "$n" "$a" || { echo "scaling: generation failed at $n" >&2; exit 2; }
  t1=$(date +%s%N)
  echo "generated $n symbols in $(((t1 - t0) / 1000000)) ms: $(du -h "$so" | cut -f1) .so, $(du -h "$a" | cut -f1) .a" >&2
  [ "$n" = "${sizes[0]}" ] && check_valid "$n"
  measure "linkscope-nm -D" "$n" "$nm_tool" -D "$so"
  measure "linkscope-ar --print-armap" "$n" "$ar_tool" --print-armap "$a"
  measure "linkscope-ar --find" "$n" "$ar_tool" --find "gen_sym_$((n - 1))" "$a"
  measure "index (.so dynsym)" "$n" "$itime" "$so"
  [ "$n" = "$max" ] || rm -f "$so" "$a"
done
rm -f "$dir/lib$max.so" "$dir/lib$max.a" "$dir/out" "$dir/time"

echo
echo "| command | symbols | best wall ms | CPU ms | wall ns/symbol | max RSS MB | RSS B/symbol | index figures |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}" | sort -s -t'|' -k2,2
echo
if [[ " ${sizes[*]} " == *" 1000000 "* && " ${sizes[*]} " == *" 10000000 "* ]]; then
  for label in "linkscope-nm -D" "linkscope-ar --print-armap" "linkscope-ar --find" "index (.so dynsym)"; do
    small=${cpu_ms["$label,1000000"]} big=${cpu_ms["$label,10000000"]}
    ratio=$(awk -v s="$small" -v b="$big" 'BEGIN {printf "%.2f", (s > 0 ? b / s : 0)}')
    verdict=$(awk -v r="$ratio" 'BEGIN {print (r <= 11 ? "ok" : "OVER")}')
    echo "10M/1M CPU time, $label: ${big} ms / ${small} ms = ${ratio}x (goal <= 11x): $verdict"
    [ "$verdict" = ok ] || fail=1
  done
fi
exit $fail
