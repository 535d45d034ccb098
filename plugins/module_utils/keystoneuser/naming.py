"""Child names, ownership labels and the ownership test.

Spec: "Projected child names" and "Delivered Secret contract". Every child of an order lives in the
ControlPlane's namespace under ``<metadata.name>-<8 hex>-user``, where the hash is
``sha256("<cluster>/<namespace>/<name>")`` (cluster "" for the management cluster), so the same
order name in another namespace or on another cluster never shares a child name. None of them can
carry an owner reference, so each carries three labels; an object is ours only with all three
labels AND one of our names. The delivered Secret ``<name>-credentials`` is the exception: it sits
beside the order and is owned through a controller owner reference.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Dict, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rawobj import labels_of, name_of

LABEL_NAME = "c5c3.io/keystoneuser-name"
LABEL_NAMESPACE = "c5c3.io/keystoneuser-namespace"
LABEL_CLUSTER = "c5c3.io/keystoneuser-cluster"
FINALIZER = "c5c3.io/keystoneuser-teardown"
MAX_LABEL_VALUE = 63


def order_hash(cluster: str, namespace: str, name: str) -> str:
    """The 8 hex digits that make child names unique per (cluster, namespace, name)."""
    return hashlib.sha256(f"{cluster}/{namespace}/{name}".encode("utf-8")).hexdigest()[:8]


@dataclass(frozen=True)
class ChildNames:
    """The names of one order's children."""

    order_name: str
    order_namespace: str
    cluster: str
    cp_namespace: str
    base: str  # <name>-<8hex>-user: the managed K-ORC User, and the stem of every other child

    @property
    def user(self) -> str:
        return self.base

    @property
    def probe(self) -> str:
        return f"{self.base}-probe"

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
    return {LABEL_NAME: name, LABEL_NAMESPACE: namespace, LABEL_CLUSTER: cluster}


def delivered_labels(namespace: str, name: str) -> Dict[str, str]:
    """The two labels of the delivered Secret (no cluster label: it lives on the order's cluster)."""
    return {LABEL_NAME: name, LABEL_NAMESPACE: namespace}


def carries_labels(obj: Any, labels: Dict[str, str]) -> bool:
    present = labels_of(obj)
    return all(key in present and present[key] == value for key, value in labels.items())


def is_ours(obj: Any, names: ChildNames, labels: Dict[str, str]) -> bool:
    """Ours = all three labels match AND the name is one of our child names."""
    return carries_labels(obj, labels) and names.is_child_name(name_of(obj))


def fits_label(value: str) -> bool:
    return len(value.encode("utf-8")) <= MAX_LABEL_VALUE
