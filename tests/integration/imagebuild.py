"""``make image`` for the tests that need the image, at most one at a time.

Two lanes (tests/integration/lanes.py) may both find ``.image/`` without the archive and build it at once; the builds
share ``build/`` (``make collection-build`` empties it first), so they are taken one after the other under a file
lock, and the second finds the first's archive and builds nothing.
"""
import fcntl
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def ensure_image(*wanted: Path) -> None:
    """Build the image unless every path of ``wanted`` (the archive, its record) exists."""
    lock_path = REPO / ".image" / ".build.lock"
    lock_path.parent.mkdir(exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(path.exists() for path in wanted):
            return
        proc = subprocess.run(["make", "image"], cwd=REPO, capture_output=True, text=True, timeout=3600, check=False)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
