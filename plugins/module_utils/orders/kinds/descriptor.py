# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The shape of an order kind's descriptor (pure: no I/O, no clock).

One ``OrderKind`` per kind the passes reconcile says everything about the kind that is not a rule of its core:

- ``resource``: the order's API resource (``k8s.resources``), and ``pass_name``, the pass that reconciles it (the
  reconcile role's ``c5c3_reconcile_kinds``);
- ``management`` / ``target``: where its objects are read on the management cluster and on a target cluster (empty:
  never there), by the access contract (docs/install.md, "Permissions"): ``CLUSTER`` (across the cluster),
  ``CONTROLPLANE_NS`` (the namespace of each ControlPlane), ``ASSIGNED_NS`` (each namespace a ControlPlane assigns
  on that cluster);
- ``children``: the objects its pass writes for an order and finds again by their owner labels (``Child``);
- ``related``: the other kinds the pass reads for its orders (``Related``): the ControlPlane, a KeystoneRoleAssignment
  naming a user, ...;
- ``references``: what an order names, read as the pass reads it (``Reference``): its ControlPlane, its store, ...;
- ``decide`` / ``on_action_failure``: the core's entry points (a snapshot in, a ``Decision`` out; a failed action
  rewrites the decision).

Every extractor here is pure and never raises, whatever shape an object has: a watch may deliver anything.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple, Type

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import Resource
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import ActionError, Decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import labels_of, name_of, namespace_of, text

Ref = Tuple[str, str]  # (namespace, name)

# Which pass reconciles an order kind (the reconcile role's c5c3_reconcile_kinds).
KEYSTONEUSER_PASS = "keystoneuser"
OBJECTSTORAGE_PASS = "objectstorage"

# Where objects of a kind are read on a cluster:
CLUSTER = "cluster"               # across the cluster
CONTROLPLANE_NS = "controlplane"  # in the namespace of each ControlPlane
ASSIGNED_NS = "assigned"          # in each namespace a ControlPlane assigns on that cluster

Decide = Callable[[Any], Decision]                                  # snapshot -> decision
OnActionFailure = Callable[[Decision, Any, ActionError], Decision]  # (decision, failed action, error) -> decision
Extract = Callable[[Any], Tuple[Ref, ...]]                          # object -> the orders it names
ReadRef = Callable[[Any], Ref]                                      # order -> the pair it names


@dataclass(frozen=True)
class Child:
    """Objects of ``resource`` a pass writes for an order, carrying its owner's labels: ``name_label`` (the order's
    name; what a watch selects on), ``namespace_label`` (the order's namespace; "" = the kind has none, the order
    is in the child's own namespace) and ``cluster_label`` (the order's cluster; "" = none). ``index_labels`` are
    further labels the pass looks children up by (the K-ORC User's name key). ``metadata_only``: read as metadata
    only (a Secret's data never needs to reach a watcher)."""

    resource: Resource
    name_label: str
    namespace_label: str
    cluster_label: str
    management: Tuple[str, ...]
    target: Tuple[str, ...] = ()
    metadata_only: bool = False
    index_labels: Tuple[str, ...] = ()

    @property
    def labels(self) -> Tuple[str, ...]:
        """Every label key the pass reads on such a child, name label first."""
        keys = (self.name_label, self.namespace_label, self.cluster_label) + self.index_labels
        return tuple(key for key in keys if key)

    def owner(self, obj: Any) -> Optional[Ref]:
        """(namespace, name) of the order a child names; its namespace label, else the child's own namespace
        (never missing on what the pass wrote); None without the name label."""
        labels = labels_of(obj)
        name = text(labels.get(self.name_label))
        if not name:
            return None
        namespace = text(labels.get(self.namespace_label)) if self.namespace_label else ""
        return namespace or namespace_of(obj), name

    def orders_of(self, obj: Any) -> Tuple[Ref, ...]:
        owner = self.owner(obj)
        return (owner,) if owner is not None else ()


