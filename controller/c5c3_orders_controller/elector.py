"""What the controller asks of whatever decides that this replica may work: one interface, three implementations.

A replica works while it holds the leader Lease (``LeaderElector``, lease.py), on the shares of the namespaces it
holds (``ShardElector``, sharding.py, ``--shards`` > 1), or from its start to its stop without a Lease
(``SoloElector``, solo.py, ``--no-leader-elect``). Each tells the controller of its changes through the callbacks
``make_elector`` wires (leading or not; the shares held); the controller asks it the rest through ``Elector`` and
never which one it has, so a new way of electing is one more class here and no branch in the controller.
"""
import logging
from typing import Any, Callable, Dict, FrozenSet, Optional, Protocol, Set, runtime_checkable

from .kube import Kube
from .lease import LeaderElector
from .metrics import Metrics
from .sharding import ShardElector
from .solo import SoloElector

LEASE_LOG = "c5c3_orders_controller.lease"


@runtime_checkable
class Elector(Protocol):
    """The controller's questions to its elector; the answers may change at any time from the elector's thread."""

    def start(self) -> None:
        """Begin electing (its own threads); the callbacks report what it wins and loses from now on."""

    def stop(self, release: bool = True) -> None:
        """Stop electing and report nothing held; ``release`` gives back the Leases held, so another replica takes
        over at once instead of after a lease duration."""

    def describe(self) -> str:
        """What the start-up log line says this replica waits for ("" when the elector logs its own start)."""

    def holds(self, namespace: str) -> bool:
        """Whether this replica may act on ``namespace`` now: the event filter (a standby drops all events
        anyway)."""

    def must_step_down(self) -> bool:
        """Checked by a running pass's cancel callback: True once working on could overlap another replica (the
        leader has not renewed for the renew deadline) before the elector has said so."""

    def pass_shards(self, held: FrozenSet[int]) -> Optional[Dict[str, Any]]:
        """The ``shards`` option of a pass working on the shares ``held`` (None: the pass covers everything)."""

    def settled(self) -> bool:
        """Whether this replica knows its part: it has read the Leases at least once and decided what it holds
        (nothing, as a standby, is a known part). ``/readyz`` waits for it (health.py)."""


def make_elector(kube: Optional[Kube], namespace: str, name: str, identity: str, metrics: Optional[Metrics], *,
                 on_leader: Callable[[bool], None], on_shards: Callable[[Set[int]], None],
                 busy: Callable[[], Set[int]], shards: int = 1, leader_elect: bool = True,
                 lease_duration: float = 15.0, renew_period: float = 5.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, watch_timeout: int = 3600) -> Elector:
    """The elector the options ask for: ``shards`` > 1 the shares' Leases (``name`` is their base name; ``on_shards``
    hears the shares held, ``busy()`` names those a running pass covers), else the leader Lease ``name`` or, with
    ``leader_elect`` False, none (``on_leader`` hears leading or not)."""
    if shards > 1:
        return ShardElector(kube, namespace, name, identity, shards, on_shards, busy, lease_duration=lease_duration,
                            renew_period=renew_period, renew_deadline=renew_deadline, retry_period=retry_period,
                            metrics=metrics, watch_timeout=watch_timeout)
    log = logging.getLogger(LEASE_LOG)
    if not leader_elect:
        return SoloElector(on_leader, log, metrics)
    return LeaderElector(kube, namespace, name, identity, on_leader, log, lease_duration=lease_duration,
                         renew_period=renew_period, renew_deadline=renew_deadline, retry_period=retry_period,
                         metrics=metrics)
