# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Keeping secrets out of error texts before anything else sees them.

An API server error can echo the request body: an admission message built from ``object.data``, a
validation error quoting a field. Such a text ends up in a tenant-visible condition, in the module's result
and in the controller's log, so the edge scrubs it here, at the one place errors enter the pass: every secret
value the pass has seen or written (decoded and as the base64 text a Secret's ``data`` carries) is replaced by
``[redacted]``. The set is filled as Secrets are read and written; scrubbing runs only on error texts, so its
cost does not grow with the number of orders of a converged pass.

What the pass *writes* is also kept apart (``written``): a module masks those values out of its result
(``C5c3K8sModule.hide``, ``k8s.mask``). Masking every value it reads as well would cost a walk against tens of
thousands of values for nothing: the results are built from names and reasons only, and every error text is
scrubbed here, so the read values never reach them.

A Secret the pass only *reads* is noted by reference and decoded the first time a text is scrubbed: a converged
pass over thousands of orders reads tens of thousands of secret values and scrubs no text at all, so decoding them
up front was most of its redaction work. What a scrub masks is the same either way. The pass's workers share one
redactor, so its sets change under a lock.
"""
from __future__ import annotations

import base64
import threading
from typing import Any, Iterable, List, Mapping, Set, Tuple

MASK = "[redacted]"
MIN_SECRET = 4  # shorter values would mask ordinary words; no secret the pass handles is this short
# The data keys whose values are secret (or name a credential, as an access key id does). Other entries of the
# Secrets the pass writes are plain facts -- a bucket, an endpoint, a region, a user name -- which results,
# actions and condition messages name on purpose.
SECRET_KEY_HINTS = ("secret", "password", "key", "token", "clouds", "credential")


def holds_secret(data_key: str) -> bool:
    lowered = data_key.lower()
    return any(hint in lowered for hint in SECRET_KEY_HINTS)


class Redactor:
    def __init__(self) -> None:
        self._values: Set[str] = set()
        # (data, stringData) of the Secrets read, decoded when a text is scrubbed
        self._unread: List[Tuple[Any, Any]] = []
        self.written: Set[str] = set()  # the decoded values of the Secrets the pass wrote
        self._lock = threading.RLock()

    def __len__(self) -> int:
        self._settle()
        return len(self._values)

    def add(self, value: Any) -> None:
        if isinstance(value, str) and len(value) >= MIN_SECRET:
            with self._lock:
                self._values.add(value)
                self._values.add(base64.b64encode(value.encode("utf-8")).decode("ascii"))

    def add_secret(self, secret: Mapping[str, Any], written: bool = False) -> None:
        """Every secret value of a Secret's ``data`` (base64, as stored) and ``stringData``, and its decoded text.
        A Secret read (not ``written``) is only noted here; its values are taken when a text is first scrubbed."""
        if not isinstance(secret, Mapping):
            return
        if written:
            with self._lock:
                self._absorb(secret.get("data"), secret.get("stringData"), True)
        else:
            self._unread.append((secret.get("data"), secret.get("stringData")))

    def _settle(self) -> None:
        with self._lock:
            while self._unread:
                self._absorb(*self._unread.pop(), False)

    def _absorb(self, data: Any, string_data: Any, written: bool) -> None:
        if isinstance(data, Mapping):
            for data_key, encoded in data.items():
                if not isinstance(data_key, str) or not holds_secret(data_key):
                    continue
                if isinstance(encoded, str) and len(encoded) >= MIN_SECRET:
                    self._values.add(encoded)
                    try:
                        value = base64.b64decode(encoded.encode("ascii"), validate=True).decode("utf-8")
                    except (ValueError, UnicodeError):
                        continue
                    self.add(value)
                    if written and len(value) >= MIN_SECRET:
                        self.written.add(value)
        if isinstance(string_data, Mapping):
            for data_key, value in string_data.items():
                if isinstance(data_key, str) and holds_secret(data_key):
                    self.add(value)

    def add_all(self, values: Iterable[Any]) -> None:
        for value in values:
            self.add(value)

    def scrub(self, text: str) -> str:
        """``text`` with every known secret masked (longest first, so a document hides before its parts)."""
        if not text:
            return text
        self._settle()
        with self._lock:
            found = [v for v in self._values if v in text]
        for value in sorted(found, key=len, reverse=True):
            text = text.replace(value, MASK)
        return text
