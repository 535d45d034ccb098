"""The invariant observer: a thread that samples every watched order throughout a scenario and judges it
against the real systems (Kubernetes, Keystone, OpenBao).

Invariants (names used in the report):

- ``recoverable``: while the order exists and is not being deleted, if Keystone has its user, one of the
  candidate passwords (every ``-password-v<N>`` Secret, the OpenBao backup) authenticates as that user.
- ``delivered-authenticates``: a delivered Secret's ``password`` and the password in its ``clouds.yaml`` are
  the same, and it authenticates, unless a rotation is in flight: the K-ORC User's ``passwordRef`` names a
  generation newer than the one the delivered password was seen in (the spec has no grace period: from the
  moment K-ORC applies the new password until the delivered Secret is rewritten after ESO's push, the old
  one fails). A delivered password never seen in a password Secret is never "in flight".
- ``ready-authenticates``: an order whose Ready condition is True has a delivered Secret whose password
  authenticates (no exemption).
- ``no-orphan``: once an order is gone, no object labelled for it is left in the ControlPlane's namespace,
  OpenBao holds nothing at its backup path and Keystone has no user of its name.
- ``no-secret-in-status``: no password ever seen appears in the order's status (conditions, messages).

A suspected violation is confirmed only by a second read that sees the same objects (same resourceVersions,
same backup and Keystone state) and the same failure; when the objects moved in between, a third read decides.
A sample that cannot be judged because a server did not answer counts as blind for that invariant, never as a
pass. Violations are grouped into episodes (one per invariant and order while it lasts), with timestamps.
"""
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from .kubeapi import Unreachable
from .probe import OrderKey, Probe, Snapshot
from .services import Blind

INTERVAL = 0.4  # seconds between two samples of one order
INVARIANTS = ("recoverable", "delivered-authenticates", "ready-authenticates", "no-orphan", "no-secret-in-status")


@dataclass
class Episode:
    invariant: str
    order: str
    detail: str
    first: float
    last: float
    samples: int = 1

    def as_dict(self) -> dict:
        return {"invariant": self.invariant, "order": self.order, "detail": self.detail, "first": round(self.first, 3),
                "last": round(self.last, 3), "samples": self.samples}


@dataclass
class Tally:
    samples: int = 0
    blind: Dict[str, int] = field(default_factory=lambda: {name: 0 for name in INVARIANTS})
    judged: Dict[str, int] = field(default_factory=lambda: {name: 0 for name in INVARIANTS})
    unconfirmed: int = 0
    in_flight_samples: int = 0
    longest_in_flight: float = 0.0


def label(key: OrderKey) -> str:
    cluster, namespace, name = key
    return f"{cluster or 'management'}:{namespace}/{name}"


class Judge:
    """The verdicts on one snapshot; remembers, per order, the generation each password was seen in."""

    def __init__(self, probe: Probe):
        self.probe = probe
        self.generation_of_password: Dict[OrderKey, Dict[str, int]] = {}
        self.seen: Set[str] = set()

    def remember(self, snap: Snapshot) -> None:
        history = self.generation_of_password.setdefault(snap.key, {})
        for gen, password in snap.passwords.items():
            history.setdefault(password, gen)
        self.seen.update(snap.secrets_seen())

    def _auth(self, user: str, password: str) -> bool:
        return self.probe.keystone.authenticates(user, password)

    def verdicts(self, snap: Snapshot) -> Tuple[List[Tuple[str, str]], Set[str], bool]:
        """(violations as (invariant, detail), invariants that were blind, rotation in flight)."""
        self.remember(snap)
        violations, blind = [], set()
        user = self.probe.user_name(snap.key)
        in_flight = False
        if snap.gone:
            leftovers = list(snap.children)
            if snap.backup_exists:
                leftovers.append("OpenBao backup path")
            if snap.keystone_user:
                leftovers.append(f"Keystone user {user}")
            if snap.backup_exists is None or snap.keystone_user is None:
                blind.add("no-orphan")
            if leftovers:
                violations.append(("no-orphan", "left after the order is gone: " + ", ".join(leftovers)))
            return violations, blind, in_flight
        status_text = repr((snap.order or {}).get("status") or {})
        if any(secret in status_text for secret in self.seen):
            violations.append(("no-secret-in-status", "a password appears in the order's status"))
        if snap.deleting:
            return violations, blind, in_flight
        delivered_ok: Optional[bool] = None
        try:
            if snap.delivered_password:
                delivered_ok = self._auth(user, snap.delivered_password)
            if snap.keystone_user:
                candidates = [p for p in sorted(set(snap.passwords.values()) | {snap.backup_password}, key=str) if p]
                if delivered_ok and snap.delivered_password in candidates:
                    recovered = True
                else:
                    recovered = any(self._auth(user, p) for p in candidates if p != snap.delivered_password)
                if not recovered and snap.backup_exists is None:
                    blind.add("recoverable")  # the backup could not be read: it might hold it
                elif not recovered:
                    violations.append(("recoverable", f"none of {len(candidates)} candidate password(s) "
                                                      f"(password Secrets v{sorted(snap.passwords)}, backup "
                                                      f"{'present' if snap.backup_password else 'absent'}) authenticates"))
            elif snap.keystone_user is None:
                blind.add("recoverable")
        except Blind:
            blind.update({"recoverable", "delivered-authenticates", "ready-authenticates"})
            return violations, blind, in_flight
        if snap.delivered_exists:
            if snap.delivered_password != snap.delivered_clouds_password:
                violations.append(("delivered-authenticates", "password and clouds.yaml carry different passwords"))
            if delivered_ok is False or not snap.delivered_password:
                seen_gen = self.generation_of_password.get(snap.key, {}).get(snap.delivered_password or "")
                in_flight = (seen_gen is not None and snap.user_ref_generation is not None
                             and seen_gen < snap.user_ref_generation)
                if not in_flight:
                    violations.append(("delivered-authenticates", (
                        f"delivered password (seen in v{seen_gen}) fails; User points at v{snap.user_ref_generation}, "
                        f"applied v{snap.user_applied_generation}" if seen_gen is not None else
                        "delivered password was never in a password Secret and fails")))
        if snap.ready and (not snap.delivered_exists or delivered_ok is not True):
            violations.append(("ready-authenticates", "Ready=True but the delivered password " + (
                "is missing" if not snap.delivered_exists else "fails") + f" (status v{snap.status_generation}, "
                f"User points at v{snap.user_ref_generation}, applied v{snap.user_applied_generation})"))
        return violations, blind, in_flight


