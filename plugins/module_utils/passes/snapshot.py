# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""A targeted pass fed from the controller's watch cache instead of lists (docs/scaling.md "Passes per hour").

The long-running controller already watches everything a KeystoneUser pass reads, so for a pass over a few orders
it writes a *snapshot* of its cache - the objects those orders need, in collections - and hands its path to the
module (``snapshot_file``), the way informer-based operators reconcile from a cache. ``CachedReads`` stands in for
a cluster's ``KubeService`` when the pass source reads: a list is answered from the snapshot's collection when the
snapshot has it and it is complete for the request, else sent to the API server as before. Secrets are watched as
metadata only - no Secret data ever reaches the controller or the snapshot file - so a Secret collection holds
metadata, and the reader GETs each Secret the request selects (a few per order). Writes always go to the real
service. The CronJob and AWX paths pass no snapshot and keep listing.

A collection is either ``complete`` (every object the pass can want, for the snapshot's orders: ControlPlanes,
the orders themselves, SecretStores, credential orders in the orders' namespaces) or ``covers`` some label values
(the children of the orders, by ``c5c3.io/keystoneuser-name``; the K-ORC Users by name key): a request is answered
from it only when its selector asks for covered values alone. Anything else is listed, so a snapshot can only
save requests, never hide an object. A Secret deleted since the snapshot is skipped (404); any other failure of a
GET fails that request as its list would have, and ``guarded_list`` isolates it as before.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import managed
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.errors import C5C3Error
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import Resource

VERSION = 1
KIND = "KeystoneUser"
_TERM = re.compile(r"^\s*(!?)([^\s=!()]+)\s*(?:(==|=|!=)\s*([^\s,()]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*$")


class SnapshotError(C5C3Error):
    """The snapshot file cannot be used (unreadable, another format, made for other orders)."""


@dataclass(frozen=True)
class Term:
    key: str
    op: str  # exists, !exists, =, !=, in, notin
    values: FrozenSet[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        value = labels.get(self.key)
        if self.op in ("=", "in"):
            return present and value in self.values
        return not present or value not in self.values  # != and notin match objects without the label


def parse_selector(selector: Optional[str]) -> Optional[List[Term]]:
    """The terms of a label selector (``k``, ``!k``, ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``,
    ``k notin (a,b)``), or None when it cannot be parsed (then the request is listed)."""
    if not selector:
        return []
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    terms = []
    for part in parts:
        found = _TERM.match(part)
        if not found or (found.group(1) and (found.group(3) or found.group(5))):
            return None
        bang, key, eq, value, set_op, values = found.groups()
        if eq:
            terms.append(Term(key, "=" if eq in ("=", "==") else "!=", frozenset([value])))
        elif set_op:
            terms.append(Term(key, set_op, frozenset(v.strip() for v in values.split(",") if v.strip())))
        else:
            terms.append(Term(key, "!exists" if bang else "exists"))
    return terms


@dataclass
class Collection:
    """One resource type on one cluster, across it (``namespace`` "") or in one namespace."""

    api_version: str
    kind: str
    plural: str
    namespace: str
    items: List[Dict[str, Any]]
    metadata_only: bool = False
    complete: bool = False
    covers: Dict[str, FrozenSet[str]] = field(default_factory=dict)

    def answers(self, terms: List[Term]) -> bool:
        """Whether the request's selector asks only for what this collection holds in full."""
        if self.complete:
            return True
        return any(t.op in ("=", "in") and t.key in self.covers and t.values <= self.covers[t.key] for t in terms)

    def select(self, namespace: Optional[str], terms: List[Term]) -> List[Dict[str, Any]]:
        found = []
        for item in self.items:
            meta = item.get("metadata") or {}
            if namespace and meta.get("namespace") != namespace:
                continue
            labels = meta.get("labels") or {}
            if all(term.matches(labels) for term in terms):
                found.append(item)
        return found


class Snapshot:
    """A parsed snapshot: its orders and its collections by (cluster, plural, namespace)."""

    def __init__(self, orders: Iterable[str], collections: Mapping[Tuple[str, str, str], Collection]) -> None:
        self.orders = frozenset(orders)
        self.collections = dict(collections)

    def for_cluster(self, cluster: str) -> Dict[Tuple[str, str], Collection]:
        return {(plural, namespace): c for (name, plural, namespace), c in self.collections.items() if name == cluster}


def _collection(raw: Any) -> Tuple[str, Collection]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("items"), list):
        raise SnapshotError("a collection without items")
    covers = raw.get("covers") or {}
    if not isinstance(covers, Mapping) or not all(isinstance(v, list) for v in covers.values()):
        raise SnapshotError("a collection's covers must map label keys to lists of values")
    fields = [raw.get(k) for k in ("apiVersion", "kind", "plural")]
    if not all(isinstance(f, str) and f for f in fields) or not isinstance(raw.get("namespace", ""), str):
        raise SnapshotError("a collection needs apiVersion, kind, plural and a namespace")
    items = [i for i in raw["items"] if isinstance(i, dict) and isinstance(i.get("metadata"), dict)]
    return str(raw.get("cluster") or ""), Collection(
        str(fields[0]), str(fields[1]), str(fields[2]), raw.get("namespace") or "", items, bool(raw.get("metadataOnly")),
        bool(raw.get("complete")), {str(k): frozenset(str(v) for v in vals) for k, vals in covers.items()})


def parse_snapshot(data: Any, orders: Iterable[str]) -> Snapshot:
    """A snapshot from its JSON, checked to be made for exactly these ``orders`` (a pass over other orders would
    read an incomplete cache)."""
    if not isinstance(data, Mapping) or data.get("version") != VERSION or data.get("kind") != KIND:
        raise SnapshotError(f"not a version {VERSION} {KIND} snapshot")
    wanted = frozenset(orders)
    made_for = data.get("orders")
    if not wanted or not isinstance(made_for, list) or frozenset(made_for) != wanted:
        raise SnapshotError("it was made for other orders than the orders option names")
    collections: Dict[Tuple[str, str, str], Collection] = {}
    for raw in data.get("collections") or []:
        cluster, collection = _collection(raw)
        collections[(cluster, collection.plural, collection.namespace)] = collection
    return Snapshot(wanted, collections)


def load_snapshot(path: str, orders: Iterable[str]) -> Snapshot:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"cannot be read: {type(exc).__name__}") from exc
    return parse_snapshot(data, orders)


