"""List-then-watch per resource type and cluster - across the cluster or in one namespace - in one thread each.

Each Watcher lists its kind (paginated; Secrets as metadata only) to seed the EventMapper and learn a
``resourceVersion``, then watches from it with bookmarks, so a reconnect resumes where it left off. A
dropped connection reconnects with exponential backoff (0.5 s doubling to 30 s, with jitter); a
``410 Gone`` (the version is too old) relists and asks for a full pass, since events may have been missed.
A kind the cluster does not serve (its CRD is not installed) is retried every minute; a namespace the account
is not (yet) granted (403: the access sync has not bound it) is retried with the backoff, logged once.
"""
import logging
import random
import threading
from typing import Any, Callable, List, Optional

from .kinds import Kind
from .kube import METADATA_ONLY, METADATA_ONLY_WATCH, JSON, ApiError, KubeError
from .mapping import EventMapper
from .watchset import WatchKey

LOG = logging.getLogger("c5c3_orders_controller.watch")


def watch_duration(least: int, rand: Callable[[], float] = random.random) -> int:
    """Seconds one watch request asks for: between ``least`` and twice that, so streams opened together do not all
    resume together (kube-apiserver picks its default the same way, client-go's reflector too)."""
    return int(least * (1.0 + rand()))


class Gone(KubeError):
    """The watch's resourceVersion is too old (HTTP 410 or an ERROR event with code 410): a Kubernetes error like
    every other the controller's client raises (handled before them)."""

    def __init__(self) -> None:
        KubeError.__init__(self, "WATCH", "", 410, "Expired", "the watch's resourceVersion is too old")


