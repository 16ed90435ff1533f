#!/usr/bin/env bash
# bench/python_bench.sh [BUILD] — time the Python module (issue 21), one run,
# not in CI. BUILD is a CMake build with -DLINKSCOPE_BUILD_PYTHON=ON and the
# CLIs (default: build). Needs /usr/bin/python3 with python3-pyelftools.
#
#   1. the dynamic symbols of libtorch_cpu.so (34,922 .dynsym entries) from
#      Python: linkscope.open(F).symbols().names() (and the Symbol objects)
#      against pyelftools' iter_symbols(); the name lists must be equal.
#      Goal: >= 100x.
#   2. the ld.so bindings of op_registration_test (libtorch-test, the
#      program of bench/compare pair b) from Python, linkscope.ldd(P).bindings,
#      against `linkscope-ldd --bindings P`; the rows must be equal.
#      Goal: within 1.2x of the CLI.
# Each figure is the best of N runs (wall and CPU of that run); the machine
# load (uptime) is printed before and after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
torch=${LINKSCOPE_TORCH_CPU:-/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13}
prog=${LINKSCOPE_TORCH_TEST:-/usr/lib/libtorch-test/op_registration_test}
[ -e "$build/python/linkscope/__init__.py" ] || { echo "no $build/python/linkscope (build with -DLINKSCOPE_BUILD_PYTHON=ON)"; exit 2; }
[ -x "$build/examples/linkscope-ldd" ] || { echo "no $build/examples/linkscope-ldd"; exit 2; }
echo "load before: $(uptime)"
echo "python: $(/usr/bin/python3 --version), nproc $(nproc)"
PYTHONPATH="$build/python" /usr/bin/python3 - "$torch" "$prog" "$build/examples/linkscope-ldd" <<'PY'
import os, resource, subprocess, sys, time
import linkscope
torch, prog, ldd_cli = sys.argv[1:4]

def best(fn, n):
    runs = []
    for _ in range(n):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        runs.append((time.perf_counter() - w, time.process_time() - c,
                     resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0))
        del out
    return min(runs), fn()

def show(label, wall_cpu, n):
    faults = f"   {wall_cpu[2]:6d} page faults" if len(wall_cpu) > 2 else ""
    print(f"  {label:<58} wall {wall_cpu[0]*1e3:9.1f} ms   CPU {wall_cpu[1]*1e3:9.1f} ms{faults}   (best of {n})")

print(f"1. dynamic symbols of {torch}")
def ls_names():
    return linkscope.open(torch).symbols().names()
def ls_objects():
    return [(s.name, s.version, s.defined) for s in linkscope.open(torch).symbols()]
def pyelftools_names():
    from elftools.elf.elffile import ELFFile
    with open(torch, "rb") as fh:
        return [s.name for s in ELFFile(fh).get_section_by_name(".dynsym").iter_symbols()][1:]
t_pe, pe = best(pyelftools_names, 3)
t_ls, ls = best(ls_names, 10)
t_obj, objs = best(ls_objects, 10)
assert ls == pe, "symbol lists differ"
assert [o[0] for o in objs] == pe
print(f"  {len(ls)} names, equal lists: yes")
show("pyelftools: ELFFile(...).get_section_by_name('.dynsym')", t_pe, 3)
show("linkscope.open(f).symbols().names()", t_ls, 10)
show("linkscope: (s.name, s.version, s.defined) for s in symbols()", t_obj, 10)
print(f"  ratio names(): wall {t_pe[0]/t_ls[0]:.0f}x, CPU {t_pe[1]/t_ls[1]:.0f}x;"
      f" Symbol objects: wall {t_pe[0]/t_obj[0]:.0f}x, CPU {t_pe[1]/t_obj[1]:.0f}x")

print(f"2. bindings of {prog}")
def cli():
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w = time.perf_counter()
    out = subprocess.run([ldd_cli, "--bindings", "--no-env", prog], stdout=subprocess.PIPE, check=False).stdout
    w = time.perf_counter() - w
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return w, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), out
runs = [cli() for _ in range(10)]
t_cli = min(runs, key=lambda r: r[0])
rows = runs[0][2].decode("utf-8", "surrogateescape").splitlines()
t_py, bindings = best(lambda: linkscope.ldd(prog).bindings, 10)
assert ["\t".join(b) for b in bindings] == rows, "binding rows differ"
print(f"  {len(rows)} bindings, equal rows: yes")
show("linkscope-ldd --bindings --no-env P (process, stdout to a pipe)", t_cli[:2], 10)
show("linkscope.ldd(P).bindings (in-process)", t_py, 10)
print(f"  ratio Python/CLI: wall {t_py[0]/t_cli[0]:.2f}x, CPU {t_py[1]/t_cli[1]:.2f}x")
PY
echo "load after: $(uptime)"
