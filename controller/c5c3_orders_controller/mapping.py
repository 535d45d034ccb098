"""Which orders a watch event concerns (pure: no I/O, no clock).

KeystoneUser orders are named ``<namespace>/<name>``, the form the reconcile role's ``c5c3_reconcile_orders``
takes (the module applies it on every cluster); the object-storage kinds carry their kind in the key
(``keys.py``) and are mapped by ``storagemap.py``. A KeystoneUser event maps to orders as follows:

- a KeystoneUser: the order itself;
- a delivered Secret, or a K-ORC User, Secret or PushSecret the pass projected: its
  ``c5c3.io/keystoneuser-name`` / ``-namespace`` labels (the object's namespace when the namespace label is
  missing, which never happens for objects the pass wrote);
- a ControlPlane: every order it is the ControlPlane of - the one the order's admission record names, else its
  ``spec.controlPlaneRef``, as the pass finds it (``keystoneuser.record.refs_of``) - from the index the
  KeystoneUser watches keep, and its ObjectStores with what is on them - or, when only
  ``spec.namespaceAssignments`` changed, those orders and BucketCredentials in the namespaces whose entries changed
  (onboarding a tenant does not cost a pass over every order);
- a KeystoneRoleAssignment or KeystoneApplicationCredential: ``spec.userRef.name`` in its namespace.

Which labels name an order and which reference leads where is the KeystoneUser descriptor's
(``plugins/module_utils/orders/kinds/keystoneuser.py``); each stream's ``kinds.origin_of`` hands its extractor.

A MODIFIED event maps to the orders of the object's old *and* new state (a label or reference that moved
concerns both orders).

Events that cannot change a decision are dropped, so the pass's own writes never wake the controller
(a converged stack stays idle):

- the pass's own writes: every ``metadata.managedFields`` entry the change added or re-timed belongs to our
  field manager (a change that moved no entry, such as a deletion setting ``deletionTimestamp``, is never
  taken for ours);
- nothing the pass reads changed: a fingerprint of the object without ``resourceVersion``,
  ``managedFields`` and fields that move on their own (a PushSecret's ``status.refreshTime``, every
  ``status`` of an order or object-storage object - the pass writes it) equals the cached one. Secrets are watched as
  metadata only (their data never reaches the controller), so for them only the first rule applies.

DELETED events always count. Kinds watched only for the snapshot cache (``Kind.triggers`` false: SecretStores)
never name an order.
"""
import hashlib
import json
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Set, Tuple

from . import keys as K
from .collection import dig, is_mapping, order_kinds, text as _str
# the kinds were defined here first and are re-exported for older imports
from .kinds import (  # noqa: F401 pylint: disable=unused-import
    APP_CREDENTIAL,
    ASSIGNED_NS,
    CLUSTER,
    CONTROLPLANE,
    CONTROLPLANE_NS,
    KEYSTONEUSER,
    KINDS,
    KORC_USER,
    LABEL_NAME,
    LABEL_NAMESPACE,
    ORDER_STREAMS,
    PUSHSECRET,
    ROLE_ASSIGNMENT,
    SECRET,
    Kind,
    kinds_for,
    origin_of,
)
from .storagemap import STORAGE_KINDS, StorageIndex, storage_keys

# kinds whose status only the pass writes: a status change is never a reason for a pass
STATUS_BY_THE_PASS = ORDER_STREAMS


def _meta(obj: Any) -> Mapping[str, Any]:
    meta = dig(obj, "metadata")
    return meta if is_mapping(meta) else {}


def order_key(namespace: str, name: str) -> str:
    """A KeystoneUser's key (``keys.order_key`` names the other kinds)."""
    return K.order_key(namespace, name)


