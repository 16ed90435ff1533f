#!/usr/bin/env python3
"""Run a command and write its wall time, user and system CPU time, and peak RSS.

    bench/timed_run.py OUT CMD [ARG...]

Writes one line to OUT: "WALL USER SYS MAXRSS_KB" (seconds to the microsecond),
the format of `/usr/bin/time -f '%e %U %S %M'`, and exits with CMD's status.

Why not /usr/bin/time: it prints seconds with two decimals, and the runs the
benchmarks compare take 0.1 s, so its 10 ms steps alone moved a 1k-against-10k
ratio by 10%. Here the wall time is time.perf_counter() around fork and wait,
and the CPU times and RSS are the child's own rusage from os.wait4, as
/usr/bin/time reads them, at the kernel's microsecond resolution.
"""
import os
import sys
import time


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: timed_run.py OUT CMD [ARG...]", file=sys.stderr)
        return 2
    out, argv = sys.argv[1], sys.argv[2:]
    start = time.perf_counter()
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as e:
        print("timed_run.py: cannot run %s: %s" % (argv[0], e.strerror), file=sys.stderr)
        return 127
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    with open(out, "w") as f:
        f.write("%.6f %.6f %.6f %d\n" % (wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss))
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
