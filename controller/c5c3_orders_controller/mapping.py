"""Which orders a watch event concerns (pure: no I/O, no clock).

Orders are named ``<namespace>/<name>``, the form the reconcile role's ``c5c3_reconcile_orders`` takes (the
module applies it on every cluster). An event maps to orders as follows:

- a KeystoneUser: the order itself;
- a delivered Secret, or a K-ORC User, Secret or PushSecret the pass projected: its
  ``c5c3.io/keystoneuser-name`` / ``-namespace`` labels (the object's namespace when the namespace label is
  missing, which never happens for objects the pass wrote);
- a ControlPlane: every order whose ``spec.controlPlaneRef`` names it (from the index the KeystoneUser
  watches keep) - or, when only ``spec.namespaceAssignments`` changed, those of them in the namespaces
  whose entries changed (onboarding a tenant does not cost a pass over every order);
- a KeystoneRoleAssignment or KeystoneApplicationCredential: ``spec.userRef.name`` in its namespace.

A MODIFIED event maps to the orders of the object's old *and* new state (a label or reference that moved
concerns both orders).

Events that cannot change a decision are dropped, so the pass's own writes never wake the controller
(a converged stack stays idle):

- the pass's own writes: every ``metadata.managedFields`` entry the change added or re-timed belongs to our
  field manager (a change that moved no entry, such as a deletion setting ``deletionTimestamp``, is never
  taken for ours);
- nothing the pass reads changed: a fingerprint of the object without ``resourceVersion``,
  ``managedFields`` and fields that move on their own (a PushSecret's ``status.refreshTime``, every
  KeystoneUser ``status`` - the pass writes it) equals the cached one. Secrets are watched as metadata
  only (their data never reaches the controller), so for them only the first rule applies.

DELETED events always count.
"""
import hashlib
import json
from typing import Any, Dict, Iterable, Mapping, NamedTuple, Optional, Set, Tuple

LABEL_NAME = "c5c3.io/keystoneuser-name"
LABEL_NAMESPACE = "c5c3.io/keystoneuser-namespace"


# Where a kind is watched on a cluster (the access contract's grants decide; docs/install.md, "Permissions"):
CLUSTER = "cluster"            # one watch across all namespaces
CONTROLPLANE_NS = "controlplane"  # one watch in the namespace of each ControlPlane
ASSIGNED_NS = "assigned"       # one watch in each namespace a ControlPlane assigns on this cluster


class Kind(NamedTuple):
    """A watched resource type, and its scopes on the management cluster and on a target cluster (empty: not
    watched there)."""

    key: str                 # short name used in logs and metrics
    api_version: str
    plural: str
    label_selector: str = ""
    metadata_only: bool = False
    management: Tuple[str, ...] = (CLUSTER,)
    target: Tuple[str, ...] = ()

    def collection_path(self, namespace: str = "") -> str:
        prefix = "/api/v1" if self.api_version == "v1" else "/apis/" + self.api_version
        return prefix + ("/namespaces/" + namespace if namespace else "") + "/" + self.plural

    def scopes(self, cluster: str) -> Tuple[str, ...]:
        return self.management if cluster == "" else self.target


# One entry per watched kind; a new kind (BucketCredential, ObjectStore, ...) is one more line here.
KEYSTONEUSER = Kind("KeystoneUser", "c5c3.io/v1alpha1", "keystoneusers", target=(ASSIGNED_NS,))
SECRET = Kind("Secret", "v1", "secrets", label_selector=LABEL_NAME, metadata_only=True,
              management=(CONTROLPLANE_NS, ASSIGNED_NS), target=(ASSIGNED_NS,))
CONTROLPLANE = Kind("ControlPlane", "c5c3.io/v1alpha1", "controlplanes")
KORC_USER = Kind("User", "openstack.k-orc.cloud/v1alpha1", "users", label_selector=LABEL_NAME,
                 management=(CONTROLPLANE_NS,))
PUSHSECRET = Kind("PushSecret", "external-secrets.io/v1alpha1", "pushsecrets", label_selector=LABEL_NAME,
                  management=(CONTROLPLANE_NS,))
ROLE_ASSIGNMENT = Kind("KeystoneRoleAssignment", "c5c3.io/v1alpha1", "keystoneroleassignments",
                       target=(ASSIGNED_NS,))
APP_CREDENTIAL = Kind("KeystoneApplicationCredential", "c5c3.io/v1alpha1", "keystoneapplicationcredentials",
                      target=(ASSIGNED_NS,))

KINDS = (KEYSTONEUSER, SECRET, CONTROLPLANE, KORC_USER, PUSHSECRET, ROLE_ASSIGNMENT, APP_CREDENTIAL)


def kinds_for(cluster: str):
    """The kinds watched on a cluster ("" = management; target clusters hold orders, delivered Secrets and
    credential orders, while every projected child lives on the management cluster)."""
    return tuple(k for k in KINDS if k.scopes(cluster))


