#!/usr/bin/env bash
# Parity and timing of linkscope-ar against GNU ar / nm over every .a in
# /usr/lib/llvm-14/lib and /usr/lib/x86_64-linux-gnu (or the folders given).
#
#   bench/parity_ar.sh [BUILD_DIR] [DIR...]
#
# For each archive: `linkscope-ar t` must equal `ar t`, and
# `linkscope-ar --print-armap` must equal the "Archive index:" section of
# `nm -s` (from that line through the blank line that ends it). Files that
# ar itself rejects (linker scripts named .a) must be rejected by us too.
# Prints counts, the archives that differ, and total times.
set -u
build=${1:-build}
shift || true
dirs=("$@")
[ ${#dirs[@]} -eq 0 ] && dirs=(/usr/lib/llvm-14/lib /usr/lib/x86_64-linux-gnu)
tool=$build/examples/linkscope-ar
[ -x "$tool" ] || { echo "no $tool (build the linkscope-ar target first)" >&2; exit 2; }

files=()
for d in "${dirs[@]}"; do
  for f in "$d"/*.a; do [ -f "$f" ] && files+=("$f"); done
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

archives=0 not_archives=0 t_same=0 t_diff=0 map_same=0 map_diff=0 entries=0 members=0
for f in "${files[@]}"; do
  if ! ar t "$f" >"$tmp/ar_t" 2>/dev/null; then
    not_archives=$((not_archives + 1))
    if "$tool" t "$f" >/dev/null 2>&1; then echo "ACCEPTED BY US, REJECTED BY ar: $f"; t_diff=$((t_diff + 1)); fi
    continue
  fi
  archives=$((archives + 1))
  "$tool" t "$f" >"$tmp/our_t" 2>"$tmp/err"
  if cmp -s "$tmp/ar_t" "$tmp/our_t"; then t_same=$((t_same + 1)); else t_diff=$((t_diff + 1)); echo "t DIFFERS: $f $(head -c 200 "$tmp/err")"; fi
  members=$((members + $(wc -l <"$tmp/ar_t")))
  nm -s "$f" 2>/dev/null | awk '/^Archive index:$/ {p = 1} p {print} p && /^$/ {exit}' >"$tmp/nm_s"
  "$tool" --print-armap "$f" >"$tmp/our_s" 2>"$tmp/err"
  if cmp -s "$tmp/nm_s" "$tmp/our_s"; then map_same=$((map_same + 1)); else map_diff=$((map_diff + 1)); echo "armap DIFFERS: $f $(head -c 200 "$tmp/err")"; fi
  n=$(wc -l <"$tmp/nm_s"); [ "$n" -gt 2 ] && entries=$((entries + n - 2))
done

echo "archives: $archives (+ $not_archives .a files that ar rejects)"
echo "members: $members, armap entries: $entries"
echo "t:            $t_same equal, $t_diff differ"
echo "print-armap:  $map_same equal, $map_diff differ"

# Timing. Wall time on a shared machine is dominated by process start-up
# and by other load, so each loop also reports CPU time (user+sys of the
# tools) and the same minus a baseline loop of /bin/true (the cost of
# starting a process): the "net" figure is the work of the tool itself.
TIMEFORMAT='%R %U %S'
time_of() {  # best of $RUNS: "wall cpu" of running "$@" FILE over all files
  local runs=$1; shift
  local best_wall= best_cpu=
  for ((run = 0; run < runs; ++run)); do
    local s wall cpu
    s=$( { time (for f in "${files[@]}"; do "$@" "$f" >/dev/null 2>&1; done) ; } 2>&1 )
    wall=$(echo "$s" | awk '{print $1}')
    cpu=$(echo "$s" | awk '{printf "%.3f", $2 + $3}')
    if [ -z "$best_cpu" ] || awk -v a="$cpu" -v b="$best_cpu" 'BEGIN {exit !(a < b)}'; then best_cpu=$cpu; best_wall=$wall; fi
  done
  echo "$best_wall $best_cpu"
}
runs=${RUNS:-3}
base=$(time_of "$runs" /bin/true)
row() {  # label "wall cpu" [reference "wall cpu"]
  local label=$1 w c
  w=${2% *}; c=${2#* }
  local net
  net=$(awk -v c="$c" -v b="${base#* }" 'BEGIN {n = c - b; if (n < 0.001) n = 0.001; printf "%.3f", n}')
  printf '  %-28s wall %8.3f s  cpu %8.3f s  net cpu %8.3f s' "$label" "$w" "$c" "$net"
  if [ $# -ge 3 ]; then
    local rn
    rn=$(awk -v c="${3#* }" -v b="${base#* }" 'BEGIN {n = c - b; if (n < 0.001) n = 0.001; printf "%.3f", n}')
    awk -v a="$net" -v b="$rn" -v wa="$w" -v wb="${3% *}" 'BEGIN {printf "   (= %.1fx the net cpu and %.1fx the wall of linkscope-ar)", a / b, wa / wb}'
  fi
  echo
}
ours_t=$(time_of "$runs" "$tool" t)
ours_s=$(time_of "$runs" "$tool" --print-armap)
ar_t=$(time_of "$runs" ar t)
llvm_t=$(time_of 1 llvm-ar-14 t)
nm_s=$(time_of 1 nm -s)
llvm_s=$(time_of 1 llvm-nm-14 --print-armap)
echo "time over ${#files[@]} files (best of $runs for ours and ar t, 1 run for the others):"
row "/bin/true (baseline)" "$base"
row "linkscope-ar t" "$ours_t"
row "ar t" "$ar_t" "$ours_t"
row "llvm-ar-14 t" "$llvm_t" "$ours_t"
row "linkscope-ar --print-armap" "$ours_s"
row "nm -s" "$nm_s" "$ours_s"
row "llvm-nm-14 --print-armap" "$llvm_s" "$ours_s"
[ $t_diff -eq 0 ] && [ $map_diff -eq 0 ]
