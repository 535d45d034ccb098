"""Which object-storage objects an event concerns (pure: no I/O, no clock).

The object-storage pass decides ObjectStores, ObjectStoreAccounts and BucketCredentials in one module call, each
later kind seeing the earlier ones as the pass settled them. An event names the objects whose decision it can
change:

- a BucketCredential: that order;
- an ObjectStore: the store, every account on it and every BucketCredential naming it (a store that turns ready
  unblocks them all);
- an ObjectStoreAccount: the account and its tenant's BucketCredentials on the account's store (on the tenant's
  cluster);
- a Secret or PushSecret labelled ``c5c3.io/bucketcredential-name`` (a child, or the delivered ``<name>-s3``): its
  order, named by that label and ``c5c3.io/bucketcredential-namespace`` (the object's namespace without it);
- one labelled ``c5c3.io/objectstoreaccount-name`` (the root key, its source Secret and PushSecret): the account of
  that name in the object's namespace, and its tenant's credentials on its store (which wait for its key; a
  controller limited to tenant namespaces reconciles the account through them);
- a ControlPlane: the stores naming it and what is on them; when only its assignments changed, the
  BucketCredentials on its stores in the namespaces whose entries changed.

``StorageIndex`` keeps what the watches saw of the three kinds (a store's ControlPlane, an account's store and
tenant, a credential's store) so that a store or account event can be expanded to the objects on it. Each is read
by the reference extractor of the kind's descriptor (``plugins/module_utils/orders/kinds/``), as the pass reads it:
a credential's store is the one its admission record names, else ``spec.objectStoreRef`` (``objectstorage.claim.
store_of``), so the controller and the pass put a credential in the same store's share; a child's order is read
from the owner labels its descriptor declares.
"""
from typing import Any, Dict, Iterable, Optional, Set, Tuple

from . import keys as K
from .collection import name_of, namespace_of, order_kinds
from .kinds import (
    ACCOUNT_PUSHSECRET,
    ACCOUNT_SECRET,
    BC_PUSHSECRET,
    BC_SECRET,
    BUCKETCREDENTIAL,
    OBJECTSTORE,
    OBJECTSTOREACCOUNT,
    ORDER_STREAMS,
    PASS_KINDS,
    Kind,
    origin_of,
)

ObjectKey = Tuple[str, str]  # (namespace, name)
STORAGE_KINDS = tuple(k for k in ORDER_STREAMS if k in PASS_KINDS[order_kinds.OBJECTSTORAGE_PASS])
CREDENTIAL_CHILDREN = (BC_SECRET, BC_PUSHSECRET)
ACCOUNT_CHILDREN = (ACCOUNT_SECRET, ACCOUNT_PUSHSECRET)


def identity(obj: Any) -> ObjectKey:
    return namespace_of(obj), name_of(obj)


def credential_store(order: Any) -> ObjectKey:
    """The ObjectStore a BucketCredential is reconciled against: the one its admission record names, else its spec's
    (the namespace defaulting to the order's, as the CRD's does)."""
    return order_kinds.BUCKETCREDENTIAL.refers_to(order_kinds.STORE_REF, order)


def account_store(account: Any) -> ObjectKey:
    """An account's store: ``spec.objectStoreRef.name`` in the account's own namespace."""
    return order_kinds.OBJECTSTOREACCOUNT.refers_to(order_kinds.STORE_REF, account)


def account_tenant(account: Any) -> Tuple[str, str]:
    """(namespace, cluster) of the tenant an account serves."""
    return order_kinds.OBJECTSTOREACCOUNT.refers_to(order_kinds.TENANT_REF, account)


def store_control_plane(store: Any) -> ObjectKey:
    return order_kinds.OBJECTSTORE.refers_to(order_kinds.CONTROL_PLANE_REF, store)


