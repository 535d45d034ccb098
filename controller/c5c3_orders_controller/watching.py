"""The watches a term keeps open, kept current as the ControlPlanes and the registered target clusters change.

watchset.py says, purely, which watches the ControlPlanes want; ``Watches`` runs them: at the start of a term the
cluster-wide watches, then (from the ControlPlane watch's list and events, ``observe``) the namespace watches each
ControlPlane's namespace and assignments call for, starting and stopping only what changed; the registered target
clusters (``target_source``) are re-read at least every ``refresh_interval`` seconds. It also holds what the watches
feed: the EventMapper (events to orders) and the watch cache a targeted pass's snapshot is built from (snapshot.py).
"""
import logging
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from . import snapshot
from .cache import ObjectCache
from .kinds import CONTROLPLANE, KINDS, Kind
from .kube import Kube
from .mapping import EventMapper
from .metrics import Metrics
from .watch import Watcher
from .watchset import ControlPlaneRecords, WatchKey, diff, watch_set

LOG = logging.getLogger("c5c3_orders_controller")

TargetSource = Callable[[], Dict[str, Callable[[], Kube]]]


class Watches:
    """``on_keys``/``on_resync``: what every watch reports (watch.py); ``target_source()`` returns the target clusters
    now registered, each as a function that connects to it (called only for a cluster not connected yet; without
    it the clusters given stay as they are); ``namespaces`` (empty = all) narrows the assigned namespaces watched
    and the orders named; ``new_watcher`` makes each watch (a ``Watcher``)."""

    def __init__(self, on_keys: Callable[[Set[str], str, str], None], on_resync: Callable[[str], None],
                 kinds: Iterable[Kind] = (), clusters: Optional[Mapping[str, Kube]] = None,
                 metrics: Optional[Metrics] = None, field_manager: str = "c5c3-orders", namespaces: Iterable[str] = (),
                 target_source: Optional[TargetSource] = None, refresh_interval: float = 30.0,
                 list_wait: float = 10.0, watch_timeout: int = 3600,
                 new_watcher: Callable[..., Watcher] = Watcher) -> None:
        self.on_keys = on_keys
        self.on_resync = on_resync
        self.kinds = tuple(kinds)
        self.clusters: Dict[str, Kube] = dict(clusters or {})
        self.metrics = metrics
        self.namespaces = frozenset(namespaces or ())
        self.mapper = EventMapper(field_manager, namespaces)
        self.cache = ObjectCache()
        self.mapper_lock = threading.Lock()  # guards the mapper and the cache, shared with every watcher
        self.target_source = target_source
        self.refresh_interval = refresh_interval
        self.list_wait = list_wait
        self.watch_timeout = watch_timeout
        self.new_watcher = new_watcher
        self.watchers: Dict[WatchKey, Watcher] = {}
        self.control_planes = ControlPlaneRecords()
        self.lock = threading.Lock()  # guards watchers, control_planes, clusters and the two flags below
        self.watching = False
        self.announce_new = False
        self.last_refresh = 0.0

    def start(self) -> None:
        """The cluster-wide watches first; the ControlPlane watch's list then starts the namespace watches
        (``observe``); wait (at most ``list_wait`` s) until every watch has listed."""
        with self.mapper_lock:
            self.mapper.forget()
            self.cache.forget()
        with self.lock:
            self.control_planes.clear()
            self.watching, self.announce_new = True, False
        self.reconcile()
        deadline = time.monotonic() + self.list_wait
        with self.lock:
            control_planes = [w for k, w in self.watchers.items() if k.kind == CONTROLPLANE.key]
        for watcher in control_planes:
            watcher.listed.wait(max(0.0, deadline - time.monotonic()))
        with self.lock:
            watchers = dict(self.watchers)
            self.announce_new = True  # from now on a new namespace's first list names its orders
        for watcher in watchers.values():
            watcher.listed.wait(max(0.0, deadline - time.monotonic()))
        LOG.info("watching %d kinds in %d streams on %d cluster(s)", len({k.kind for k in watchers}), len(watchers),
                 len(self.clusters))

    def stop(self) -> None:
        """Stop every watch and forget what they saw; a late event of a stopped watch changes nothing."""
        with self.lock:
            self.watching = False
            watchers, self.watchers = list(self.watchers.values()), {}
            self.control_planes.clear()
        for watcher in watchers:
            watcher.stop()
        for watcher in watchers:
            watcher.join(2.0)
        with self.mapper_lock:
            self.mapper.forget()
            self.cache.forget()
        if self.metrics is not None:
            self.metrics.set_watches({})

    def observe(self, event_type: str, payload: Any) -> None:
        """The ControlPlane watch's lists and events: keep the records, then the watch set, current."""
        with self.lock:
            if event_type == "LIST":
                self.control_planes.seed(payload)
            else:
                self.control_planes.handle(event_type, payload)
        self.reconcile(refresh=False)

    def refresh_if_due(self) -> float:
        """Re-read the registered target clusters when ``refresh_interval`` has passed since the last time; returns
        the seconds until the next time (at least 1)."""
        if time.monotonic() - self.last_refresh >= self.refresh_interval:
            self.reconcile()  # newly registered or deregistered target clusters
        return max(1.0, self.last_refresh + self.refresh_interval - time.monotonic())

    def _refresh_clusters(self) -> List[Kube]:
        """Connect newly registered target clusters, drop deregistered ones; returns the Kubes to close (their
        watches are stopped by the caller first). Under ``lock``."""
        self.last_refresh = time.monotonic()
        if self.target_source is None:
            return []
        try:
            registered = self.target_source()
        except Exception as exc:  # noqa: BLE001 - an unreadable directory: keep what we have
            LOG.warning("cannot read the registered target clusters: %s: %s", type(exc).__name__, str(exc)[:200])
            return []
        gone = []
        for name in [n for n in self.clusters if n and n not in registered]:
            LOG.info("target cluster %s deregistered: stopping its watches", name)
            gone.append(self.clusters.pop(name))
        for name, connect in registered.items():
            if name not in self.clusters:
                try:
                    self.clusters[name] = connect()
                    LOG.info("target cluster %s registered: watching it", name)
                except Exception as exc:  # noqa: BLE001 - a bad kubeconfig: say which, retry at the next refresh
                    LOG.warning("cannot connect to target cluster %s: %s: %s", name, type(exc).__name__,
                                str(exc)[:200])
        return gone

    def reconcile(self, refresh: bool = True) -> None:
        """Start the watches the ControlPlanes and the clusters now want, stop the others (no restart)."""
        with self.lock:
            if not self.watching:
                return
            gone = self._refresh_clusters() if refresh else []
            wanted = watch_set(self.kinds, self.clusters, self.control_planes.namespaces(), self.namespaces)
            start, stop = diff(self.watchers, wanted)
            stopped = [self.watchers.pop(key) for key in stop]
            kinds = {k.key: k for k in KINDS}
            for key in start:
                kind = kinds[key.kind]
                watcher = self.new_watcher(self.clusters[key.cluster], key.cluster, kind, self.mapper,
                                           self.mapper_lock, self.on_keys, self.on_resync, self.metrics,
                                           watch_timeout=self.watch_timeout, namespace=key.namespace,
                                           announce=self.announce_new, cache=self.cache,
                                           observer=self.observe if kind is CONTROLPLANE else None)
                self.watchers[key] = watcher
                watcher.start()
            per_cluster: Dict[str, int] = {}
            for key in self.watchers:
                per_cluster[key.cluster or "management"] = per_cluster.get(key.cluster or "management", 0) + 1
        if self.metrics is not None:
            self.metrics.set_watches(per_cluster)
        for watcher in stopped:
            watcher.stop()
        with self.mapper_lock:
            for key in stop:
                self.mapper.forget(key.cluster, kinds[key.kind], key.namespace)
                self.cache.forget(key)
        for kube in gone:
            kube.close()
        if self.announce_new and (start or stop):
            LOG.info("watches: started %s; stopped %s", ", ".join(k.label for k in start) or "-",
                     ", ".join(k.label for k in stop) or "-")

    def unsynced(self) -> Tuple[List[WatchKey], int]:
        """The watch streams not listed (or broken since), and how many streams run (``/readyz``, health.py)."""
        with self.lock:
            return sorted(key for key, watcher in self.watchers.items() if not watcher.synced), len(self.watchers)

    def snapshot(self, keys: Iterable[str]) -> Optional[Dict[str, Any]]:
        """The snapshot of the orders ``keys`` and their objects from the streams in sync now (snapshot.py), or None:
        the pass lists."""
        with self.lock:
            synced = [key for key, watcher in self.watchers.items() if watcher.synced]
        with self.mapper_lock:
            streams = {}
            for key in synced:
                stream = self.cache.stream(key)
                if stream is not None:
                    streams[key] = stream
            return snapshot.build(keys, streams)
