"""Run a command and write its own wall time and peak RSS to a file: ``rss.py OUT CMD [ARGS...]``.

Why a wrapper: Linux carries the high-water RSS of the memory image a process replaces over ``exec``,
and Python's subprocess starts children with vfork, whose image is the parent's. So the ``ru_maxrss``
that ``wait4`` reports for a child of the (large) benchmark process is at least the benchmark's own peak.
This small process forks (a fresh signal struct), the grandchild execs the command, and the ``wait4`` here
sees only the command's peak (plus this interpreter's few MiB before exec, below any command's own).
OUT gets "<peak RSS KiB> <wall seconds> <CPU seconds>" (CPU: user + system of the command and the children it
waited for); the exit code is the command's.
"""
import os
import sys
import time

out, argv = sys.argv[1], sys.argv[2:]
started = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.monotonic() - started
with open(out, "w") as fh:
    fh.write("%d %.6f %.6f\n" % (usage.ru_maxrss, wall, usage.ru_utime + usage.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status))
