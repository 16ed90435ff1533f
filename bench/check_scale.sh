#!/usr/bin/env bash
# bench/check_scale.sh — linkscope-check at distribution scale (issue 20), side by side, one run.
#
#   bench/check_scale.sh [BUILD_DIR]
#   SAMPLE=N        step 1: about N of the system's ELF files (every k-th); default all
#   CLOSURE=N       step 2: files whose closure is compared (every k-th of step 1's); default 50
#   SIZES="1000 10000"  step 4: generated prefix sizes (add 50000 for the full table)
#   GEN_DIR=DIR     step 4: where the prefixes go (default a temporary directory, removed)
#   REPEAT=N        step 1: each linkscope run N times, the least wall time kept (default 3)
#   ROUNDS=N        steps 3 and 4: rounds of one run per configuration, alternated; the median kept (default 5)
#
# 1. Every regular (not symlinked), dynamically linked ELF file under /usr/lib/x86_64-linux-gnu
#    and /usr/bin: one `linkscope-check --json --undefined /usr FILE...` run against a loop of
#    `ldd -r FILE` and `ldd -u -r FILE`. Files ldd refuses ("not a dynamic executable") are
#    counted and left out of both. Per file, the undefined symbols and the unused direct
#    dependencies must be set-equal (read from the JSON as bench/parity_check.sh does).
# 2. The closure alone, on CLOSURE files: linkscope-ldd against lddtree -l (pax-utils) and
#    libtree -p -vvv, one process per file each; sets of realpaths compared.
# 3. Threads: -j 1 .. nproc when linkscope-check has -j; otherwise says so.
# 4. Linear in files: prefixes of generated DSOs (chains of 10, diamonds, 8 shared hubs),
#    made from three gcc-built templates by replacing fixed-length sonames byte for byte.
# Every timing is bench/timed_run.py (microseconds): wall, CPU (user+sys), peak RSS; linkscope's rows in step 1 are the best of REPEAT
# runs; steps 3 and 4 compare configurations, so their runs alternate (round 1 runs each once, then round 2 ...)
# and each row is the median of ROUNDS: a slow minute of a shared machine then lands on every configuration alike,
# not on one. Goals: step 1 >= 100x,
# step 4: 10x the files in <= 11x the time. Needs python3, gcc, and apt-get for pax-utils,
# libtree when missing. Exit 0 when every comparison agrees.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
check=$build/examples/linkscope-check
lddtool=$build/examples/linkscope-ldd
for t in "$check" "$lddtool"; do
  [ -x "$t" ] || { echo "check_scale: $t not built" >&2; exit 2; }
done
exec 3>&1  # table rows go here, also when the timed command's stdout is redirected
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
# Every timed run goes through bench/timed_run.py: wall and CPU to the microsecond (/usr/bin/time's 10 ms steps
# were 10% of a 0.1 s run), peak RSS, the command's own exit status.
timer=$here/bench/timed_run.py

