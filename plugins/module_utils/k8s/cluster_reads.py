# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Several reads of one cluster in one module run (the module ``c5c3.orders.cluster_reads``).

The roles read a handful of kinds before they write (the install's prerequisites, the access sync's namespaces,
grants and orders). One ``kubernetes.core.k8s_info`` run per kind costs a process that imports the whole
``kubernetes`` library, about 0.6 CPU-seconds each; this reads them all in one process with the lean client. Each
read answers like ``k8s_info``: ``api_found`` (the kind is served) and ``resources`` (the objects, each with its
``apiVersion`` and ``kind``, as a definition to act on); a read that failed has ``error`` and no ``resources``.
A read names its objects (``names``: those found; none given reads none) or lists them (by namespace and label).
The kind's REST path comes from the API server's discovery document of its group version (one request per group
version), so any kind reads, a CRD's included, and an unserved one is reported, not guessed.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from urllib.parse import quote

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError

Request = Callable[[str, Optional[Mapping[str, str]]], Any]  # GET path, query -> decoded JSON


def group_version_path(api_version: str) -> str:
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


def find_kind(discovery: Optional[Mapping[str, Any]], kind: str) -> Optional[Tuple[str, bool]]:
    """``(plural, namespaced)`` of ``kind`` in a group version's discovery document; None when it is not served
    (subresources such as ``deployments/status`` carry the parent's kind and are skipped)."""
    for entry in (discovery or {}).get("resources") or []:
        if isinstance(entry, dict) and entry.get("kind") == kind and "/" not in str(entry.get("name", "")):
            return str(entry["name"]), bool(entry.get("namespaced"))
    return None


def read_path(api_version: str, plural: str, namespaced: bool, namespace: str = "", name: str = "") -> str:
    """The REST path of one object (``name``) or a list, in ``namespace`` or across all (a cluster-scoped kind
    ignores the namespace, as kubectl does)."""
    path = group_version_path(api_version)
    if namespaced and namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{plural}"
    return f"{path}/{quote(name, safe='')}" if name else path


SECRET_FIELDS = ("data", "stringData")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _typed(obj: Dict[str, Any], api_version: str, kind: str) -> Dict[str, Any]:
    """List items come without ``apiVersion`` and ``kind``: give them back, so each is a definition. A Secret comes
    without its values (``data``, ``stringData`` and kubectl's copy of them): a module result is logged and
    registered, and the roles need a Secret's metadata at most."""
    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    if api_version == "v1" and kind == "Secret":
        for field in SECRET_FIELDS:
            obj.pop(field, None)
        ((obj.get("metadata") or {}).get("annotations") or {}).pop(LAST_APPLIED, None)
    return obj


class Reader:
    """Answers reads with one discovery request per group version (remembered), one GET per list and one per object
    read by name (an object not found is left out)."""

    def __init__(self, get: Request) -> None:
        self.get = get
        self.discovered: Dict[str, Optional[Mapping[str, Any]]] = {}

    def _discovery(self, api_version: str) -> Optional[Mapping[str, Any]]:
        if api_version not in self.discovered:
            try:
                self.discovered[api_version] = self.get(group_version_path(api_version), None)
            except KubeError as exc:
                if exc.status != 404:
                    raise
                self.discovered[api_version] = None  # the group version is not served at all
        return self.discovered[api_version]

    def _get_one(self, path: str) -> Optional[Dict[str, Any]]:
        try:
            return self.get(path, None)
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise

    def read(self, query: Mapping[str, Any]) -> Dict[str, Any]:
        """One read, answered like ``k8s_info``; a failed request gives ``error`` instead of ``resources``."""
        api_version, kind = query["api_version"], query["kind"]
        try:
            found = find_kind(self._discovery(api_version), kind)
            if found is None:
                return {"api_found": False, "resources": []}
            plural, namespaced = found
            namespace = query.get("namespace") or ""
            if query.get("names") is not None:  # by name, even none: never a list of all
                found_objects = (self._get_one(read_path(api_version, plural, namespaced, namespace, n))
                                 for n in query["names"])
                return {"api_found": True, "resources": [
                    _typed(obj, api_version, kind) for obj in found_objects if obj is not None]}
            path = read_path(api_version, plural, namespaced, namespace)
            selectors = [s for s in query.get("label_selectors") or [] if s]
            listed = self.get(path, {"labelSelector": ",".join(selectors)} if selectors else None)
            items: List[Dict[str, Any]] = [i for i in (listed or {}).get("items") or [] if isinstance(i, dict)]
            return {"api_found": True, "resources": [_typed(i, api_version, kind) for i in items]}
        except KubeError as exc:
            return {"api_found": exc.status != 404, "error": f"cannot read {kind} ({api_version}): {exc.summary()}"}
