#!/usr/bin/env bash
# `linkscope-absorbed --cmake-package Torch` on Debian's libtorch-dev, each
# verdict against a trial link of a consumer that CMake builds with
# find_package(Torch) (issue 15, part 5). Not in CI: it needs the big
# libtorch packages (installed here when missing) and ~1 minute of CMake.
#   bench/real_cmake_torch.sh [BUILD_DIR]
#
# The consumer calls at::globalContext() (libtorch_cpu). The trials:
#  1. Caffe2Targets' IMPORTED_LINK_DEPENDENT_LIBRARIES of torch_cpu: one
#     project, one executable per entry E, each linking a copy of the
#     imported target torch_cpu (same file, same interface) whose property
#     lacks E; plus one copy with the whole property, as the control. The
#     verdict not-needed must mean "links without E", needed "fails".
#  2. The archives on the consumer's link line (what CMake resolved): the
#     link command of the real consumer with that word taken out. The verdict
#     not-needed / unrelated / re-exported must mean "links", needed "fails".
# Shared libraries on the link line are linked like any DSO (no verdict);
# their trials are printed for information only.
# Exit 1 when a verdict disagrees with its trial.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
if ! dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q 'ok installed'; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libtorch-dev >/dev/null
fi
[ -x "$build/examples/linkscope-absorbed" ] || {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLINKSCOPE_BUILD_TESTS=OFF -DLINKSCOPE_BUILD_FUZZ=OFF >/dev/null
  cmake --build "$build" --target linkscope-absorbed >/dev/null; }
tool=$build/examples/linkscope-absorbed
so=$(readlink -f /usr/lib/x86_64-linux-gnu/libtorch_cpu.so)
work=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT; mkdir -p "$work"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(dpkg-query -W -f='${Package} ${Version}' libtorch-dev); $(cmake --version | head -1)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "## linkscope-absorbed --cmake-package Torch $so"
/usr/bin/time -f "%e s wall, %U+%S s CPU" -o "$work/time" "$tool" --cmake-package Torch "$so"
echo "(exit $?; $(cat "$work/time"), most of it CMake's find_package(Torch))"
"$tool" --json --cmake-package Torch "$so" >"$work/doc.json"

cat >"$work/main.cpp" <<'CPP'
namespace at { class Context; Context& globalContext(); }
int main() { return &at::globalContext() == nullptr; }
CPP
# The dependent entries, one per line.
python3 - "$work/doc.json" >"$work/dependent.txt" <<'PY'
import json, sys
for lib in json.load(open(sys.argv[1])).get("cmake_libs", []):
    if lib["status"] == "link-dependent":
        print(lib["name"])
PY
mkdir -p "$work/app"
{
  echo 'cmake_minimum_required(VERSION 3.21)'
  echo 'project(trial CXX)'
  echo 'find_package(Torch REQUIRED)'
  echo "add_executable(app_base $work/main.cpp)"
  echo 'target_link_libraries(app_base PRIVATE ${TORCH_LIBRARIES})'
  echo 'get_target_property(_cfgs torch_cpu IMPORTED_CONFIGURATIONS)'
  echo 'list(GET _cfgs 0 _c)'
  echo 'get_target_property(_loc torch_cpu IMPORTED_LOCATION_${_c})'
  echo 'get_target_property(_deps torch_cpu IMPORTED_LINK_DEPENDENT_LIBRARIES_${_c})'
  echo 'get_target_property(_iface torch_cpu INTERFACE_LINK_LIBRARIES)'
  echo 'function(trial NAME REMOVE)'
  echo '  set(_less ${_deps})'
  echo '  if(NOT REMOVE STREQUAL "")'
  echo '    list(REMOVE_ITEM _less ${REMOVE})'
  echo '  endif()'
  echo '  add_library(torch_cpu_${NAME} SHARED IMPORTED)'
  echo '  set_target_properties(torch_cpu_${NAME} PROPERTIES IMPORTED_LOCATION "${_loc}"'
  echo '    IMPORTED_LINK_DEPENDENT_LIBRARIES "${_less}" INTERFACE_LINK_LIBRARIES "${_iface}")'
  echo "  add_executable(app_\${NAME} $work/main.cpp)"
  echo '  target_link_libraries(app_${NAME} PRIVATE torch_cpu_${NAME})'
  echo 'endfunction()'
  echo 'trial(control "")'
  i=0
  while read -r e; do i=$((i + 1)); echo "trial(t$i \"$e\")"; done <"$work/dependent.txt"
} >"$work/app/CMakeLists.txt"
(cd "$work/app" && cmake -S . -B build -G 'Unix Makefiles' >"$work/configure.log" 2>&1) || {
  echo "real_cmake_torch: the trial project does not configure"; tail -20 "$work/configure.log"; exit 2; }
