"""Makes the checkout importable as the collection ``c5c3.orders`` for every test.

Ansible resolves ``ansible_collections.c5c3.orders`` from a folder laid out as
``<root>/ansible_collections/c5c3/orders``; the checkout is not, so a symlink under ``.collections/``
(ignored by git) points there and that root goes on ``sys.path``.
"""
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COLLECTIONS_ROOT = REPO / ".collections"


def _link_collection() -> None:
    link = COLLECTIONS_ROOT / "ansible_collections" / "c5c3" / "orders"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.symlink(REPO, link)
        except FileExistsError:
            pass
    if str(COLLECTIONS_ROOT) not in sys.path:
        sys.path.insert(0, str(COLLECTIONS_ROOT))


_link_collection()
