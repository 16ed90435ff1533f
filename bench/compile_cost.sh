#!/usr/bin/env bash
# Compile cost of the umbrella header (issue 9 goal: <= 1.5x the reference).
#
#   bench/compile_cost.sh [RUNS]
#
# Times `CXX -std=c++20 -O0 -c` of a TU that includes <linkscope/linkscope.hpp>
# (and uses nothing) against one that includes only <string>, <vector> and
# <span>, for g++ and clang++-14, best of RUNS (default 5) by CPU time
# (user+sys; the machine is shared), and also with -O2. Prints a Markdown
# table and the ratio; exit 1 when a ratio is over 1.5.
#
# A third TU, the floor, includes exactly the headers that are not ours which
# the umbrella pulls in (the C++ standard headers that `-H` lists for the
# umbrella, plus the POSIX headers our headers include directly), and nothing
# else. umbrella / floor is what our own code costs; floor / reference is what
# the standard library costs before a line of linkscope is read.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <linkscope/linkscope.hpp>\nint main() { return 0; }\n' >"$tmp/umbrella.cpp"
printf '#include <string>\n#include <vector>\n#include <span>\nint main() { return 0; }\n' >"$tmp/reference.cpp"

# The floor, per compiler (each lists what it actually opens).
std_headers() {  # CXX -> names of the standard headers the umbrella opens, one a line
  $1 -std=c++20 -I"$here/include" -H -fsyntax-only "$tmp/umbrella.cpp" 2>&1 >/dev/null |
    grep -o 'include/c++/[0-9]*/[a-z_]*$' | xargs -r -n1 basename | sort -u
}
system_headers() {  # CXX -> the <*.h> headers our headers include directly and this compiler opens
  local opened
  opened=$($1 -std=c++20 -I"$here/include" -H -fsyntax-only "$tmp/umbrella.cpp" 2>&1 >/dev/null)
  grep -rhoE '^#include <[a-z/]+\.h>' "$here/include/linkscope" | sed 's/#include <//; s/>$//' | sort -u |
    while read -r h; do grep -q "/$h\$" <<<"$opened" && echo "$h"; done
}
write_floor() {  # CXX -> $tmp/floor-CXX.cpp
  { std_headers "$1"; system_headers "$1"; } | sed 's/.*/#include <&>/' >"$tmp/floor-$1.cpp"
  echo 'int main() { return 0; }' >>"$tmp/floor-$1.cpp"
}

best_cpu() {  # CXX FLAGS FILE -> best CPU ms
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

fail=0
echo "| compiler | flags | umbrella ms | std headers the umbrella needs ms | <string>+<vector>+<span> ms | ratio | floor / reference | umbrella / floor | goal <= 1.5x |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
for cxx in g++ clang++-14; do
  command -v "$cxx" >/dev/null || continue
  write_floor "$cxx"
  for flags in -O0 -O2; do
    u=$(best_cpu "$cxx" "$flags" "$tmp/umbrella.cpp")
    f=$(best_cpu "$cxx" "$flags" "$tmp/floor-$cxx.cpp")
    r=$(best_cpu "$cxx" "$flags" "$tmp/reference.cpp")
    ratio=$(awk -v u="$u" -v r="$r" 'BEGIN {printf "%.2f", (r > 0 ? u / r : 0)}')
    floor_ratio=$(awk -v u="$f" -v r="$r" 'BEGIN {printf "%.2f", (r > 0 ? u / r : 0)}')
    ours=$(awk -v u="$u" -v r="$f" 'BEGIN {printf "%.2f", (r > 0 ? u / r : 0)}')
    verdict=$(awk -v x="$ratio" 'BEGIN {print (x <= 1.5 ? "met" : "not met")}')
    if [ "$u" -eq 0 ] || [ "$f" -eq 0 ] || [ "$r" -eq 0 ]; then verdict="compile failed"; fi
    [ "$verdict" = met ] || fail=1
    echo "| $cxx | $flags | $u | $f | $r | ${ratio}x | ${floor_ratio}x | ${ours}x | $verdict |"
  done
done
# What the umbrella pulls in, for the note.
g++ -std=c++20 -I"$here/include" -E "$tmp/umbrella.cpp" | wc -l | awk '{print "\nlines after preprocessing (g++): umbrella " $1}'
g++ -std=c++20 -E "$tmp/reference.cpp" | wc -l | awk '{print "lines after preprocessing (g++): reference " $1}'
for cxx in g++ clang++-14; do
  [ -f "$tmp/floor-$cxx.cpp" ] || continue
  sed -n 's/^#include <\(.*\)>$/\1/p' "$tmp/floor-$cxx.cpp" | tr '\n' ' ' |
    sed "s/^/floor headers ($cxx): /; s/ \$/\n/"
done
exit $fail
