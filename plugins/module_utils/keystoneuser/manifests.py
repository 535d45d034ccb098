# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The desired objects of one order, as plain manifests.

docs/reconciler.md "Where the children live" and "Backup first, then delivery" (what K-ORC and ESO are given).
All but the delivered Secret live in the ControlPlane's namespace on the management cluster and carry the three
ownership labels:

- ``<base>-user``           K-ORC User, managed: creates the Keystone user in the admin domain
                            (no default project), password from ``<base>-password-v<N>``;
- ``<base>-user-probe``     K-ORC User, unmanaged import by name + domain: does the user exist already?
- ``<base>-password-v<N>``  Secret, key ``password``; generated once, never edited;
- ``<base>-source``         Secret, the flat document the backup pushes (``orders.backup``);
- ``<base>-backup``         PushSecret, pushes the whole source Secret to OpenBao (``orders.backup``).
(``<base>`` is ``<name>-<8 hex>-user``, see ``naming``.)

The delivered Secret ``<name>-credentials`` sits beside the order with two labels and a controller
owner reference, and carries only ``clouds.yaml`` and ``password``.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.collision import NAME_KEY_LABEL, name_key
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import ChildNames
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import ControlPlaneView
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrets import owner_reference, secret_manifest

KORC_API_VERSION = "openstack.k-orc.cloud/v1alpha1"
ORDER_KIND = "KeystoneUser"
PUSH_HASH_ANNOTATION = "c5c3.io/keystoneuser-push-hash"  # the digest of the document the PushSecret must push


def _metadata(name: str, namespace: str, labels: Mapping[str, str]) -> Dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": dict(labels)}


def _credentials(cp: ControlPlaneView) -> Dict[str, str]:
    return {"secretName": cp.credentials_secret, "cloudName": cp.cloud_name}


def describe_order(names: ChildNames) -> str:
    where = f" on cluster {names.cluster}" if names.cluster else ""
    return f"Ordered by KeystoneUser {names.order_namespace}/{names.order_name}{where}"


def desired_user(names: ChildNames, labels: Mapping[str, str], cp: ControlPlaneView,
                 user_name: str, generation: int) -> Dict[str, Any]:
    """The managed User; it also carries the digest of its folded name (``collision``)."""
    return {
        "apiVersion": KORC_API_VERSION,
        "kind": "User",
        "metadata": _metadata(names.user, names.cp_namespace, {**labels, NAME_KEY_LABEL: name_key(user_name)}),
        "spec": {
            "cloudCredentialsRef": _credentials(cp),
            "managementPolicy": "managed",
            "resource": {
                "name": user_name,
                "description": describe_order(names),
                "domainRef": cp.domain_ref,
                "passwordRef": names.password(generation),
            },
        },
    }


def desired_probe(names: ChildNames, labels: Mapping[str, str], cp: ControlPlaneView,
                  user_name: str) -> Dict[str, Any]:
    return {
        "apiVersion": KORC_API_VERSION,
        "kind": "User",
        "metadata": _metadata(names.probe, names.cp_namespace, labels),
        "spec": {
            "cloudCredentialsRef": _credentials(cp),
            "managementPolicy": "unmanaged",
            "import": {"filter": {"name": user_name, "domainRef": cp.domain_ref}},
        },
    }


def desired_password_secret(names: ChildNames, labels: Mapping[str, str], generation: int,
                            password: str) -> Dict[str, Any]:
    return secret_manifest(names.password(generation), names.cp_namespace, labels, {"password": password})


def source_document(password: str, username: str, user_domain_name: str, auth_url: str,
                    region_name: str, clouds_yaml: str) -> Dict[str, str]:
    """The flat string document the backup pushes (each key a property at the OpenBao path)."""
    return {
        "password": password,
        "username": username,
        "user_domain_name": user_domain_name,
        "auth_url": auth_url,
        "region_name": region_name,
        "clouds.yaml": clouds_yaml,
    }


def desired_delivered_secret(names: ChildNames, labels: Mapping[str, str], order_uid: str,
                             clouds_yaml: str, password: str) -> Dict[str, Any]:
    secret = secret_manifest(names.delivered, names.order_namespace, labels,
                             {"clouds.yaml": clouds_yaml, "password": password})
    secret["metadata"]["ownerReferences"] = [owner_reference(ORDER_KIND, names.order_name, order_uid)]
    return secret
