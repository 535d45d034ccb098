"""The controller loop: leadership, watches, scheduling and passes.

Threads: the main thread runs the loop and the passes (ansible-runner blocks); one thread per watch; one
for the Lease; one for the metrics endpoint. Watches and the Lease only put work on the loop (under one
condition variable); the loop alone decides when a pass runs, so passes never overlap.

A leader term: start the watches, wait (at most ``list_wait`` s) until each has listed, run a full pass,
then sleep until the next wake (see schedule.py). Losing the lease cancels a running pass through
ansible-runner's ``cancel_callback`` (checked every second; the pass's process group is killed) and stops
the watches; the process stays up as a standby. SIGTERM/SIGINT let a running pass finish for up to
``shutdown_grace`` seconds (a second signal cancels it at once), then stop the watches and release the
lease.
"""
import logging
import threading
import time
from typing import Dict, List, Optional

from .kube import Kube
from .lease import LeaderElector
from .mapping import EventMapper, kinds_for
from .metrics import Metrics
from .runner import PassRunner
from .schedule import Debouncer, Schedule, next_action
from .watch import Watcher

LOG = logging.getLogger("c5c3_orders_controller")

FAILURE_BACKOFF = (5, 10, 30, 60, 120, 300)


class Controller:
    def __init__(self, runner: PassRunner, clusters: Dict[str, Kube], lease_kube: Kube, metrics: Metrics,
                 lease_namespace: str, lease_name: str, identity: str, namespaces=(), field_manager="c5c3-orders",
                 debounce_quiet: float = 1.0, debounce_max: float = 5.0, full_interval: float = 600.0,
                 lease_duration: float = 15.0, renew_period: float = 5.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, shutdown_grace: float = 20.0, list_wait: float = 10.0,
                 watch_timeout: int = 300):
        self.runner = runner
        self.clusters = clusters
        self.metrics = metrics
        self.identity = identity
        self.shutdown_grace = shutdown_grace
        self.list_wait = list_wait
        self.watch_timeout = watch_timeout
        self.cond = threading.Condition()
        self.mapper = EventMapper(field_manager, namespaces)
        self.mapper_lock = threading.Lock()
        self.debouncer = Debouncer(debounce_quiet, debounce_max)
        self.schedule = Schedule(full_interval)
        self.watchers: List[Watcher] = []
        self.leading = False
        self.term = 0
        self.stopping = False
        self.stop_requested_at: Optional[float] = None
        self.cancel_now = False
        self.failures = 0
        self.running_pass = False
        self.elector = LeaderElector(lease_kube, lease_namespace, lease_name, identity, self._on_leader,
                                     logging.getLogger("c5c3_orders_controller.lease"),
                                     lease_duration=lease_duration, renew_period=renew_period,
                                     renew_deadline=renew_deadline, retry_period=retry_period, metrics=metrics)

    # callbacks from other threads -----------------------------------------------------------------
    def _on_leader(self, leading: bool) -> None:
        with self.cond:
            self.leading = leading
            self.term += 1
            self.cond.notify_all()

    def _on_keys(self, keys: set, what: str, kind: str = "") -> None:
        with self.cond:
            if not self.leading:
                return
            self.metrics.trigger(kind)
            LOG.info("event %s -> %s", what, ", ".join(sorted(keys)))
            self.debouncer.add(keys, time.monotonic())
            self.cond.notify_all()

    def _on_resync(self, what: str) -> None:
        with self.cond:
            LOG.info("resync (%s): full pass", what)
            self.schedule.resync(time.monotonic())
            self.cond.notify_all()

    def request_stop(self, signame: str = "signal") -> None:
        """From the signal handler: the first stops after the running pass, the second cancels it."""
        with self.cond:
            if self.stopping:
                self.cancel_now = True
                LOG.info("%s again: cancelling the running pass", signame)
            else:
                LOG.info("%s: shutting down%s", signame, " after the running pass" if self.running_pass else "")
                self.stopping = True
                self.stop_requested_at = time.monotonic()
            self.cond.notify_all()

    # the pass's cancel callback (called about every second by ansible-runner) ------------------
    def _cancel(self, term: int) -> bool:
        if self.term != term or not self.leading or self.elector.decider.must_step_down():
            LOG.warning("cancelling the running pass: leadership lost")
            return True
        if self.cancel_now:
            return True
        if self.stopping and time.monotonic() - self.stop_requested_at > self.shutdown_grace:
            LOG.warning("cancelling the running pass: shutdown grace of %ss exceeded", self.shutdown_grace)
            return True
        return False

    # watches -----------------------------------------------------------------------------------
    def _start_watches(self) -> None:
        with self.mapper_lock:
            self.mapper.forget()
        self.watchers = []
        for cluster, kube in self.clusters.items():
            for kind in kinds_for(cluster):
                watcher = Watcher(kube, cluster, kind, self.mapper, self.mapper_lock, self._on_keys,
                                  self._on_resync, self.metrics, watch_timeout=self.watch_timeout)
                watcher.start()
                self.watchers.append(watcher)
        deadline = time.monotonic() + self.list_wait
        for watcher in self.watchers:
            watcher.listed.wait(max(0.0, deadline - time.monotonic()))
        LOG.info("watching %d kinds on %d cluster(s)", len(self.watchers), len(self.clusters))

    def _stop_watches(self) -> None:
        for watcher in self.watchers:
            watcher.stop()
        for watcher in self.watchers:
            watcher.join(2.0)
        self.watchers = []
        with self.mapper_lock:
            self.mapper.forget()

    # the loop ----------------------------------------------------------------------------------
    def run(self) -> int:
        self.elector.start()
        LOG.info("started as %s; waiting for the lease %s/%s", self.identity, self.elector.namespace,
                 self.elector.name)
        try:
            while True:
                with self.cond:
                    while not self.leading and not self.stopping:
                        self.cond.wait()
                    if self.stopping:
                        break
                    term = self.term
                self._lead(term)
        finally:
            self._stop_watches()
            self.elector.stop(release=True)
            LOG.info("stopped")
        return 0

    def _lead(self, term: int) -> None:
        LOG.info("leading (term %d): starting watches", term)
        with self.cond:
            self.schedule.reset()
            self.debouncer.take()
        self._start_watches()
        try:
            while True:
                with self.cond:
                    if self.stopping or self.term != term or not self.leading:
                        return
                    now = time.monotonic()
                    action, arg, cause = next_action(self.schedule, self.debouncer, now)
                    if action is None:
                        self.cond.wait(max(0.0, min(arg - now, 60.0)))
                        continue
                    self.running_pass = True
                try:
                    self.metrics.pass_cause(cause)
                    self._pass(action, arg, term, cause)
                except Exception as exc:  # noqa: BLE001 - a bug must not end the controller: retry later
                    LOG.error("pass handling failed: %s: %s; full pass again in 60s", type(exc).__name__, exc)
                    with self.cond:
                        self.schedule.retry_full(time.monotonic(), 60)
                finally:
                    with self.cond:
                        self.running_pass = False
        finally:
            self._stop_watches()
            self.metrics.forget_orders()
            LOG.info("leader term %d over", term)

    def _pass(self, kind: str, keys, term: int, cause: str = "") -> None:
        if kind == "targeted":
            LOG.info("targeted pass (%s): %s", cause, ", ".join(sorted(keys)))
        result = self.runner.run(kind, keys, lambda: self._cancel(term))
        now = time.monotonic()
        self.metrics.record_pass(kind, result.result, result.duration, result.module, keys)
        if result.result == "canceled":
            LOG.warning("%s", result.summary())
            return
        if not result.ok:
            delay = FAILURE_BACKOFF[min(self.failures, len(FAILURE_BACKOFF) - 1)]
            self.failures += 1
            LOG.error("%s; full pass again in %ss", result.summary(), delay)
            with self.cond:
                self.schedule.retry_full(now, delay)
            return
        self.failures = 0
        LOG.info("%s", result.summary())
        for order in result.module.get("orders") or []:
            if order.get("changed") or order.get("error"):
                LOG.info("  %s/%s%s: ready=%s %s%s", order.get("namespace"), order.get("name"),
                         "@" + order["cluster"] if order.get("cluster") else "", order.get("ready"),
                         "; ".join(order.get("actions") or []) or "status",
                         (" error: %s" % order["error"]) if order.get("error") else "")
        # requeues count from when the module read its clock (wall), mapped onto the monotonic clock
        base = now - (time.time() - result.clock_base())
        with self.cond:
            if kind == "full":
                self.schedule.record_full(result.module.get("orders") or [], base, now)
            else:
                self.schedule.record_targeted(keys, result.module.get("orders") or [], base)
