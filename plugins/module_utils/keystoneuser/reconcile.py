# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""One reconcile pass over one KeystoneUser: ``reconcile(snapshot) -> Decision``.

docs/keystoneuser-crd.md as a whole; docs/reconciler.md "One pass over one order, in order". The pass, in order:

1. read the order's metadata: an order that cannot be named -> both conditions False/InvalidSpec;
2. being deleted -> ``teardown`` (only with our finalizer; neither the assignment nor the spec is consulted:
   the admission record names the children);
3. read the spec: unreadable -> both False/InvalidSpec, no action, back in 10 minutes; a spec that no longer
   matches the admission record (``record``) -> likewise, naming both values (the order is frozen);
4. admission (``orders.consent``): ClusterNameTooLong, ControlPlaneNotFound, NamespaceNotAssigned (also for the
   ControlPlane's own and dedicated service namespaces). A refused order is frozen: no action, only the status
   (its rotation fields kept as they are);
5. the finalizer ``c5c3.io/keystoneuser-teardown`` -- the first action of the first admitted pass,
   so nothing is created unless it is in place (the edge stops at a failed action); the admission record is
   written with that pass's status; the pass then carries on in the same run;
6. the ControlPlane's AdminCredentialReady must be True -> else both WaitingForAdminCredential;
7. what the edge could not read for the order (its children, the SecretStores) -> UserReady
   ServiceAccountError with the error text, nothing acted on, back in 30 s;
8. the user leg (``provision``), then the delivery leg (``delivery``);
9. the requeue (``orders.requeue``): the legs' waits, the next scheduled rotation, 10 minutes at most on a
   target cluster.

``on_action_failure`` (``failures``) is re-exported here: the edge needs only this module.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import (
    DELIVERY_READY,
    USER_READY,
    both,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.decision import decide
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.delivery import deliver
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.failures import on_action_failure
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import FINALIZER
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import (
    OrderStatus,
    StatusFields,
    parse_status,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.passcontext import pass_context
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.provision import provision_user
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    INVALID_SPEC,
    SERVICE_ACCOUNT_ERROR,
    WAITING_FOR_ADMIN_CREDENTIAL,
    WAITING_FOR_SERVICE_ACCOUNTS,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import AdmissionRecord
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import CHILDREN, SECRET_STORES, Snapshot
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.spec import (
    OrderIdentity,
    OrderSpecError,
    parse_identity,
    parse_order,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.teardown import finalizer_patch, tear_down
from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict, verdict_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.consent import Refusal, cluster_refusal
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import read_control_plane
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import Outcome
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import admit_marked

__all__ = ["reconcile", "on_action_failure", "Snapshot", "Decision"]


def _refused(snapshot: Snapshot, status: OrderStatus, identity: Optional[OrderIdentity], refusal: Refusal) -> Decision:
    """Both conditions carry the refusal; nothing else moves (the order is frozen)."""
    verdicts = both(refusal.reason, refusal.message)
    secret_name = f"{identity.name}-credentials" if identity is not None else status.secret_name
    wait: Optional[timedelta] = refusal.requeue_after
    if snapshot.cluster:
        wait = requeue.earliest([wait, requeue.TARGET_CLUSTER_MAX])
    return decide(snapshot, status, StatusFields.carried(status, secret_name), verdicts[USER_READY],
                  verdicts[DELIVERY_READY], [], wait)


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
    cp = snapshot.control_plane_view
    if cp is None and snapshot.control_plane is not None:
        cp = read_control_plane(snapshot.control_plane)
    record = status.admitted
    changed = record.differs(spec.control_plane_namespace, spec.control_plane_name, spec.user_name) \
        if record is not None else None
    if changed is not None:
        return _refused(snapshot, status, identity, Refusal(INVALID_SPEC, (
            f"{changed}; what an order was admitted as cannot change (delete and re-create it to move it); "
            "the order is frozen"), requeue.REFUSAL))
    refusal = admit_marked(identity.namespace, snapshot.cluster, spec.control_plane_namespace,
                           spec.control_plane_name, cp, snapshot.tenant_marks)
    if refusal is not None:
        return _refused(snapshot, status, identity, refusal)
    if cp is None:  # not reached: admit refuses an order whose ControlPlane is missing
        raise AssertionError("an order was admitted without its ControlPlane")

    out = Outcome()
    if FINALIZER not in identity.finalizers:
        out.act(finalizer_patch(identity, snapshot.cluster, add=True))
    secret_name = f"{identity.name}-credentials"
    target_cap = requeue.TARGET_CLUSTER_MAX if snapshot.cluster else None
    if record is None:
        record = AdmissionRecord(spec.control_plane_namespace, spec.control_plane_name, spec.user_name,
                                 snapshot.cluster)
    carried = replace(StatusFields.carried(status, secret_name), admitted=record)

    if not cp.admin_credential_ready:
        verdicts = both(WAITING_FOR_ADMIN_CREDENTIAL, (
            f"ControlPlane {cp.namespace}/{cp.name} reports AdminCredentialReady not True, so K-ORC cannot reach "
            f"Keystone yet{': ' + cp.admin_credential_message if cp.admin_credential_message else ''}"))
        wait = requeue.earliest([requeue.ADMIN_CREDENTIAL, target_cap])
        return decide(snapshot, status, carried, verdicts[USER_READY], verdicts[DELIVERY_READY], out.actions, wait)

    unreadable = [snapshot.read_failures[p] for p in (CHILDREN, SECRET_STORES) if snapshot.read_failures.get(p)]
    if unreadable:
        waiting = Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS, "the user is not provisioned yet")
        unprovisioned = Verdict(False, SERVICE_ACCOUNT_ERROR, "; ".join(unreadable))
        wait = requeue.earliest([requeue.ERROR_RETRY, target_cap])
        return decide(snapshot, status, carried, unprovisioned, verdict_of(status.conditions, DELIVERY_READY, waiting),
                      out.actions, wait)

    ctx = pass_context(snapshot, spec, status, cp, record.cluster)
    user = provision_user(ctx, out)
    delivery = deliver(ctx, out, user)
    fields = replace(user.fields, delivered=delivery.delivered, admitted=record)
    # A user-leg claim was made before the delivery leg decided secretName; that part holds either way.
    claims = tuple(replace(c, fields=replace(c.fields, admitted=record,
                                             delivered=c.fields.delivered if c.verdicts else fields.delivered))
                   for c in out.claims)

    rotation_wait = requeue.until(fields.next_rotation, snapshot.now) if fields.next_rotation is not None else None
    wait = requeue.earliest([*out.waits, rotation_wait, target_cap])
    return decide(snapshot, status, fields, user.verdict, delivery.verdict, out.actions, wait, claims=claims,
                  requeue_cap=rotation_wait)
