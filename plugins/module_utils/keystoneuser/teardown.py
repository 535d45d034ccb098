# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Deleting a KeystoneUser: holds first, then the children, then the finalizer.

docs/reconciler.md "Teardown". Runs only for an order with
``deletionTimestamp`` set AND our finalizer ``c5c3.io/keystoneuser-teardown`` (an order that never
got past the assignment has none and goes at once). The assignment is not consulted, so a frozen
order tears down the same way; neither is the spec: the children are found from the admission record
(``record``), so an order whose spec changed or no longer parses is torn down all the same.

1. KeystoneRoleAssignments in the order's namespace naming it as ``userRef`` hold the teardown:
   UserReady False/ReferencedByRoleAssignments with their names, nothing deleted, back in 1 minute;
2. then KeystoneApplicationCredentials likewise (ReferencedByApplicationCredentials);
   a list the edge could not read holds the teardown too (ServiceAccountError with the error text);
3. delete in order: PushSecret (ESO purges OpenBao), managed User (K-ORC deletes the Keystone user),
   probe, every password Secret, source Secret, the delivered Secret if the order owns it;
4. patient while the ControlPlane exists, fail open once it is gone (``orders.teardown``). An order whose
   name is too long for a label value can have no children: its finalizer is released at once.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, List, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.children import sort_children
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import DELIVERY_READY, USER_READY
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.decision import decide
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import (
    FINALIZER,
    child_labels,
    child_names,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import OrderStatus, StatusFields
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    HOLD_REASONS,
    REFERENCED_BY_APPLICATION_CREDENTIALS,
    REFERENCED_BY_ROLE_ASSIGNMENTS,
    SERVICE_ACCOUNT_ERROR,
    WAITING_FOR_SERVICE_ACCOUNTS,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import refs_of
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import (
    APP_CREDENTIALS,
    CHILDREN,
    ROLE_ASSIGNMENTS,
    Snapshot,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict, verdict_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderIdentity
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    LEG_BACKUP,
    LEG_DELIVERED,
    LEG_USER,
    Decision,
    MergePatch,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import kind_of, name_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrets import is_owned
from ansible_collections.c5c3.orders.plugins.module_utils.orders.teardown import (
    Doomed,
    delete_children,
    finalizer_patch as _finalizer_patch,
    referencing,
)

KIND = "KeystoneUser"


def finalizer_patch(identity: OrderIdentity, cluster: str, add: bool) -> MergePatch:
    return _finalizer_patch(KIND, FINALIZER, identity, cluster, add)


def tear_down(snapshot: Snapshot, identity: OrderIdentity, status: OrderStatus) -> Decision:
    fields = StatusFields.carried(status, f"{identity.name}-credentials")
    waiting = Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS, "the order is being deleted")
    previous_user = verdict_of(status.conditions, USER_READY, waiting)
    previous_delivery = verdict_of(status.conditions, DELIVERY_READY, waiting)

    def decision(user: Verdict, actions: List[Any], wait: Optional[timedelta], writes_status: bool = True) -> Decision:
        return decide(snapshot, status, fields, user, previous_delivery, actions, wait, writes_status=writes_status,
                      deleting=True)

    if FINALIZER not in identity.finalizers:
        return decision(previous_user, [], None, writes_status=False)
    if not identity.fits_label:  # a name no label can carry never had children
        return decision(previous_user, [finalizer_patch(identity, snapshot.cluster, add=False)], None,
                        writes_status=False)

    failures = snapshot.read_failures
    # Holds must be known before anything is deleted; the children too, unless the teardown fails open anyway.
    blocking = (ROLE_ASSIGNMENTS, APP_CREDENTIALS) + ((CHILDREN,) if snapshot.control_plane is not None else ())
    for part in blocking:
        if failures.get(part):
            return decision(Verdict(False, SERVICE_ACCOUNT_ERROR, (
                f"the order is being deleted, but the teardown cannot proceed: {failures[part]}")), [],
                requeue.ERROR_RETRY)
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

    refs = refs_of(snapshot.order, snapshot.cluster)
    names = child_names(refs.cluster, identity.namespace, identity.name, refs.cp_namespace)
    children = sort_children(snapshot.children, names, child_labels(refs.cluster, identity.namespace, identity.name))
    doomed = [Doomed(obj, "", LEG_BACKUP if kind_of(obj) == "PushSecret" or name_of(obj) == names.source else LEG_USER)
              for obj in children.teardown_order()]
    if is_owned(snapshot.delivered, identity.uid):
        doomed.append(Doomed(snapshot.delivered, snapshot.cluster, LEG_DELIVERED))

    step = delete_children(KIND, FINALIZER, identity, snapshot.cluster, doomed, snapshot.control_plane is not None)
    if step.released:
        return decision(previous_user, step.actions, None, writes_status=False)
    user = previous_user
    if user.reason in HOLD_REASONS or user.reason == SERVICE_ACCOUNT_ERROR:
        user = Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS, (
            "the order is being deleted; waiting for its children to go: " + ", ".join(step.waiting_for)))
    return decision(user, step.actions, requeue.TEARDOWN)