class Watcher:
    """``observer(event_type, payload)`` (optional) sees every list (``"LIST"``, the items) and event after the
    mapper; ``announce`` makes the first list report the orders of what it found (a watch started mid-term, for a
    newly assigned namespace, whose orders no event has named yet). ``cache`` (cache.ObjectCache, optional) is kept
    current with every list and event; ``synced`` says whether it can be trusted now (listed, and the stream not
    broken since)."""

    def __init__(self, kube, cluster: str, kind: Kind, mapper: EventMapper, lock: threading.Lock,
                 on_keys: Callable[[set, str, str], None], on_resync: Callable[[str], None], metrics=None,
                 watch_timeout: int = 3600, page_size: int = 500, backoff_max: float = 30.0, namespace: str = "",
                 observer: Optional[Callable[[str, Any], None]] = None, announce: bool = False, cache=None):
        self.kube = kube
        self.cluster = cluster
        self.kind = kind
        self.namespace = namespace
        self.key = WatchKey(cluster, kind.key, namespace)
        self.observer = observer
        self.announce = announce
        self.mapper = mapper
        self.cache = cache
        self.synced = False
        self.lock = lock  # guards the mapper and the cache, shared by every watcher
        self.on_keys = on_keys
        self.on_resync = on_resync
        self.metrics = metrics
        self.watch_timeout = watch_timeout
        self.page_size = page_size
        self.backoff_max = backoff_max
        self.listed = threading.Event()
        self.resource_version: Optional[str] = None
        self._stop = threading.Event()
        self._resp = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="watch-%s-%s%s" % (
            cluster or "management", kind.key, ("-" + namespace) if namespace else ""))

    @property
    def label(self) -> str:
        return self.key.label

    @property
    def path(self) -> str:
        return self.kind.collection_path(self.namespace)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        resp = self._resp
        if resp is not None:
            try:
                resp.shutdown()  # unblocks a read in progress (urllib3 >= 2.3)
            except Exception:  # noqa: BLE001 - best effort
                pass
            try:
                resp.release_conn()
            except Exception:  # noqa: BLE001
                pass

    def join(self, timeout: float = 5.0) -> None:
        self._thread.join(timeout)

    # ------------------------------------------------------------------------------------------
    def _list(self) -> str:
        items: List[Any] = []
        cont: Optional[str] = None
        accept = METADATA_ONLY if self.kind.metadata_only else JSON
        while True:
            query = {"limit": str(self.page_size)}
            if self.kind.label_selector:
                query["labelSelector"] = self.kind.label_selector
            if cont:
                query["continue"] = cont
            body = self.kube.request("GET", self.path, query=query, accept=accept, source="list")
            items.extend(body.get("items") or [])
            meta = body.get("metadata") or {}
            cont = meta.get("continue")
            if not cont:
                with self.lock:
                    self.mapper.seed(self.cluster, self.kind, items, self.namespace)
                    if self.cache is not None:
                        self.cache.seed(self.key, items)
                    keys = set()
                    if self.announce and items:
                        keys = self.mapper.filter_keys(set().union(*(self.mapper.keys_of(self.kind, obj, self.cluster)
                                                                     for obj in items)))
                if self.observer:
                    self.observer("LIST", items)
                if keys:
                    self.on_keys(keys, "listed %s" % self.label, self.kind.key)
                self.announce = False
                return meta.get("resourceVersion") or ""

    def _watch(self) -> bool:
        """One watch request; returns whether it delivered anything (to reset the backoff)."""
        timeout = watch_duration(self.watch_timeout)
        query = {"watch": "true", "allowWatchBookmarks": "true", "resourceVersion": self.resource_version,
                 "timeoutSeconds": str(timeout)}
        if self.kind.label_selector:
            query["labelSelector"] = self.kind.label_selector
        accept = METADATA_ONLY_WATCH if self.kind.metadata_only else JSON
        resp, lines = self.kube.watch(self.path, query, accept, timeout=timeout + 30)
        self._resp = resp
        self.synced = True
        delivered = False
        try:
            for event in lines:
                if self._stop.is_set():
                    return delivered
                delivered = True
                kind = event.get("type")
                obj = event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise Gone()
                    raise ApiError("WATCH", self.path, obj.get("code"), obj.get("reason") or "",
                                   (obj.get("message") or "")[:300])
                version = (obj.get("metadata") or {}).get("resourceVersion")
                if version:
                    self.resource_version = version
                if kind == "BOOKMARK":
                    continue
                if self.metrics:
                    self.metrics.watch_event(self.kind.key)
                with self.lock:
                    keys = self.mapper.handle(self.cluster, self.kind, kind, obj)
                    if self.cache is not None:
                        self.cache.handle(self.key, kind, obj)
                if self.observer:
                    self.observer(kind, obj)
                if keys:
                    meta = obj.get("metadata") or {}  # the object's namespace says which stream: not repeated
                    where = "@" + self.cluster if self.cluster else ""
                    self.on_keys(keys, "%s %s%s %s/%s" % (kind, self.kind.display, where, meta.get("namespace", ""),
                                                          meta.get("name", "")), self.kind.key)
        finally:
            self._resp = None
            try:
                resp.release_conn()
            except Exception:  # noqa: BLE001
                pass
        return delivered

    def _run(self) -> None:
        backoff = 0.5
        absent_logged = forbidden_logged = False
        while not self._stop.is_set():
            try:
                if self.resource_version is None:
                    relist = self.listed.is_set()
                    self.resource_version = self._list()
                    self.synced = True
                    self.listed.set()
                    absent_logged = forbidden_logged = False
                    if relist:
                        self.on_resync("relisted %s" % self.label)
                if self._watch():
                    backoff = 0.5
                    continue  # a watch ended by its timeout: resume from the last resourceVersion
                if self._stop.is_set():
                    return
            except Gone:
                self.synced = False
                LOG.info("watch %s: resourceVersion too old (410); relisting", self.label)
                self.resource_version = None
                continue
            except ApiError as exc:
                self.synced = False
                if self._stop.is_set():
                    return
                if self.metrics:
                    self.metrics.api_error("watch")
                if exc.status == 410:
                    LOG.info("watch %s: resourceVersion too old (410); relisting", self.label)
                    self.resource_version = None
                    continue
                if exc.status == 404 and self.resource_version is None:
                    if not absent_logged:
                        LOG.info("watch %s: not served by the cluster; retrying every 60 s", self.label)
                        absent_logged = True
                    self.listed.set()  # nothing to wait for
                    self._stop.wait(60)
                    continue
                if exc.status == 403:
                    if not forbidden_logged:
                        LOG.warning("watch %s: forbidden (not granted yet?); retrying with backoff: %s", self.label,
                                    exc.message or exc.reason)
                        forbidden_logged = True
                    self.listed.set()  # nothing to wait for
                    self._stop.wait(backoff * (0.5 + random.random()))
                    backoff = min(backoff * 2, self.backoff_max)
                    continue
                LOG.warning("watch %s: %s; reconnecting in %.1fs", self.label, exc, backoff)
            except Exception as exc:  # noqa: BLE001 - a bug or a broken stream: keep watching
                self.synced = False
                if self._stop.is_set():
                    return
                if self.metrics:
                    self.metrics.api_error("watch")
                LOG.warning("watch %s: %s; reconnecting in %.1fs", self.label, type(exc).__name__, backoff)
            self._stop.wait(backoff * (0.5 + random.random()))
            backoff = min(backoff * 2, self.backoff_max)
