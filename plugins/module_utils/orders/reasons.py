# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The condition reasons every order kind shares (each kind's own are in its ``reasons.py``).

docs/keystoneuser-crd.md "Conditions" (the "Conditions" of docs/bucketcredential-crd.md carry the same rows over):
admission and delivery reasons mean the same for every kind, so they are defined once.
"""
from __future__ import annotations

# Both (every) sub-condition: admission
CONTROL_PLANE_NOT_FOUND = "ControlPlaneNotFound"
NAMESPACE_NOT_ASSIGNED = "NamespaceNotAssigned"
NAMESPACE_NOT_MARKED = "NamespaceNotMarked"  # assigned, but the platform did not mark the namespace for tenants
CLUSTER_NAME_TOO_LONG = "ClusterNameTooLong"
INVALID_SPEC = "InvalidSpec"          # ours: the order cannot be read, or changed what it was admitted as

# DeliveryReady
DELIVERED = "Delivered"               # True: the Secret carries the current credential
BACKUP_NOT_SYNCED = "BackupNotSynced"  # ESO has not pushed the current document
DELIVERY_REFUSED = "DeliveryRefused"  # a same-named Secret the order does not own
DELIVERY_ERROR = "DeliveryError"      # Kubernetes-level failure on a delivery object
