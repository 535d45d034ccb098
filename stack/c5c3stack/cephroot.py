"""Ceph from Debian in a root filesystem of its own, built once with ``mmdebstrap`` and cached.

The host is Debian 12, whose radosgw (16.2, Pacific) predates RGW accounts, and the newer packages need a
newer glibc than the host has. So the daemons run from a Debian root built by ``mmdebstrap`` and entered
with ``chroot``; nothing is installed into the host but ``mmdebstrap`` itself. The root is cached as a zstd
tarball under ``<cache>/ceph/`` named after its suite and the pinned package version, so only the first
bring-up on a machine pays for the download; every stack unpacks its own copy (about a second).

Run as a script (``python -m c5c3stack.cephroot``) it builds every release the stack runs; ``make deps``
does that, honouring ``C5C3_SKIP_PARTS``.
"""
import fcntl
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .config import StackConfig
from .process import StackError, log_timing, run

MIRROR = "http://deb.debian.org/debian"
PACKAGES = ("radosgw", "ceph-mon", "ceph-osd", "ceph-common")


@dataclass(frozen=True)
class Release:
    """One Ceph release as one Debian suite serves it, pinned like the Go modules are."""

    name: str
    suite: str
    version: str

    @property
    def key(self) -> str:
        return f"{self.suite}-{self.version}"


# Debian's testing suite (forky) serves Tentacle, the reference release (docs/object-storage.md, design rule 5);
# trixie (stable) serves Reef, the last release without accounts. A pin Debian stops serving fails the build with
# a clear message: update it here (and the figures in docs/testing.md).
TENTACLE = Release("tentacle", "forky", "20.2.4+ds-2")
REEF = Release("reef", "trixie", "18.2.7+ds-1+deb13u1")


def tarball(cfg: StackConfig, release: Release) -> Path:
    return cfg.cache / "ceph" / f"{release.key}.tar.zst"


def _mmdebstrap(cfg: StackConfig) -> str:
    """mmdebstrap (and zstd, which packs and unpacks the roots), from Debian 12 when missing."""
    found = shutil.which("mmdebstrap")
    if found and shutil.which("zstd"):
        return found
    log = cfg.dir("logs") / "mmdebstrap-install.log"
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "update", "-q"], env=env, log=log, timeout=300)
    run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "mmdebstrap", "zstd"], env=env,
        log=log, timeout=600)
    found = shutil.which("mmdebstrap")
    if not found:
        raise StackError("mmdebstrap installed, but not found on PATH")
    return found


def ensure_tarball(cfg: StackConfig, release: Release) -> Path:
    """The cached root of ``release``, built first when missing (one builder at a time per machine)."""
    out = tarball(cfg, release)
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists():
            return out
        started = time.monotonic()
        tmp = out.with_name(out.name + ".tmp.tar.zst")  # mmdebstrap picks the format from the suffix
        tmp.unlink(missing_ok=True)
        includes = ",".join(f"{pkg}={release.version}" for pkg in PACKAGES)
        log = cfg.dir("logs") / f"ceph-root-{release.name}.log"
        try:
            run([_mmdebstrap(cfg), "--variant=minbase", "--mode=root",
                 "--aptopt=Apt::Install-Recommends \"false\"",
                 # the machine's clock may be ahead of the suite's Release file
                 "--aptopt=Acquire::Check-Valid-Until \"false\"",
                 f"--include={includes}", release.suite, str(tmp),
                 f"deb {MIRROR} {release.suite} main"], log=log, timeout=1800)
        except StackError as exc:
            tmp.unlink(missing_ok=True)
            hint = ""
            if "was not found" in str(exc) or "has no installation candidate" in str(exc):
                hint = (f"\nDebian's {release.suite} no longer serves {release.version}: update the pin of "
                        f"{release.name} in stack/c5c3stack/cephroot.py")
            raise StackError(f"building the {release.name} root failed (log: {log}): {exc}{hint}") from exc
        tmp.rename(out)
        log_timing(cfg, f"ceph-root-{release.name}", started, "built")
    return out


def ensure_unpacked(cfg: StackConfig, release: Release, dest: Path) -> Path:
    """``dest`` holding an unpacked copy of the release's root; a marker written last tells a complete
    copy from an interrupted one, and a copy of another version is replaced."""
    marker = dest.parent / f"{dest.name}.unpacked"
    if dest.is_dir() and marker.exists() and marker.read_text().strip() == release.key:
        return dest
    source = ensure_tarball(cfg, release)
    started = time.monotonic()
    marker.unlink(missing_ok=True)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    run(["tar", "--zstd", "-xf", str(source), "-C", str(dest)], timeout=600)
    marker.write_text(release.key + "\n")
    log_timing(cfg, f"ceph-root-{release.name}", started, "unpacked")
    return dest


def main() -> int:
    from . import rgw  # rgw builds on this module

    cfg = StackConfig()
    try:
        releases = [cluster.release for cluster in rgw.wanted()]
    except StackError as exc:
        print(f"stack error: {exc}", file=sys.stderr)
        return 1
    for release in releases:
        t0 = time.monotonic()
        path, cached = tarball(cfg, release), tarball(cfg, release).exists()
        try:
            ensure_tarball(cfg, release)
        except StackError as exc:
            print(f"stack error: {exc}", file=sys.stderr)
            return 1
        print(f"{'cached' if cached else 'built'}: {path}"
              + ("" if cached else f" in {time.monotonic() - t0:.0f}s"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
