"""The controller's Prometheus metrics, kept and served by ``prometheus_client``.

Every family of the controller is named ``c5c3_orders_controller_*``. They live in a registry of their own (not
the library's global one), so a unit test can make as many ``Metrics`` as it likes. Two of the library's standard
collectors join them, because they answer questions an operator of this controller has: the process collector
(``process_*``: CPU seconds and resident memory against the Pod's limits, open file descriptors against the watch
streams) and the garbage collector's (``python_gc_*``: the full collections that the k8s edge's ``gc.freeze``
keeps rare). The platform collector (one constant ``python_info``) is left out: the image pins the interpreter.

Counters, the histogram and the summary are the library's instruments (thread-safe on their own). The gauges that
describe the state as last reconciled (orders by their Ready reason, watch streams, shares held, last success) are
built at scrape time from what this class keeps under its lock, so a scrape never sees half an update.
"""
import threading
import time
from typing import Any, Callable, Dict, Iterable, Iterator, Mapping, Optional, Tuple
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import (CollectorRegistry, Counter, Gauge, GCCollector, Histogram, ProcessCollector, Summary,
                               disable_created_metrics, generate_latest, make_wsgi_app)
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .keys import ORDER_KINDS, PASS_OF, key_of_summary
from .keys import parse as parse_key

NAMESPACE = "c5c3_orders_controller"
PREFIX = NAMESPACE + "_"
DURATION_BUCKETS = (0.5, 1, 2, 3, 5, 8, 13, 21, 34, 60, 120, 300)
PASS_KINDS = ("full", "targeted")
PASS_RESULTS = ("success", "failed", "canceled")

# The library would add a ``_created`` sample (the child's creation time) to every counter, histogram and summary
# child: twice the lines, and nothing a restart of the process does not already tell. Its documented switch turns
# them off for the whole process, which runs no other metrics.
disable_created_metrics()


class _ScrapeTimeFamily(Collector):
    """One family built by ``build`` at each scrape."""

    def __init__(self, build: Callable[[], Metric]):
        self._build = build

    def collect(self) -> Iterator[Metric]:
        yield self._build()


