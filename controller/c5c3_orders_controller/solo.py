"""Working without a Lease (``--no-leader-elect``): one replica that leads from its start until it stops.

For a Deployment of one replica whose pods never overlap (``strategy: Recreate``), where a Lease only guards against
a second replica that cannot exist. operator-sdk's and kubebuilder's managers run this way unless ``--leader-elect``
is given. It saves the renewals: one request every ``--renew-period`` (720 an hour at 5 s), the largest part of an
idle controller's requests. Two replicas started this way would both reconcile every order; the sharded mode
(``--shards``) always needs its Leases.
"""
from typing import Callable

from .lease import Leadership


class NeverStepDown:
    """The LeaseDecider's one question the controller asks while a pass runs: nothing to renew, nothing to lose."""

    @staticmethod
    def must_step_down() -> bool:
        return False


class SoloElector(Leadership):
    """The LeaderElector's interface (elector.py) without a Lease: ``on_change(True)`` at start, ``on_change(False)``
    at stop."""

    namespace = ""
    name = "(none: --no-leader-elect)"

    def __init__(self, on_change: Callable[[bool], None], log, metrics=None):
        self.on_change = on_change
        self.log = log
        self.metrics = metrics
        self.decider = NeverStepDown()

    @staticmethod
    def describe() -> str:
        return ""  # start() says it

    def must_step_down(self) -> bool:
        return self.decider.must_step_down()

    def start(self) -> None:
        self.log.info("leader election off (--no-leader-elect): leading at once, holding no Lease")
        self.known = True
        self._set(True)

    def stop(self, release: bool = True) -> None:  # noqa: ARG002 - nothing to release
        self._set(False)
