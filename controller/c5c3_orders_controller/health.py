"""What the Deployment's probes ask: is the loop alive (``/healthz``), is this replica ready (``/readyz``).

Alive: the scheduler's lock, which every watch event, lane and Lease change passes through, can be taken within
``LOCK_TIMEOUT`` seconds. A deadlock or a callback stuck while holding it stops every pass of the replica, and
then only a restart helps; a slow pass does not hold it (a pass runs outside the lock), so it never fails the probe.

Ready: the elector knows this replica's part (it read the Leases and decided: a standby is ready too, so a rollout of
two replicas goes on), and, while it leads, every watch stream of the management cluster has listed and is not
broken (the events of an unlisted stream would be missed). Streams of a target cluster are named in the answer but
do not make the replica unready: one target cluster down must not take the controller of all the others out of its
Deployment's rollout.
"""
from typing import Any, Tuple

LOCK_TIMEOUT = 5.0


class Health:
    """The two answers, read from a running ``Controller`` (``scheduler``, ``elector``, ``watches``)."""

    def __init__(self, controller: Any, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.controller = controller
        self.lock_timeout = lock_timeout

    def live(self) -> Tuple[bool, str]:
        cond = self.controller.scheduler.cond
        if not cond.acquire(timeout=self.lock_timeout):
            return False, "the scheduler's lock has been held for more than %.0f s" % self.lock_timeout
        try:
            leading = bool(self.controller.scheduler.leading)
        finally:
            cond.release()
        return True, "alive (%s)" % ("leading" if leading else "not leading")

    def ready(self) -> Tuple[bool, str]:
        alive, why = self.live()
        if not alive:
            return False, why
        if not self.controller.elector.settled():
            return False, "leadership not known yet (the Leases have not been read)"
        if not self.controller.scheduler.leading:
            return True, "ready: standby"
        unsynced, running = self.controller.watches.unsynced()
        management = [key for key in unsynced if key.cluster == ""]
        if running == 0:
            return False, "leading, but no watch runs yet"
        if management:
            return False, "watches not listed yet: " + ", ".join(key.label for key in management[:10])
        targets = [key for key in unsynced if key.cluster]
        note = ("; target watches not listed: " + ", ".join(key.label for key in targets[:10])) if targets else ""
        return True, "ready: leading, %d watches listed%s" % (running - len(unsynced), note)