# timed LABEL CMD...: run CMD under bench/timed_run.py, print one table row, keep the wall time in $work/LABEL.wall
timed() {
  local label=$1; shift
  python3 "$timer" "$work/$label.time" "$@"
  local status=$?
  tail -1 "$work/$label.time" | awk -v label="$label" -v out="$work/$label.wall" \
    '{ printf "| %-34s | %8.3f | %8.3f | %8d |\n", label, $1, $2 + $3, $4 / 1024; print $1, $2 + $3 > out }' >&3
  return $status
}
# best LABEL CMD...: as timed, REPEAT times (default 3), keeping the run with the least
# wall time (its row; stdout is the last run's, the same document each time). The runs of
# linkscope take well under a second: one run is at the mercy of the timer's 10 ms and of
# the machine's other work.
best() {
  local label=$1; shift
  local r status=0 keep=""
  for r in $(seq 1 "${REPEAT:-3}"); do
    python3 "$timer" "$work/$label.time.$r" "$@" > "$work/best.out" || status=$?
    if [ -z "$keep" ] || awk -v a="$(tail -1 "$work/$label.time.$r" | cut -d' ' -f1)" \
         -v b="$(tail -1 "$work/$label.time.$keep" | cut -d' ' -f1)" 'BEGIN { exit !(a < b) }'; then keep=$r; fi
  done
  tail -1 "$work/$label.time.$keep" | awk -v label="$label (best of ${REPEAT:-3})" -v out="$work/$label.wall" \
    '{ printf "| %-34s | %8.3f | %8.3f | %8d |\n", label, $1, $2 + $3, $4 / 1024; print $1, $2 + $3 > out }' >&3
  cat "$work/best.out"
  return $status
}
# alternate ROUNDS LABEL...: runs the command line saved in "$work/cmd.LABEL" once per label per round,
# in order, then prints each label's row: the median wall time and the median CPU time of its runs, the largest
# RSS; the median wall and CPU go to $work/LABEL.wall. Each command's stdout (the same every round) goes to
# $work/LABEL.out.
alternate() {
  local rounds=$1; shift
  local label r status=0
  for r in $(seq 1 "$rounds"); do
    for label in "$@"; do
      # The saved command line (printf %q words) is run by the timer itself, with no shell in between.
      eval "python3 \"\$timer\" \"\$work/\$label.time.\$r\" $(cat "$work/cmd.$label")" > "$work/$label.out" || status=$?
    done
  done
  for label in "$@"; do
    for r in $(seq 1 "$rounds"); do tail -1 "$work/$label.time.$r"; done | python3 -c '
import statistics, sys
label, out = sys.argv[1], sys.argv[2]
runs = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
wall = statistics.median(r[0] for r in runs)
cpu = statistics.median(r[1] + r[2] for r in runs)
rss = max(r[3] for r in runs) / 1024
print("| %-34s | %8.3f | %8.3f | %8d |" % (label + " (median of %d)" % len(runs), wall, cpu, rss))
print("  %s: wall %s s" % (label, " ".join("%.3f" % r[0] for r in runs)))
open(out, "w").write("%s %s\n" % (wall, cpu))
' "$label" "$work/$label.wall" >&3
  done
  return $status
}
header() { printf '| %-34s | %8s | %8s | %8s |\n|---|---:|---:|---:|\n' "run" "wall s" "CPU s" "RSS MB"; }
ratio() { python3 -c "import sys; a, b = map(float, sys.argv[1:]); print('%.1fx' % (a / b) if b else 'inf')" "$1" "$2"; }

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); nproc $(nproc); start load:$(uptime | sed 's/.*load average://')"
echo "tools: $check ($("$check" --version | head -1)); $(ldd --version | head -1)"