class StorageIndex:
    """The object-storage objects the watches saw: stores by ControlPlane, accounts by store and tenant, credentials
    by store."""

    def __init__(self) -> None:
        self.stores: Dict[ObjectKey, ObjectKey] = {}                               # store -> its ControlPlane
        self.accounts: Dict[ObjectKey, Tuple[ObjectKey, str, str]] = {}           # account -> (store, tenant ns, cl.)
        self.credentials: Dict[Tuple[str, str, str], ObjectKey] = {}              # (cluster, ns, name) -> store

    def put(self, cluster: str, kind: Kind, obj: Any) -> None:
        if kind is OBJECTSTORE:
            self.stores[identity(obj)] = store_control_plane(obj)
        elif kind is OBJECTSTOREACCOUNT:
            self.accounts[identity(obj)] = (account_store(obj),) + account_tenant(obj)
        elif kind is BUCKETCREDENTIAL:
            self.credentials[(cluster,) + identity(obj)] = credential_store(obj)

    def drop(self, cluster: str, kind: Kind, obj: Any) -> None:
        if kind is OBJECTSTORE:
            self.stores.pop(identity(obj), None)
        elif kind is OBJECTSTOREACCOUNT:
            self.accounts.pop(identity(obj), None)
        elif kind is BUCKETCREDENTIAL:
            self.credentials.pop((cluster,) + identity(obj), None)

    def clear(self, cluster: Optional[str] = None, kind: Optional[Kind] = None, namespace: str = "") -> None:
        """Everything, or one cluster's (optionally one kind's, in one namespace)."""
        def gone(obj_cluster: str, obj_namespace: str) -> bool:
            return cluster is None or (obj_cluster == cluster and (not namespace or obj_namespace == namespace))
        if kind is None or kind is OBJECTSTORE:
            for key in [k for k in self.stores if gone("", k[0])]:
                del self.stores[key]
        if kind is None or kind is OBJECTSTOREACCOUNT:
            for key in [k for k in self.accounts if gone("", k[0])]:
                del self.accounts[key]
        if kind is None or kind is BUCKETCREDENTIAL:
            for credential in [k for k in self.credentials if gone(k[0], k[1])]:
                del self.credentials[credential]

    def store_of(self, namespace: str, name: str) -> Optional[ObjectKey]:
        """The store of a credential ``namespace/name`` on any cluster (a key names no cluster)."""
        for cluster in {k[0] for k in self.credentials}:
            found = self.credentials.get((cluster, namespace, name))
            if found is not None:
                return found
        return None

    # -- expansions -----------------------------------------------------------------------------------------
    def on_store(self, store: ObjectKey) -> Set[str]:
        """The accounts and credentials on a store."""
        found = {K.order_key(ns, name, K.OBJECTSTOREACCOUNT) for (ns, name), entry in self.accounts.items()
                 if entry[0] == store}
        found.update(K.order_key(ns, name, K.BUCKETCREDENTIAL) for (_cl, ns, name), on in self.credentials.items()
                     if on == store)
        return found

    def of_tenant(self, store: ObjectKey, namespace: str, cluster: str) -> Set[str]:
        """A tenant's credentials on a store."""
        return {K.order_key(ns, name, K.BUCKETCREDENTIAL) for (cl, ns, name), on in self.credentials.items()
                if on == store and ns == namespace and cl == cluster}

    def of_control_plane(self, cp: ObjectKey, namespaces: Optional[Iterable[str]] = None) -> Set[str]:
        """The stores of a ControlPlane and what is on them; with ``namespaces``, only the credentials in those
        namespaces (an assignment change admits or refuses those alone)."""
        stores = {key for key, on in self.stores.items() if on == cp}
        if namespaces is not None:
            wanted = set(namespaces)
            return {K.order_key(ns, name, K.BUCKETCREDENTIAL) for (_cl, ns, name), on in self.credentials.items()
                    if on in stores and ns in wanted}
        found = {K.order_key(ns, name, K.OBJECTSTORE) for ns, name in stores}
        for store in stores:
            found |= self.on_store(store)
        return found


def storage_keys(index: StorageIndex, cluster: str, kind: Kind, obj: Any) -> Set[str]:
    """The object-storage objects one object state concerns (``kind`` one of the object-storage kinds)."""
    origin = origin_of(kind)
    order = origin.order
    if order is None or origin.related is not None or order.pass_name != order_kinds.OBJECTSTORAGE_PASS:
        return set()
    if origin.child is not None:  # a child names its owner; an account's, the tenant's credentials on its store too
        found = set()
        for namespace, owner in origin.child.orders_of(obj):
            found.add(K.order_key(namespace, owner, order.kind))
            known = index.accounts.get((namespace, owner)) if kind in ACCOUNT_CHILDREN else None
            if known is not None:
                found |= index.of_tenant(*known)
        return found
    if not order.orders_of(obj):
        return set()
    namespace, name = identity(obj)
    found = {K.order_key(namespace, name, order.kind)}
    if kind is OBJECTSTORE:
        found |= index.on_store((namespace, name))
    elif kind is OBJECTSTOREACCOUNT:
        found |= index.of_tenant(account_store(obj), *account_tenant(obj))
    return found
