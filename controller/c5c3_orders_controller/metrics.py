"""Prometheus metrics in the text exposition format (0.0.4), served by ``http.server`` on 127.0.0.1.

Only the standard library: the handful of counters, gauges and one histogram below do not need a client
library. Every metric is prefixed ``c5c3_orders_controller_``.
"""
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Iterable, Mapping, Optional, Tuple

from .keys import ORDER_KINDS, key_of_summary

PREFIX = "c5c3_orders_controller_"
DURATION_BUCKETS = (0.5, 1, 2, 3, 5, 8, 13, 21, 34, 60, 120, 300)


def _escape(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: Iterable[Tuple[str, str]]) -> str:
    pairs = list(pairs)
    if not pairs:
        return ""
    return "{" + ",".join('%s="%s"' % (k, _escape(v)) for k, v in pairs) + "}"


def _num(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


class Metrics:
    def __init__(self, clock=time.time):
        self.clock = clock
        self._lock = threading.Lock()
        self.passes: Dict[Tuple[str, str], int] = {}          # (kind, result) -> count
        self.durations: Dict[str, list] = {}                   # kind -> [bucket counts..., sum, count]
        self.orders: Dict[Tuple[str, str], Mapping] = {}       # (cluster, key) -> summary of a KU/BC order
        self.gateway_requests = 0
        self.phases: Dict[Tuple[str, str], Tuple[float, int]] = {}  # (pass kind, phase) -> (seconds, passes)
        self.requests: Dict[str, int] = {}                     # source -> count
        self.errors: Dict[str, int] = {}                       # source -> count
        self.order_errors = 0
        self.events: Dict[str, int] = {}
        self.triggered: Dict[str, int] = {}
        self.causes: Dict[str, int] = {}
        self.last_success: Optional[float] = None
        self.leader = 0
        self.watches: Dict[str, int] = {}                      # cluster label -> open watch streams
        self.shards: list = []                                 # the shares held (sharded replicas)

    # updates ---------------------------------------------------------------------------------
    def api_request(self, source: str, count: int = 1) -> None:
        with self._lock:
            self.requests[source] = self.requests.get(source, 0) + count

    def api_error(self, source: str, count: int = 1) -> None:
        with self._lock:
            self.errors[source] = self.errors.get(source, 0) + count

    def watch_event(self, kind: str) -> None:
        with self._lock:
            self.events[kind] = self.events.get(kind, 0) + 1

    def trigger(self, reason: str) -> None:
        with self._lock:
            self.triggered[reason] = self.triggered.get(reason, 0) + 1

    def pass_cause(self, cause: str) -> None:
        with self._lock:
            self.causes[cause] = self.causes.get(cause, 0) + 1

    def set_watches(self, per_cluster: Mapping[str, int]) -> None:
        with self._lock:
            self.watches = dict(per_cluster)

    def set_leader(self, leading: bool) -> None:
        with self._lock:
            self.leader = 1 if leading else 0

    def set_shards(self, held: Iterable[int]) -> None:
        with self._lock:
            self.shards = list(held)

    def record_pass(self, kind: str, result: str, duration: float, module: Optional[Mapping] = None,
                    keys: Optional[Iterable[str]] = None) -> None:
        """One pass: ``result`` is success / failed / canceled; ``module`` the module's return value."""
        with self._lock:
            self.passes[(kind, result)] = self.passes.get((kind, result), 0) + 1
            hist = self.durations.setdefault(kind, [0] * (len(DURATION_BUCKETS) + 2))
            for i, bound in enumerate(DURATION_BUCKETS):
                if duration <= bound:
                    hist[i] += 1
            hist[-2] += duration
            hist[-1] += 1
            if module is None:
                return
            self.requests["pass"] = self.requests.get("pass", 0) + int(module.get("api_requests") or 0)
            self.order_errors += int(module.get("errors") or 0)
            summaries = module.get("orders") or []
            if kind == "full":
                self.orders = {}
            else:
                wanted = set(keys or ())
                for ref in [r for r in self.orders if r[1] in wanted]:
                    del self.orders[ref]
            for s in summaries:
                if (s.get("kind") or ORDER_KINDS[0]) in ORDER_KINDS:  # tenants' orders, not the platform's objects
                    self.orders[(s.get("cluster") or "", key_of_summary(s))] = {
                        "ready": bool(s.get("ready")), "reason": (s.get("reasons") or {}).get("Ready", "")}
            self.gateway_requests += int(module.get("gateway_requests") or 0)
            if result == "success" and not module.get("errors"):
                self.last_success = self.clock()

    def record_phases(self, kind: str, phases: Mapping[str, float]) -> None:
        with self._lock:
            for phase, seconds in phases.items():
                total, count = self.phases.get((kind, phase), (0.0, 0))
                self.phases[(kind, phase)] = (total + float(seconds), count + 1)

    def forget_orders(self) -> None:
        with self._lock:
            self.orders = {}

    # exposition ------------------------------------------------------------------------------
    def render(self) -> str:
        with self._lock:
            out = []

            def family(name, kind, help_text):
                out.append("# HELP %s%s %s" % (PREFIX, name, help_text))
                out.append("# TYPE %s%s %s" % (PREFIX, name, kind))

            family("passes_total", "counter", "Reconcile passes run, by kind (full/targeted) and result.")
            for kind in ("full", "targeted"):
                for result in ("success", "failed", "canceled"):
                    out.append("%spasses_total%s %d" % (PREFIX, _labels([("kind", kind), ("result", result)]),
                                                        self.passes.get((kind, result), 0)))
            family("pass_causes_total", "counter",
                   "Why passes ran: schedule (full), event, requeue, or event+requeue (merged).")
            for cause in sorted(set(self.causes) | {"schedule", "event", "requeue"}):
                out.append("%spass_causes_total%s %d" % (PREFIX, _labels([("cause", cause)]),
                                                         self.causes.get(cause, 0)))
            family("pass_duration_seconds", "histogram", "Wall time of a pass (ansible-runner start to end).")
            for kind in ("full", "targeted"):
                hist = self.durations.get(kind, [0] * (len(DURATION_BUCKETS) + 2))
                for i, bound in enumerate(DURATION_BUCKETS):
                    out.append("%spass_duration_seconds_bucket%s %d" % (
                        PREFIX, _labels([("kind", kind), ("le", _num(bound))]), hist[i]))
                out.append("%spass_duration_seconds_bucket%s %d" % (
                    PREFIX, _labels([("kind", kind), ("le", "+Inf")]), hist[-1]))
                out.append("%spass_duration_seconds_sum%s %s" % (PREFIX, _labels([("kind", kind)]), _num(hist[-2])))
                out.append("%spass_duration_seconds_count%s %d" % (PREFIX, _labels([("kind", kind)]), hist[-1]))
            family("orders", "gauge", "Orders (KeystoneUser, BucketCredential) by their Ready condition and its reason, "
                                      "as last reconciled.")
            counts: Dict[Tuple[str, str], int] = {}
            for entry in self.orders.values():
                key = ("True" if entry["ready"] else "False", entry["reason"])
                counts[key] = counts.get(key, 0) + 1
            for (ready, reason), count in sorted(counts.items()):
                out.append("%sorders%s %d" % (PREFIX, _labels([("ready", ready), ("reason", reason)]), count))
            family("api_requests_total", "counter",
                   "Kubernetes API requests: made by passes (pass), and by the controller (list, watch, lease).")
            for source in sorted(set(self.requests) | {"pass", "list", "watch", "lease"}):
                out.append("%sapi_requests_total%s %d" % (PREFIX, _labels([("source", source)]),
                                                          self.requests.get(source, 0)))
            family("gateway_requests_total", "counter", "Requests the object-storage passes sent to gateways.")
            out.append("%sgateway_requests_total %d" % (PREFIX, self.gateway_requests))
            family("pass_phase_seconds", "summary",
                   "Where a pass's wall time goes: start (ansible-runner and ansible-playbook starting), before (the "
                   "role's tasks before the pass modules), modules (their tasks), pass (the modules' own work), "
                   "after (summary tasks), exit; and snapshot (building the targeted pass's snapshot).")
            for (kind, phase), (total, count) in sorted(self.phases.items()):
                labels = [("kind", kind), ("phase", phase)]
                out.append("%spass_phase_seconds_sum%s %s" % (PREFIX, _labels(labels), _num(round(total, 6))))
                out.append("%spass_phase_seconds_count%s %d" % (PREFIX, _labels(labels), count))
            family("api_errors_total", "counter",
                   "Failed Kubernetes API calls: of the controller (watch, lease), and orders whose pass met "
                   "an error (pass).")
            errors = dict(self.errors)
            errors["pass"] = errors.get("pass", 0) + self.order_errors
            for source in sorted(set(errors) | {"pass", "watch", "lease"}):
                out.append("%sapi_errors_total%s %d" % (PREFIX, _labels([("source", source)]), errors.get(source, 0)))
            family("watch_events_total", "counter", "Watch events received, by kind.")
            for kind, count in sorted(self.events.items()):
                out.append("%swatch_events_total%s %d" % (PREFIX, _labels([("kind", kind)]), count))
            family("event_triggers_total", "counter",
                   "Watch events that concerned reconciled orders and queued a targeted pass, by kind.")
            for kind, count in sorted(self.triggered.items()):
                out.append("%sevent_triggers_total%s %d" % (PREFIX, _labels([("kind", kind)]), count))
            family("last_success_timestamp_seconds", "gauge",
                   "Unix time of the last pass that succeeded with no order error.")
            if self.last_success is not None:
                out.append("%slast_success_timestamp_seconds %s" % (PREFIX, _num(round(self.last_success, 3))))
            family("watches", "gauge", "Open watch streams, by cluster (one per kind, or per kind and namespace).")
            for cluster, count in sorted(self.watches.items()):
                out.append("%swatches%s %d" % (PREFIX, _labels([("cluster", cluster)]), count))
            family("leader", "gauge", "1 while this process holds the leader Lease (sharded: at least one share).")
            out.append("%sleader %d" % (PREFIX, self.leader))
            family("shard_held", "gauge", "1 for each share of the namespaces this replica holds (with --shards).")
            for shard in self.shards:
                out.append("%sshard_held%s 1" % (PREFIX, _labels([("shard", str(shard))])))
            return "\n".join(out) + "\n"


def parse(text: str) -> Dict[str, float]:
    """``{'name{labels}': value}`` from an exposition (for tests and the figures script)."""
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _sep, value = line.rpartition(" ")
            values[key] = float(value)
    return values


class MetricsServer:
    def __init__(self, metrics: Metrics, host: str = "127.0.0.1", port: int = 9099):
        registry = metrics

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                if self.path.split("?")[0] not in ("/metrics", "/"):
                    self.send_error(404)
                    return
                body = registry.render().encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):  # no access log
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, name="metrics", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
