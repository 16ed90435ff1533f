#!/usr/bin/env bash
# Compile cost of linkscope's headers against the standard-header reference.
#
#   bench/compile_cost.sh [RUNS]
#
# Times `CXX -std=c++20 FLAGS -c` (best of RUNS, default 3, by CPU time:
# user+sys, because the machine is shared) of a TU that includes one header
# and uses nothing, for g++ and clang++-14, at -O0 and -O2. Three rows:
#
#   formats.hpp, header-only     goal: <= 2x the reference
#   linkscope.hpp, header-only   (no goal: compiled mode is the answer)
#   linkscope.hpp, compiled mode (-DLINKSCOPE_HEADER_ONLY=0, what a TU that
#                                links linkscope::compiled sees)
#                                goal: <= 1.5x its floor
#
# The reference TU includes <string>, <vector> and <span>. A row's floor is a
# TU that includes exactly the headers that are not ours which that TU pulls
# in (the C++ standard headers `-H` lists for it, plus the POSIX headers our
# headers include directly) and nothing else: TU / floor is what our own code
# costs, floor / reference what the standard library costs before a line of
# linkscope is read. Prints a Markdown table, the load average before and
# after, and exits 1 when a goal is not met.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <linkscope/formats.hpp>\nint main() { return 0; }\n' >"$tmp/formats.cpp"
printf '#include <linkscope/linkscope.hpp>\nint main() { return 0; }\n' >"$tmp/umbrella.cpp"
printf '#include <string>\n#include <vector>\n#include <span>\nint main() { return 0; }\n' >"$tmp/reference.cpp"

# The floor of one TU, per compiler and mode (each lists what it actually opens).
write_floor() {  # CXX TU DEFS OUT
  local opened
  # shellcheck disable=SC2086
  opened=$($1 -std=c++20 $3 -I"$here/include" -H -fsyntax-only "$2" 2>&1 >/dev/null)
  {
    grep -o 'include/c++/[0-9]*/[a-z_]*$' <<<"$opened" | xargs -r -n1 basename | sort -u
    grep -rhoE '^#include <[a-z/]+\.h>' "$here/include/linkscope" | sed 's/#include <//; s/>$//' | sort -u |
      while read -r h; do grep -q "/$h\$" <<<"$opened" && echo "$h"; done
  } | sed 's/.*/#include <&>/' >"$4"
  echo 'int main() { return 0; }' >>"$4"
}

best_cpu() {  # CXX FLAGS FILE -> best CPU ms (0: the compile failed)
  local best=""
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%U %S" -o "$tmp/t" $1 $2 -std=c++20 -I"$here/include" -c "$3" -o "$tmp/x.o" 2>"$tmp/err" ||
      { echo "compile_cost: $1 failed on $3: $(head -c 300 "$tmp/err")" >&2; echo 0; return; }
    local ms
    ms=$(awk '{printf "%d", ($1 + $2) * 1000}' "$tmp/t")
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }

fail=0
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| compiler | flags | TU | TU ms | its floor ms | reference ms | TU / reference | TU / floor | floor / reference | goal |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---|"
for cxx in g++ clang++-14; do
  command -v "$cxx" >/dev/null || continue
  write_floor "$cxx" "$tmp/formats.cpp" "" "$tmp/floor-formats-$cxx.cpp"
  write_floor "$cxx" "$tmp/umbrella.cpp" "" "$tmp/floor-umbrella-$cxx.cpp"
  write_floor "$cxx" "$tmp/umbrella.cpp" "-DLINKSCOPE_HEADER_ONLY=0" "$tmp/floor-compiled-$cxx.cpp"
  for flags in -O0 -O2; do
    r=$(best_cpu "$cxx" "$flags" "$tmp/reference.cpp")
    for row in formats umbrella compiled; do
      case $row in
        formats) label="formats.hpp, header-only"; tu=$tmp/formats.cpp; defs="" ;;
        umbrella) label="linkscope.hpp, header-only"; tu=$tmp/umbrella.cpp; defs="" ;;
        compiled) label="linkscope.hpp, compiled mode"; tu=$tmp/umbrella.cpp; defs="-DLINKSCOPE_HEADER_ONLY=0" ;;
      esac
      u=$(best_cpu "$cxx" "$flags $defs" "$tu")
      f=$(best_cpu "$cxx" "$flags" "$tmp/floor-$row-$cxx.cpp")
      vs_ref=$(ratio "$u" "$r"); vs_floor=$(ratio "$u" "$f"); floor_ref=$(ratio "$f" "$r")
      case $row in
        formats) verdict=$(awk -v x="$vs_ref" 'BEGIN {print (x <= 2.0 ? "<= 2x reference: met" : "<= 2x reference: not met")}') ;;
        umbrella) verdict="(none)" ;;
        compiled) verdict=$(awk -v x="$vs_floor" 'BEGIN {print (x <= 1.5 ? "<= 1.5x floor: met" : "<= 1.5x floor: not met")}') ;;
      esac
      if [ "$u" -eq 0 ] || [ "$f" -eq 0 ] || [ "$r" -eq 0 ]; then verdict="compile failed"; fi
      case $verdict in *"not met"*|"compile failed") fail=1 ;; esac
      echo "| $cxx | $flags | $label | $u | $f | $r | ${vs_ref}x | ${vs_floor}x | ${floor_ref}x | $verdict |"
    done
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# What each TU pulls in, for the note.
for row in formats umbrella; do
  g++ -std=c++20 -I"$here/include" -E "$tmp/$row.cpp" | wc -l | awk -v r="$row" '{print "lines after preprocessing (g++): " r " " $1}'
done
g++ -std=c++20 -DLINKSCOPE_HEADER_ONLY=0 -I"$here/include" -E "$tmp/umbrella.cpp" | wc -l |
  awk '{print "lines after preprocessing (g++): umbrella, compiled mode " $1}'
g++ -std=c++20 -E "$tmp/reference.cpp" | wc -l | awk '{print "lines after preprocessing (g++): reference " $1}'
for cxx in g++ clang++-14; do
  for row in formats compiled; do
    [ -f "$tmp/floor-$row-$cxx.cpp" ] || continue
    sed -n 's/^#include <\(.*\)>$/\1/p' "$tmp/floor-$row-$cxx.cpp" | tr '\n' ' ' |
      sed "s/^/floor headers ($cxx, $row): /; s/ \$/\n/"
  done
done
exit $fail
