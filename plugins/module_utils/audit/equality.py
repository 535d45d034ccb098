# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Comparing secret values without ever holding a result that shows them.

The audit compares the delivered credential with its backup and with the password Secret of its generation. The
comparison runs on SHA-256 digests with a constant-time compare, so nothing derived from a value but a yes or
no leaves this module, and the time taken says nothing about where two values part.
"""
from __future__ import annotations

import hashlib
import hmac
from typing import Iterable, List, Mapping, Optional


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()


def same(left: Optional[str], right: Optional[str]) -> bool:
    """Both present and equal."""
    if left is None or right is None:
        return False
    return hmac.compare_digest(_digest(left), _digest(right))


def differing_keys(expected: Mapping[str, str], actual: Mapping[str, str], keys: Iterable[str]) -> List[str]:
    """The ``keys`` whose values differ between the two maps (a key missing from either one differs)."""
    return [key for key in keys if not same(expected.get(key), actual.get(key))]
