"""An in-memory API server behind the ``KubeClient.request`` interface, for unit tests of the I/O edge.

It keeps objects by path and answers the few request shapes the edge sends: collection GET with a label selector
and ``limit``/``continue`` paging, item GET, POST (409 when the name is taken), merge/apply/json PATCH, DELETE
(uid precondition -> 409, missing -> 404). ``fail`` injects a KubeError for requests matching (method, path
prefix); every request is counted and recorded.

It is safe to call from several threads (the runner's workers): each request holds a lock while it touches the
objects. ``latency`` makes every request take that long outside the lock, so requests really overlap and
``peak_in_flight`` shows how many were ever in flight at once; ``refuse_writes(every, total)`` answers every
``every``-th write with 429 (``Retry-After`` 0), ``total`` times, before it is carried out, as the API server's
priority and fairness does; ``refused`` counts them. With ``throttle`` (a ``k8s.throttle.Throttle``) every request
goes through it, as ``KubeClient.request`` does.
"""
from __future__ import annotations

import copy
import itertools
import re
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import resource_for

_SELECTOR_IN = re.compile(r"^([^ ]+) in \(([^)]*)\)$")


def _matches(labels: Dict[str, str], selector: Optional[str]) -> bool:
    if not selector:
        return True
    terms = re.findall(r"[^,(]+(?:\([^)]*\))?", selector)
    for term in (t.strip() for t in terms if t.strip()):
        found = _SELECTOR_IN.match(term)
        if found:
            if labels.get(found.group(1)) not in [v.strip() for v in found.group(2).split(",")]:
                return False
        elif "=" in term:
            key, value = term.split("=", 1)
            if labels.get(key) != value:
                return False
        elif term not in labels:
            return False
    return True