def control_plane_of(order: Any) -> Tuple[str, str]:
    """(namespace, name) of a KeystoneUser's ControlPlane as the pass finds it: the one its admission record names,
    else its ``spec.controlPlaneRef`` (the namespace defaulting to the order's)."""
    return order_kinds.KEYSTONEUSER.refers_to(order_kinds.CONTROL_PLANE_REF, order)


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
    if kind in STATUS_BY_THE_PASS:
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
    spec = dict(data["spec"]) if isinstance(data.get("spec"), Mapping) else {}
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
    ``namespaces`` (empty = all) limits the orders to those the controller reconciles; ``accept(namespace)`` (the
    shards a replica holds) narrows them further.
    """

    def __init__(self, field_manager: str, namespaces: Iterable[str] = ()):
        self.field_manager = field_manager
        self.namespaces = frozenset(namespaces or ())
        self.accept: Optional[Callable[[str], bool]] = None  # which namespaces' shares this replica holds
        self.index = OrderIndex()
        self.storage = StorageIndex()
        # (cluster, kind, namespace, uid) -> (fingerprint, orders, managedFields entries) of the last state seen
        self._seen: Dict[Tuple[str, str, str, str], Tuple[str, frozenset, frozenset]] = {}

    # ------------------------------------------------------------------------------------------
    def keys_of(self, kind: Kind, obj: Any, cluster: str = "") -> Set[str]:
        """The orders one object state concerns (before the namespace filter)."""
        if not kind.triggers:
            return set()
        if kind is CONTROLPLANE:
            meta = _meta(obj)
            namespace, name = _str(meta.get("namespace")), _str(meta.get("name"))
            return self.index.naming(namespace, name) | self.storage.of_control_plane((namespace, name))
        origin = origin_of(kind)
        if origin.order is not order_kinds.KEYSTONEUSER:
            return storage_keys(self.storage, cluster, kind, obj)
        # the order itself, a child's owner labels, a role assignment's or application credential's userRef
        return {order_key(namespace, name) for namespace, name in origin.orders_of(obj)}

    def wanted(self, key: str) -> bool:
        parsed = K.parse(key)
        if self.namespaces and parsed.namespace not in self.namespaces:
            return False
        return self.accept is None or self.accept(self.share_namespace(parsed))

    def share_namespace(self, key: K.Key) -> str:
        """The namespace whose share decides who reconciles an object: its own, but a BucketCredential's store's
        (one replica decides everything on a store, as the object-storage pass's shards option says)."""
        if key.kind == K.BUCKETCREDENTIAL:
            store = self.storage.store_of(key.namespace, key.name)
            if store is not None:
                return store[0]
        return key.namespace

    def filter_keys(self, keys: Iterable[str]) -> Set[str]:
        return {k for k in keys if self.wanted(k)}

    @staticmethod
    def _uid(cluster: str, kind: Kind, obj: Any) -> Tuple[str, str, str, str]:
        meta = _meta(obj)
        namespace = _str(meta.get("namespace"))
        return (cluster, kind.key, namespace, _str(meta.get("uid")) or "%s/%s" % (namespace, _str(meta.get("name"))))

    def _index(self, cluster: str, kind: Kind, event_type: str, obj: Any) -> None:
        if kind is KEYSTONEUSER:
            if event_type == "DELETED":
                self.index.drop(cluster, obj)
            else:
                self.index.put(cluster, obj)
        elif kind in STORAGE_KINDS:
            if event_type == "DELETED":
                self.storage.drop(cluster, kind, obj)
            else:
                self.storage.put(cluster, kind, obj)

    # ------------------------------------------------------------------------------------------
    def seed(self, cluster: str, kind: Kind, items: Iterable[Any], namespace: str = "") -> None:
        """A (re)list of one watch - across the cluster, or of one ``namespace``: remember every object's state
        without emitting anything."""
        self.forget(cluster, kind, namespace)
        items = list(items)
        for obj in items:
            self._index(cluster, kind, "LIST", obj)
        for obj in items:
            if kind is CONTROLPLANE:
                self._seen[self._uid(cluster, kind, obj)] = control_plane_parts(obj) + (managed_entries(obj),)
                continue
            self._seen[self._uid(cluster, kind, obj)] = (fingerprint(kind, obj),
                                                         frozenset(self.keys_of(kind, obj, cluster)),
                                                         managed_entries(obj))

    def forget(self, cluster: Optional[str] = None, kind: Optional[Kind] = None, namespace: str = "") -> None:
        """Drop cached states: all (leadership lost: the next leader term starts from fresh lists), a cluster's, or
        one kind's of a cluster, optionally of one namespace (a watch stopped or about to relist)."""
        if cluster is None:
            self._seen.clear()
            self.index.clear()
            self.storage.clear()
            return
        for key in [k for k in self._seen if k[0] == cluster and (kind is None or k[1] == kind.key)
                    and (not namespace or k[2] == namespace)]:
            del self._seen[key]
        if kind is None or kind is KEYSTONEUSER:
            self.index.clear(cluster, namespace)
        if kind is None or kind in STORAGE_KINDS:
            self.storage.clear(cluster, kind, namespace)

    def handle(self, cluster: str, kind: Kind, event_type: str, obj: Any) -> Set[str]:
        """The orders an ADDED / MODIFIED / DELETED event concerns; empty when it changes nothing."""
        if not kind.triggers:
            return set()
        uid = self._uid(cluster, kind, obj)
        previous = self._seen.get(uid)
        self._index(cluster, kind, event_type, obj)
        if kind is CONTROLPLANE:
            return self._control_plane(uid, event_type, obj, previous)
        keys = frozenset(self.keys_of(kind, obj, cluster))
        if event_type == "DELETED":
            self._seen.pop(uid, None)
            return self.filter_keys(keys | (previous[1] if previous else frozenset()))
        digest = fingerprint(kind, obj)
        self._seen[uid] = (digest, keys, managed_entries(obj))
        if written_by(previous[2] if previous else None, obj, self.field_manager):
            return set()
        if previous is not None and not kind.metadata_only and previous[0] == digest:
            return set()
        return self.filter_keys(keys | (previous[1] if previous else frozenset()))

    def _control_plane(self, uid, event_type: str, obj: Any, previous) -> Set[str]:
        """Every order naming the ControlPlane and its stores with what is on them (looked up now: the indexes are
        always current), or, when only ``spec.namespaceAssignments`` changed, the orders and credentials in the
        namespaces whose entries changed."""
        orders = self.keys_of(CONTROLPLANE, obj)
        if event_type == "DELETED":
            self._seen.pop(uid, None)
            return self.filter_keys(orders)
        digest, entries = control_plane_parts(obj)
        self._seen[uid] = (digest, entries, managed_entries(obj))
        if written_by(previous[2] if previous else None, obj, self.field_manager):
            return set()
        if previous is None or previous[0] != digest:
            return self.filter_keys(orders)
        changed = {_entry_namespace(e) for e in previous[1] ^ entries}
        meta = _meta(obj)
        cp = (_str(meta.get("namespace")), _str(meta.get("name")))
        touched = {k for k in self.index.naming(*cp) if K.namespace_of(k) in changed}
        return self.filter_keys(touched | self.storage.of_control_plane(cp, changed))
