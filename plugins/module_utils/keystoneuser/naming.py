# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""KeystoneUser child names, labels and the ownership test.

docs/reconciler.md "Where the children live". Every child of an order lives in the ControlPlane's
namespace under the prefix ``<metadata.name>-<8 hex>-user-<discriminator>`` (the hash rule is in
``orders.naming``), with the discriminators ``user`` (the managed K-ORC User), ``user-probe`` (the collision
probe), ``password-v<N>`` (one Secret per password generation), ``source`` (the document the backup pushes) and
``backup`` (the PushSecret). The OpenBao path is ``openstack/keystone/<cp ns>/<name>-<hash>-user/service-accounts/
credentials``. An object is ours only with all three labels AND one of our names. The delivered Secret
``<name>-credentials`` sits beside the order and is owned through a controller owner reference.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders.naming import LabelKeys, order_hash
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import name_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrets import carries_labels

LABELS = LabelKeys.for_kind("keystoneuser")
LABEL_NAME = LABELS.name
LABEL_NAMESPACE = LABELS.namespace
LABEL_CLUSTER = LABELS.cluster
FINALIZER = "c5c3.io/keystoneuser-teardown"


@dataclass(frozen=True)
class ChildNames:
    """The names of one order's children."""

    order_name: str
    order_namespace: str
    cluster: str
    cp_namespace: str
    base: str  # <name>-<8hex>-user: the prefix of every child and the OpenBao path segment

    @property
    def user(self) -> str:
        return f"{self.base}-user"

    @property
    def probe(self) -> str:
        return f"{self.base}-user-probe"

    @property
    def source(self) -> str:
        return f"{self.base}-source"

    @property
    def backup(self) -> str:
        return f"{self.base}-backup"

    @property
    def delivered(self) -> str:
        """The Secret beside the order (order's namespace and cluster)."""
        return f"{self.order_name}-credentials"

    @property
    def remote_key(self) -> str:
        """The OpenBao KV path (relative to the mount) the backup pushes to."""
        return f"openstack/keystone/{self.cp_namespace}/{self.base}/service-accounts/credentials"

    def password(self, generation: int) -> str:
        return f"{self.base}-password-v{generation}"

    def password_generation(self, secret_name: str) -> Optional[int]:
        """N for one of our ``-password-v<N>`` names (N >= 1, no leading zero), else None."""
        # A prefix test, not a regex built per order: the per-order pattern thrashed re's cache (a third of
        # a converged pass's decision time in the benchmark profile).
        prefix = f"{self.base}-password-v"
        if not (secret_name or "").startswith(prefix):
            return None
        digits = secret_name[len(prefix):]
        if not digits or not digits.isascii() or not digits.isdigit() or digits[0] == "0":
            return None
        return int(digits)

    def is_child_name(self, name: str) -> bool:
        return name in (self.user, self.probe, self.source, self.backup) or \
            self.password_generation(name) is not None


def child_names(cluster: str, namespace: str, name: str, cp_namespace: str) -> ChildNames:
    return ChildNames(
        order_name=name,
        order_namespace=namespace,
        cluster=cluster,
        cp_namespace=cp_namespace,
        base=f"{name}-{order_hash(cluster, namespace, name)}-user",
    )


def child_labels(cluster: str, namespace: str, name: str) -> Dict[str, str]:
    """The three labels every child in the ControlPlane's namespace carries (cluster "" = management)."""
    return LABELS.child(cluster, namespace, name)


def delivered_labels(namespace: str, name: str) -> Dict[str, str]:
    """The two labels of the delivered Secret (no cluster label: it lives on the order's cluster)."""
    return LABELS.delivered(namespace, name)


def is_ours(obj: Any, names: ChildNames, labels: Dict[str, str]) -> bool:
    """Ours = all three labels match AND the name is one of our child names."""
    return carries_labels(obj, labels) and names.is_child_name(name_of(obj))
