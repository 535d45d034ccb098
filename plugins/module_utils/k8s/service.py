# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The verbs a pass uses on one cluster: list by selector, create, apply, patch, delete.

Reads are whole-collection lists (one request each, whatever the number of orders); writes go to one
object. ``dry_run`` turns every write into a server-side dry run, which is how check mode stays honest:
admission and defaulting run, nothing is stored.
"""
from __future__ import annotations

import gc
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import managed
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.protocols import ApiRequests, Obj
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.shared import share_strings
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import Resource, resource_for


PAGE_SIZE = 1000


class KubeService:
    """The verbs of ``protocols.KubeApi`` on one cluster, over a ``client.KubeClient``."""

    def __init__(self, client: ApiRequests, field_manager: str, dry_run: bool = False, share: bool = False) -> None:
        """``share``: lists hold one string object per equal value (``shared.py``), for a pass that keeps thousands
        of listed objects while it decides."""
        self.client = client
        self.field_manager = field_manager
        self.dry_run = dry_run
        self.share = share

    # reads -----------------------------------------------------------------------------------
    def list(self, resource: Resource, namespace: Optional[str] = None,
             label_selector: Optional[str] = None, write_times: bool = False) -> List[Obj]:
        """Every object of a type (optionally in one namespace / matching a selector), with kind set.

        Read in pages of ``PAGE_SIZE`` (one consistent snapshot through the continue token) and with
        ``metadata.managedFields`` dropped as each page arrives, or cut to the pass's own write times with
        ``write_times`` (``managed.py``): the entries are more than half of a decoded Secret, so this bounds the
        memory of a pass over thousands of orders to about one page of raw JSON plus the slim objects. Each page is
        frozen out of the cyclic garbage collector (``gc.freeze``) once decoded.
        """
        query = {"limit": str(PAGE_SIZE)}
        if label_selector:
            query["labelSelector"] = label_selector
        items: List[Obj] = []
        seen: Dict[str, str] = {}  # one per list call: the strings of its pages, dropped when it returns
        while True:
            body = self.client.request("GET", resource.collection(namespace), query=query)
            page = body.get("items") or []
            for item in page:  # list items carry no apiVersion/kind
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                managed.slim(item.get("metadata") or {}, self.field_manager if write_times else "")
            if self.share:
                share_strings(page, seen)
            items.extend(page)
            # The decoded items live as long as the pass and form no reference cycles: move them out of the cyclic
            # garbage collector's generations so that it does not walk them again at every full collection (with
            # thousands of orders it did so often enough to make a pass grow faster than its orders). They are
            # freed as usual once nothing refers to them; the runner puts them back when the pass ends.
            gc.freeze()
            token = (body.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    def get(self, resource: Resource, namespace: str, name: str) -> Obj:
        """One object, with apiVersion/kind as the API returns them."""
        return self.client.request("GET", resource.item(namespace, name))

    def served(self, group_version: str) -> FrozenSet[str]:
        """Plurals the cluster serves in ``group_version``; empty when the group is unknown."""
        path = "/api/v1" if group_version == "v1" else "/apis/" + group_version
        try:
            body = self.client.request("GET", path)
        except KubeError as exc:
            if exc.not_found:
                return frozenset()
            raise
        return frozenset(r["name"] for r in body.get("resources", []) if "/" not in r["name"])

    # writes ----------------------------------------------------------------------------------
    def _query(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        query = {"fieldManager": self.field_manager}
        if self.dry_run:
            query["dryRun"] = "All"
        query.update(extra or {})
        return query

    def create(self, obj: Mapping[str, Any]) -> Obj:
        res = resource_for(obj["apiVersion"], obj["kind"])
        return self.client.request("POST", res.collection(obj["metadata"]["namespace"]), query=self._query(),
                                   body=obj)

    def apply(self, obj: Mapping[str, Any], force: bool = True) -> Obj:
        """Server-side apply under our field manager (force: take back fields others edited)."""
        res = resource_for(obj["apiVersion"], obj["kind"])
        meta = obj["metadata"]
        query = self._query({"force": "true"} if force else None)
        return self.client.request("PATCH", res.item(meta["namespace"], meta["name"]), query=query,
                                   body=obj, patch="apply")

    def merge_patch(self, resource: Resource, namespace: str, name: str, patch: Mapping[str, Any],
                    subresource: Optional[str] = None) -> Obj:
        return self.client.request("PATCH", resource.item(namespace, name, subresource), query=self._query(),
                                   body=patch, patch="merge")

    def json_patch(self, resource: Resource, namespace: str, name: str, operations: Sequence[Mapping[str, Any]],
                   subresource: Optional[str] = None) -> Obj:
        return self.client.request("PATCH", resource.item(namespace, name, subresource), query=self._query(),
                                   body=operations, patch="json")

    def delete(self, resource: Resource, namespace: str, name: str, uid: Optional[str] = None,
               propagation: str = "Background") -> Obj:
        body: Dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
        if uid:
            body["preconditions"] = {"uid": uid}
        if self.dry_run:
            body["dryRun"] = ["All"]
        return self.client.request("DELETE", resource.item(namespace, name), body=body)