echo
echo "== 1. every dynamically linked ELF file under /usr/lib/x86_64-linux-gnu and /usr/bin"
find /usr/lib/x86_64-linux-gnu /usr/bin -type f -print0 | python3 -c '
import struct, sys
# ELF with a PT_DYNAMIC program header: what ld.so and ldd treat as dynamically linked.
for path in sys.stdin.buffer.read().split(b"\0"):
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF": continue
            is64, end = head[4] == 2, "<" if head[5] == 1 else ">"
            if is64: phoff, phentsize, phnum = struct.unpack_from(end + "Q", head, 32)[0], *struct.unpack_from(end + "HH", head, 54)
            else: phoff, phentsize, phnum = struct.unpack_from(end + "I", head, 28)[0], *struct.unpack_from(end + "HH", head, 42)
            f.seek(phoff); table = f.read(phentsize * phnum)
            if any(struct.unpack_from(end + "I", table, i * phentsize)[0] == 2 for i in range(len(table) // max(phentsize, 1))):
                print(path.decode())
    except OSError: pass
' | sort > "$work/all.txt"
total=$(wc -l < "$work/all.txt")
step=1
[ -n "${SAMPLE:-}" ] && [ "$SAMPLE" -gt 0 ] && [ "$SAMPLE" -lt "$total" ] && step=$(( (total + SAMPLE - 1) / SAMPLE ))
awk -v k="$step" '(NR - 1) % k == 0' "$work/all.txt" > "$work/sample.txt"
echo "dynamically linked ELF files: $total; taken: $(wc -l < "$work/sample.txt") (every ${step}th)"

# ldd first, to know which files it can run at all; outputs kept per file for the comparison.
mkdir -p "$work/ldd"
cat > "$work/ldd_loop.sh" <<'SH'
i=0
while read -r f; do
  i=$((i + 1))
  timeout 120 ldd -r "$f" > "$1/$i.r" 2>&1
  timeout 120 ldd -u -r "$f" > "$1/$i.u" 2>&1
done < "$2"
SH
header
timed "ldd -r + ldd -u -r, one per file" bash "$work/ldd_loop.sh" "$work/ldd" "$work/sample.txt"
i=0; : > "$work/runnable.txt"; : > "$work/refused.txt"
while read -r f; do
  i=$((i + 1))
  if grep -q "not a dynamic executable" "$work/ldd/$i.r"; then echo "$f" >> "$work/refused.txt"
  else printf '%s\t%s\n' "$f" "$i" >> "$work/runnable.txt"; fi
done < "$work/sample.txt"
cut -f1 "$work/runnable.txt" > "$work/files.txt"
mapfile -t files < "$work/files.txt"
best "linkscope-check --json --undefined" "$check" --json --undefined --no-dpkg --no-conda /usr "${files[@]}" > "$work/check.json"
read -r lwall lcpu < "$work/ldd -r + ldd -u -r, one per file.wall"
read -r wall cpu < "$work/linkscope-check --json --undefined.wall"
echo "ldd refused (not a dynamic executable): $(wc -l < "$work/refused.txt") files, left out of the comparison and of linkscope-check's run"
echo "ratio ldd loop / linkscope-check: wall $(ratio "$lwall" "$wall"), CPU $(ratio "$lcpu" "$cpu") (goal >= 100x;" \
     "ldd's loop also ran the refused files, a few ms each)"
python3 - "$work/check.json" "$work/runnable.txt" "$work/ldd" <<'PY' || fail=1
import json, os, re, sys
doc = json.load(open(sys.argv[1]))
ours = {f.get("file", f.get("path")): f for f in doc["files"]}
# linkscope-check checks a hard-linked file once (bzip2 = bzcat): find it by inode.
by_inode = {(st.st_dev, st.st_ino): f for p, f in ours.items() for st in [os.stat(p)]}
hardlinks = 0
agree, differ, examples = 0, 0, []
for line in open(sys.argv[2]):
    path, index = line.rstrip("\n").split("\t")
    undefined_out = open("%s/%s.r" % (sys.argv[3], index), errors="replace").read()
    unused_out = open("%s/%s.u" % (sys.argv[3], index), errors="replace").read()
    theirs_unused = set()
    if "Unused direct dependencies:" in unused_out:
        tail = unused_out.split("Unused direct dependencies:\n", 1)[1]
        theirs_unused = {l[1:] for l in tail.splitlines() if l.startswith("\t")}
    theirs_undefined = set(re.findall(r"^undefined symbol: ([^\s,]+)", undefined_out, re.M))
    f = ours.get(path)
    if f is None:
        st = os.stat(path)
        f = by_inode.get((st.st_dev, st.st_ino))
        hardlinks += f is not None
    if f is None:
        differ += 1; examples.append("%s: not in linkscope-check's output" % path); continue
    # As parity_check.sh: a NEEDED never bound to (by path, by name when not found), names without @version.
    our_unused = {n["path"] or n["name"] for n in f["needed"] if not n["used"]}
    our_undefined = {u.split("@")[0] for u in f["undefined"]}
    if (our_unused, our_undefined) == (theirs_unused, theirs_undefined):
        agree += 1; continue
    differ += 1
    examples.append("%s: unused ours-only %s ldd-only %s; undefined ours-only %s ldd-only %s" % (
        path, sorted(our_unused - theirs_unused)[:3], sorted(theirs_unused - our_unused)[:3],
        sorted(our_undefined - theirs_undefined)[:3], sorted(theirs_undefined - our_undefined)[:3]))
print("per file, unused (ldd -u -r) and undefined (ldd -r) set-equal: %d agree, %d differ"
      " (%d files are hard links of a file linkscope-check reported, compared with it)" % (agree, differ, hardlinks))
for e in examples[:8]:
    print("  DIFFERENT " + e)
sys.exit(1 if differ else 0)
PY

echo
n_closure=${CLOSURE:-50}
echo "== 2. the closure alone, $n_closure files: linkscope-ldd vs lddtree (pax-utils) vs libtree"
for pkg in pax-utils:lddtree libtree:libtree; do
  command -v "${pkg#*:}" > /dev/null || apt-get install -y "${pkg%%:*}" > /dev/null 2>&1 \
    || echo "check_scale: ${pkg%%:*} not installable" >&2
done
cstep=$(( ($(wc -l < "$work/files.txt") + n_closure - 1) / n_closure ))
[ "$cstep" -lt 1 ] && cstep=1
awk -v k="$cstep" '(NR - 1) % k == 0' "$work/files.txt" | head -n "$n_closure" > "$work/closure.txt"
# lddtree is a python3 script needing Debian's python3-pyelftools: run it with /usr/bin/python3.
for tool in linkscope-ldd lddtree libtree; do
  mkdir -p "$work/closure/$tool"
  cat > "$work/closure_$tool.sh" <<SH
i=0
while read -r f; do
  i=\$((i + 1))
  case $tool in
    linkscope-ldd) "$lddtool" "\$f" ;;
    lddtree) /usr/bin/python3 "\$(command -v lddtree)" -l "\$f" | tail -n +2 ;;
    libtree) libtree -p -vvv "\$f" | tail -n +2 ;;
  esac > "$work/closure/$tool/\$i" 2>&1
