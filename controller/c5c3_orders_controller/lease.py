"""Leader election on a ``coordination.k8s.io/v1`` Lease, the way client-go's leaderelection does it.

Rules (the decision part is pure; the clock is injected):

- no Lease: create it, holding it;
- we hold it: renew (``renewTime`` = now) every ``renew_period`` with a ``resourceVersion`` precondition,
  so a write based on a stale read fails with 409 instead of overwriting another holder;
- nobody holds it (released: empty ``holderIdentity``): take it;
- another holder: take it only once the record has not changed for ``leaseDurationSeconds`` *as observed on
  our own clock* (client-go's ``observedTime``: no comparison of clocks across machines);
- the leader steps down when a renew finds another holder or fails with 409, and when it has not renewed
  successfully for ``renew_deadline`` (< lease duration, so it stops before anyone may take over);
- on shutdown it releases the Lease (empty holder, ``leaseDurationSeconds`` 1), so a standby takes over at
  its next try instead of waiting out the lease.
"""
import socket
import os
import threading
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Dict, FrozenSet, Mapping, NamedTuple, Optional

from .kube import ApiError

MICROTIME = "%Y-%m-%dT%H:%M:%S.%fZ"


def new_identity() -> str:
    """Unique per process: host, pid and a random suffix (two processes on one host never collide)."""
    return "%s_%d_%s" % (socket.gethostname(), os.getpid(), uuid.uuid4().hex[:8])


class LeaseRecord(NamedTuple):
    holder: str
    duration: int
    transitions: int
    resource_version: str
    renew_time: str
    acquire_time: str

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> "LeaseRecord":
        spec = obj.get("spec") or {}
        meta = obj.get("metadata") or {}
        return cls(spec.get("holderIdentity") or "", int(spec.get("leaseDurationSeconds") or 0),
                   int(spec.get("leaseTransitions") or 0), meta.get("resourceVersion") or "",
                   spec.get("renewTime") or "", spec.get("acquireTime") or "")


class LeaseDecider:
    """Pure decisions; ``clock()`` returns monotonic seconds."""

    CREATE, RENEW, ACQUIRE, WAIT = "create", "renew", "acquire", "wait"

    def __init__(self, identity: str, lease_duration: float, renew_deadline: float, clock: Callable[[], float]):
        if renew_deadline >= lease_duration:
            raise ValueError("renew_deadline must be shorter than the lease duration")
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.clock = clock
        self._observed: Optional[tuple] = None
        self._observed_at: float = 0.0
        self.last_renew: Optional[float] = None

    def observe(self, record: Optional[LeaseRecord]) -> None:
        """Remember when the record last changed, on our clock."""
        key = None if record is None else (record.holder, record.renew_time, record.resource_version)
        if key != self._observed:
            self._observed = key
            self._observed_at = self.clock()

    def decide(self, record: Optional[LeaseRecord]) -> str:
        self.observe(record)
        if record is None:
            return self.CREATE
        if record.holder == self.identity:
            return self.RENEW
        if not record.holder:
            return self.ACQUIRE
        duration = record.duration or self.lease_duration
        if self._observed_at + duration <= self.clock():
            return self.ACQUIRE
        return self.WAIT

    def renewed(self) -> None:
        self.last_renew = self.clock()

    def must_step_down(self) -> bool:
        """The leader has not renewed for ``renew_deadline``: stop working before the lease can expire."""
        return self.last_renew is None or self.clock() - self.last_renew >= self.renew_deadline

    def expires_in(self) -> float:
        return self.lease_duration if self.last_renew is None else self.last_renew + self.lease_duration - self.clock()


def lease_spec(identity: str, duration: int, transitions: int, acquire_time: str, now: datetime) -> dict:
    stamp = now.strftime(MICROTIME)
    return {"holderIdentity": identity, "leaseDurationSeconds": int(duration),
            "acquireTime": acquire_time or stamp, "renewTime": stamp, "leaseTransitions": int(transitions)}


class Leadership:
    """Whether this process leads, told once per transition: to the metrics gauge and to ``on_change``. The leader
    works on everything: every namespace is its own, and its passes cover them all (elector.py)."""

    on_change: Callable[[bool], None]
    metrics = None
    leading = False
    known = False  # set once the Lease was read and a decision made (or, solo, at start)

    def settled(self) -> bool:
        return self.known

    def _set(self, leading: bool) -> None:
        if leading != self.leading:
            self.leading = leading
            if self.metrics:
                self.metrics.set_leader(leading)
            self.on_change(leading)

    @staticmethod
    def holds(namespace: str) -> bool:  # noqa: ARG004 - one leader holds every namespace
        return True

    @staticmethod
    def pass_shards(held: FrozenSet[int]) -> Optional[Dict[str, Any]]:  # noqa: ARG004 - nothing to narrow
        return None


