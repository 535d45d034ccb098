"""The lanes' scheduler: when each lane runs its next pass, and whether the lanes may work at all.

One condition variable guards the lanes' queues (lanes.py: a debouncer and a schedule each, schedule.py), the term
(leading, the shares held and their generation, as the elector reports them: elector.py) and the shutdown. Events,
resyncs, term changes and signals only change that state and wake every waiter; each lane's thread alone decides,
under the lock, when its next pass runs (``next_pass``), so two passes of one kind never overlap and a slow pass of
one kind never delays the other kind's events. The lock is re-entrant: a caller may hold ``cond`` around a call (to
log an event together with queueing it).
"""
import logging
import threading
import time
from typing import Any, FrozenSet, Iterable, Mapping, Optional, Set, Tuple

from .lanes import Lane, split
from .schedule import next_action

LOG = logging.getLogger("c5c3_orders_controller")

FAILURE_BACKOFF = (5, 10, 30, 60, 120, 300)

Action = Tuple[str, Any, str]  # (kind: "full" or "targeted", the targeted pass's keys or None, cause)


class Scheduler:
    """``max_sleep``: the longest a lane sleeps without news; ``shutdown_grace``: how long a running pass may go on
    after the first stop request."""

    def __init__(self, lanes: Optional[Mapping[str, Lane]] = None, max_sleep: float = 30.0,
                 shutdown_grace: float = 20.0) -> None:
        self.cond = threading.Condition()
        self.lanes = dict(lanes or {})
        self.max_sleep = max_sleep
        self.shutdown_grace = shutdown_grace
        self.leading = False
        self.term = 0
        self.held: FrozenSet[int] = frozenset()  # the shares this replica works on (sharded)
        self.shard_gen = 0                       # bumped whenever a share is lost: cancels the running pass
        self.stopping = False
        self.stop_requested_at: Optional[float] = None
        self.cancel_now = False

    # the term, as the elector reports it ------------------------------------------------------
    def on_leader(self, leading: bool) -> None:
        with self.cond:
            self.leading = leading
            self.term += 1
            self.cond.notify_all()

    def on_shards(self, held: Iterable[int]) -> None:
        """The shares this replica may work on now: a lost one cancels the running pass, a new one asks for a full
        pass, none ends the term (its watches stop) and the first starts one."""
        with self.cond:
            old, self.held = self.held, frozenset(held)
            if old - self.held:
                self.shard_gen += 1
            if self.held - old:
                self._resync_lanes(time.monotonic())
            if bool(self.held) != self.leading:
                self.leading = bool(self.held)
                self.term += 1
            self.cond.notify_all()

    def busy_shards(self) -> Set[int]:
        """The shares the running passes cover (the elector gives none of them back meanwhile)."""
        with self.cond:
            return set().union(*(lane.shards for lane in self.lanes.values() if lane.running))

    def wait_for_term(self) -> Optional[int]:
        """Block until this replica may work (returns the term) or is stopping (None)."""
        with self.cond:
            while not self.leading and not self.stopping:
                self.cond.wait()
            return None if self.stopping else self.term

    def in_term(self, term: int) -> bool:
        """Under ``cond``: whether the lanes may go on working in ``term``."""
        return not self.stopping and self.term == term and self.leading

    def sleep(self, term: int, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds or until news; False (at once) when ``term`` is over."""
        with self.cond:
            if not self.in_term(term):
                return False
            self.cond.wait(timeout)
            return True

    def wake(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def lost(self, term: int, shard_gen: int) -> Optional[str]:
        """Why a pass started in ``term`` at share generation ``shard_gen`` must stop now (None: it may go on).
        A sharded replica leaves its term only by losing shares, so a moved generation names the loss first."""
        if self.shard_gen != shard_gen:
            return "a share it covers was lost"
        if self.term != term or not self.leading:
            return "leadership lost"
        return None

    # the shutdown ---------------------------------------------------------------------------------
    def request_stop(self, signame: str = "signal") -> None:
        """The first request stops after the running passes (within ``shutdown_grace``), the second cancels them."""
        with self.cond:
            if self.stopping:
                self.cancel_now = True
                LOG.info("%s again: cancelling the running pass", signame)
            else:
                LOG.info("%s: shutting down%s", signame, " after the running pass" if self.running else "")
                self.stopping = True
                self.stop_requested_at = time.monotonic()
            self.cond.notify_all()

    def stop_cancels(self) -> bool:
        """Whether the shutdown cancels the running passes now: a second request, or the grace is over."""
        if self.cancel_now:
            return True
        if self.stopping and time.monotonic() - (self.stop_requested_at or 0.0) > self.shutdown_grace:
            LOG.warning("cancelling the running pass: shutdown grace of %ss exceeded", self.shutdown_grace)
            return True
        return False

    # the lanes' queues ----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return any(lane.running for lane in self.lanes.values())

    def add(self, keys: Iterable[str], now: float) -> None:
        """An event's orders, each to the lane of its kind (the first of a lane's batch stamps its wall time)."""
        with self.cond:
            for name, lane_keys in split(keys, self.lanes).items():
                lane = self.lanes[name]
                if not lane.debouncer:
                    lane.batch_started = time.time()
                lane.debouncer.add(lane_keys, now)
            self.cond.notify_all()

    def resync(self, now: float) -> None:
        """A watch lost events: a full pass in every lane."""
        with self.cond:
            self._resync_lanes(now)
            self.cond.notify_all()

    def _resync_lanes(self, now: float) -> None:
        for lane in self.lanes.values():
            lane.schedule.resync(now)

    def begin_term(self) -> None:
        """A new term: every lane's full pass first, no requeues known, no events pending."""
        with self.cond:
            for lane in self.lanes.values():
                lane.schedule.reset()
                lane.debouncer.take()

    def next_pass(self, lane: Lane, term: int) -> Optional[Action]:
        """Block until ``lane``'s next pass is due (schedule.py; the lane is then running, over the shares held
        now) or ``term`` is over (None)."""
        while True:
            with self.cond:
                if not self.in_term(term):
                    return None
                now = time.monotonic()
                action, arg, cause = next_action(lane.schedule, lane.debouncer, now)
                if action is None:
                    self.cond.wait(max(0.0, min(arg - now, self.max_sleep)))
                    continue
                lane.running = True
                lane.shards = self.held
                return action, arg, cause

    def done(self, lane: Lane) -> None:
        with self.cond:
            lane.running = False

    def first_event(self, lane: Lane) -> Optional[float]:
        """The wall time of the first event of the batch a pass starting now takes (None: no event batch)."""
        with self.cond:
            first, lane.batch_started = lane.batch_started, None
            return first

    def retry(self, lane: Lane, now: float, delay: float) -> None:
        """A full pass again after ``delay`` (a pass that could not run as planned)."""
        with self.cond:
            lane.schedule.retry_full(now, delay)

    def failed(self, lane: Lane, now: float) -> float:
        """A failed pass: a full pass again after the next step of ``FAILURE_BACKOFF``; returns that delay."""
        delay = FAILURE_BACKOFF[min(lane.failures, len(FAILURE_BACKOFF) - 1)]
        lane.failures += 1
        self.retry(lane, now, delay)
        return delay

    def succeeded(self, lane: Lane, kind: str, keys: Optional[Iterable[str]], summaries: Iterable[Mapping[str, Any]],
                  base: float, now: float) -> None:
        """A pass that ran: the backoff starts over, and its orders' requeues count from ``base`` (schedule.py)."""
        lane.failures = 0
        with self.cond:
            if kind == "full":
                lane.schedule.record_full(summaries, base, now)
            else:
                lane.schedule.record_targeted(keys or (), summaries, base)
