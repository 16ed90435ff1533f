#!/usr/bin/env bash
# Parity of linkscope-floors against objdump -T on every DSO of a folder.
#
#   bench/parity_floors.sh [BUILD_DIR] [DIR]      (DIR: /usr/lib/x86_64-linux-gnu)
#
# For every regular file (no symlinks) named *.so* in DIR that is ELF: the
# highest GLIBC_ version among the undefined symbols objdump -T lists (ordered
# by sort -V) and the set of symbols bound to it must equal linkscope-floors
# --json's "families" entry for GLIBC. Prints the differing files and the
# counts, then the time of one linkscope-floors run over all of them against
# objdump -T over all of them.
set -u
build=${1:-build}
dir=${2:-/usr/lib/x86_64-linux-gnu}
tool=$build/examples/linkscope-floors
[ -x "$tool" ] || { echo "no $tool (build the linkscope-floors target first)" >&2; exit 2; }
export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

find "$dir" -maxdepth 1 -type f -name '*.so*' | sort | while read -r f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "177ELF" ] && echo "$f"
done > "$tmp/files"

same=0 diff=0
while read -r f; do
  expected=$(objdump -T "$f" 2>/dev/null | awk '/\*UND\*/ { v = $(NF-1); gsub(/[()]/, "", v); if (v ~ /^GLIBC_2/) print v, $NF }' | sort -u)
  highest=$(printf '%s\n' "$expected" | awk 'NF { print $1 }' | sort -uV | tail -n 1)
  want="$highest"
  [ -n "$highest" ] && want="$highest $(printf '%s\n' "$expected" | awk -v h="$highest" '$1 == h { print $2 }' | sort | tr '\n' ' ')"
  got=$("$tool" --json "$f" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for f in d["files"]:
    for fam in f["families"]:
        if fam["family"] == "GLIBC":
            print(fam["version"], " ".join(sorted(fam["symbols"])) + " ")
' )
  if [ "$(echo "$want" | sed 's/ *$//')" = "$(echo "$got" | sed 's/ *$//')" ]; then
    same=$((same + 1))
  else
    diff=$((diff + 1))
    echo "DIFF $f"
    echo "  objdump -T: $want" | cut -c1-300
    echo "  linkscope:  $got" | cut -c1-300
  fi
done < "$tmp/files"
echo "files: $((same + diff)), same: $same, different: $diff"

mapfile -t all < "$tmp/files"
start=$(date +%s.%N)
"$tool" "${all[@]}" > /dev/null 2>&1
mid=$(date +%s.%N)
for f in "${all[@]}"; do objdump -T "$f" > /dev/null 2>&1; done
end=$(date +%s.%N)
echo "linkscope-floors over all: $(echo "$mid - $start" | bc) s; objdump -T over all: $(echo "$end - $mid" | bc) s"
