"""Deleting an order: holds first, then the children, then the finalizer.

Spec: "Deletion Semantics"; upstream facts section 11 (Teardown). Runs only for an order with
``deletionTimestamp`` set AND our finalizer ``c5c3.io/keystoneuser-teardown`` (an order that never
got past the assignment has none and goes at once). The assignment is not consulted, so a frozen
order tears down the same way.

1. KeystoneRoleAssignments in the order's namespace naming it as ``userRef`` hold the teardown:
   UserReady False/ReferencedByRoleAssignments with their names, nothing deleted, back in 1 minute;
2. then KeystoneApplicationCredentials likewise (ReferencedByApplicationCredentials);
3. delete in order: PushSecret (ESO purges OpenBao), managed User (K-ORC deletes the Keystone user),
   probe, every password Secret, source Secret, the delivered Secret if the order owns it;
4. patient while the ControlPlane exists: the finalizer stays until no child is listed any more,
   so K-ORC and ESO can clear Keystone and OpenBao first (back every 10 s);
5. fail open once the ControlPlane is gone: the finalizer is released FIRST in the same pass, then
   the deletes are sent, whatever their outcome (a failing delete cannot keep the order alive).
"""
from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.children import sort_children
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import (
    DELIVERY_READY,
    USER_READY,
    Verdict,
    verdict_of,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.delivery import is_owned
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import (
    FINALIZER,
    child_labels,
    child_names,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import OrderStatus, StatusFields
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.outcome import Outcome, build_decision
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.plan import (
    LEG_BACKUP,
    LEG_DELIVERED,
    LEG_ORDER,
    LEG_USER,
    Decision,
    DecisionContext,
    Delete,
    MergePatch,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rawobj import (
    dig,
    is_deleting,
    kind_of,
    name_of,
    namespace_of,
    text,
    uid_of,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    HOLD_REASONS,
    REFERENCED_BY_APPLICATION_CREDENTIALS,
    REFERENCED_BY_ROLE_ASSIGNMENTS,
    WAITING_FOR_SERVICE_ACCOUNTS,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.spec import OrderIdentity

ORDER_API_VERSION = "c5c3.io/v1alpha1"


def referencing(objects: Optional[Sequence[Mapping[str, Any]]], order_name: str) -> Tuple[str, ...]:
    """Names of the objects whose ``spec.userRef.name`` is the order (None = kind not served)."""
    if objects is None:
        return ()
    return tuple(sorted(name_of(o) for o in objects if dig(o, "spec", "userRef", "name") == order_name))


def finalizer_patch(identity: OrderIdentity, cluster: str, add: bool) -> MergePatch:
    """Add or remove our finalizer; the resourceVersion precondition guards the whole-list replace."""
    others = [f for f in identity.finalizers if f != FINALIZER]
    finalizers = [*identity.finalizers, FINALIZER] if add else others
    return MergePatch(
        kind="KeystoneUser", api_version=ORDER_API_VERSION, namespace=identity.namespace, name=identity.name,
        cluster=cluster, leg=LEG_ORDER,
        why="install the teardown finalizer" if add else "teardown done: release the finalizer",
        patch={"metadata": {"finalizers": finalizers}}, resource_version=identity.resource_version,
    )


def _delete(obj: Mapping[str, Any], cluster: str, leg: str) -> Delete:
    kind = kind_of(obj)
    api_version = text(obj.get("apiVersion"))
    return Delete(kind=kind, api_version=api_version, namespace=namespace_of(obj), name=name_of(obj),
                  cluster=cluster, leg=leg, why="teardown", uid=uid_of(obj) or None)


def tear_down(snapshot: Snapshot, identity: OrderIdentity, status: OrderStatus) -> Decision:
    summary_identity = {"name": identity.name, "namespace": identity.namespace, "cluster": snapshot.cluster,
                        "deleting": True}
    fields = StatusFields.carried(status)
    previous_user = verdict_of(status.conditions, USER_READY,
                               Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS, "the order is being deleted"))
    previous_delivery = verdict_of(status.conditions, DELIVERY_READY,
                                   Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS, "the order is being deleted"))

    def decision(user: Verdict, actions: List[Any], wait, writes_status: bool = True) -> Decision:
        context = DecisionContext(now=snapshot.now, generation=identity.generation,
                                  secret_name=f"{identity.name}-credentials", previous=status, fields=fields,
                                  user=user, delivery=previous_delivery, writes_status=writes_status)
        return build_decision(context, actions, wait, summary_identity)

    if FINALIZER not in identity.finalizers:
        return decision(previous_user, [], None, writes_status=False)

    holds = (
        (referencing(snapshot.role_assignments, identity.name), REFERENCED_BY_ROLE_ASSIGNMENTS,
         "KeystoneRoleAssignments"),
        (referencing(snapshot.app_credentials, identity.name), REFERENCED_BY_APPLICATION_CREDENTIALS,
         "KeystoneApplicationCredentials"),
    )
    for holders, reason, kind in holds:
        if holders:
            return decision(Verdict(False, reason, (
                f"the order is being deleted, but {kind} in namespace {identity.namespace} still name it as "
                f"userRef: {', '.join(holders)}; delete them first")), [], requeue.REFERENCE_HOLD)

    cp_namespace = text(dig(snapshot.order, "spec", "controlPlaneRef", "namespace"), identity.namespace)
    names = child_names(snapshot.cluster, identity.namespace, identity.name, cp_namespace)
    children = sort_children(snapshot.children, names, child_labels(snapshot.cluster, identity.namespace,
                                                                    identity.name))
    listed: List[Tuple[Mapping[str, Any], str, str]] = []
    for obj in children.teardown_order():
        leg = LEG_BACKUP if kind_of(obj) == "PushSecret" or name_of(obj) == names.source else LEG_USER
        listed.append((obj, "", leg))
    if is_owned(snapshot.delivered, identity.uid):
        listed.append((snapshot.delivered, snapshot.cluster, LEG_DELIVERED))

    out = Outcome()
    if snapshot.control_plane is None:
        out.act(finalizer_patch(identity, snapshot.cluster, add=False))
        for obj, cluster, leg in listed:
            if not is_deleting(obj):
                out.act(_delete(obj, cluster, leg))
        return decision(previous_user, out.actions, None, writes_status=False)

    if not listed:
        return decision(previous_user, [finalizer_patch(identity, snapshot.cluster, add=False)], None,
                        writes_status=False)
    for obj, cluster, leg in listed:
        if not is_deleting(obj):
            out.act(_delete(obj, cluster, leg))
    user = previous_user
    if user.reason in HOLD_REASONS:
        user = Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS, (
            "the order is being deleted; waiting for its children to go: "
            + ", ".join(f"{kind_of(o)} {name_of(o)}" for o, _kind, _name in listed)))
    return decision(user, out.actions, requeue.TEARDOWN)
