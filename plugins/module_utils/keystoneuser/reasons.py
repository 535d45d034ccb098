# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Every condition reason a KeystoneUser reports, with the row of docs/keystoneuser-crd.md "Conditions" it implements.

docs/reconciler.md "Conditions and reasons" says where each is set. The reasons every kind shares (admission,
delivery) are defined once in ``orders.reasons`` and named here too, so a reader finds the row behind any
KeystoneUser reason in this file.
"""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.orders.reasons import (  # noqa: F401 pylint: disable=unused-import,useless-import-alias
    BACKUP_NOT_SYNCED as BACKUP_NOT_SYNCED,
    CLUSTER_NAME_TOO_LONG as CLUSTER_NAME_TOO_LONG,
    CONTROL_PLANE_NOT_FOUND as CONTROL_PLANE_NOT_FOUND,
    DELIVERED as DELIVERED,
    DELIVERY_ERROR as DELIVERY_ERROR,
    DELIVERY_REFUSED as DELIVERY_REFUSED,
    INVALID_SPEC as INVALID_SPEC,
    NAMESPACE_NOT_ASSIGNED as NAMESPACE_NOT_ASSIGNED,
)

# UserReady
USER_PROVISIONED = "UserProvisioned"                    # True: user exists, current generation applied
# reserved name, a user the order did not create, or a name an earlier order on the same ControlPlane holds
SERVICE_ACCOUNT_COLLISION = "ServiceAccountCollision"
PROBING_FOR_COLLISION = "ProbingForCollision"           # the probe has not resolved yet
SECRET_STORE_NOT_READY = "SecretStoreNotReady"          # the CP namespace's own SecretStore is missing or not Ready
WAITING_FOR_SERVICE_ACCOUNTS = "WaitingForServiceAccounts"  # User not Available / generation not applied
SERVICE_ACCOUNTS_FAILED = "ServiceAccountsFailed"       # terminal K-ORC error (latched transport cleared first)
TRANSPORT_ERROR_RETRY_FAILED = "TransportErrorRetryFailed"  # clearing the latch failed
SERVICE_ACCOUNT_ERROR = "ServiceAccountError"           # Kubernetes-level failure projecting the user
REFERENCED_BY_ROLE_ASSIGNMENTS = "ReferencedByRoleAssignments"  # teardown held
REFERENCED_BY_APPLICATION_CREDENTIALS = "ReferencedByApplicationCredentials"  # teardown held

# DeliveryReady (besides the shared ones above)
KEYSTONE_NOT_PUBLISHED = "KeystoneNotPublished"         # no auth URL reachable from the order's cluster

# Both sub-conditions (besides the shared admission reasons above)
WAITING_FOR_ADMIN_CREDENTIAL = "WaitingForAdminCredential"

HOLD_REASONS = (REFERENCED_BY_ROLE_ASSIGNMENTS, REFERENCED_BY_APPLICATION_CREDENTIALS)