class Metrics:
    """What the controller counts; ``registry`` is what the endpoint serves."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self._lock = threading.Lock()
        self.orders: Dict[Tuple[str, str], Mapping] = {}       # (cluster, key) -> Ready of a KU/BC order
        self.last_success: Optional[float] = None
        self.watches: Dict[str, int] = {}                      # cluster label -> open watch streams
        self.shards: list = []                                 # the shares held (sharded replicas)

        self.registry = registry = CollectorRegistry()
        ProcessCollector(registry=registry)
        GCCollector(registry=registry)

        def counter(name: str, help_text: str, labels: Tuple[str, ...] = (), preset: Iterable[str] = ()) -> Counter:
            """A counter whose children for ``preset`` exist (at 0) from the start, so a rate has a base."""
            family = Counter(name, help_text, labels, namespace=NAMESPACE, registry=registry)
            for value in preset:
                family.labels(value)
            return family

        def computed(build: Callable[[], Metric]) -> None:
            registry.register(_ScrapeTimeFamily(build))

        self._passes = counter("passes", "Reconcile passes run, by kind (full/targeted) and result.",
                               ("kind", "result"))
        for kind in PASS_KINDS:
            for result in PASS_RESULTS:
                self._passes.labels(kind, result)
        self._causes = counter("pass_causes", "Why passes ran: schedule (full), event, requeue, or event+requeue "
                               "(merged).", ("cause",), ("schedule", "event", "requeue"))
        self._durations = Histogram("pass_duration_seconds", "Wall time of a pass (ansible-runner start to end).",
                                    ("kind",), namespace=NAMESPACE, registry=registry, buckets=DURATION_BUCKETS)
        for kind in PASS_KINDS:
            self._durations.labels(kind)
        computed(self._orders_family)
        self._requests = counter("api_requests", "Kubernetes API requests: made by passes (pass), and by the "
                                 "controller (list, watch, lease).", ("source",), ("pass", "list", "watch", "lease"))
        self._gateway_requests = counter("gateway_requests", "Requests the object-storage passes sent to gateways.")
        self._phases = Summary(
            "pass_phase_seconds", "Where a pass's wall time goes: start (ansible-runner and ansible-playbook "
            "starting), before (the role's tasks before the pass modules), modules (their tasks), pass (the modules' "
            "own work), after (summary tasks), exit; and snapshot (building the targeted pass's snapshot).",
            ("kind", "phase"), namespace=NAMESPACE, registry=registry)
        self._errors = counter("api_errors", "Failed Kubernetes API calls: of the controller (watch, lease), and "
                               "orders whose pass met an error (pass).", ("source",), ("pass", "watch", "lease"))
        self._events = counter("watch_events", "Watch events received, by kind.", ("kind",))
        self._triggers = counter("event_triggers", "Watch events that concerned reconciled orders and queued a "
                                 "targeted pass, by kind.", ("kind",))
        computed(self._last_success_family)
        computed(self._watches_family)
        self._leader = Gauge("leader", "1 while this process holds the leader Lease (sharded: at least one share).",
                             namespace=NAMESPACE, registry=registry)
        computed(self._shards_family)

    # updates ---------------------------------------------------------------------------------
    def api_request(self, source: str, count: int = 1) -> None:
        self._requests.labels(source).inc(count)

    def api_error(self, source: str, count: int = 1) -> None:
        self._errors.labels(source).inc(count)

    def watch_event(self, kind: str) -> None:
        self._events.labels(kind).inc()

    def trigger(self, reason: str) -> None:
        self._triggers.labels(reason).inc()

    def pass_cause(self, cause: str) -> None:
        self._causes.labels(cause).inc()

    def set_watches(self, per_cluster: Mapping[str, int]) -> None:
        with self._lock:
            self.watches = dict(per_cluster)

    def set_leader(self, leading: bool) -> None:
        self._leader.set(1 if leading else 0)

    def set_shards(self, held: Iterable[int]) -> None:
        with self._lock:
            self.shards = list(held)

    def record_pass(self, kind: str, result: str, duration: float, module: Optional[Mapping] = None,
                    keys: Optional[Iterable[str]] = None, passes: Optional[Iterable[str]] = None) -> None:
        """One pass: ``result`` is success / failed / canceled; ``module`` the module's return value; ``passes``
        the pass kinds it ran (a lane's: a full pass replaces the orders of those kinds only; None: every kind)."""
        self._passes.labels(kind, result).inc()
        self._durations.labels(kind).observe(duration)
        if module is None:
            return
        order_errors = int(module.get("errors") or 0)
        self._requests.labels("pass").inc(int(module.get("api_requests") or 0))
        self._errors.labels("pass").inc(order_errors)
        self._gateway_requests.inc(int(module.get("gateway_requests") or 0))
        with self._lock:
            if kind == "full" and passes is None:
                self.orders = {}
            elif kind == "full" and passes is not None:
                ran = set(passes)
                self.orders = {ref: v for ref, v in self.orders.items()
                               if PASS_OF.get(parse_key(ref[1]).kind) not in ran}
            else:
                wanted = set(keys or ())
                for ref in [r for r in self.orders if r[1] in wanted]:
                    del self.orders[ref]
            for s in module.get("orders") or []:
                if (s.get("kind") or ORDER_KINDS[0]) in ORDER_KINDS:  # tenants' orders, not the platform's objects
                    self.orders[(s.get("cluster") or "", key_of_summary(s))] = {
                        "ready": bool(s.get("ready")), "reason": (s.get("reasons") or {}).get("Ready", "")}
            if result == "success" and not order_errors:
                self.last_success = self.clock()

    def record_phases(self, kind: str, phases: Mapping[str, float]) -> None:
        for phase, seconds in phases.items():
            self._phases.labels(kind, phase).observe(float(seconds))

    def forget_orders(self) -> None:
        with self._lock:
            self.orders = {}

    # the families built at scrape time ---------------------------------------------------------
    def _orders_family(self) -> Metric:
        family = GaugeMetricFamily(PREFIX + "orders", "Orders (KeystoneUser, BucketCredential) by their Ready "
                                   "condition and its reason, as last reconciled.", labels=("ready", "reason"))
        with self._lock:
            counts: Dict[Tuple[str, str], int] = {}
            for entry in self.orders.values():
                key = ("True" if entry["ready"] else "False", entry["reason"])
                counts[key] = counts.get(key, 0) + 1
        for (ready, reason), count in sorted(counts.items()):
            family.add_metric((ready, reason), count)
        return family

    def _last_success_family(self) -> Metric:
        family = GaugeMetricFamily(PREFIX + "last_success_timestamp_seconds",
                                   "Unix time of the last pass that succeeded with no order error.", labels=())
        with self._lock:
            if self.last_success is not None:
                family.add_metric((), self.last_success)
        return family

    def _watches_family(self) -> Metric:
        family = GaugeMetricFamily(PREFIX + "watches", "Open watch streams, by cluster (one per kind, or per kind "
                                   "and namespace).", labels=("cluster",))
        with self._lock:
            for cluster, count in sorted(self.watches.items()):
                family.add_metric((cluster,), count)
        return family

    def _shards_family(self) -> Metric:
        family = GaugeMetricFamily(PREFIX + "shard_held", "1 for each share of the namespaces this replica holds "
                                   "(with --shards).", labels=("shard",))
        with self._lock:
            for shard in self.shards:
                family.add_metric((str(shard),), 1)
        return family

    # exposition ------------------------------------------------------------------------------
    def render(self) -> str:
        """The text exposition (format 0.0.4) the endpoint serves to a scraper that asks for no other."""
        return generate_latest(self.registry).decode("utf-8")


def parse(text: str) -> Dict[str, float]:
    """``{'name{labels}': value}`` from a text exposition (for tests and the figures script)."""
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _sep, value = line.rpartition(" ")
            values[key] = float(value)
    return values


class _Quiet(WSGIRequestHandler):
    """No access log line per scrape or probe."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 pylint: disable=redefined-builtin
        pass


class MetricsServer:
    """The controller's HTTP endpoint on ``host:port`` (a thread per request, no access log), serving from the moment
    it is made; port 0 binds a free one (``port`` says which). ``/metrics`` (and any other path, as
    ``prometheus_client``'s own server answers) is the exposition; with ``health`` (health.py), ``/healthz`` and
    ``/readyz`` answer 200 or 503 with one line saying why, for the Deployment's probes."""

    def __init__(self, metrics: Metrics, host: str = "127.0.0.1", port: int = 9099, health: Any = None):
        exposition = make_wsgi_app(metrics.registry)
        probes = {"/healthz": health.live, "/livez": health.live, "/readyz": health.ready} if health else {}

        def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            probe = probes.get(environ.get("PATH_INFO") or "")
            if probe is None:
                return exposition(environ, start_response)
            try:
                ok, why = probe()
            except Exception as exc:  # noqa: BLE001 - a probe that fails says so, it never ends the server
                ok, why = False, "the probe failed: %s" % type(exc).__name__
            start_response("200 OK" if ok else "503 Service Unavailable",
                           [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")])
            return [(why + "\n").encode("utf-8")]
        self.server = make_server(host, port, app, ThreadingWSGIServer, handler_class=_Quiet)
        self._thread = threading.Thread(target=self.server.serve_forever, name="metrics", daemon=True)
        self._thread.start()
        self.port: int = self.server.server_address[1]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)
