"""Which watches the controller keeps open, derived from the ControlPlanes (pure: no I/O, no clock).

Under the access contract (docs/install.md, "Permissions") Secrets, K-ORC Users and PushSecrets on the management
cluster, and everything on a target cluster, may be read only in single namespaces: the namespace of each
ControlPlane and each namespace a ControlPlane assigns. So a kind is watched once across the cluster, or once per
such namespace (``mapping.Kind.management`` / ``.target``), and the set of watches follows the ControlPlanes: an
assignment added starts the watches of its namespace, one withdrawn stops them (watching.py runs them).
"""
import json
from typing import Any, Dict, FrozenSet, Iterable, Mapping, NamedTuple, Optional, Set, Tuple

from .kinds import ASSIGNED_NS, CLUSTER, CONTROLPLANE_NS, Kind


class WatchKey(NamedTuple):
    """One watch stream: a kind on a cluster ("" = management), in one namespace ("" = across the cluster)."""

    cluster: str
    kind: str
    namespace: str = ""

    @property
    def label(self) -> str:
        where = ("@" + self.cluster) if self.cluster else ""
        return "%s%s%s" % (self.kind, where, ("/" + self.namespace) if self.namespace else "")


class Namespaces(NamedTuple):
    """The namespaces the ControlPlanes name: their own, and the assigned ones per cluster ("" = management)."""

    controlplane: FrozenSet[str]
    assigned: Mapping[str, FrozenSet[str]]

    def on(self, cluster: str, scope: str) -> FrozenSet[str]:
        if scope == CONTROLPLANE_NS:
            return self.controlplane if cluster == "" else frozenset()
        if scope == ASSIGNED_NS:
            return self.assigned.get(cluster, frozenset())
        return frozenset()


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _entry(entry: Any) -> Optional[Tuple[str, str]]:
    """``(cluster, namespace)`` of a ``spec.namespaceAssignments`` entry; None when it names no namespace."""
    if not isinstance(entry, Mapping) or not _str(entry.get("namespace")):
        return None
    ref = entry.get("targetClusterRef")
    return (_str(ref.get("name")) if isinstance(ref, Mapping) else "", entry["namespace"])


def control_plane_record(obj: Any) -> Tuple[str, FrozenSet[Tuple[str, str]]]:
    """What a ControlPlane contributes: its namespace and its ``(cluster, namespace)`` assignments."""
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    meta = meta if isinstance(meta, Mapping) else {}
    spec = obj.get("spec") if isinstance(obj, Mapping) else None
    entries = spec.get("namespaceAssignments") if isinstance(spec, Mapping) else None
    pairs = (_entry(e) for e in (entries if isinstance(entries, list) else []))
    return _str(meta.get("namespace")), frozenset(p for p in pairs if p is not None)


def namespaces_of(records: Iterable[Tuple[str, Iterable[Tuple[str, str]]]]) -> Namespaces:
    """The namespaces of a set of ControlPlane records (``control_plane_record``)."""
    controlplane: Set[str] = set()
    assigned: Dict[str, Set[str]] = {}
    for namespace, pairs in records:
        if namespace:
            controlplane.add(namespace)
        for cluster, ns in pairs:
            assigned.setdefault(cluster, set()).add(ns)
    return Namespaces(frozenset(controlplane), {c: frozenset(n) for c, n in assigned.items()})


def watch_set(kinds: Iterable[Kind], clusters: Iterable[str], namespaces: Namespaces,
              only: Iterable[str] = ()) -> Set[WatchKey]:
    """Every watch wanted: each kind on each cluster in each of its scopes. ``only`` (the controller's
    ``--namespace``, empty = all) narrows the assigned namespaces - orders elsewhere are not reconciled - but never
    the ControlPlane namespaces, where the children of every order live."""
    only = frozenset(only or ())
    wanted = set()
    for cluster in clusters:
        for kind in kinds:
            for scope in kind.scopes(cluster):
                if scope == CLUSTER:
                    wanted.add(WatchKey(cluster, kind.key))
                    continue
                found = namespaces.on(cluster, scope)
                if only and scope == ASSIGNED_NS:
                    found = found & only
                wanted.update(WatchKey(cluster, kind.key, ns) for ns in found)
    return wanted


def diff(current: Iterable[WatchKey], wanted: Iterable[WatchKey]) -> Tuple[list, list]:
    """``(to start, to stop)``, each sorted (start order: cluster, kind, namespace)."""
    current, wanted = set(current), set(wanted)
    return sorted(wanted - current), sorted(current - wanted)


class ControlPlaneRecords:
    """The ControlPlanes the management cluster's watch has seen, as records by uid (fed by its list and events)."""

    def __init__(self):
        self._records: Dict[str, Tuple[str, FrozenSet[Tuple[str, str]]]] = {}

    @staticmethod
    def _uid(obj: Any) -> str:
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        meta = meta if isinstance(meta, Mapping) else {}
        return _str(meta.get("uid")) or json.dumps([_str(meta.get("namespace")), _str(meta.get("name"))])

    def seed(self, items: Iterable[Any]) -> None:
        self._records = {self._uid(obj): control_plane_record(obj) for obj in items}

    def handle(self, event_type: str, obj: Any) -> None:
        if event_type == "DELETED":
            self._records.pop(self._uid(obj), None)
        elif event_type in ("ADDED", "MODIFIED"):
            self._records[self._uid(obj)] = control_plane_record(obj)

    def clear(self) -> None:
        self._records.clear()

    def namespaces(self) -> Namespaces:
        return namespaces_of(self._records.values())
