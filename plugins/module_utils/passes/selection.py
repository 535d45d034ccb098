# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Which orders a pass looks at: all, or those in given namespaces, or given ``<namespace>/<name>`` orders."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import FrozenSet, Iterable, Optional


@dataclass(frozen=True)
class Selection:
    namespaces: FrozenSet[str] = field(default_factory=frozenset)
    orders: FrozenSet[str] = field(default_factory=frozenset)  # "<namespace>/<name>"

    @classmethod
    def of(cls, namespaces: Optional[Iterable[str]] = None, orders: Optional[Iterable[str]] = None) -> "Selection":
        return cls(frozenset(namespaces or ()), frozenset(orders or ()))

    @property
    def limited(self) -> bool:
        return bool(self.namespaces or self.orders)

    def wants(self, namespace: str, name: str) -> bool:
        if self.namespaces and namespace not in self.namespaces:
            return False
        return not self.orders or f"{namespace}/{name}" in self.orders

    def may_want_namespace(self, namespace: str) -> bool:
        """Whether an order in ``namespace`` can be wanted at all (a limited pass reads no other namespace)."""
        if self.namespaces and namespace not in self.namespaces:
            return False
        return not self.orders or any(o.split("/", 1)[0] == namespace for o in self.orders)
