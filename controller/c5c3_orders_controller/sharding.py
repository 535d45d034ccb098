"""The shares a replica holds, kept by one thread over the share and member-slot Leases (the rules: shards.py).

One label-selected watch observes every Lease of the group (a Watcher, whose observer feeds the LeaseTable); the
thread wakes every retry period (and at once on a Lease event), plans (``shards.plan``) and writes: takes its
member slot and the shares assigned to it once they are free, renews what it holds every renew period with a
``resourceVersion`` precondition, stops working on a share it has not renewed for the renew deadline (before any
other replica may take it), and gives back a share the assignment moved away once no pass of its own works on it.
``on_change(shares)`` tells the controller which shares it may work on; ``busy()`` which shares a running pass
covers; ``holds(namespace)`` filters the controller's events by those shares (elector.py). On shutdown every Lease
it holds is released, so the others take over at once.
"""
import logging
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, FrozenSet, Optional, Set

from .kinds import CLUSTER, Kind
from .kube import ApiError
from .lease import lease_spec
from .mapping import EventMapper
from .shards import MEMBER, SHARD, LeaseTable, Record, held_by, labels, member_lease, plan, shard_lease, shard_of
from .watch import Watcher

LOG = logging.getLogger("c5c3_orders_controller.shards")


class ShardElector:
    def __init__(self, kube, namespace: str, base: str, identity: str, shards: int,
                 on_change: Callable[[Set[int]], None], busy: Callable[[], Set[int]], lease_duration: float = 15.0,
                 renew_period: float = 5.0, renew_deadline: float = 10.0, retry_period: float = 2.0,
                 clock: Optional[Callable[[], float]] = None, metrics=None, watch_timeout: int = 3600):
        self.kube = kube
        self.namespace = namespace
        self.base = base
        self.identity = identity
        self.shards = shards
        self.on_change = on_change
        self.busy = busy
        self.lease_duration = lease_duration
        self.renew_period = renew_period
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.clock = clock or time.monotonic
        self.metrics = metrics
        self.table = LeaseTable(lease_duration)
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self._stop = threading.Event()
        self.slot: Optional[int] = None
        self.held: Set[int] = set()      # share Leases we hold (and renew)
        self.known = False               # a first round of the Leases decided
        self.working: Set[int] = set()   # of them, those we may work on (not being given back)
        self.renewed: Dict[str, float] = {}  # lease name -> when our last write of it succeeded
        kind = Kind("Lease", "coordination.k8s.io/v1", "leases", label_selector="c5c3.io/controller-lease=" + base,
                    management=(CLUSTER,), triggers=False)
        self.watcher = Watcher(kube, "", kind, EventMapper(""), threading.Lock(), lambda *_: None,
                               lambda *_: None, metrics, watch_timeout=watch_timeout, namespace=namespace,
                               observer=self._observe)
        self._thread = threading.Thread(target=self._run, name="shards", daemon=True)

    @property
    def path(self) -> str:
        return "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % self.namespace

    # -- the controller's questions (elector.py) -----------------------------------------------------------
    def describe(self) -> str:
        return "%d shares, their Leases %s/%s-shard-<i>" % (self.shards, self.namespace, self.base)

    def holds(self, namespace: str) -> bool:
        return shard_of(namespace, self.shards) in self.working

    @staticmethod
    def must_step_down() -> bool:
        return False  # a share not renewed for the deadline leaves ``working`` (``_tick``), which cancels its pass

    def pass_shards(self, held: FrozenSet[int]) -> Optional[Dict[str, Any]]:
        return {"count": self.shards, "held": sorted(held)}

    def settled(self) -> bool:
        return self.known

    def start(self) -> None:
        self.watcher.start()
        self._thread.start()

    def stop(self, release: bool = True) -> None:
        self._stop.set()
        self.wake.set()
        self._thread.join(timeout=10)
        self.watcher.stop()
        self._set_working(set())
        if release:
            for name in [shard_lease(self.base, s) for s in sorted(self.held)] + (
                    [member_lease(self.base, self.slot)] if self.slot is not None else []):
                self._write(name, SHARD if "-shard-" in name else MEMBER, release=True)
        self.held.clear()

    def holders(self) -> Dict[int, str]:
        with self.lock:
            return held_by(self.table, self.base, self.shards, self.clock())

    # -- observation --------------------------------------------------------------------------------------
    def _observe(self, event_type: str, payload) -> None:
        now = self.clock()
        with self.lock:
            if event_type == "LIST":
                self.table.seed(payload, now)
            elif event_type in ("ADDED", "MODIFIED"):
                self.table.observe((payload.get("metadata") or {}).get("name") or "", Record.from_object(payload), now)
            elif event_type == "DELETED":
                self.table.observe((payload.get("metadata") or {}).get("name") or "", None, now)
        self.wake.set()

    # -- writes ---------------------------------------------------------------------------------------------
    def _write(self, name: str, role: str, release: bool = False) -> bool:
        """Create, take, renew or (``release``) give back one Lease; True when the write succeeded."""
        with self.lock:
            record = self.table.records.get(name)
        mine = record is not None and record.holder == self.identity
        if release and not mine:
            return True
        transitions = (record.transitions if record else 0) + (0 if mine or release else 1)
        spec = lease_spec("" if release else self.identity, 1 if release else int(self.lease_duration),
                          transitions, record.acquire_time if record is not None and mine else "",
                          datetime.now(timezone.utc))
        body: Dict[str, Any] = {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": self.namespace, "labels": labels(self.base, role)},
            "spec": spec}
        try:
            if record is None:
                obj = self.kube.request("POST", self.path, body=body, source="lease", timeout=5)
            else:
                body["metadata"]["resourceVersion"] = record.resource_version
                obj = self.kube.request("PUT", "%s/%s" % (self.path, name), body=body, source="lease", timeout=5)
        except ApiError as exc:
            if exc.status not in (409,):
                LOG.warning("lease %s: %s", name, exc)
                if self.metrics:
                    self.metrics.api_error("lease")
            return False
        now = self.clock()
        with self.lock:
            self.table.observe(name, Record.from_object(obj), now)
        if not release:
            self.renewed[name] = now
        return True

    # -- the loop -------------------------------------------------------------------------------------------
    def _set_working(self, working: Set[int]) -> None:
        if working != self.working:
            LOG.info("shares held: %s (of %d)", ",".join(str(s) for s in sorted(working)) or "none", self.shards)
            self.working = set(working)
            if self.metrics:
                self.metrics.set_leader(bool(working))
                self.metrics.set_shards(sorted(working))
            self.on_change(set(working))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._tick()
            except Exception as exc:  # noqa: BLE001 - keep electing; a bug must not end the thread
                LOG.error("shares: %s: %s", type(exc).__name__, exc)
            self.wake.wait(self.retry_period)
            self.wake.clear()

    def _tick(self) -> None:
        if not self.watcher.listed.is_set():
            return  # decide nothing before the Leases have been listed
        now = self.clock()
        busy = set(self.busy())
        with self.lock:
            decided = plan(self.table, self.base, self.identity, self.shards, self.held, self.slot, busy, now)
        if decided.slot != self.slot:
            self.slot = decided.slot
        member = member_lease(self.base, self.slot) if self.slot is not None else None
        if member and (decided.take_slot or now - self.renewed.get(member, -1e9) >= self.renew_period):
            if not self._write(member, MEMBER) and decided.take_slot:
                self.slot = None
        for shard in decided.acquire:
            if self._write(shard_lease(self.base, shard), SHARD):
                self.held.add(shard)
                LOG.info("took share %d", shard)
        for shard in sorted(self.held):
            name = shard_lease(self.base, shard)
            if now - self.renewed.get(name, -1e9) >= self.renew_period:
                self._write(name, SHARD)
        now = self.clock()
        for shard in sorted(self.held):  # not renewed for the deadline: stop before anyone may take it over
            if now - self.renewed.get(shard_lease(self.base, shard), -1e9) >= self.renew_deadline:
                LOG.warning("share %d: not renewed for %.0fs; stepping down", shard, self.renew_deadline)
                self.held.discard(shard)
        releasing = set(decided.release)
        self._set_working(self.held - releasing)
        self.known = True
        busy = set(self.busy())
        for shard in sorted(releasing - busy):
            if self._write(shard_lease(self.base, shard), SHARD, release=True):
                self.held.discard(shard)
                LOG.info("gave share %d back (assigned to another replica)", shard)
