"""When the next pass runs, and over which orders (pure: every method takes ``now``).

Times are seconds on one monotonic clock. Three things wake the controller:

- events, debounced: a burst of events costs one pass. The batch fires once no event came for ``quiet``
  seconds, but never later than ``max_delay`` after its first event;
- requeues: every order the last pass looked at may ask to be looked at again after ``requeue_after``
  seconds (``None`` waits for events; a refusal a watched event lifts waits for that event, ``WATCHED_REASONS``).
  The due orders are reconciled in one targeted pass; orders due within ``batch_slack`` of the earliest join it;
- the full pass: at least every ``full_interval`` seconds (10 hours by default, controller-runtime's resync period:
  every cadence of docs/reconciler.md "Requeue cadences" is an order's own requeue), and right away after a resync.
"""
from typing import Dict, Iterable, Mapping, Optional, Set, Tuple

from .keys import key_of_summary

OrderRef = Tuple[str, str]  # (cluster, key): the key names the kind, namespace and name (keys.py)
# Refusals an event this controller watches lifts: a ControlPlane named by spec.controlPlaneRef that does not exist is
# created as a ControlPlane event, which wakes every order naming it (mapping.py). The pass asks for such an order
# again after 10 s (a CronJob has no watch); here that would be a whole pass every 10 s for one mistaken order, so
# the order waits for the event, with a requeue of WATCHED_WAIT seconds as the safety net.
WATCHED_REASONS = frozenset({"ControlPlaneNotFound"})
WATCHED_WAIT = 600.0


def requeue_of(summary: Mapping) -> Optional[float]:
    """The seconds until an order summary's next pass: its ``requeue_after``, stretched to ``WATCHED_WAIT`` when a
    watched event lifts its refusal (``WATCHED_REASONS``); None waits for events."""
    wait = summary.get("requeue_after")
    if wait is None:
        return None
    reasons = summary.get("reasons")
    if isinstance(reasons, Mapping) and WATCHED_REASONS.intersection(v for v in reasons.values() if isinstance(v, str)):
        return max(float(wait), WATCHED_WAIT)
    return float(wait)


class Debouncer:
    def __init__(self, quiet: float = 1.0, max_delay: float = 5.0):
        if quiet < 0 or max_delay < quiet:
            raise ValueError("need 0 <= quiet <= max_delay")
        self.quiet = quiet
        self.max_delay = max_delay
        self._keys: Set[str] = set()
        self._first: Optional[float] = None
        self._last: Optional[float] = None

    def add(self, keys: Iterable[str], now: float) -> None:
        keys = set(keys)
        if not keys:
            return
        if self._first is None:
            self._first = now
        self._last = now
        self._keys |= keys

    def fire_at(self) -> Optional[float]:
        if self._first is None or self._last is None:
            return None
        return min(self._last + self.quiet, self._first + self.max_delay)

    def ready(self, now: float) -> bool:
        at = self.fire_at()
        return at is not None and now >= at

    def take(self) -> Set[str]:
        keys, self._keys = self._keys, set()
        self._first = self._last = None
        return keys

    def pending(self) -> Set[str]:
        return set(self._keys)

    def __bool__(self) -> bool:
        return bool(self._keys)


def _key(ref: OrderRef) -> str:
    return ref[1]


class Schedule:
    def __init__(self, full_interval: float = 36000.0, batch_slack: float = 1.0):
        self.full_interval = full_interval
        self.batch_slack = batch_slack
        self.full_due: float = 0.0  # a full pass first
        self.due: Dict[OrderRef, float] = {}

    # recording a pass ------------------------------------------------------------------------
    @staticmethod
    def _entries(summaries: Iterable[Mapping], base: float) -> Dict[OrderRef, float]:
        out = {}
        for s in summaries:
            wait = requeue_of(s)
            if wait is not None:
                out[(s.get("cluster") or "", key_of_summary(s))] = float(s.get("_base", base)) + wait
        return out

    def record_full(self, summaries: Iterable[Mapping], base: float, now: float) -> None:
        """After a full pass: ``base`` is when the module read the clock (requeues count from there; a summary's
        own ``_base`` wins: each pass module reads its own clock)."""
        self.due = self._entries(summaries, base)
        self.full_due = now + self.full_interval

    def record_targeted(self, keys: Iterable[str], summaries: Iterable[Mapping], base: float) -> None:
        """After a pass limited to ``keys`` (keys.py): their old requeues go, the new ones come in."""
        keys = set(keys)
        for ref in [r for r in self.due if _key(r) in keys]:
            del self.due[ref]
        self.due.update(self._entries(summaries, base))

    def resync(self, now: float) -> None:
        """A watch lost events (410 Gone): run a full pass now."""
        self.full_due = min(self.full_due, now)

    def retry_full(self, now: float, delay: float) -> None:
        """A pass failed: try a full pass again after ``delay``."""
        self.full_due = now + delay

    def reset(self) -> None:
        """A new leader term: full pass first, no requeues known."""
        self.full_due = 0.0
        self.due.clear()

    # deciding --------------------------------------------------------------------------------
    def full_pass_due(self, now: float) -> bool:
        return now >= self.full_due

    def next_requeue(self) -> Optional[float]:
        return min(self.due.values()) if self.due else None

    def due_orders(self, now: float) -> Set[str]:
        """Orders due now, plus those due within ``batch_slack`` (one pass instead of two)."""
        earliest = self.next_requeue()
        if earliest is None or earliest > now:
            return set()
        limit = now + self.batch_slack
        return {_key(ref) for ref, at in self.due.items() if at <= limit}

    def next_wake(self, debounce_at: Optional[float]) -> float:
        candidates = [self.full_due]
        if self.due:
            candidates.append(min(self.due.values()))
        if debounce_at is not None:
            candidates.append(debounce_at)
        return min(candidates)


def next_action(schedule: Schedule, debouncer: Debouncer, now: float):
    """What to run now: ``("full", None, "schedule")``, ``("targeted", keys, cause)`` with cause ``event``,
    ``requeue`` or ``event+requeue``, or ``(None, wake_at, None)``.

    A due full pass wins (it covers everything, pending events included); otherwise due requeues and
    ready events are merged into one targeted pass.
    """
    if schedule.full_pass_due(now):
        debouncer.take()
        return "full", None, "schedule"
    keys = schedule.due_orders(now)
    causes = ["requeue"] if keys else []
    if debouncer.ready(now) or (keys and debouncer):
        keys |= debouncer.take()  # when a pass runs anyway, pending events go along
        causes.insert(0, "event")
    if keys:
        return "targeted", keys, "+".join(causes)
    return None, schedule.next_wake(debouncer.fire_at()), None
