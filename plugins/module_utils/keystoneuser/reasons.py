"""Every condition reason an order reports, with the spec row it implements.

Spec: "Conditions" table. Kept in one place so a reader finds the row behind any reason here and
the code that sets it by searching for the constant.
"""
from __future__ import annotations

# UserReady
USER_PROVISIONED = "UserProvisioned"                    # True: user exists, current generation applied
SERVICE_ACCOUNT_COLLISION = "ServiceAccountCollision"   # reserved name, or a user the order did not create
PROBING_FOR_COLLISION = "ProbingForCollision"           # the probe has not resolved yet
SECRET_STORE_NOT_READY = "SecretStoreNotReady"          # the CP namespace's store is not Ready
WAITING_FOR_SERVICE_ACCOUNTS = "WaitingForServiceAccounts"  # User not Available / generation not applied
SERVICE_ACCOUNTS_FAILED = "ServiceAccountsFailed"       # terminal K-ORC error (latched transport cleared first)
TRANSPORT_ERROR_RETRY_FAILED = "TransportErrorRetryFailed"  # clearing the latch failed
SERVICE_ACCOUNT_ERROR = "ServiceAccountError"           # Kubernetes-level failure projecting the user
REFERENCED_BY_ROLE_ASSIGNMENTS = "ReferencedByRoleAssignments"  # teardown held
REFERENCED_BY_APPLICATION_CREDENTIALS = "ReferencedByApplicationCredentials"  # teardown held

# DeliveryReady
DELIVERED = "Delivered"                                 # True: the Secret carries the current password
KEYSTONE_NOT_PUBLISHED = "KeystoneNotPublished"         # no auth URL reachable from the order's cluster
BACKUP_NOT_SYNCED = "BackupNotSynced"                   # ESO has not pushed the current document
DELIVERY_REFUSED = "DeliveryRefused"                    # a same-named Secret the order does not own
DELIVERY_ERROR = "DeliveryError"                        # Kubernetes-level failure on a delivery object

# Both sub-conditions
CONTROL_PLANE_NOT_FOUND = "ControlPlaneNotFound"
NAMESPACE_NOT_ASSIGNED = "NamespaceNotAssigned"
CLUSTER_NAME_TOO_LONG = "ClusterNameTooLong"
WAITING_FOR_ADMIN_CREDENTIAL = "WaitingForAdminCredential"
INVALID_SPEC = "InvalidSpec"                            # ours: the order cannot be read (spec.parse_order)

HOLD_REASONS = (REFERENCED_BY_ROLE_ASSIGNMENTS, REFERENCED_BY_APPLICATION_CREDENTIALS)
