#!/usr/bin/env bash
# Parity and timing of linkscope-nm against GNU nm 2.40 on real files.
#
#   bench/parity_nm.sh [BUILD_DIR]
#
# Parity (LC_ALL=C, byte for byte):
#   linkscope-nm -D -p X == nm -D -p X  and  linkscope-nm -D X == nm -D X
#     for libtorch_cpu.so.1.13 (package libtorch1.13), libLLVM-14.so.1,
#     libc.so.6, libstdc++.so.6 (those present);
#   linkscope-nm -p A == nm -p A for every /usr/lib/llvm-14/lib/*.a.
# Timing: hyperfine, side by side in one run, on libtorch_cpu (or the
# largest DSO present): linkscope-nm -D vs nm -D vs llvm-nm-14 -D, and the
# same with -p; then the ratios of median wall time and of CPU time
# (user+sys; steadier when the machine is shared).
set -u
build=${1:-build}
tool=$build/examples/linkscope-nm
[ -x "$tool" ] || { echo "no $tool (build the linkscope-nm target first)" >&2; exit 2; }
export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

dsos=()
for f in /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13 /usr/lib/llvm-14/lib/libLLVM-14.so.1 \
         /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
  if [ -f "$f" ]; then dsos+=("$f"); else echo "missing (skipped): $f"; fi
done
[ -f /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13 ] || echo "hint: apt-get install libtorch1.13 for the main benchmark input"

same=0 diff=0
for f in "${dsos[@]}"; do
  for flags in "-D -p" "-D"; do
    nm $flags "$f" >"$tmp/nm" 2>/dev/null
    "$tool" $flags "$f" >"$tmp/ours" 2>"$tmp/err"
    if cmp -s "$tmp/nm" "$tmp/ours"; then
      same=$((same + 1)); echo "same     nm $flags $f ($(wc -l <"$tmp/nm") lines)"
    else
      diff=$((diff + 1)); echo "DIFFERS  nm $flags $f $(head -c 200 "$tmp/err")"
      diff "$tmp/nm" "$tmp/ours" | head -5
    fi
  done
done

archives=0 a_same=0 a_diff=0 lines=0
for f in /usr/lib/llvm-14/lib/*.a; do
  [ -f "$f" ] || continue
  archives=$((archives + 1))
  nm -p "$f" >"$tmp/nm" 2>/dev/null
  "$tool" -p "$f" >"$tmp/ours" 2>/dev/null
  lines=$((lines + $(wc -l <"$tmp/nm")))
  if cmp -s "$tmp/nm" "$tmp/ours"; then a_same=$((a_same + 1)); else a_diff=$((a_diff + 1)); echo "DIFFERS  nm -p $f"; fi
done
echo
echo "DSOs: $same identical, $diff different (flag sets -D -p and -D)"
echo "LLVM archives: $archives, $a_same identical, $a_diff different ($lines lines of nm -p output)"

big=${dsos[0]:-}
if [ -n "$big" ] && command -v hyperfine >/dev/null; then
  echo
  echo "Timing on $big"
  hyperfine -N -w 3 -r ${RUNS:-20} --export-json "$tmp/t.json" \
    "$tool -D $big" "nm -D $big" "llvm-nm-14 -D $big" \
    "$tool -D -p $big" "nm -D -p $big" "llvm-nm-14 -D -p $big" >"$tmp/hf.txt" 2>&1 || cat "$tmp/hf.txt"
  python3 - "$tmp/t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
t = {x["command"]: x for x in r}
cmds = [x["command"] for x in r]
print("%-70s %9s %9s %9s" % ("command", "median ms", "user ms", "sys ms"))
for c in cmds:
    print("%-70s %9.1f %9.1f %9.1f" % (c[-70:], t[c]["median"] * 1e3, t[c]["user"] * 1e3, t[c]["system"] * 1e3))
cpu = lambda x: x["user"] + x["system"]
for i, label in ((0, "-D"), (3, "-D -p")):
    ours = r[i]
    print("ratio %-6s wall: nm/ours %.1fx  llvm-nm/ours %.1fx   cpu (user+sys): nm/ours %.1fx  llvm-nm/ours %.1fx" % (
        label, r[i + 1]["median"] / ours["median"], r[i + 2]["median"] / ours["median"],
        cpu(r[i + 1]) / cpu(ours), cpu(r[i + 2]) / cpu(ours)))
PY
fi
[ "$diff" -eq 0 ] && [ "$a_diff" -eq 0 ]
