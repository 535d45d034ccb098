# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""One owner per Keystone user: which order may provision a user name on a ControlPlane.

docs/keystoneuser-crd.md "Consent" (one Keystone user per name) and its ServiceAccountCollision row of "Conditions";
docs/reconciler.md "One owner per Keystone user". Keystone holds one
user per (domain, folded name), and every order of a ControlPlane creates its user in that ControlPlane's admin
domain, so two orders whose user names fold alike would share one user: each one's rotation would break the other,
and either one's teardown would delete it under the other. So, among the orders on one ControlPlane whose names
fold alike (``foldnames.fold``), on any cluster:

1. an order that owns the user (its managed K-ORC User exists) keeps it, whatever is created later;
2. while another order owns it, nobody else may touch it (the owner's User stays even while it is torn down);
3. otherwise the admitted, not-deleted orders are ranked by creationTimestamp, then uid: only the first may probe
   and provision; the others report ServiceAccountCollision and never touch the user.

When replicas of the controller decide the orders of different namespaces side by side (``shards``), rule 3 is
decided by each from its own full list of the orders. An order created later than another ranks after it, so the
rankings agree once every order created up to the same second is visible: a new claim waits until its order is
``CLAIM_SETTLE`` old at the time the orders were listed (``settle_wait``), and no two replicas both see themselves
first.

The message never names the other order: it lives in another tenant's namespace.

The managed K-ORC User carries the label ``c5c3.io/keystoneuser-name-key`` (a digest of the folded name), so a
pass limited to a few orders still finds every owner of their names with one narrow list.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.foldnames import fold
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import refs_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import ControlPlaneView
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import (
    OrderIdentity,
    OrderSpecError,
    parse_identity,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import NO_MARKS, TenantMarks, admit_marked

LATEST = datetime.max.replace(tzinfo=timezone.utc)
NAME_KEY_LABEL = "c5c3.io/keystoneuser-name-key"
# creationTimestamp has whole seconds; the rest covers a replica's clock running ahead of the API server's
CLAIM_SETTLE = timedelta(seconds=5)


def name_key(user_name: str) -> str:
    """The label value standing for a folded user name (a label value cannot hold any name)."""
    return hashlib.sha256(fold(user_name).encode("utf-8")).hexdigest()[:40]


def claim_key(order: Any, cluster: str) -> Tuple[str, str, str]:
    """(ControlPlane namespace, ControlPlane name, folded user name): orders with one key meet on one user."""
    refs = refs_of(order, cluster)
    return refs.cp_namespace, refs.cp_name, fold(refs.user_name)


def _rank(identity: OrderIdentity) -> Tuple[datetime, str]:
    return timestamps.parse(identity.created) or LATEST, identity.uid


def _contender(cluster: str, order: Mapping[str, Any], cp: ControlPlaneView,
               marks: TenantMarks) -> Optional[OrderIdentity]:
    """The rival's identity when it competes for the name: admitted on this ControlPlane (its namespace marked, when
    the pass read the marks: a frozen order in an unmarked namespace holds no name) and not being deleted."""
    try:
        identity = parse_identity(order)
    except OrderSpecError:
        return None
    if identity.deleting:
        return None
    if admit_marked(identity.namespace, cluster, cp.namespace, cp.name, cp, marks) is not None:
        return None
    return identity


def taken_by_another(me: OrderIdentity, cluster: str, owns: bool, cp: ControlPlaneView,
                     rivals: Sequence[Tuple[str, Mapping[str, Any]]],
                     owners: Sequence[Tuple[str, str, str]], marks: TenantMarks = NO_MARKS) -> bool:
    """True when another order owns the name or ranks before ``me``; ``owns``: my managed User exists."""
    if owns:
        return False
    mine = (cluster, me.namespace, me.name)
    if any(owner != mine for owner in owners):
        return True
    my_rank = _rank(me)
    for rival_cluster, rival in rivals:
        identity = _contender(rival_cluster, rival, cp, marks)
        if identity is None or (rival_cluster, identity.namespace, identity.name) == mine:
            continue
        if _rank(identity) < my_rank:
            return True
    return False


def settle_wait(me: OrderIdentity, orders_listed_at: Optional[datetime]) -> Optional[timedelta]:
    """How long a new claim still waits before its ranking is final; None: it need not (or no longer) wait.

    ``orders_listed_at``: when the pass listed every rival order on every cluster, given only when replicas decide
    concurrently (None otherwise: a single pass sees every order it ranks against)."""
    if orders_listed_at is None:
        return None
    created = timestamps.parse(me.created)
    if created is None:
        return None
    wait = created + CLAIM_SETTLE - orders_listed_at
    return wait if wait > timedelta(0) else None