def tenant_children(labels: Any, middle: Tuple[Child, ...] = ()) -> Tuple[Child, ...]:
    """The children of a tenant's order kind whose ``labels`` (a naming module's ``LabelKeys``) name their owner: its
    Secrets (password or key and source in the ControlPlane's namespace, the delivered one beside the order), the
    kind's own ``middle`` children, and its PushSecret in the ControlPlane's namespace."""
    owner = (labels.name, labels.namespace, labels.cluster)
    return ((Child(R.SECRET, *owner, management=(CONTROLPLANE_NS, ASSIGNED_NS), target=(ASSIGNED_NS,),
                   metadata_only=True),)
            + middle + (Child(R.PUSHSECRET, *owner, management=(CONTROLPLANE_NS,)),))


@dataclass(frozen=True)
class Related:
    """Another kind the pass reads for an order kind, and how one of its objects leads to orders:

    - ``names``: the orders an object names itself (a KeystoneRoleAssignment's ``spec.userRef.name``);
    - ``via``: the name of the order kind's ``Reference`` that points at objects of this kind (the orders naming a
      ControlPlane): an index of the orders finds them;
    - neither, with ``cached_only``: read by a targeted pass (from a cache), an object of it concerns no order.
    """

    resource: Resource
    management: Tuple[str, ...] = (CLUSTER,)
    target: Tuple[str, ...] = ()
    names: Optional[Extract] = None
    via: str = ""
    cached_only: bool = False


@dataclass(frozen=True)
class Reference:
    """Something an order names, read as its pass reads it (never raises): ``name`` (``controlPlane``,
    ``objectStore``, ``tenant``), the ``kind`` it names and ``read(order)``, a (namespace, name) pair - for a
    ``Namespace`` (an account's tenant) a (namespace, cluster) pair."""

    name: str
    kind: str
    read: ReadRef


@dataclass(frozen=True)
class OrderKind:
    """One kind the passes reconcile, declared once (see the module docstring). Every order kind's ``status`` is
    written by its pass alone. ``tenant_order``: tenants order it (it is served on target clusters too); else it
    is the platform's. ``decide`` takes ``snapshot_type`` (each kind has its own snapshot); ``on_action_failure``
    None: the decision stands as decided when an action fails."""

    resource: Resource
    pass_name: str
    tenant_order: bool
    management: Tuple[str, ...]
    target: Tuple[str, ...]
    children: Tuple[Child, ...]
    related: Tuple[Related, ...]
    references: Tuple[Reference, ...]
    snapshot_type: Type[Any]
    decide: Decide
    on_action_failure: Optional[OnActionFailure]

    @property
    def kind(self) -> str:
        return self.resource.kind

    def reference(self, name: str) -> Reference:
        """The reference called ``name``; KeyError when the kind has none."""
        for ref in self.references:
            if ref.name == name:
                return ref
        raise KeyError(f"{self.kind} names no {name}")

    def refers_to(self, name: str, order: Any) -> Ref:
        """What ``order`` names as ``name`` (see ``Reference``)."""
        return self.reference(name).read(order)

    def orders_of(self, obj: Any) -> Tuple[Ref, ...]:
        """An order of this kind names itself (none without a name)."""
        name = name_of(obj)
        return ((namespace_of(obj), name),) if name else ()


# The names of the references (``Reference.name``).
CONTROL_PLANE_REF = "controlPlane"  # a KeystoneUser's or an ObjectStore's ControlPlane
STORE_REF = "objectStore"           # a BucketCredential's or an ObjectStoreAccount's ObjectStore
TENANT_REF = "tenant"               # an ObjectStoreAccount's tenant: (namespace, cluster)

# Related kinds any descriptor may name (one stream each, whichever order kinds read them).
CONTROL_PLANE = Related(R.CONTROLPLANE, management=(CLUSTER,), via=CONTROL_PLANE_REF)
SECRET_STORE = Related(R.SECRETSTORE, management=(CONTROLPLANE_NS,), cached_only=True)  # the backup's store