class Observer(threading.Thread):
    """Samples every watched order every ``interval`` seconds until ``stop()``."""

    def __init__(self, probe: Probe, interval: float = INTERVAL):
        super().__init__(daemon=True, name="invariant-observer")
        self.probe = probe
        self.judge = Judge(probe)
        self.interval = interval
        self.keys: List[OrderKey] = []
        self.tally = Tally()
        self.episodes: List[Episode] = []
        self._open: Dict[Tuple[str, OrderKey], Episode] = {}
        self._in_flight_since: Dict[OrderKey, float] = {}
        self._halt = threading.Event()
        self._lock = threading.Lock()
        self._sampling = threading.Lock()
        self.errors: List[str] = []

    # control --------------------------------------------------------------------------------------
    def watch(self, key: OrderKey) -> None:
        with self._lock:
            if key not in self.keys:
                self.keys.append(key)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=60)

    def sample_now(self) -> None:
        """One full sample from the caller's thread (the final check of a scenario)."""
        with self._lock:
            keys = list(self.keys)
        with self._sampling:
            for key in keys:
                self._sample(key)

    @property
    def seen_secrets(self) -> Set[str]:
        return set(self.judge.seen)

    def run(self) -> None:
        while not self._halt.is_set():
            started = time.monotonic()
            try:
                self.sample_now()
            except Exception as exc:  # noqa: BLE001 - an observer bug must be reported, not kill the thread
                self.errors.append(f"{type(exc).__name__}: {exc}")
            self._halt.wait(max(0.0, self.interval - (time.monotonic() - started)))

    # one order -----------------------------------------------------------------------------------
    def _read(self, key: OrderKey) -> Optional[Snapshot]:
        try:
            return self.probe.snapshot(key)
        except Unreachable:
            return None

    def _sample(self, key: OrderKey) -> None:
        now = time.time()
        self.tally.samples += 1
        snap = self._read(key)
        if snap is None:
            for name in INVARIANTS:
                self.tally.blind[name] += 1
            return
        violations, blind, in_flight = self.judge.verdicts(snap)
        if violations:
            violations, blind, in_flight = self._confirm(key, snap, violations, blind, in_flight)
        self._track_in_flight(key, in_flight, now)
        found = {name for name, _ in violations}
        for name in INVARIANTS:
            if name in blind:
                self.tally.blind[name] += 1
                continue
            self.tally.judged[name] += 1
            if name not in found:
                self._open.pop((name, key), None)
        for name, detail in violations:
            episode = self._open.get((name, key))
            if episode is None:
                episode = Episode(name, label(key), detail, now, now)
                self._open[(name, key)] = episode
                self.episodes.append(episode)
            else:
                episode.last, episode.samples = now, episode.samples + 1

    def _confirm(self, key, first, violations, blind, in_flight):
        """Re-read until two consecutive reads saw the same objects; keep only what both of them violate."""
        previous, previous_verdict = first, (violations, blind, in_flight)
        for _ in range(2):
            again = self._read(key)
            if again is None:
                break
            verdict = self.judge.verdicts(again)
            if again.fingerprint == previous.fingerprint:
                names = {name for name, _ in verdict[0]}
                kept = [(name, detail) for name, detail in previous_verdict[0] if name in names]
                if len(kept) < len(previous_verdict[0]):
                    self.tally.unconfirmed += len(previous_verdict[0]) - len(kept)
                return kept, previous_verdict[1] | verdict[1], verdict[2]
            previous, previous_verdict = again, verdict
            if not verdict[0]:
                self.tally.unconfirmed += len(violations)
                return [], verdict[1], verdict[2]
        self.tally.unconfirmed += len(violations)
        return [], previous_verdict[1] | {name for name, _ in violations}, previous_verdict[2]

    def _track_in_flight(self, key: OrderKey, in_flight: bool, now: float) -> None:
        if in_flight:
            self.tally.in_flight_samples += 1
            since = self._in_flight_since.setdefault(key, now)
            self.tally.longest_in_flight = max(self.tally.longest_in_flight, now - since)
        else:
            self._in_flight_since.pop(key, None)

    def report(self) -> dict:
        return {"samples": self.tally.samples, "blind": dict(self.tally.blind), "judged": dict(self.tally.judged),
                "unconfirmed": self.tally.unconfirmed, "in_flight_samples": self.tally.in_flight_samples,
                "longest_in_flight_s": round(self.tally.longest_in_flight, 2),
                "violations": [e.as_dict() for e in self.episodes], "observer_errors": list(self.errors)}
