# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""One HTTP client per cluster, built from the connection options the way kubernetes.core does.

The ``kubernetes`` library supplies what it does well (kubeconfig and in-cluster loading, TLS, token
refresh, a pooled connection); requests are sent raw and decoded with ``json`` because the library's
model decoding is slow on large lists. Every request is counted, so a pass can report its API cost. Requests go
through a ``Throttle`` (at most ``max_in_flight`` at once, a 429 waited out as the server asks), and the connection
pool holds as many connections as requests may be in flight, so concurrent writes reuse their connections.
"""
from __future__ import annotations

import importlib.util
import json
import os
import threading
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import lean
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError, ConnectionConfigError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.protocols import Timeout
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.throttle import DEFAULT_LIMIT, Throttle

# Whether the library is installed (reported by the module with missing_required_lib); it is imported when the
# first client is made, lean (see lean.py).
HAS_KUBERNETES = importlib.util.find_spec("kubernetes") is not None
KUBERNETES_IMPORT_ERROR = None if HAS_KUBERNETES else ImportError("No module named 'kubernetes'")
_LIBRARY: List[lean.Library] = []
_LIBRARY_LOCK = threading.Lock()


def library() -> lean.Library:
    """The ``kubernetes`` client and config modules (imported once, lean unless imported whole already; threads
    making their first clients at once wait for the one import)."""
    with _LIBRARY_LOCK:
        if not _LIBRARY:
            try:
                _LIBRARY.append(lean.load())
            except ImportError as exc:
                raise ConnectionConfigError(f"the kubernetes library cannot be imported: {exc}") from exc
    return _LIBRARY[0]


JSON = "application/json"
CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}


def build_configuration(auth: Mapping[str, Any]) -> Any:
    """A ``kubernetes.client.Configuration`` from resolved connection options (see auth.py)."""
    k8s_client, k8s_config = library().client, library().config
    cfg = k8s_client.Configuration()
    kubeconfig = auth.get("kubeconfig")
    try:
        if kubeconfig is not None or not auth.get("host"):
            if isinstance(kubeconfig, dict):
                k8s_config.load_kube_config_from_dict(kubeconfig, context=auth.get("context"),
                                                      client_configuration=cfg)
            elif kubeconfig is None and _in_cluster():
                k8s_config.load_incluster_config(client_configuration=cfg)
            else:
                path = kubeconfig or os.path.expanduser(k8s_config.KUBE_CONFIG_DEFAULT_LOCATION)
                k8s_config.load_kube_config(config_file=path, context=auth.get("context"),
                                            client_configuration=cfg)
    except (k8s_config.ConfigException, OSError, ValueError, TypeError) as exc:
        raise ConnectionConfigError(f"cannot load the cluster configuration: {exc}") from exc
    if auth.get("host"):
        cfg.host = auth["host"]
    if auth.get("api_key"):
        cfg.api_key = {"authorization": "Bearer " + auth["api_key"]}
    if auth.get("username"):
        cfg.username = auth["username"]
    if auth.get("password"):
        cfg.password = auth["password"]
    if auth.get("ca_cert"):
        cfg.ssl_ca_cert = auth["ca_cert"]
    if auth.get("client_cert"):
        cfg.cert_file = auth["client_cert"]
    if auth.get("client_key"):
        cfg.key_file = auth["client_key"]
    if auth.get("validate_certs") is not None:
        cfg.verify_ssl = auth["validate_certs"]
    if auth.get("proxy"):
        cfg.proxy = auth["proxy"]
    if auth.get("no_proxy"):
        cfg.no_proxy = auth["no_proxy"]
    return cfg


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists(
        "/var/run/secrets/kubernetes.io/serviceaccount/token")


class KubeClient:
    """Raw JSON requests against one cluster, counted and throttled; safe to share between threads.

    The controller reaches its clusters through this client too (its ``kube.py`` adds what a long-running process
    needs: a configuration reloaded after a 401, TCP keepalive, and watch streams through ``open``)."""

    def __init__(self, auth: Mapping[str, Any], name: str = "", max_in_flight: int = DEFAULT_LIMIT,
                 configuration: Any = None) -> None:
        """``configuration``: a ``kubernetes.client.Configuration`` loaded already (the connection options in
        ``auth`` are then not read)."""
        self.name = name
        self.requests = 0
        self.writes = 0
        self.throttle = Throttle(max_in_flight)
        self._count_lock = threading.Lock()
        cfg = configuration if configuration is not None else build_configuration(auth)
        cfg.connection_pool_maxsize = max(cfg.connection_pool_maxsize or 0, self.throttle.limit)
        self._api = library().client.ApiClient(cfg)
        if auth.get("username") and auth.get("password"):
            self._api.set_default_header("Authorization", self._api.configuration.get_basic_auth_token())
        if auth.get("impersonate_user"):
            self._api.set_default_header("Impersonate-User", auth["impersonate_user"])
        for group in auth.get("impersonate_groups") or []:
            self._api.set_default_header("Impersonate-Group", group)

    @property
    def api_client(self) -> Any:
        """The library's ``ApiClient`` (its connection pool) under this client."""
        return self._api

    @property
    def throttled(self) -> int:
        """How many requests the API server refused with 429 (each was sent again after the pause it asked)."""
        return self.throttle.throttled

    def request(self, method: str, path: str, query: Optional[Mapping[str, str]] = None, body: Any = None,
                patch: Optional[str] = None, accept: str = JSON, timeout: Timeout = 60) -> Any:
        """Send one request; returns the decoded JSON body, raises KubeError on any failure."""
        data = self.request_raw(method, path, query, body, patch, accept, timeout)
        return json.loads(data) if data else {}

    def request_raw(self, method: str, path: str, query: Optional[Mapping[str, str]] = None, body: Any = None,
                    patch: Optional[str] = None, accept: str = JSON, timeout: Timeout = 60) -> bytes:
        """Send one request (a 429 is waited out and sent again); returns the body as bytes."""
        return self.throttle.call(lambda: self._send(method, path, query, body, patch, accept, timeout))

    def _send(self, method: str, path: str, query: Optional[Mapping[str, str]], body: Any, patch: Optional[str],
              accept: str, timeout: Timeout) -> bytes:
        return bytes(self.open(method, path, query, body, patch, accept, timeout).data)

    def open(self, method: str, path: str, query: Optional[Mapping[str, str]] = None, body: Any = None,
             patch: Optional[str] = None, accept: str = JSON, timeout: Timeout = 60) -> Any:
        """Send one request, unthrottled, and return the response unread (a watch reads it as a stream; its
        ``shutdown()`` ends a blocked read); raises KubeError on any failure."""
        with self._count_lock:
            self.requests += 1
            if method != "GET":
                self.writes += 1
        headers: Dict[str, str] = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = CONTENT_TYPES[patch] if patch else JSON
        try:
            resp = self._api.call_api(
                path, method, query_params=list((query or {}).items()), header_params=headers,
                body=body, auth_settings=["BearerToken"], _preload_content=False,
                _return_http_data_only=True, _request_timeout=timeout)
        except Exception as exc:  # pylint: disable=broad-except
            if isinstance(exc, library().ApiException) and getattr(exc, "status", None):
                raise KubeError.from_response(method, path, exc.status, exc.reason, exc.body,
                                              getattr(exc, "headers", None)) from exc
            # urllib3 transport errors: connection refused, TLS, timeouts
            raise KubeError(method, path, None, "Transport", str(exc)) from exc
        return resp

    def close(self) -> None:
        try:
            self._api.close()
        except Exception:  # pylint: disable=broad-except
            pass
