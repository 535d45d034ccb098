"""The controller's connection to one cluster (watches, lists, the Lease), over the collection's own client.

The requests go through the collection's ``k8s/client.py`` ``KubeClient``, the client every pass uses, and fail with
its ``KubeError`` (re-exported here as ``ApiError``): one client and one error type for the controller and the
passes. What a process that runs for months adds sits here: the configuration is loaded from a kubeconfig or the
in-cluster service account and loaded again after a 401 (a projected token rotates), every connection keeps TCP
alive, each request is counted by ``source``, and a watch is read as a stream. Secrets are only ever read as
``PartialObjectMetadata``, so their data never reaches this process.
"""
import json
import os
import socket
import threading
from typing import Any, Iterator, Optional

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

# importing the collection module puts the collection on sys.path when it is not importable yet
from . import collection  # noqa: F401 pylint: disable=unused-import
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError  # noqa: E402

JSON = "application/json"
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json"
METADATA_ONLY_WATCH = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"


# A failed request (``method``, ``path``, ``status``: None when no answer came, ``reason``, ``message``): the
# collection's own error type, so the controller and the passes it runs share one.
ApiError = KubeError


POOL_SIZE = 64
# TCP keepalive on every connection (client-go's dialer keeps alive every 30 s): a watch that waits an hour for its
# next event learns of a dead peer, or a middlebox that dropped the connection, within about a minute, without a
# request of its own
KEEPALIVE = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)] + [
    (socket.IPPROTO_TCP, getattr(socket, name), value)
    for name, value in (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3)) if hasattr(socket, name)]


def keepalive(api_client) -> None:
    """Every connection the client's pool opens from now on keeps alive (the library has no option for it)."""
    from urllib3.connection import HTTPConnection
    kw = api_client.rest_client.pool_manager.connection_pool_kw
    kw["socket_options"] = list(HTTPConnection.default_socket_options) + KEEPALIVE


def load_configuration(kubeconfig: Optional[str] = None, context: Optional[str] = None):
    """From ``kubeconfig`` (a path), else in-cluster, else ``$KUBECONFIG`` / ``~/.kube/config``."""
    cfg = k8s_client.Configuration()
    if kubeconfig:
        k8s_config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
    elif os.environ.get("KUBERNETES_SERVICE_HOST") and os.path.exists(
            "/var/run/secrets/kubernetes.io/serviceaccount/token"):
        k8s_config.load_incluster_config(client_configuration=cfg)
    else:
        k8s_config.load_kube_config(context=context, client_configuration=cfg)
    # every watch stream holds a connection while it is open (one per kind, and per kind and namespace on targets,
    # plus the share Leases): a pool of the library's default 10 discarded connections with a warning each time
    cfg.connection_pool_maxsize = max(cfg.connection_pool_maxsize or 0, POOL_SIZE)
    return cfg


class Kube:
    """One connection pool to one cluster. Thread-safe; every request is counted by ``source``."""

    def __init__(self, configuration, name: str = "", metrics=None, reload=None):
        """``reload()`` returns a fresh configuration; called once after a 401 (a kubeconfig's ``tokenFile``
        holds a projected service-account token that the kubelet rotates, and the library reads it once)."""
        self.name = name
        self.metrics = metrics
        self.reload = reload
        self._client = self._connect(configuration)
        self._lock = threading.Lock()

    @property
    def _api(self) -> Any:
        """The library's ApiClient under the current client (its connection pool)."""
        return self._client.api_client

    @staticmethod
    def _connect(configuration: Any) -> KubeClient:
        client = KubeClient({}, max_in_flight=POOL_SIZE, configuration=configuration)
        keepalive(client.api_client)
        return client

    def _reauthenticate(self) -> bool:
        if self.reload is None:
            return False
        try:
            configuration = self.reload()
        except Exception:  # noqa: BLE001 - keep the old client; the 401 stands
            return False
        fresh = self._connect(configuration)
        with self._lock:
            old, self._client = self._client, fresh
        old.close()
        return True

    def _count(self, source: str) -> None:
        if self.metrics:
            self.metrics.api_request(source)

    def _call(self, method, path, query=None, body=None, accept=JSON, timeout=30, source="api"):
        try:
            return self._call_once(method, path, query, body, accept, timeout, source)
        except ApiError as exc:
            if exc.status == 401 and self._reauthenticate():
                return self._call_once(method, path, query, body, accept, timeout, source)
            raise

    def _call_once(self, method, path, query, body, accept, timeout, source):
        self._count(source)
        with self._lock:
            client = self._client
        return client.open(method, path, query, body, None, accept, timeout)

    def request(self, method: str, path: str, query=None, body=None, accept: str = JSON, timeout: float = 30,
                source: str = "api") -> dict:
        resp = self._call(method, path, query, body, accept, timeout, source=source)
        data = resp.data
        return json.loads(data) if data else {}

    def watch(self, path: str, query: dict, accept: str, timeout: float, source: str = "watch"):
        """Open a watch; returns ``(response, lines)``. ``response.shutdown()`` (from another thread) ends
        a blocked read; ``lines`` yields one decoded event per line."""
        resp = self._call("GET", path, query, None, accept, timeout=(10, timeout), source=source)

        def lines() -> Iterator[dict]:
            pending = b""
            for chunk in resp.stream(amt=None, decode_content=False):
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.strip():
                        yield json.loads(line)
            if pending.strip():
                yield json.loads(pending)
        return resp, lines()

    def close(self) -> None:
        self._client.close()
