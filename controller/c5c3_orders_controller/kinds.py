"""The resource types the controller watches, and where (pure: no I/O).

Every watch stream is derived from the collection's order-kind descriptors (``plugins/module_utils/orders/kinds/``,
loaded through ``collection.py``): the controller declares no resource, label or scope of its own. Per order kind,
in the registry's order (KeystoneUser, BucketCredential, ObjectStore, ObjectStoreAccount):

- its own objects: one stream, where the descriptor says they are read;
- each of its children: one stream selected by the child's name label (``c5c3.io/<kind>-name``);
- each related kind (the ControlPlane, KeystoneRoleAssignments, KeystoneApplicationCredentials, SecretStores): one
  stream, whichever order kinds read it. A related kind that is only cached for a targeted pass's snapshot (the
  SecretStores) never concerns an order (``Kind.triggers`` false).

Where a kind may be watched is the access contract's (docs/install.md, "Permissions"): orders, ControlPlanes and
credential orders across the management cluster; Secrets, K-ORC Users, PushSecrets, SecretStores and the two
object-storage platform kinds only in the namespace of each ControlPlane; Secrets also in each namespace a
ControlPlane assigns; on a target cluster everything per assigned namespace. The descriptors say which.

One resource type may be watched in several streams with different label selectors (the collection's Secrets
carry the KeystoneUser's, the BucketCredential's or the ObjectStoreAccount's name label, and a label selector cannot
say "any of these keys"), so a Kind's ``key`` names the stream and ``shown`` the resource in log lines ("event
MODIFIED Secret t/x-s3"). A child stream's key is its resource's kind for the first order kind with such children
(the KeystoneUser's ``Secret``, ``User``, ``PushSecret``: the names the streams always had), else
``<Kind>.<order kind in lower case>`` (``Secret.bucketcredential``). ``origin_of`` says what a stream was derived
from, and through it the descriptor's reference extractors (mapping.py, storagemap.py).
"""
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from .collection import Child, OrderKind, Related, order_kinds, resources

Ref = Tuple[str, str]  # (namespace, name)

C5C3 = resources.C5C3

# Where a kind is watched on a cluster:
CLUSTER = order_kinds.CLUSTER                  # one watch across all namespaces
CONTROLPLANE_NS = order_kinds.CONTROLPLANE_NS  # one watch in the namespace of each ControlPlane
ASSIGNED_NS = order_kinds.ASSIGNED_NS          # one watch in each namespace a ControlPlane assigns on this cluster

# Which pass reconciles an order kind (the reconcile role's c5c3_reconcile_kinds).
KEYSTONEUSER_PASS = order_kinds.KEYSTONEUSER_PASS
OBJECTSTORAGE_PASS = order_kinds.OBJECTSTORAGE_PASS


class Kind(NamedTuple):
    """A watch stream's resource type, its scopes on the management cluster and on a target cluster (empty: not
    watched there), and whether its events can concern an order at all (``triggers``; a SecretStore is watched
    only so that a targeted pass can read it from the controller's cache)."""

    key: str                 # names the stream in logs, metrics and WatchKeys
    api_version: str
    plural: str
    label_selector: str = ""
    metadata_only: bool = False
    management: Tuple[str, ...] = (CLUSTER,)
    target: Tuple[str, ...] = ()
    shown: str = ""          # the resource's kind in log lines (default: key)
    triggers: bool = True

    @property
    def display(self) -> str:
        return self.shown or self.key

    def collection_path(self, namespace: str = "") -> str:
        prefix = "/api/v1" if self.api_version == "v1" else "/apis/" + self.api_version
        return prefix + ("/namespaces/" + namespace if namespace else "") + "/" + self.plural

    def scopes(self, cluster: str) -> Tuple[str, ...]:
        return self.management if cluster == "" else self.target


class Origin(NamedTuple):
    """What a stream was derived from: an order kind's own objects (``child`` and ``related`` None), one of its
    children, or a related kind (``order``: the first order kind reading it). All None: a stream no descriptor
    declares (the shard Leases)."""

    order: Optional[OrderKind] = None
    child: Optional[Child] = None
    related: Optional[Related] = None

    def orders_of(self, obj: Any) -> Tuple[Ref, ...]:
        """The orders (of ``order``'s kind) an object names by itself: an order its own, a child its owner labels'
        order, a related object the orders it names (a KeystoneRoleAssignment's ``spec.userRef.name``). Orders
        found through an index (the orders naming a ControlPlane, the credentials on a store) are not included."""
        if self.related is not None:
            return self.related.names(obj) if self.related.names is not None else ()
        if self.child is not None:
            return self.child.orders_of(obj)
        if self.order is not None:
            return self.order.orders_of(obj)
        return ()


