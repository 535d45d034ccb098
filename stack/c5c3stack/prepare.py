"""What a first bring-up would otherwise fetch one part after the other, fetched ahead: ``make deps`` runs this beside
the Go builds, which keep both cores busy while these mostly wait on the network and the disk.

The Ceph roots (``mmdebstrap``), the servers' venv (Keystone, OpenBao) and the MariaDB package. Each is cached as
``up`` would cache it, so ``up`` finds them and a second run does nothing; every step prints what it does and how long
it is expected to take on a cold machine, so a newcomer knows the wait is normal.
"""
import sys
import time

from . import cephroot, mariadb, rgw
from .config import StackConfig
from .process import StackError
from .venv import MARKER, server_requirements, server_venv, venv_path


def _step(label: str, cached: bool, expect: str, fn) -> None:
    """``expect``: how long it took cold on this 2-core machine, beside the Go builds (docs/testing.md, "Figures")."""
    if cached:
        print(f"cached: {label}", flush=True)
        return
    print(f"fetching: {label} (expect ~{expect} cold)", flush=True)
    t0 = time.monotonic()
    fn()
    print(f"fetched: {label} in {time.monotonic() - t0:.0f}s", flush=True)


def main() -> int:
    cfg = StackConfig()
    try:
        for cluster in rgw.wanted():  # C5C3_SKIP_PARTS=rgw (or rgw-reef) leaves them out
            release = cluster.release
            _step(f"{release.name} root", cephroot.tarball(cfg, release).exists(), "75 s",
                  lambda release=release: cephroot.ensure_tarball(cfg, release))
        _step("server venv", (venv_path(cfg, "server", server_requirements(cfg)) / MARKER).exists(), "45 s",
              lambda: server_venv(cfg))
        _step("mariadb", mariadb.server_binary() is not None, "15 s", lambda: mariadb.install(cfg))
    except StackError as exc:
        print(f"stack error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
