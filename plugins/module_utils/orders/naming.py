# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Per-order child prefixes and ownership labels, for every order kind.

docs/reconciler.md "Where the children live": the children of an order live in the ControlPlane's namespace on
the management cluster under a per-order prefix ``<metadata.name>-<8 hex>-<stem>``, where the hash covers
``<cluster>/<namespace>/<name>`` (cluster "" for the management cluster), so the same order name in another
namespace or on another cluster never shares a child name. None of them can carry an owner reference to the order,
so each carries three labels ``c5c3.io/<kind>-name``, ``-namespace`` and ``-cluster``; the delivered Secret beside
the order carries the first two. Every label value is at most 63 bytes.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Dict

MAX_LABEL_VALUE = 63


def order_hash(cluster: str, namespace: str, name: str) -> str:
    """The 8 hex digits that make child names unique per (cluster, namespace, name)."""
    return hashlib.sha256(f"{cluster}/{namespace}/{name}".encode("utf-8")).hexdigest()[:8]


def fits_label(value: str) -> bool:
    return len(value.encode("utf-8")) <= MAX_LABEL_VALUE


@dataclass(frozen=True)
class LabelKeys:
    """The three ownership label keys of one kind (``c5c3.io/<kind>-name`` ...)."""

    name: str
    namespace: str
    cluster: str

    @classmethod
    def for_kind(cls, lower_kind: str) -> "LabelKeys":
        return cls(f"c5c3.io/{lower_kind}-name", f"c5c3.io/{lower_kind}-namespace", f"c5c3.io/{lower_kind}-cluster")

    def child(self, cluster: str, namespace: str, name: str) -> Dict[str, str]:
        """The three labels every child in the ControlPlane's namespace carries (cluster "" = management)."""
        return {self.name: name, self.namespace: namespace, self.cluster: cluster}

    def delivered(self, namespace: str, name: str) -> Dict[str, str]:
        """The two labels of the delivered Secret (no cluster label: it lives on the order's cluster)."""
        return {self.name: name, self.namespace: namespace}
