# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Which orders a pass looks at: all, or those in given namespaces, or given ``<namespace>/<name>`` orders, and (a
controller replica) only those whose namespace falls in the shares it holds (``passes.sharding``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, FrozenSet, Iterable, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.passes.sharding import shard_of


@dataclass(frozen=True)
class Selection:
    namespaces: FrozenSet[str] = field(default_factory=frozenset)
    orders: FrozenSet[str] = field(default_factory=frozenset)  # "<namespace>/<name>"
    shard_count: int = 0  # 0: not sharded
    shards: FrozenSet[int] = field(default_factory=frozenset)  # the shares held, when sharded

    @classmethod
    def of(cls, namespaces: Optional[Iterable[str]] = None, orders: Optional[Iterable[str]] = None,
           shards: Optional[Mapping[str, Any]] = None) -> "Selection":
        """``shards``: ``{"count": n, "held": [i, ...]}`` (the module option), or None."""
        count = int((shards or {}).get("count") or 0)
        held = frozenset(int(i) for i in (shards or {}).get("held") or ()) if count > 1 else frozenset()
        return cls(frozenset(namespaces or ()), frozenset(orders or ()), count if count > 1 else 0, held)

    @property
    def limited(self) -> bool:
        """Limited to namespaces or orders (then it reads only theirs); the shares alone do not limit the reads: a
        replica's full pass reads what any full pass reads and decides only the orders of its shares."""
        return bool(self.namespaces or self.orders)

    def unsharded(self) -> "Selection":
        """The same selection over every share (for objects sharded by another namespace than their own)."""
        return Selection(self.namespaces, self.orders)

    def holds(self, namespace: str) -> bool:
        """Whether the namespace is in the shares this pass holds (always, unsharded)."""
        return not self.shard_count or shard_of(namespace, self.shard_count) in self.shards

    def wants(self, namespace: str, name: str) -> bool:
        if self.namespaces and namespace not in self.namespaces:
            return False
        if not self.holds(namespace):
            return False
        return not self.orders or f"{namespace}/{name}" in self.orders

    def may_want_namespace(self, namespace: str) -> bool:
        """Whether an order in ``namespace`` can be wanted at all (a limited pass reads no other namespace)."""
        if self.namespaces and namespace not in self.namespaces:
            return False
        if not self.holds(namespace):
            return False
        return not self.orders or any(o.split("/", 1)[0] == namespace for o in self.orders)
