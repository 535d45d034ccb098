# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The finalizer and the patient / fail-open teardown every order kind shares.

docs/reconciler.md "Teardown" (the object-storage kinds likewise): the kind's finalizer is installed once
the order is admitted, before anything is created; an order without it goes at once. Deleting an order that carries
it runs the teardown: holds first (each kind names its own), then the children are deleted.
- Patient while the ControlPlane exists: the finalizer is held until no child is listed any more, so the
  controllers behind the children (K-ORC, ESO) can clear the systems behind them first.
- Fail open once the ControlPlane is gone: the finalizer is released FIRST in the same pass, then the deletes are
  sent, whatever their outcome (a failing delete cannot keep the order alive).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderIdentity
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import LEG_ORDER, Action, Delete, MergePatch
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    dig,
    is_deleting,
    kind_of,
    name_of,
    namespace_of,
    text,
    uid_of,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrets import ORDER_API_VERSION


def finalizer_patch(kind: str, finalizer: str, identity: OrderIdentity, cluster: str, add: bool) -> MergePatch:
    """Add or remove ``finalizer``; the resourceVersion precondition guards the whole-list replace."""
    others = [f for f in identity.finalizers if f != finalizer]
    finalizers = [*identity.finalizers, finalizer] if add else others
    return MergePatch(
        kind=kind, api_version=ORDER_API_VERSION, namespace=identity.namespace, name=identity.name,
        cluster=cluster, leg=LEG_ORDER,
        why="install the teardown finalizer" if add else "teardown done: release the finalizer",
        patch={"metadata": {"finalizers": finalizers}}, resource_version=identity.resource_version,
    )


def referencing(objects: Optional[Sequence[Mapping[str, Any]]], order_name: str,
                path: Tuple[str, ...] = ("spec", "userRef", "name")) -> Tuple[str, ...]:
    """Names of the objects that name the order at ``path`` (None = the kind is not served)."""
    if objects is None:
        return ()
    return tuple(sorted(name_of(o) for o in objects if dig(o, *path) == order_name))


def delete_action(obj: Mapping[str, Any], cluster: str, leg: str, why: str = "teardown") -> Delete:
    return Delete(kind=kind_of(obj), api_version=text(obj.get("apiVersion")), namespace=namespace_of(obj),
                  name=name_of(obj), cluster=cluster, leg=leg, why=why, uid=uid_of(obj) or None)


@dataclass(frozen=True)
class Doomed:
    """One object the teardown deletes: where it lives and which leg its failure belongs to."""

    obj: Mapping[str, Any]
    cluster: str
    leg: str


@dataclass(frozen=True)
class TeardownStep:
    actions: List[Action]
    released: bool           # the finalizer goes in this pass
    waiting_for: Tuple[str, ...]  # "<Kind> <name>" of the children still listed (patient teardown)


def delete_children(kind: str, finalizer: str, identity: OrderIdentity, cluster: str,
                    doomed: Sequence[Doomed], control_plane_exists: bool) -> TeardownStep:
    release = finalizer_patch(kind, finalizer, identity, cluster, add=False)
    deletes: List[Action] = [delete_action(d.obj, d.cluster, d.leg) for d in doomed if not is_deleting(d.obj)]
    if not control_plane_exists:
        return TeardownStep([release, *deletes], True, ())
    if not doomed:
        return TeardownStep([release], True, ())
    return TeardownStep(deletes, False, tuple(f"{kind_of(d.obj)} {name_of(d.obj)}" for d in doomed))