def _meta(obj: Any) -> Mapping[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def order_key(namespace: str, name: str) -> str:
    return "%s/%s" % (namespace, name)


def control_plane_of(order: Any) -> Tuple[str, str]:
    """(namespace, name) of an order's ControlPlane; the namespace defaults to the order's."""
    ref = _dig(order, "spec", "controlPlaneRef")
    ref = ref if isinstance(ref, Mapping) else {}
    return (_str(ref.get("namespace")) or _str(_meta(order).get("namespace")), _str(ref.get("name")))


def self_written(obj: Any, field_manager: str) -> bool:
    """True when the newest ``managedFields`` entries (there may be several with the same second) all
    belong to ``field_manager``: the last change was the pass's own write."""
    entries = [e for e in (_meta(obj).get("managedFields") or []) if isinstance(e, Mapping)]
    if not entries or not field_manager:
        return False
    newest = max(_str(e.get("time")) for e in entries)
    latest = [e for e in entries if _str(e.get("time")) == newest]
    return all(e.get("manager") == field_manager for e in latest)


def managed_entries(obj: Any) -> frozenset:
    """``(manager, operation, subresource, time)`` of every ``managedFields`` entry."""
    return frozenset((_str(e.get("manager")), _str(e.get("operation")), _str(e.get("subresource")),
                      _str(e.get("time"))) for e in (_meta(obj).get("managedFields") or []) if isinstance(e, Mapping))


def written_by(previous: Optional[frozenset], obj: Any, field_manager: str) -> bool:
    """Whether the change from the state with ``managedFields`` entries ``previous`` to ``obj`` was a write of
    ``field_manager``: every entry that is new or has a new time is ours. A change that moved no entry (a
    deletion setting ``deletionTimestamp``, a write within the same second) is never taken for ours. Without
    a previous state: the newest entries are all ours (``self_written``)."""
    if previous is None:
        return self_written(obj, field_manager)
    moved = managed_entries(obj) - previous
    return bool(moved) and bool(field_manager) and all(entry[0] == field_manager for entry in moved)


def fingerprint(kind: Kind, obj: Any) -> str:
    """A digest of what the pass reads of ``obj``."""
    if not isinstance(obj, Mapping):
        return ""
    data = dict(obj)
    meta = dict(_meta(obj))
    for key in ("resourceVersion", "managedFields"):
        meta.pop(key, None)
    data["metadata"] = meta
    if kind is KEYSTONEUSER:
        data.pop("status", None)
    elif isinstance(data.get("status"), Mapping):
        status = dict(data["status"])
        status.pop("refreshTime", None)
        data["status"] = status
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def control_plane_parts(obj: Any) -> Tuple[str, frozenset]:
    """A ControlPlane as (digest of everything but ``spec.namespaceAssignments`` and ``metadata.generation``,
    the set of its assignment entries): onboarding a namespace concerns the orders in that namespace only."""
    data = dict(obj) if isinstance(obj, Mapping) else {}
    spec = dict(data.get("spec")) if isinstance(data.get("spec"), Mapping) else {}
    entries = spec.pop("namespaceAssignments", None)
    entries = entries if isinstance(entries, list) else []
    meta = dict(_meta(obj))
    meta.pop("generation", None)
    data.update(spec=spec, metadata=meta)
    return (fingerprint(CONTROLPLANE, data),
            frozenset(json.dumps(e, sort_keys=True) for e in entries if isinstance(e, Mapping)))


def _entry_namespace(entry: str) -> str:
    return _str(json.loads(entry).get("namespace"))


class OrderIndex:
    """Orders seen by the KeystoneUser watches: ``(cluster, namespace, name) -> (cp namespace, cp name)``."""

    def __init__(self):
        self._cp: Dict[Tuple[str, str, str], Tuple[str, str]] = {}

    def put(self, cluster: str, order: Any) -> None:
        meta = _meta(order)
        self._cp[(cluster, _str(meta.get("namespace")), _str(meta.get("name")))] = control_plane_of(order)

    def drop(self, cluster: str, order: Any) -> None:
        meta = _meta(order)
        self._cp.pop((cluster, _str(meta.get("namespace")), _str(meta.get("name"))), None)

    def clear(self, cluster: Optional[str] = None, namespace: str = "") -> None:
        """Every order, a cluster's, or (``namespace`` given) one namespace's of a cluster."""
        if cluster is None:
            self._cp.clear()
        else:
            for key in [k for k in self._cp if k[0] == cluster and (not namespace or k[1] == namespace)]:
                del self._cp[key]

    def naming(self, cp_namespace: str, cp_name: str) -> Set[str]:
        return {order_key(ns, name) for (_cluster, ns, name), cp in self._cp.items() if cp == (cp_namespace, cp_name)}

    def __len__(self) -> int:
        return len(self._cp)


class EventMapper:
    """Turns watch events into the set of orders they concern, dropping the ones that change nothing.

    Keeps, per ``(cluster, kind, namespace, uid)``, the fingerprint and the orders of the last state it saw (the
    namespace in the key lets one namespace's watch relist without touching another's).
    ``namespaces`` (empty = all) limits the orders to those the controller reconciles.
    """

    def __init__(self, field_manager: str, namespaces: Iterable[str] = ()):
        self.field_manager = field_manager
        self.namespaces = frozenset(namespaces or ())
        self.index = OrderIndex()
        # (cluster, kind, namespace, uid) -> (fingerprint, orders, managedFields entries) of the last state seen
        self._seen: Dict[Tuple[str, str, str, str], Tuple[str, frozenset, frozenset]] = {}

    # ------------------------------------------------------------------------------------------
    def keys_of(self, kind: Kind, obj: Any) -> Set[str]:
        """The orders one object state concerns (before the namespace filter)."""
        meta = _meta(obj)
        namespace, name = _str(meta.get("namespace")), _str(meta.get("name"))
        if kind is KEYSTONEUSER:
            return {order_key(namespace, name)} if name else set()
        if kind is CONTROLPLANE:
            return self.index.naming(namespace, name)
        if kind in (ROLE_ASSIGNMENT, APP_CREDENTIAL):
            user = _str(_dig(obj, "spec", "userRef", "name"))
            return {order_key(namespace, user)} if user else set()
        labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
        order_name = _str(labels.get(LABEL_NAME))
        if not order_name:
            return set()
        return {order_key(_str(labels.get(LABEL_NAMESPACE)) or namespace, order_name)}

    def _filter(self, keys: Iterable[str]) -> Set[str]:
        if not self.namespaces:
            return set(keys)
        return {k for k in keys if k.split("/", 1)[0] in self.namespaces}

    @staticmethod
    def _uid(cluster: str, kind: Kind, obj: Any) -> Tuple[str, str, str, str]:
        meta = _meta(obj)
        namespace = _str(meta.get("namespace"))
        return (cluster, kind.key, namespace, _str(meta.get("uid")) or "%s/%s" % (namespace, _str(meta.get("name"))))

    # ------------------------------------------------------------------------------------------
    def seed(self, cluster: str, kind: Kind, items: Iterable[Any], namespace: str = "") -> None:
        """A (re)list of one watch - across the cluster, or of one ``namespace``: remember every object's state
        without emitting anything."""
        self.forget(cluster, kind, namespace)
        for obj in items:
            if kind is KEYSTONEUSER:
                self.index.put(cluster, obj)
            if kind is CONTROLPLANE:
                self._seen[self._uid(cluster, kind, obj)] = control_plane_parts(obj) + (managed_entries(obj),)
                continue
            self._seen[self._uid(cluster, kind, obj)] = (fingerprint(kind, obj), frozenset(self.keys_of(kind, obj)),
                                                         managed_entries(obj))

    def forget(self, cluster: Optional[str] = None, kind: Optional[Kind] = None, namespace: str = "") -> None:
        """Drop cached states: all (leadership lost: the next leader term starts from fresh lists), a cluster's, or
        one kind's of a cluster, optionally of one namespace (a watch stopped or about to relist)."""
        if cluster is None:
            self._seen.clear()
            self.index.clear()
            return
        for key in [k for k in self._seen if k[0] == cluster and (kind is None or k[1] == kind.key)
                    and (not namespace or k[2] == namespace)]:
            del self._seen[key]
        if kind is None or kind is KEYSTONEUSER:
            self.index.clear(cluster, namespace)

    def handle(self, cluster: str, kind: Kind, event_type: str, obj: Any) -> Set[str]:
        """The orders an ADDED / MODIFIED / DELETED event concerns; empty when it changes nothing."""
        uid = self._uid(cluster, kind, obj)
        previous = self._seen.get(uid)
        if kind is KEYSTONEUSER:
            if event_type == "DELETED":
                self.index.drop(cluster, obj)
            else:
                self.index.put(cluster, obj)
        if kind is CONTROLPLANE:
            return self._control_plane(uid, event_type, obj, previous)
        keys = frozenset(self.keys_of(kind, obj))
        if event_type == "DELETED":
            self._seen.pop(uid, None)
            return self._filter(keys | (previous[1] if previous else frozenset()))
        digest = fingerprint(kind, obj)
        self._seen[uid] = (digest, keys, managed_entries(obj))
        if written_by(previous[2] if previous else None, obj, self.field_manager):
            return set()
        if previous is not None and not kind.metadata_only and previous[0] == digest:
            return set()
        return self._filter(keys | (previous[1] if previous else frozenset()))

    def _control_plane(self, uid, event_type: str, obj: Any, previous) -> Set[str]:
        """Every order naming the ControlPlane (looked up now: the index is always current), or, when only
        ``spec.namespaceAssignments`` changed, the orders in the namespaces whose entries changed."""
        orders = self.keys_of(CONTROLPLANE, obj)
        if event_type == "DELETED":
            self._seen.pop(uid, None)
            return self._filter(orders)
        digest, entries = control_plane_parts(obj)
        self._seen[uid] = (digest, entries, managed_entries(obj))
        if written_by(previous[2] if previous else None, obj, self.field_manager):
            return set()
        if previous is None or previous[0] != digest:
            return self._filter(orders)
        changed = {_entry_namespace(e) for e in previous[1] ^ entries}
        return self._filter(k for k in orders if k.split("/", 1)[0] in changed)