def _derive() -> Tuple[Dict[str, Kind], Dict[str, Origin], Dict[str, Tuple[Kind, ...]]]:
    streams: Dict[str, Kind] = {}
    origins: Dict[str, Origin] = {}
    groups: Dict[str, List[Kind]] = {}

    def add(kind: Kind, origin: Origin, pass_name: str) -> None:
        if kind.key not in streams:
            streams[kind.key] = kind
            origins[kind.key] = origin
        elif streams[kind.key] != kind:
            raise ValueError("two descriptors declare the stream %s differently" % kind.key)
        group = groups.setdefault(pass_name, [])
        if streams[kind.key] not in group:
            group.append(streams[kind.key])

    for order in order_kinds.ORDER_KINDS:
        res = order.resource
        add(Kind(res.kind, res.api_version, res.plural, management=order.management, target=order.target),
            Origin(order), order.pass_name)
        for child in order.children:
            res = child.resource
            key = res.kind if res.kind not in streams else "%s.%s" % (res.kind, order.kind.lower())
            add(Kind(key, res.api_version, res.plural, label_selector=child.name_label,
                     metadata_only=child.metadata_only, management=child.management, target=child.target,
                     shown="" if key == res.kind else res.kind),
                Origin(order, child), order.pass_name)
        for related in order.related:
            res = related.resource
            known = origins.get(res.kind)
            if known is not None and known.related is None:
                raise ValueError("the related kind %s has the key of a stream of orders or children" % res.kind)
            add(Kind(res.kind, res.api_version, res.plural, management=related.management, target=related.target,
                     triggers=not related.cached_only),
                Origin(order, related=related), order.pass_name)
    return streams, origins, {name: tuple(kinds) for name, kinds in groups.items()}


_STREAMS, ORIGINS, PASS_KINDS = _derive()
KINDS: Tuple[Kind, ...] = tuple(_STREAMS.values())
BY_KEY = {k.key: k for k in KINDS}


def origin_of(kind: Kind) -> Origin:
    """What a stream was derived from (``Origin()`` for one no descriptor declares)."""
    origin = ORIGINS.get(kind.key)
    return origin if origin is not None and BY_KEY[kind.key] == kind else Origin()


def stream_of(order: OrderKind, resource: Optional[resources.Resource] = None) -> Kind:
    """The stream of an order kind's objects, or (``resource``) of its children of that resource."""
    for key, origin in ORIGINS.items():
        if origin.order is order and origin.related is None and \
                (origin.child.resource if origin.child is not None else None) == resource:
            return BY_KEY[key]
    raise KeyError("no stream of %s %s" % (order.kind, resource.kind if resource is not None else ""))


def related_stream(resource: resources.Resource) -> Kind:
    """The stream of a related kind (one, whichever order kinds read it)."""
    origin = ORIGINS.get(resource.kind)
    if origin is None or origin.related is None:
        raise KeyError("no related stream of %s" % resource.kind)
    return BY_KEY[resource.kind]


def _child(order: OrderKind, resource: resources.Resource) -> Child:
    return next(child for child in order.children if child.resource == resource)


# The streams by name (the modules and tests that import them by name).
KEYSTONEUSER = stream_of(order_kinds.KEYSTONEUSER)
SECRET = stream_of(order_kinds.KEYSTONEUSER, resources.SECRET)
KORC_USER = stream_of(order_kinds.KEYSTONEUSER, resources.KORC_USER)
PUSHSECRET = stream_of(order_kinds.KEYSTONEUSER, resources.PUSHSECRET)
CONTROLPLANE = related_stream(resources.CONTROLPLANE)
ROLE_ASSIGNMENT = related_stream(resources.ROLE_ASSIGNMENT)
APP_CREDENTIAL = related_stream(resources.APP_CREDENTIAL)
SECRETSTORE = related_stream(resources.SECRETSTORE)
BUCKETCREDENTIAL = stream_of(order_kinds.BUCKETCREDENTIAL)
OBJECTSTORE = stream_of(order_kinds.OBJECTSTORE)
OBJECTSTOREACCOUNT = stream_of(order_kinds.OBJECTSTOREACCOUNT)
BC_SECRET = stream_of(order_kinds.BUCKETCREDENTIAL, resources.SECRET)
BC_PUSHSECRET = stream_of(order_kinds.BUCKETCREDENTIAL, resources.PUSHSECRET)
ACCOUNT_SECRET = stream_of(order_kinds.OBJECTSTOREACCOUNT, resources.SECRET)
ACCOUNT_PUSHSECRET = stream_of(order_kinds.OBJECTSTOREACCOUNT, resources.PUSHSECRET)

# The owner labels, as the descriptors declare them.
LABEL_NAME = _child(order_kinds.KEYSTONEUSER, resources.SECRET).name_label
LABEL_NAMESPACE = _child(order_kinds.KEYSTONEUSER, resources.SECRET).namespace_label
LABEL_CLUSTER = _child(order_kinds.KEYSTONEUSER, resources.SECRET).cluster_label
NAME_KEY_LABEL = _child(order_kinds.KEYSTONEUSER, resources.KORC_USER).index_labels[0]
BC_LABEL_NAME = _child(order_kinds.BUCKETCREDENTIAL, resources.SECRET).name_label
BC_LABEL_NAMESPACE = _child(order_kinds.BUCKETCREDENTIAL, resources.SECRET).namespace_label
ACCOUNT_LABEL = _child(order_kinds.OBJECTSTOREACCOUNT, resources.SECRET).name_label

# The streams of each order kind's own objects (their status is written by the pass alone), and of each pass.
ORDER_STREAMS: Tuple[Kind, ...] = tuple(BY_KEY[key] for key, origin in ORIGINS.items()
                                        if origin.order is not None and origin.child is None and origin.related is None)
KEYSTONEUSER_KINDS = PASS_KINDS[KEYSTONEUSER_PASS]
OBJECTSTORAGE_KINDS = PASS_KINDS[OBJECTSTORAGE_PASS]


def kinds_for(cluster: str):
    """The kinds watched on a cluster ("" = management; target clusters hold orders, delivered Secrets and
    credential orders, while every projected child lives on the management cluster)."""
    return tuple(k for k in KINDS if k.scopes(cluster))
