#!/usr/bin/env bash
# bench/parity_check.sh — linkscope-check on Debian's libtorch1.13 against the real tools.
#
#   bench/parity_check.sh [BUILD_DIR] [FILE...]
#   SAMPLE=N (default 100) files of the whole /usr/lib/x86_64-linux-gnu; SHLIBDEPS=0 skips step 5/6
#
# FILEs default to /usr/lib/x86_64-linux-gnu/libtorch* (symlinks to the same file
# are checked once). The prefix is /usr. For every file:
#   1. unused NEEDED      == `ldd -u -r FILE`  ("Unused direct dependencies")
#   2. not found          == `ldd FILE`        ("=> not found")
#   3. undefined symbols  == `ldd -r FILE`     ("undefined symbol: NAME")
# For every needed DSO (direct NEEDED of every file):
#   4. owner              == `dpkg -S PATH`, else of its /usr-merge alias, else of its
#                            realpath (alternatives symlinks; what dpkg-shlibdeps does)
# For the set of files:
#   5. used packages      == the packages in `dpkg-shlibdeps -O` (shlibs:Depends)
#   6. unused NEEDED      == dpkg-shlibdeps --warnings=7 "should not be linked against" (per
#                            file) and "could avoid a useless dependency" (over all files)
# dpkg-shlibdeps comes with dpkg-dev (`apt-get install -y dpkg-dev` when missing).
# Exit status 0 when every comparison agrees.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
shift || true
tool=$build/examples/linkscope-check
[ -x "$tool" ] || { echo "parity_check: $tool not built" >&2; exit 2; }
if [ $# -gt 0 ]; then files=("$@"); else files=(/usr/lib/x86_64-linux-gnu/libtorch*); fi
[ -e "${files[0]}" ] || { echo "parity_check: no libtorch here (apt-get install libtorch1.13)" >&2; exit 2; }
if ! command -v dpkg-shlibdeps >/dev/null; then
  echo "parity_check: installing dpkg-dev for dpkg-shlibdeps" >&2
  apt-get install -y dpkg-dev >/dev/null 2>&1 || echo "parity_check: dpkg-dev not installable; step 5/6 skipped" >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== linkscope-check --json /usr ${#files[@]} paths"
/usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KB max RSS" -o "$work/time" \
  "$tool" --json /usr "${files[@]}" > "$work/check.json"
status=$?
echo "exit $status; $(cat "$work/time")"
python3 - "$work/check.json" > "$work/files.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for f in r["files"]:
    print(f["file"])
s = r["stats"]
print("files %d, objects parsed %d, lookups %d, %d ms" % (s["files"], s["objects_parsed"], s["lookups"], s["milliseconds"]), file=sys.stderr)
PY

fail=0
compare() {  # name ours theirs
  if diff -u "$3" "$2" > "$work/diff"; then
    echo "  $1: same ($(wc -l < "$2") lines)"
  else
    echo "  $1: DIFFERENT"; sed 's/^/    /' "$work/diff" | head -20; fail=1
  fi
}

while read -r f; do
  echo "== $f"
  python3 - "$work/check.json" "$f" "$work" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); path = sys.argv[2]; out = sys.argv[3]
f = next(x for x in r["files"] if x["file"] == path)
with open(out + "/our_unused", "w") as u:
    # ldd -u also lists a NEEDED that was not found, by name.
    for n in sorted(n["path"] or n["name"] for n in f["needed"] if not n["used"]):
        print(n, file=u)
with open(out + "/our_missing", "w") as m:
    for n in sorted(set(x["name"] for x in f["missing"])):
        print(n, file=m)
with open(out + "/our_undefined", "w") as u:
    for n in sorted(set(x.split("@")[0] for x in f["undefined"])):
        print(n, file=u)
PY
  ldd -u -r "$f" 2>/dev/null | sed -n '/^Unused direct dependencies:/,$p' | tail -n +2 | sed 's/^\t//' | sort > "$work/ldd_unused"
  compare "unused (ldd -u -r)" "$work/our_unused" "$work/ldd_unused"
  ldd "$f" 2>/dev/null | grep "=> not found" | sed 's/^\t\(.*\) => not found/\1/' | sort -u > "$work/ldd_missing"
  compare "not found (ldd)" "$work/our_missing" "$work/ldd_missing"
  ldd -r "$f" 2>&1 | grep "^undefined symbol:" | sed 's/^undefined symbol: \([^[:space:],]*\).*/\1/' | sort -u > "$work/ldd_undefined"
  compare "undefined (ldd -r)" "$work/our_undefined" "$work/ldd_undefined"
done < "$work/files.txt"

echo "== dpkg attribution of every needed DSO vs dpkg -S"
python3 - "$work/check.json" > "$work/owners.tsv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
seen = {}
for f in r["files"]:
    for n in f["needed"]:
        if n["path"]:
            seen[n["path"]] = n["package"] or ""
for p in sorted(seen):
    print("%s\t%s" % (p, seen[p]))
PY
n=0; bad=0; via_alias=0; via_realpath=0
while IFS=$'\t' read -r path ours; do
  n=$((n + 1))
  theirs=$(dpkg -S "$path" 2>/dev/null | head -1 | sed 's/: .*//')
  if [ -z "$theirs" ]; then
    alias=""
    case "$path" in
      /usr/*) alias=${path#/usr} ;;
      /lib/*|/lib64/*|/bin/*|/sbin/*|/lib32/*|/libx32/*) alias=/usr$path ;;
    esac
    if [ -n "$alias" ]; then
      theirs=$(dpkg -S "$alias" 2>/dev/null | head -1 | sed 's/: .*//')
      [ -n "$theirs" ] && via_alias=$((via_alias + 1))
    fi
  fi
  if [ -z "$theirs" ]; then
    real=$(realpath "$path")
    theirs=$(dpkg -S "$real" 2>/dev/null | head -1 | sed 's/: .*//')
    [ -n "$theirs" ] && via_realpath=$((via_realpath + 1)) && echo "  $path -> $real: $theirs (dpkg -S of the realpath)"
  fi
  if [ "$ours" != "$theirs" ]; then
    echo "  DIFFERENT: $path: ours '$ours', dpkg -S '$theirs'"; bad=$((bad + 1)); fail=1
  fi
done < "$work/owners.tsv"
echo "  $n needed DSOs, $bad differ; $via_alias registered only under the /usr-merge alias, $via_realpath only under the realpath"

if [ "${SHLIBDEPS:-1}" = 1 ] && command -v dpkg-shlibdeps >/dev/null; then
  echo "== used packages vs dpkg-shlibdeps -O"
  mkdir -p "$work/pkg/debian"
  printf 'Source: parity-check\n\nPackage: parity-check\nArchitecture: any\n' > "$work/pkg/debian/control"
  args=()
  while read -r f; do args+=("-e$f"); done < "$work/files.txt"
  (cd "$work/pkg" && /usr/bin/time -f "%e s wall, %U s user" -o "$work/shl_time" dpkg-shlibdeps -O --warnings=7 "${args[@]}" \
     > "$work/shlibs.out" 2> "$work/shlibs.err")
  echo "  dpkg-shlibdeps: $(cat "$work/shl_time")"
  sed -n 's/^shlibs:Depends=//p' "$work/shlibs.out" | tr ',' '\n' | sed 's/^ *//; s/ .*//; s/|.*//' | grep -v '^$' | sort -u > "$work/shl_pkgs"
  python3 - "$work/check.json" > "$work/our_pkgs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("\n".join(sorted(set(p["name"].split(":")[0] for p in r["packages"]))))
PY
  compare "packages (shlibs:Depends)" "$work/our_pkgs" "$work/shl_pkgs"
  sed -n "s/^dpkg-shlibdeps: warning: \(.*\) should not be linked against \(.*\) (it uses none.*/\1\t\2/p" "$work/shlibs.err" | sort -u > "$work/shl_notneeded"
  sed -n "s/.*useless dependency if \(.*\) w[a-z]* not linked against \(.*\) (.* none of the library.*/\2/p" "$work/shlibs.err" | sort -u > "$work/shl_useless"
  python3 - "$work/check.json" "$work" <<'PY'
import json, sys, re
r = json.load(open(sys.argv[1])); out = sys.argv[2]
per_file, needed, used = set(), {}, set()
for f in r["files"]:
    names = [n["name"] for n in f["needed"]]
    for n in f["needed"]:
        needed.setdefault(n["name"], 0)
        if n["used"] or not n["path"]:
            used.add(n["name"])
            continue
        # dpkg-shlibdeps does not warn about libm when libstdc++ is needed too.
        if re.match(r"libm\.so\.\d+$", n["name"]) and any(re.match(r"libstdc\+\+\.so\.\d+", x) for x in names):
            continue
        per_file.add("%s\t%s" % (f["file"], n["name"]))
open(out + "/our_notneeded", "w").write("".join(x + "\n" for x in sorted(per_file)))
open(out + "/our_useless", "w").write("".join(x + "\n" for x in sorted(set(needed) - used)))
PY
  compare "unused NEEDED per file (dpkg-shlibdeps: should not be linked against)" "$work/our_notneeded" "$work/shl_notneeded"
  compare "unused over all files (dpkg-shlibdeps: could avoid a useless dependency)" "$work/our_useless" "$work/shl_useless"
fi

# A random sample of the whole system: every dynamically linked ELF file of
# /usr/lib/x86_64-linux-gnu checked at once (one shared cache), then SAMPLE files
# compared with ldd -u -r (unused) and ldd -r (undefined symbols, not found).
sample=${SAMPLE:-100}
if [ "$sample" -gt 0 ]; then
  echo "== whole /usr/lib/x86_64-linux-gnu, $sample random files vs ldd -u -r / ldd -r"
  /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KB max RSS" -o "$work/time2" \
    "$tool" --json --no-dpkg /usr/lib/x86_64-linux-gnu > "$work/whole.json"
  echo "  $(cat "$work/time2" | tail -1)"
  python3 - "$work/whole.json" "$sample" <<'PY' || fail=1
import json, random, re, subprocess, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
s = r["stats"]
print("  files %d, objects parsed %d, lookups %d, skipped: %d non-ELF, %d symlinks to seen files, %d static/other ELF"
      % (s["files"], s["objects_parsed"], s["lookups"], s["skipped_non_elf"], s["skipped_symlinks"], s["skipped_static"]))
random.seed(1)
bad = 0
for f in random.sample(r["files"], min(n, len(r["files"]))):
    ours_u = sorted((x["path"] or x["name"]) for x in f["needed"] if not x["used"])
    out = subprocess.run(["ldd", "-u", "-r", f["file"]], capture_output=True, text=True).stdout
    theirs_u = []
    if "Unused direct dependencies:" in out:
        theirs_u = sorted(l[1:] for l in out.split("Unused direct dependencies:\n")[1].splitlines() if l.startswith("\t"))
    p = subprocess.run(["ldd", "-r", f["file"]], capture_output=True, text=True)
    theirs_r = sorted(set(re.findall(r"^undefined symbol: ([^\s,]+)", p.stdout + p.stderr, re.M)))
    ours_r = sorted(set(x.split("@")[0] for x in f["undefined"]))
    theirs_m = sorted(set(re.findall(r"^\t(\S+) => not found", p.stdout, re.M)))
    ours_m = sorted(set(x["name"] for x in f["missing"]))
    if (ours_u, ours_r, ours_m) != (theirs_u, theirs_r, theirs_m):
        bad += 1
        print("  DIFFERENT:", f["file"], ours_u, theirs_u, len(ours_r), len(theirs_r), ours_m, theirs_m)
print("  %d files compared, %d differ" % (min(n, len(r["files"])), bad))
sys.exit(1 if bad else 0)
PY
fi

echo "== text output (first lines)"
"$tool" /usr "${files[@]}" | grep -v "Needed DSO" | cut -c1-200 | head -12
exit $fail
