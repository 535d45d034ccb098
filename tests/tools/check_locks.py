#!/usr/bin/env python3
"""Fails when a pin file and its hash lock disagree.

Every venv of the project is installed from a lock written by pip-compile (``make locks``, mk/locks.mk) with
``pip install --require-hashes``, so a version changed in a pin file (``requirements/*.txt`` or ``*.in``, what people
edit) means nothing until its lock is compiled again. This check, run first by ``make test``, catches the
forgotten step without the network:

- every ``name==version`` of a pin file, and of the files it includes with ``-r``, is in its lock with that version;
- every requirement of a lock is pinned with ``==`` and carries at least one ``--hash``.

Prints one line per disagreement and exits 1 when there is any.
"""
import re
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

REPO = Path(__file__).resolve().parents[2]
# lock -> the pin file it is compiled from (mk/locks.mk and mk/image.mk compile exactly these pairs)
PAIRS = {
    "requirements/test.lock": "requirements/test.txt",
    "requirements/bench.lock": "requirements/bench.txt",
    "requirements/typecheck.lock": "requirements/typecheck.txt",
    "requirements/docs.lock": "requirements/docs.txt",
    "requirements/server.lock": "requirements/server.txt",
    "requirements/runtime.lock": "requirements/runtime-image.in",
    "requirements/lock-tools.txt": "requirements/lock-tools.in",
}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;\\]+)")


def canonical(name: str) -> str:
    """A distribution name as PyPI compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def shown(path: Path) -> str:
    """``requirements/<file>``: how a file is named in a message."""
    return str(path.relative_to(path.parents[1]))


def logical_lines(text: str) -> Iterator[str]:
    """The requirement lines of a file, with backslash continuations joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            yield line


def pins(path: Path) -> Dict[str, Tuple[str, str]]:
    """``{name: (version, where)}`` of a pin file and of every file it includes with ``-r``."""
    found: Dict[str, Tuple[str, str]] = {}
    for line in logical_lines(path.read_text(encoding="utf-8")):
        if line.startswith(("-r ", "--requirement ")):
            found.update(pins(path.parent / line.split(None, 1)[1]))
            continue
        match = PIN.match(line)
        if match:
            found[canonical(match.group(1))] = (match.group(2), shown(path))
    return found


def locked(path: Path) -> Tuple[Dict[str, str], List[str]]:
    """The ``{name: version}`` of a lock and the problems of its entries (unpinned, no hash)."""
    versions: Dict[str, str] = {}
    problems: List[str] = []
    for line in logical_lines(path.read_text(encoding="utf-8")):
        if line.startswith("-"):
            continue
        match = PIN.match(line)
        if not match:
            problems.append(f"{shown(path)}: {line.split()[0]!r} is not pinned with ==")
            continue
        versions[canonical(match.group(1))] = match.group(2)
        if "--hash=" not in line:
            problems.append(f"{shown(path)}: {match.group(1)}=={match.group(2)} carries no --hash")
    return versions, problems


def disagreements(repo: Path = REPO) -> List[str]:
    out: List[str] = []
    for lock_name, source_name in PAIRS.items():
        lock, source = repo / lock_name, repo / source_name
        if not lock.exists():
            out.append(f"{lock_name}: missing (make locks)")
            continue
        versions, problems = locked(lock)
        out.extend(problems)
        for name, (version, where) in sorted(pins(source).items()):
            have = versions.get(name)
            if have != version:
                out.append(f"{lock_name}: {name} is {have or 'absent'}, but {where} pins {version} (make locks)")
    return out


def main() -> int:
    found = disagreements()
    for line in found:
        print(line)
    if not found:
        print(f"{len(PAIRS)} locks agree with their pin files; every entry is hash-pinned")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
