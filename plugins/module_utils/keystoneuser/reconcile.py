"""One reconcile pass over one KeystoneUser: ``reconcile(snapshot) -> Decision``.

Spec: the whole KeystoneUser reference; upstream facts section 11 (Flow). The pass, in order:

1. read the order (``spec``): unreadable metadata or spec -> both conditions False/InvalidSpec, no
   action, back in 10 minutes;
2. being deleted -> ``teardown`` (only with our finalizer; the assignment is not consulted);
3. admission (``consent``): ClusterNameTooLong, ControlPlaneNotFound, NamespaceNotAssigned. A refused
   order is frozen: no action, only the status (its rotation fields kept as they are);
4. the finalizer ``c5c3.io/keystoneuser-teardown`` -- the first action of the first admitted pass,
   so nothing is created unless it is in place (the edge stops at a failed action); the pass then
   carries on in the same run;
5. the ControlPlane's AdminCredentialReady must be True -> else both WaitingForAdminCredential;
6. the user leg (``provision``), then the delivery leg (``delivery``);
7. the requeue (``requeue``): the legs' waits, the next scheduled rotation, 10 minutes at most on a
   target cluster.

``on_action_failure`` (``failures``) is re-exported here: the edge needs only this module.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import (
    DELIVERY_READY,
    USER_READY,
    both,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.consent import Refusal, admit, cluster_refusal
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.controlplane import read_control_plane
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.delivery import deliver
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.failures import on_action_failure
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import FINALIZER
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import (
    OrderStatus,
    StatusFields,
    parse_status,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.outcome import Outcome, build_decision
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.passcontext import pass_context
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.plan import Decision, DecisionContext
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.provision import provision_user
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rawobj import dig, generation_of, text
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    INVALID_SPEC,
    WAITING_FOR_ADMIN_CREDENTIAL,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.spec import (
    OrderIdentity,
    OrderSpecError,
    parse_identity,
    parse_order,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.teardown import finalizer_patch, tear_down

__all__ = ["reconcile", "on_action_failure", "Snapshot", "Decision"]


def _summary_identity(snapshot: Snapshot) -> Dict[str, str]:
    return {
        "name": text(dig(snapshot.order, "metadata", "name")),
        "namespace": text(dig(snapshot.order, "metadata", "namespace")),
        "cluster": snapshot.cluster,
    }


def _refused(snapshot: Snapshot, status: OrderStatus, identity: Optional[OrderIdentity], refusal: Refusal) -> Decision:
    """Both conditions carry the refusal; nothing else moves (the order is frozen)."""
    verdicts = both(refusal.reason, refusal.message)
    name = identity.name if identity is not None else ""
    context = DecisionContext(
        now=snapshot.now,
        generation=identity.generation if identity is not None else generation_of(snapshot.order),
        secret_name=f"{name}-credentials" if name else status.secret_name,
        previous=status,
        fields=StatusFields.carried(status),
        user=verdicts[USER_READY],
        delivery=verdicts[DELIVERY_READY],
    )
    wait = refusal.requeue_after
    if snapshot.cluster:
        wait = requeue.earliest([wait, requeue.TARGET_CLUSTER_MAX])
    return build_decision(context, [], wait, _summary_identity(snapshot))


def reconcile(snapshot: Snapshot) -> Decision:
    status = parse_status(snapshot.order)
    try:
        identity = parse_identity(snapshot.order)
    except OrderSpecError as err:
        return _refused(snapshot, status, None, Refusal(INVALID_SPEC, f"the order cannot be read: {err}",
                                                        requeue.REFUSAL))
    if identity.deleting:
        return tear_down(snapshot, identity, status)

    refusal = cluster_refusal(snapshot.cluster)
    if refusal is not None:
        return _refused(snapshot, status, identity, refusal)
    try:
        spec = parse_order(snapshot.order)
    except OrderSpecError as err:
        return _refused(snapshot, status, identity, Refusal(INVALID_SPEC, f"the order cannot be read: {err}",
                                                            requeue.REFUSAL))
    cp = read_control_plane(snapshot.control_plane) if snapshot.control_plane is not None else None
    refusal = admit(identity.namespace, snapshot.cluster, spec.control_plane_namespace, spec.control_plane_name, cp)
    if refusal is not None or cp is None:
        return _refused(snapshot, status, identity, refusal)

    out = Outcome()
    if FINALIZER not in identity.finalizers:
        out.act(finalizer_patch(identity, snapshot.cluster, add=True))
    secret_name = f"{identity.name}-credentials"
    target_cap = requeue.TARGET_CLUSTER_MAX if snapshot.cluster else None

    if not cp.admin_credential_ready:
        verdicts = both(WAITING_FOR_ADMIN_CREDENTIAL, (
            f"ControlPlane {cp.namespace}/{cp.name} reports AdminCredentialReady not True, so K-ORC cannot reach "
            f"Keystone yet{': ' + cp.admin_credential_message if cp.admin_credential_message else ''}"))
        context = DecisionContext(now=snapshot.now, generation=identity.generation, secret_name=secret_name,
                                  previous=status, fields=StatusFields.carried(status),
                                  user=verdicts[USER_READY], delivery=verdicts[DELIVERY_READY])
        wait = requeue.earliest([requeue.ADMIN_CREDENTIAL, target_cap])
        return build_decision(context, out.actions, wait, _summary_identity(snapshot))

    ctx = pass_context(snapshot, spec, status, cp)
    user = provision_user(ctx, out)
    delivery = deliver(ctx, out, user)
    fields = replace(user.fields, delivered=delivery.delivered)
    # A user-leg claim was made before the delivery leg decided secretName; that part holds either way.
    claims = tuple(c if c.delivery is not None else replace(c, fields=replace(c.fields, delivered=fields.delivered))
                   for c in out.claims)

    rotation_wait = requeue.until(fields.next_rotation, snapshot.now) if fields.next_rotation is not None else None
    wait = requeue.earliest([*out.waits, rotation_wait, target_cap])
    context = DecisionContext(now=snapshot.now, generation=identity.generation, secret_name=secret_name,
                              previous=status, fields=fields, user=user.verdict, delivery=delivery.verdict,
                              claims=claims, requeue_cap=rotation_wait)
    return build_decision(context, out.actions, wait, _summary_identity(snapshot))
