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
# The sort, adversarially: 6000 generated names with long shared prefixes
# (70+ bytes), every name a prefix of the next ("q", "qq", ...), UTF-8 bytes
# >= 0x80, in a relocatable object and a DSO; and an executable with the same
# local names in three TUs (ties: nm keeps table order). Under LC_ALL=C and,
# when installed, C.UTF-8 (glibc: no collation rules, strcoll == strcmp).
s_same=0 s_diff=0
if command -v as >/dev/null && command -v gcc >/dev/null; then
  python3 - "$tmp" <<'PY'
import random, sys
d = sys.argv[1]
random.seed(7)
pre = ["_ZN2at6native", "_ZN2at6native12_GLOBAL__N_1", "_ZN5torch3jit", "a" * 70, "a" * 70 + "b" * 30, "x",
       "\u00e9t\u00e9", "\u4e2d"]
names = set()
while len(names) < 6000:
    names.add(random.choice(pre) + "".join(random.choice("abcXYZ_019\u00e9") for _ in range(random.randint(0, 12))))
names.update("q" * k for k in range(1, 90))
names = list(names)
random.shuffle(names)
with open(d + "/many.s", "w", encoding="utf-8") as f:
    f.write(".text\n")
    for i, n in enumerate(names):
        f.write('.globl "%s"\n.type "%s",@function\n"%s":\n .byte %d\n' % (n, n, n, i % 256))
    f.write('.section .note.GNU-stack,"",@progbits\n')
for t in range(3):
    open("%s/dup%d.c" % (d, t), "w").write(
        "static int counter[%d]; static int helper(void){return counter[0];} int api%d(void){return helper();}\n" % (t + 1, t))
open(d + "/dupmain.c", "w").write("int api0(void);int api1(void);int api2(void); int main(void){return api0()+api1()+api2();}\n")
PY
  as "$tmp/many.s" -o "$tmp/many.o" && gcc -shared -o "$tmp/many.so" "$tmp/many.o" &&
    gcc -O0 "$tmp"/dup0.c "$tmp"/dup1.c "$tmp"/dup2.c "$tmp"/dupmain.c -o "$tmp/dups"
  for loc in C C.UTF-8; do
    for t in "$tmp/many.o" "$tmp/many.so" "$tmp/dups"; do
      for flags in "" "-D" "-S" "-P" "-a"; do
        [ "$flags" = -D ] && [ "$t" = "$tmp/many.o" ] && continue
        LC_ALL=$loc nm $flags "$t" >"$tmp/nm" 2>/dev/null
        LC_ALL=$loc "$tool" $flags "$t" >"$tmp/ours" 2>/dev/null
        if cmp -s "$tmp/nm" "$tmp/ours"; then s_same=$((s_same + 1)); else s_diff=$((s_diff + 1)); echo "DIFFERS  LC_ALL=$loc nm $flags $(basename "$t")"; fi
      done
    done
  done
fi

echo
echo "Sort cases (generated names, LC_ALL=C and C.UTF-8): $s_same identical, $s_diff different"
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
