# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Lists that may fail without failing the pass.

A pass reads with a few list calls per cluster and namespace. One of them failing (a missing grant answers
403, an unreachable cluster a transport error, etcd down a 5xx) must fail only the orders that need what it
would have returned, so a read answers a ``Listing``: the items, or the error text that stands for them. The
core turns such an error into the condition of each order that needed the list.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.protocols import KubeReads
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import Resource


@dataclass
class Listing:
    """What one list call returned: ``items``, or ``error`` (then ``items`` is empty and must not be trusted)."""

    what: str
    items: List[Dict[str, Any]] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.error is None


def describe_list(resource: Resource, namespace: Optional[str], cluster: str) -> str:
    where = f" in namespace {namespace}" if namespace else ""
    on = f" on cluster {cluster}" if cluster else ""
    return f"{resource.plural}{where}{on}"


def guarded_list(service: KubeReads, resource: Resource, namespace: Optional[str] = None,
                 label_selector: Optional[str] = None, cluster: str = "", write_times: bool = False) -> Listing:
    what = describe_list(resource, namespace, cluster)
    try:
        return Listing(what, service.list(resource, namespace=namespace, label_selector=label_selector,
                                          write_times=write_times))
    except KubeError as exc:
        return Listing(what, error=f"cannot list {what}: {exc.summary()}")
