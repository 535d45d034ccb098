# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a pass keeps of an object's ``metadata.managedFields``: when its own field manager wrote it, nothing more.

The entries' ``fieldsV1`` are more than half of a decoded Secret and nothing in a pass reads them, so they are
dropped as objects are read (``service.py``, ``passes/snapshot.py``). One fact in them is needed: the time the
API server recorded for the pass's own last write of a delivered Secret, which the rollout gate compares consumer
pods against (``objectstorage/rollout.py``): a pod started before that write may hold the old key, even when it
started after the clock of the pass that decided the write. So a list that asks for write times
(``list(..., write_times=True)``: the object-storage pass's delivered Secrets) keeps the entries of
``field_manager``, as ``{manager, operation, time}`` only; every other list drops them all, because even that
little costs a pass over thousands of objects about 10 MiB at 5,000 orders (docs/benchmarks.md).
"""
from __future__ import annotations

from typing import Any, Dict, MutableMapping


def slim(metadata: MutableMapping[str, Any], field_manager: str) -> None:
    """Reduce ``metadata.managedFields`` in place to ``field_manager``'s entries and their write times; with no
    ``field_manager``, drop it."""
    entries = metadata.pop("managedFields", None)
    if not field_manager or not isinstance(entries, list):
        return
    kept = [_slimmed(e) for e in entries if isinstance(e, dict) and e.get("manager") == field_manager]
    if kept:
        metadata["managedFields"] = kept


def _slimmed(entry: Dict[str, Any]) -> Dict[str, Any]:
    return {key: entry[key] for key in ("manager", "operation", "time") if key in entry}