class FakeApi:
    def __init__(self, name: str = "", page_size: Optional[int] = None, latency: float = 0.0,
                 throttle: Any = None) -> None:
        self.name = name
        self.latency = latency
        self.throttle = throttle
        self.in_flight = 0
        self.peak_in_flight = 0
        self.refused = 0
        self._refuse_every = 0
        self._refuse_left = 0
        self._write_count = 0
        self._lock = threading.RLock()
        self.objects: Dict[str, Dict[str, Any]] = {}  # item path -> object
        self.requests = 0
        self.writes = 0
        self.log: List[Tuple[str, str]] = []
        self.write_log: List[Tuple[str, str]] = []  # (method, item path) of every write carried out, in order
        self.fail: Dict[Tuple[str, str], KubeError] = {}  # (method, path prefix) -> error (every time)
        self.page_size = page_size
        self._uids = itertools.count(1)
        self._versions = itertools.count(1)
        self.served_plurals = {"keystoneusers", "controlplanes", "keystoneroleassignments",
                               "keystoneapplicationcredentials"}

    # -- test helpers ------------------------------------------------------------------------------
    def put(self, obj: Dict[str, Any]) -> Dict[str, Any]:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", f"uid-{next(self._uids)}")
        meta["resourceVersion"] = str(next(self._versions))
        meta.setdefault("generation", 1)
        res = resource_for(obj["apiVersion"], obj["kind"])
        self.objects[res.item(meta.get("namespace", ""), meta["name"])] = obj
        return obj

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        return self.objects.get(resource_for(api_version, kind).item(namespace, name))

    def refuse_writes(self, every: int, total: int) -> None:
        """Answer every ``every``-th write with 429 (Retry-After 0), ``total`` times in all."""
        self._refuse_every, self._refuse_left = every, total

    # -- the KubeClient interface ------------------------------------------------------------------
    def request(self, method: str, path: str, query: Optional[Dict[str, str]] = None, body: Any = None,
                patch: Optional[str] = None, accept: str = "application/json", timeout: int = 60) -> Any:
        if self.throttle is not None:
            return self.throttle.call(lambda: self._in_flight(method, path, query, body, patch))
        return self._in_flight(method, path, query, body, patch)

    def _in_flight(self, method: str, path: str, query: Optional[Dict[str, str]], body: Any,
                   patch: Optional[str]) -> Any:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency:
                time.sleep(self.latency)
            with self._lock:
                return self._answer(method, path, query, body, patch)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, method: str, path: str, query: Optional[Dict[str, str]], body: Any,
                patch: Optional[str]) -> Any:
        self.requests += 1
        if method != "GET":
            self.writes += 1
            self._write_count += 1
            if self._refuse_left and self._write_count % self._refuse_every == 0:
                self._refuse_left -= 1
                self.refused += 1
                raise KubeError(method, path, 429, "TooManyRequests", "too many requests, please try again later",
                                retry_after=0.0)
        self.log.append((method, path))
        for (m, prefix), error in self.fail.items():
            if m == method and path.startswith(prefix):
                raise error
        if method != "GET":
            item = f"{path}/{(body.get('metadata') or {}).get('name', '')}" if method == "POST" else path
            self.write_log.append((method, item))
        query = dict(query or {})
        if method == "GET" and path in ("/apis/c5c3.io/v1alpha1", "/api/v1"):
            return {"resources": [{"name": p} for p in sorted(self.served_plurals)]}
        if method == "GET" and path in self.objects:
            return copy.deepcopy(self.objects[path])
        if method == "GET":
            return self._list(path, query)
        if method == "POST":
            name = body["metadata"]["name"]
            item = f"{path}/{name}"
            if item in self.objects:
                raise KubeError(method, item, 409, "AlreadyExists", f"{body['kind']} {name!r} already exists")
            stored = self.put(body)
            return copy.deepcopy(stored)
        base, _, sub = path.partition("/status") if path.endswith("/status") else (path, "", "")
        if method == "DELETE":
            live = self.objects.get(path)
            if live is None:
                raise KubeError(method, path, 404, "NotFound", "not found")
            want_uid = ((body or {}).get("preconditions") or {}).get("uid")
            if want_uid and want_uid != live["metadata"]["uid"]:
                raise KubeError(method, path, 409, "Conflict", "uid precondition failed")
            del self.objects[path]
            return {}
        if method == "PATCH":
            live = self.objects.get(base)
            if live is None:
                if patch == "apply":
                    return copy.deepcopy(self.put(body))
                raise KubeError(method, path, 404, "NotFound", "not found")
            if patch == "merge":
                version = ((body.get("metadata") or {}).get("resourceVersion"))
                if version and version != live["metadata"]["resourceVersion"]:
                    raise KubeError(method, path, 409, "Conflict", "the object has been modified")
                _merge(live, body)
            elif patch == "apply":
                _merge(live, body)
            live["metadata"]["resourceVersion"] = str(next(self._versions))
            return copy.deepcopy(live)
        raise AssertionError(f"unexpected request {method} {path}")

    def _list(self, path: str, query: Dict[str, str]) -> Dict[str, Any]:
        group_version, plural = path.rsplit("/", 1)
        items = []
        for item_path, obj in sorted(self.objects.items()):
            if "/namespaces/" in path:
                inside = item_path.startswith(path + "/") and "/" not in item_path[len(path) + 1:]
            else:
                inside = item_path.startswith(group_version + "/namespaces/") and item_path.split("/")[-2] == plural
            if not inside:
                continue
            if _matches((obj.get("metadata") or {}).get("labels") or {}, query.get("labelSelector")):
                items.append(copy.deepcopy(obj))
        start = int(query.get("continue") or 0)
        limit = self.page_size or int(query.get("limit") or 0) or len(items) or 1
        page = items[start:start + limit]
        token = str(start + limit) if start + limit < len(items) else ""
        for item in page:  # list items carry no apiVersion/kind
            item.pop("apiVersion", None)
            item.pop("kind", None)
        return {"items": page, "metadata": {"continue": token}}

    def close(self) -> None:
        pass


def _merge(target: Dict[str, Any], patch: Dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
