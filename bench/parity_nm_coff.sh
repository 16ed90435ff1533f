#!/bin/sh
# linkscope-nm against GNU nm (binutils-multiarch 2.40) on COFF inputs, side
# by side in one run: mingw-w64's libkernel32.a (1,700 members, long import
# library) and a big PE DLL with its COFF symbol table (wine's ucrtbase.dll).
# Usage: bench/parity_nm_coff.sh [BUILD_DIR]   (default: build)
# Uses hyperfine -N when installed, else 20 runs under /usr/bin/time. Prints
# the machine load first: on a shared machine, compare the two tools' figures
# of the same run, not runs of different times.
set -eu
build=${1:-build}
ours="$build/examples/linkscope-nm"
[ -x "$ours" ] || { echo "no $ours (build the linkscope-nm target)" >&2; exit 2; }
inputs="/usr/x86_64-w64-mingw32/lib/libkernel32.a /usr/lib/x86_64-linux-gnu/wine/x86_64-windows/ucrtbase.dll"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
export LC_ALL=C
for f in $inputs; do
  [ -f "$f" ] || { echo "skip: $f missing" >&2; continue; }
  nm "$f" > /tmp/parity_nm_coff.nm 2>/dev/null || true
  "$ours" "$f" > /tmp/parity_nm_coff.ours 2>/dev/null || true
  if cmp -s /tmp/parity_nm_coff.nm /tmp/parity_nm_coff.ours; then same=identical; else same=DIFFERENT; fi
  echo "== $f ($(wc -l < /tmp/parity_nm_coff.nm) lines, output $same)"
  if command -v hyperfine >/dev/null 2>&1; then
    hyperfine -N --warmup 2 --runs 20 "nm $f" "$ours $f" 2>&1 | grep -E 'Time|User|±|faster|Benchmark'
  else
    for tool in nm "$ours"; do
      /usr/bin/time -f "$tool: %e s elapsed, %U s user, %S s sys (20 runs)" \
        sh -c "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do $tool $f >/dev/null 2>&1; done"
    done
  fi
done
rm -f /tmp/parity_nm_coff.nm /tmp/parity_nm_coff.ours