done < "$work/closure.txt"
SH
done
header
for tool in linkscope-ldd lddtree libtree; do timed "$tool, one per file" bash "$work/closure_$tool.sh"; done
python3 - "$work/closure" "$work/closure.txt" <<'PY' || fail=1
import os, re, sys
root = sys.argv[1]
def paths(tool, i):
    out = set()
    for line in open("%s/%s/%d" % (root, tool, i), errors="replace"):
        if tool == "linkscope-ldd":
            m = re.match(r"\s*(?:\S+ => )?(/\S+)", line)
        elif tool == "lddtree":
            m = re.match(r"(/\S+)", line)
        else:  # libtree: tree characters, path, [how found]
            m = re.search(r"(/\S+) \[", line)
        if m:
            out.add(os.path.realpath(m.group(1)))
    return out
files = [l.rstrip("\n") for l in open(sys.argv[2])]
same = {"lddtree": 0, "libtree": 0}; examples = []
for i, f in enumerate(files, 1):
    ours = paths("linkscope-ldd", i)
    for tool in same:
        theirs = paths(tool, i)
        if ours == theirs: same[tool] += 1
        else: examples.append("%s vs %s: %s: ours-only %s, theirs-only %s" % (tool, "linkscope-ldd", f, sorted(ours - theirs)[:3], sorted(theirs - ours)[:3]))
for tool, n in same.items():
    print("closure set-equal with %s: %d of %d files" % (tool, n, len(files)))
for e in examples[:8]:
    print("  DIFFERENT " + e)
sys.exit(0 if all(n == len(files) for n in same.values()) else 1)
PY

echo
echo "== 3. threads"
if "$check" --help | grep -qE -- '(^|[ ,])-j|--jobs'; then
  header
  labels=()
  for j in $(seq 1 "$(nproc)"); do
    printf '%q ' "$check" -j "$j" --json --undefined --no-dpkg --no-conda /usr "${files[@]}" > "$work/cmd.linkscope-check -j $j"
    labels+=("linkscope-check -j $j")
  done
  alternate "${ROUNDS:-5}" "${labels[@]}"
  for j in $(seq 1 "$(nproc)"); do
    sed -E 's/"milliseconds":[0-9]+//' "$work/linkscope-check -j $j.out" > "$work/jobs-$j.json"
  done
  for j in $(seq 2 "$(nproc)"); do
    same=$(cmp -s "$work/jobs-1.json" "$work/jobs-$j.json" && echo "the same document" || echo "A DIFFERENT DOCUMENT")
    echo "-j $j against -j 1: $(ratio "$(cut -d' ' -f1 "$work/linkscope-check -j 1.wall")" \
      "$(cut -d' ' -f1 "$work/linkscope-check -j $j.wall")") wall (goal for -j 2: >= 1.8x), $same"
  done
else
  echo "-j: not implemented (linkscope-check --help has no -j)"
fi

