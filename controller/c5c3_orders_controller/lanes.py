"""The lanes of the controller: one per pass kind, each with its own queue and its own worker (pure: no I/O).

A KeystoneUser pass and an object-storage pass share nothing a pass decides on, but a pass of one kind can take far
longer than the other's: an object-storage pass waits for the gateways (a frozen gateway costs it one gateway
timeout, ``gateway_timeout``). With one queue, a KeystoneUser whose delivered Secret was edited waited behind every
slow object-storage pass. So each pass kind the controller runs (``--kinds``) has a lane: its own ``Debouncer`` for
the events of its kinds, its own ``Schedule`` (full pass, requeues, failure backoff) and its own thread running its
passes, one at a time, with ``c5c3_reconcile_kinds`` set to that kind alone. Events, resyncs and shares won are
routed to every lane they concern; leadership, cancelling and shutdown are shared.
"""
import logging
from typing import Dict, FrozenSet, Iterable, Mapping, Optional, Set

from .keys import PASS_OF, parse
from .kinds import KEYSTONEUSER_PASS
from .schedule import Debouncer, Schedule


class Lane:
    """One pass kind's queue (guarded by the scheduler's condition variable, scheduler.py) and what its running pass
    holds."""

    def __init__(self, name: str, runner, debounce_quiet: float = 0.25, debounce_max: float = 5.0,
                 full_interval: float = 36000.0):
        self.name = name
        self.runner = runner
        self.schedule = Schedule(full_interval)
        self.debouncer = Debouncer(debounce_quiet, debounce_max)
        self.failures = 0
        self.running = False
        self.shards: FrozenSet[int] = frozenset()  # the shares the running pass covers (sharded)
        self.batch_started: Optional[float] = None  # wall time of the first event of the pending batch
        self.log = logging.getLogger("c5c3_orders_controller." + name)

    def __repr__(self):
        return "Lane(%r)" % self.name


def lane_of(key: str) -> str:
    """The pass (lane) that reconciles the object a controller key names (keys.py)."""
    return PASS_OF.get(parse(key).kind, KEYSTONEUSER_PASS)


def split(keys: Iterable[str], lanes: Mapping[str, Lane]) -> Dict[str, Set[str]]:
    """``{lane: keys}`` of a batch; keys of a pass the controller does not run are dropped (no pass would take
    them)."""
    out: Dict[str, Set[str]] = {}
    for key in keys:
        name = lane_of(key)
        if name in lanes:
            out.setdefault(name, set()).add(key)
    return out