class LeaderElector(Leadership):
    """Runs the election in its own thread; ``on_change(leading)`` is called on every transition."""

    def __init__(self, kube, namespace: str, name: str, identity: str, on_change: Callable[[bool], None],
                 log, lease_duration: float = 15.0, renew_period: float = 5.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, clock: Optional[Callable[[], float]] = None,
                 wall: Optional[Callable[[], datetime]] = None,
                 metrics=None):
        import time
        self.kube = kube
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.on_change = on_change
        self.log = log
        self.renew_period = renew_period
        self.retry_period = retry_period
        self.clock = clock or time.monotonic
        self.wall = wall or (lambda: datetime.now(timezone.utc))
        self.decider = LeaseDecider(identity, lease_duration, renew_deadline, self.clock)
        self.metrics = metrics
        self.leading = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease", daemon=True)
        self._record: Optional[LeaseRecord] = None  # what our last write returned
        self._last_error: Optional[str] = None
        self.request_timeout = max(1.0, min(5.0, renew_period))

    @property
    def path(self) -> str:
        return "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % self.namespace

    def describe(self) -> str:
        return "waiting for the lease %s/%s" % (self.namespace, self.name)

    def must_step_down(self) -> bool:
        """Not renewed for the renew deadline: a running pass stops before this thread has noticed."""
        return self.decider.must_step_down()

    def start(self) -> None:
        self._thread.start()

    def stop(self, release: bool = True) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        if release and self.leading:
            self._release()
        self._set(False)

    # ------------------------------------------------------------------------------------------
    def _read(self) -> Optional[LeaseRecord]:
        try:
            obj = self.kube.request("GET", "%s/%s" % (self.path, self.name), source="lease",
                                    timeout=self.request_timeout)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        return LeaseRecord.from_object(obj)

    def _write(self, record: Optional[LeaseRecord], transitions: int, acquire_time: str) -> LeaseRecord:
        body: Dict[str, Any] = {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": lease_spec(self.identity, int(self.decider.lease_duration), transitions, acquire_time,
                               self.wall())}
        if record is None:
            obj = self.kube.request("POST", self.path, body=body, source="lease", timeout=self.request_timeout)
        else:
            body["metadata"]["resourceVersion"] = record.resource_version  # precondition: 409 if it moved
            obj = self.kube.request("PUT", "%s/%s" % (self.path, self.name), body=body, source="lease",
                                    timeout=self.request_timeout)
        return LeaseRecord.from_object(obj)

    def try_once(self) -> bool:
        """One round: read, decide, write. True when we hold the lease afterwards.

        While leading, the renew is a single PUT on the record our last write returned (its
        resourceVersion is the precondition); only a 409 makes us read the Lease again."""
        if self.leading and self._record is not None and self._record.holder == self.identity:
            try:
                self._record = self._write(self._record, self._record.transitions, self._record.acquire_time)
                self.decider.observe(self._record)
                self.decider.renewed()
                return True
            except ApiError as exc:
                self._record = None
                if exc.status != 409:
                    raise
        record = self._read()
        action = self.decider.decide(record)
        if action == LeaseDecider.WAIT:
            self._record = None
            return False
        if action == LeaseDecider.CREATE or record is None:
            self._record = self._write(None, 0, "")
        elif action == LeaseDecider.RENEW:
            self._record = self._write(record, record.transitions, record.acquire_time)
        else:  # ACQUIRE: a new term
            self._record = self._write(record, record.transitions + 1, "")
        self.decider.observe(self._record)
        self.decider.renewed()
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                held = self.try_once()
                self._last_error = None
            except Exception as exc:  # noqa: BLE001 - API failures and anything unexpected alike
                held = False
                status = getattr(exc, "status", None)
                if self.metrics:
                    self.metrics.api_error("lease")
                if status != 409 and self._last_error != str(exc):
                    self.log.warning("lease %s/%s: %s", self.namespace, self.name,
                                     exc if isinstance(exc, ApiError) else type(exc).__name__)
                self._last_error = str(exc)
                if self.leading and status != 409 and not self.decider.must_step_down():
                    # a transient failure: keep leading until the renew deadline, retry soon
                    self._stop.wait(1.0)
                    continue
            self.known = True
            if held and not self.leading:
                self.log.info("leader: acquired lease %s/%s as %s", self.namespace, self.name, self.identity)
            elif not held and self.leading:
                self.log.warning("leader: lost lease %s/%s; stopping work", self.namespace, self.name)
            self._set(held)
            self._stop.wait(self.renew_period if held else self.retry_period)

    def _release(self) -> None:
        try:
            record = self._read()
            if record is None or record.holder != self.identity:
                return
            body: Dict[str, Any] = {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace,
                             "resourceVersion": record.resource_version},
                "spec": {"holderIdentity": "", "leaseDurationSeconds": 1,
                         "acquireTime": record.acquire_time or None,
                         "renewTime": self.wall().strftime(MICROTIME),
                         "leaseTransitions": record.transitions}}
            self.kube.request("PUT", "%s/%s" % (self.path, self.name), body=body, source="lease")
            self.log.info("leader: released lease %s/%s", self.namespace, self.name)
        except ApiError as exc:
            self.log.warning("leader: could not release lease %s/%s: %s", self.namespace, self.name, exc)