(cd "$work/app" && cmake --build build -j "$(nproc)" -- -k >"$work/build.log" 2>&1)
disagree=0
links() { [ -x "$work/app/build/$1" ] && echo links || echo fails; }
verdict_of() {  # NAME STATUS -> the document's verdict
  python3 - "$work/doc.json" "$1" "$2" <<'PY'
import json, sys
for lib in json.load(open(sys.argv[1])).get("cmake_libs", []):
    if lib["name"] == sys.argv[2] and lib["status"] == sys.argv[3]:
        print(lib.get("verdict", lib["status"])); break
PY
}
echo
echo "## 1. IMPORTED_LINK_DEPENDENT_LIBRARIES of torch_cpu: verdict | consumer without it"
echo "baseline (find_package(Torch), \${TORCH_LIBRARIES}): $(links app_base); control (the copied target, whole property): $(links app_control)"
[ "$(links app_base)" = links ] && [ "$(links app_control)" = links ] || { echo "the baseline does not link"; exit 2; }
i=0
while read -r e; do
  i=$((i + 1))
  v=$(verdict_of "$e" link-dependent)
  t=$(links "app_t$i")
  ok=agree
  { [ "$v" = not-needed ] && [ "$t" = links ]; } || { [ "$v" = needed ] && [ "$t" = fails ]; } || { ok=DISAGREE; disagree=1; }
  printf '%-18s %-11s %-6s %s\n' "$e" "$v" "$t" "$ok"
done <"$work/dependent.txt"

echo
echo "## 2. the consumer's link line (CMake's): verdict | link command without the word"
link_cmd=$(cat "$work/app/build/CMakeFiles/app_base.dir/link.txt")
python3 - "$work/doc.json" >"$work/entries.txt" <<'PY'
import json, sys
for lib in json.load(open(sys.argv[1])).get("cmake_libs", []):
    if lib["status"] not in ("link-dependent", "flag"):
        print(lib["status"] + "\t" + lib["name"])
PY
while IFS=$'\t' read -r status name; do
  # The word itself, or the path inside a -Wl,a,PATH,b word.
  less=$(python3 -c '
import shlex, sys
name, out = sys.argv[2], []
for x in shlex.split(sys.argv[1]):
    if x == name: continue
    if x.startswith("-Wl,") and name in x.split(",")[1:]: x = ",".join(p for p in x.split(",") if p != name)
    out.append(x)
print(shlex.join(out))' "$link_cmd" "$name")
  if [ "$less" = "$(python3 -c 'import shlex, sys; print(shlex.join(shlex.split(sys.argv[1])))' "$link_cmd")" ]; then
    printf '%-60s %-11s %s\n' "$name" "$status" "(not a word of the link command)"; continue
  fi
  if (cd "$work/app/build" && eval "${less/-o app_base/-o app_trial}" >/dev/null 2>&1); then t=links; else t=fails; fi
  case $status in
    shared) ok="(a DSO: no verdict)" ;;
    needed) [ "$t" = fails ] && ok=agree || { ok=DISAGREE; disagree=1; } ;;
    *) [ "$t" = links ] && ok=agree || { ok=DISAGREE; disagree=1; } ;;
  esac
  printf '%-60s %-11s %-6s %s\n' "$name" "$status" "$t" "$ok"
done < <(sort -u "$work/entries.txt")
[ "$disagree" -eq 0 ] && echo "every verdict agrees with its trial link" || echo "some verdicts DISAGREE"
exit "$disagree"
