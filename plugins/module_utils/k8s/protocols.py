# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The seams between a pass and a cluster, as types: what a pass may ask of the API, and of the client under it.

``service.KubeService`` is the one real implementation of ``KubeApi``; a test's fake, the snapshot's cached reads
(``passes/snapshot.py``) and a cluster whose options did not load (``module.UnconnectedService``) stand in for it.
These are ``typing.Protocol``: anything with the methods fits, nothing has to inherit from them, and they cost
nothing at run time. Every method raises ``errors.KubeError`` for a failed request.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import Resource

# A decoded API object (or an API answer): JSON as ``json.loads`` returns it.
Obj = Dict[str, Any]
# Seconds a request may take: one figure, or (connect, read).
Timeout = Union[float, Tuple[float, float]]


class ApiRequests(Protocol):
    """Raw JSON requests to one cluster (``client.KubeClient``): the decoded body, or ``KubeError``."""

    def request(self, method: str, path: str, query: Optional[Mapping[str, str]] = None, body: Any = None,
                patch: Optional[str] = None, accept: str = ..., timeout: Timeout = ...) -> Any: ...


class KubeReads(Protocol):
    """What a pass reads from one cluster: whole lists, one object, what the cluster serves."""

    def list(self, resource: Resource, namespace: Optional[str] = None,
             label_selector: Optional[str] = None, write_times: bool = False) -> List[Obj]: ...

    def get(self, resource: Resource, namespace: str, name: str) -> Obj: ...

    def served(self, group_version: str) -> FrozenSet[str]: ...


class KubeApi(KubeReads, Protocol):
    """Every verb a pass uses on one cluster (``service.KubeService``): the reads, and writes to one object each."""

    def create(self, obj: Mapping[str, Any]) -> Obj: ...

    def apply(self, obj: Mapping[str, Any], force: bool = True) -> Obj: ...

    def merge_patch(self, resource: Resource, namespace: str, name: str, patch: Mapping[str, Any],
                    subresource: Optional[str] = None) -> Obj: ...

    def json_patch(self, resource: Resource, namespace: str, name: str, operations: Sequence[Mapping[str, Any]],
                   subresource: Optional[str] = None) -> Obj: ...

    def delete(self, resource: Resource, namespace: str, name: str, uid: Optional[str] = None,
               propagation: str = "Background") -> Obj: ...