class CachedReads:
    """A cluster's ``KubeService`` for the pass source's reads: lists from the snapshot where it can, the rest
    (and ``served``, ``get``, every write) from the real service. ``answered`` counts the lists it saved."""

    def __init__(self, service: Any, collections: Mapping[Tuple[str, str], Collection]) -> None:
        self.service = service
        self.collections = dict(collections)
        self.answered = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    def _collection(self, resource: Resource, namespace: Optional[str]) -> Optional[Collection]:
        found = self.collections.get((resource.plural, namespace or ""))
        if found is None and namespace:
            found = self.collections.get((resource.plural, ""))  # a cluster-wide collection, narrowed
        if found is not None and found.api_version != resource.api_version:
            return None
        return found

    def list(self, resource: Resource, namespace: Optional[str] = None,
             label_selector: Optional[str] = None, write_times: bool = False) -> List[Dict[str, Any]]:
        collection = self._collection(resource, namespace)
        terms = parse_selector(label_selector)
        if collection is None or terms is None or not collection.answers(terms):
            return self.service.list(resource, namespace=namespace, label_selector=label_selector,
                                     write_times=write_times)
        self.answered += 1
        items = []
        for item in collection.select(namespace, terms):
            if collection.metadata_only:
                full = self._get(resource, item)
                if full is None:
                    continue
                item = full
            else:
                item = json.loads(json.dumps(item))  # the pass may annotate what it reads: never the snapshot's
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
            keep = getattr(self.service, "field_manager", "") if write_times else ""
            managed.slim(item.get("metadata") or {}, keep)
            items.append(item)
        return items

    def _get(self, resource: Resource, item: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
        meta = item.get("metadata") or {}
        try:
            return self.service.get(resource, meta.get("namespace") or "", meta.get("name") or "")
        except KubeError as exc:
            if exc.not_found:  # deleted since the snapshot: as a list now would not return it either
                return None
            raise


def cached_services(snapshot: Snapshot, services: Mapping[str, Any]) -> Dict[str, Any]:
    """A ``CachedReads`` over each cluster's service (by name, "" = management)."""
    return {name: CachedReads(service, snapshot.for_cluster(name)) for name, service in services.items()}
