"""Counts the HTTP requests of one Python process of the naive baseline (each kubernetes.core module run).

Loaded at interpreter start because the benchmark puts this folder on PYTHONPATH; active only when
C5C3_BENCH_REQUEST_LOG names a file, to which the process appends its count when it exits.
"""
import atexit
import os

_LOG = os.environ.get("C5C3_BENCH_REQUEST_LOG")

if _LOG:
    try:
        from urllib3 import connectionpool
    except ImportError:  # the controller side without urllib3: nothing to count
        connectionpool = None
    if connectionpool is not None:
        _COUNT = [0]
        _urlopen = connectionpool.HTTPConnectionPool.urlopen

        def _counted(self, method, url, *args, **kwargs):
            _COUNT[0] += 1  # a retry or redirect calls urlopen again: it is another request
            return _urlopen(self, method, url, *args, **kwargs)

        connectionpool.HTTPConnectionPool.urlopen = _counted

        def _write():
            if _COUNT[0]:
                with open(_LOG, "a") as fh:
                    fh.write("%d\n" % _COUNT[0])

        atexit.register(_write)