echo
sizes=${SIZES:-1000 10000}
echo "== 4. linear in files: generated prefixes of $sizes DSOs"
gen=${GEN_DIR:-$work/gen}
mkdir -p "$gen/templates"
# Three templates; the placeholders are fixed-length, so copies differ only in those bytes.
# hub: defines every symbol. x/y: defines x_fn (y_fn), references y_fn (x_fn) and hub_fn; needs B, C, D.
cat > "$gen/templates/hub.c" <<'C'
int hub_fn(void) { return 1; }
int x_fn(void) { return 2; }
int y_fn(void) { return 3; }
C
cat > "$gen/templates/x.c" <<'C'
int y_fn(void); int hub_fn(void);
int x_fn(void) { return y_fn() + hub_fn(); }
C
sed 's/x_fn/TMP/; s/y_fn/x_fn/g; s/TMP/y_fn/' "$gen/templates/x.c" > "$gen/templates/y.c"
(
  cd "$gen/templates" || exit 1
  flags=(-shared -fPIC -O1 -s -Wl,-z,noseparate-code -Wl,--no-as-needed -Wl,-rpath,'$ORIGIN')
  for stub in BBBBBBBB CCCCCCCC DDDDDDDD; do gcc "${flags[@]}" -Wl,-soname,lib$stub.so -o lib$stub.so hub.c || exit 1; done
  gcc "${flags[@]}" -Wl,-soname,libAAAAAAAA.so -o hub.so hub.c || exit 1
  for t in x y; do
    gcc "${flags[@]}" -Wl,-soname,libAAAAAAAA.so -o $t.so $t.c -L. -l:libBBBBBBBB.so -l:libCCCCCCCC.so -l:libDDDDDDDD.so || exit 1
  done
) || { echo "check_scale: could not build the templates" >&2; exit 2; }
for n in $sizes; do
  python3 - "$gen/templates" "$gen/p$n" "$n" <<'PY' || exit 2
import os, sys
src, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
templates = {t: open("%s/%s.so" % (src, t), "rb").read() for t in ("hub", "x", "y")}
for t, data in templates.items():
    for p in [b"AAAAAAAA"] + ([b"BBBBBBBB", b"CCCCCCCC", b"DDDDDDDD"] if t != "hub" else []):
        assert data.count(b"lib" + p + b".so") == 1, (t, p)
os.makedirs(prefix + "/lib", exist_ok=True)
name = lambda i: b"%08d" % i
hubs = 8
for i in range(n):
    if i < hubs:
        data = templates["hub"]; needed = {}
    else:
        # chains of 10: i needs i-1 (binds y_fn/x_fn), i-2 (a diamond, unused), a shared hub (hub_fn)
        pos = (i - hubs) % 10
        b = i - 1 if pos > 0 else i % hubs
        c = i - 2 if pos > 1 else (i + 1) % hubs
        d = (i + 2) % hubs if pos < 2 else i % hubs
        data = templates["x" if i % 2 else "y"]
        needed = {b"BBBBBBBB": b, b"CCCCCCCC": c, b"DDDDDDDD": d}
    data = data.replace(b"libAAAAAAAA.so", b"lib" + name(i) + b".so")
    for p, j in needed.items():
        data = data.replace(b"lib" + p + b".so", b"lib" + name(j) + b".so")
    with open("%s/lib/lib%s.so" % (prefix, name(i).decode()), "wb") as f:
        f.write(data)
PY
done
header
labels=()
for n in $sizes; do
  printf '%q ' "$check" --json --undefined --no-dpkg --no-conda "$gen/p$n" > "$work/cmd.linkscope-check, $n DSOs"
  labels+=("linkscope-check, $n DSOs")
done
alternate "${ROUNDS:-5}" "${labels[@]}"
for n in $sizes; do cp "$work/linkscope-check, $n DSOs.out" "$work/gen$n.json"; done
python3 - "$work" $sizes <<'PY' || fail=1
import json, sys
work, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
rows = {}
for n in sizes:
    wall, cpu = map(float, open("%s/linkscope-check, %d DSOs.wall" % (work, n)).read().split())
    doc = json.load(open("%s/gen%d.json" % (work, n)))
    kinds = {}
    for f in doc["files"]:
        for k in ("missing", "unused", "undefined"):
            kinds[k] = kinds.get(k, 0) + len(f.get(k, []))
    rows[n] = (wall, cpu)
    print("%6d DSOs: %d files checked, %.1f us wall / %.1f us CPU per file; findings %s"
          % (n, len(doc["files"]), 1e6 * wall / n, 1e6 * cpu / n, kinds))
ok = True
for i, a in enumerate(sizes):
    for b in sizes[i + 1:]:
        tw, tc = rows[b][0] / rows[a][0], rows[b][1] / rows[a][1]
        goal = ""
        if b == 10 * a:
            ok &= tc <= 11
            goal = " (goal <= 11x: %s)" % ("met" if tc <= 11 else "NOT met")
        print("%d -> %d files (%.0fx): %.1fx wall, %.1fx CPU time%s" % (a, b, b / a, tw, tc, goal))
sys.exit(0 if ok else 1)
PY

echo
echo "end load:$(uptime | sed 's/.*load average://'); $(date -u '+%H:%M:%S UTC')"
exit $fail
