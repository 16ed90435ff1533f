#!/usr/bin/env bash
# Parity and timing of linkscope-implib against GNU dlltool -I over every
# import library of mingw-w64 (Debian package mingw-w64-x86-64-dev).
#
#   bench/parity_implib.sh [BUILD_DIR] [LIBDIR]
#
# For each LIBDIR/*.a:
#   - `x86_64-w64-mingw32-dlltool -I LIB` is run; where it answers (exit 0),
#     `linkscope-implib LIB` must print the same bytes and exit 0;
#   - where dlltool cannot answer (exit 1: "Unable to determine dll name ...
#     (not an import library?)"), we must fail too (exit 1, nothing on stdout);
#     what we print instead is listed, with the import-record count
#     (--symbols), so the note can document it;
#   - `--strict` must fail exactly where `--identify-strict` fails.
# Timing: the dlltool -I loop (one process per library, as a packager's
# script runs it) against (a) the same loop of linkscope-implib processes and
# (b) one linkscope-implib --symbols process that fully parses every library
# (every member, every import record tied to its DLL).
set -u
build=${1:-build}
libdir=${2:-/usr/x86_64-w64-mingw32/lib}
tool=$build/examples/linkscope-implib
dlltool=${DLLTOOL:-x86_64-w64-mingw32-dlltool}
[ -x "$tool" ] || { echo "no $tool (build the linkscope-implib target first)" >&2; exit 2; }
command -v "$dlltool" >/dev/null || { echo "no $dlltool (package binutils-mingw-w64-x86-64)" >&2; exit 2; }

files=("$libdir"/*.a)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

total=${#files[@]} answered=0 same=0 differ=0 unanswered=0 both_fail=0 we_answer=0 multi=0 strict_same=0 strict_diff=0
for f in "${files[@]}"; do
  "$dlltool" -I "$f" >"$tmp/theirs" 2>/dev/null; their_rc=$?
  "$tool" "$f" >"$tmp/ours" 2>"$tmp/err"; our_rc=$?
  if [ $their_rc -eq 0 ]; then
    answered=$((answered + 1))
    [ "$(wc -l <"$tmp/theirs")" -gt 1 ] && multi=$((multi + 1))
    if [ $our_rc -eq 0 ] && cmp -s "$tmp/theirs" "$tmp/ours"; then same=$((same + 1)); else
      differ=$((differ + 1)); echo "DIFFERS: $f (ours rc=$our_rc: $(head -c 200 "$tmp/ours" "$tmp/err" | tr '\n' ' '))"; fi
  else
    unanswered=$((unanswered + 1))
    if [ $our_rc -ne 0 ] && [ ! -s "$tmp/ours" ]; then both_fail=$((both_fail + 1)); else
      we_answer=$((we_answer + 1)); echo "WE ANSWER WHERE dlltool CANNOT: $f -> $(tr '\n' ' ' <"$tmp/ours")"; fi
    records=$("$tool" --symbols "$f" 2>/dev/null | wc -l)
    echo "dlltool cannot answer: $(basename "$f") (ours: exit $our_rc, $records import records, $(tr '\n' ' ' <"$tmp/err" | head -c 120))"
  fi
  "$dlltool" --identify-strict -I "$f" >/dev/null 2>&1; their_strict=$?
  "$tool" --strict "$f" >/dev/null 2>&1; our_strict=$?
  if [ $((their_strict == 0)) -eq $((our_strict == 0)) ]; then strict_same=$((strict_same + 1)); else
    strict_diff=$((strict_diff + 1)); echo "STRICT DIFFERS: $f (dlltool $their_strict, ours $our_strict)"; fi
done

echo
echo "libraries: $total"
echo "dlltool -I answers: $answered (of which $multi name several DLLs); linkscope-implib equal: $same, differ: $differ"
echo "dlltool -I cannot answer: $unanswered; linkscope-implib also fails: $both_fail, answers anyway: $we_answer"
echo "--strict vs --identify-strict: same outcome $strict_same, differ $strict_diff"

# Wall time is at the mercy of the machine's load; user+sys CPU time is
# printed beside it (bash `time`).
TIMEFORMAT='%R s wall, %U s user + %S s sys'
bytes=$(cat "${files[@]}" | wc -c)
echo
echo "timing over $total libraries ($bytes bytes), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
{ time (for f in "${files[@]}"; do "$dlltool" -I "$f" >/dev/null 2>&1; done); } 2>"$tmp/t1"
{ time (for f in "${files[@]}"; do "$tool" "$f" >/dev/null 2>&1; done); } 2>"$tmp/t2"
{ time ("$tool" --symbols "${files[@]}" >"$tmp/all_records" 2>/dev/null); } 2>"$tmp/t3"
{ time ("$tool" "${files[@]}" >/dev/null 2>&1); } 2>"$tmp/t4"
records=$(wc -l <"$tmp/all_records")
echo "  dlltool -I, one process per library:          $(cat "$tmp/t1")"
echo "  linkscope-implib, one process per library:    $(cat "$tmp/t2")"
echo "  linkscope-implib, all libraries in 1 process: $(cat "$tmp/t4")"
echo "  linkscope-implib --symbols, 1 process:        $(cat "$tmp/t3") ($records import records)"
[ $differ -eq 0 ] && [ $strict_diff -eq 0 ] && [ $we_answer -eq 0 ]
