"""Looks for passwords where none may be: logs, pass outputs, events, artifacts. Reports file names and how
many passwords matched, never a password.

Each password is searched as it is and base64-encoded (a Secret manifest dumped into a log would carry the
latter). The stores that hold the Secrets by design are skipped and named in the report: etcd's data
directories (the local apiserver has no encryption at rest) and MariaDB's data directory (Keystone keeps only
bcrypt hashes there, but its files are binary storage, not logs).
"""
import base64
import os
from pathlib import Path
from typing import Iterable, List, Set, Tuple

CHUNK = 4 << 20


def needles(secrets: Iterable[str]) -> List[bytes]:
    found = set()
    for secret in secrets:
        if secret and len(secret) >= 8:
            found.add(secret.encode())
            found.add(base64.b64encode(secret.encode()))
    return sorted(found)


def _file_hits(path: Path, patterns: List[bytes]) -> int:
    longest = max(len(p) for p in patterns)
    hits: Set[bytes] = set()
    try:
        with open(path, "rb") as fh:
            tail = b""
            while True:
                chunk = fh.read(CHUNK)
                if not chunk:
                    break
                window = tail + chunk
                hits.update(p for p in patterns if p in window)
                tail = window[-longest:]
    except OSError:
        return 0
    return len(hits)


def scan(roots: Iterable[Path], secrets: Iterable[str], skip: Iterable[Path] = ()) -> Tuple[List[dict], int]:
    """([{"file": path, "matches": n}], files scanned) over every regular file under ``roots``."""
    patterns = needles(secrets)
    skip = [Path(s).resolve() for s in skip]
    leaks, scanned = [], 0
    if not patterns:
        return leaks, scanned
    for root in roots:
        root = Path(root)
        paths = [root] if root.is_file() else (Path(d) / f for d, _, files in os.walk(root) for f in files)
        for path in paths:
            resolved = path.resolve()
            if any(resolved == s or s in resolved.parents for s in skip) or not resolved.is_file():
                continue
            scanned += 1
            count = _file_hits(resolved, patterns)
            if count:
                leaks.append({"file": str(path), "matches": count})
    return leaks, scanned
