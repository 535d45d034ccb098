# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What an order was admitted as, recorded in its status at its first admitted pass.

docs/reconciler.md "The admission record": ``spec.controlPlaneRef`` and the effective user name are immutable by
CRD rules, but a cluster whose CRD predates the rules (a target cluster, an older install) lets them change.
Acting on the current spec would then look for the children under another ControlPlane, release the finalizer,
and strand the Keystone user, the password Secrets and the OpenBao backup. So the first admitted pass records, in
``status.admittedAs``, the ControlPlane reference, the user name and the cluster the order was admitted on, and
every later pass and the teardown act on the record:
- the children are named and found from the record (ControlPlane namespace, cluster);
- an order whose spec no longer matches its record is refused (InvalidSpec, frozen) with both values named;
- a teardown runs on the record whatever the spec now says, or fails to parse.
An order without a record (written before this field existed, or by a cluster whose CRD prunes it) acts on its
spec, and gets its record at its next admitted pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, text

FIELD = "admittedAs"


@dataclass(frozen=True)
class AdmissionRecord:
    cp_namespace: str
    cp_name: str
    user_name: str
    cluster: str

    def render(self) -> Dict[str, Any]:
        return {"controlPlaneRef": {"name": self.cp_name, "namespace": self.cp_namespace},
                "userName": self.user_name, "cluster": self.cluster}

    def differs(self, cp_namespace: str, cp_name: str, user_name: str) -> Optional[str]:
        """What the spec changed since admission, in words (None = nothing)."""
        if (cp_namespace, cp_name) != (self.cp_namespace, self.cp_name):
            return (f"spec.controlPlaneRef is {cp_namespace}/{cp_name}, but the order was admitted for ControlPlane "
                    f"{self.cp_namespace}/{self.cp_name}")
        if user_name != self.user_name:
            return f"the user name is {user_name!r}, but the order was admitted as {self.user_name!r}"
        return None


def parse_record(status: Any) -> Optional[AdmissionRecord]:
    """The record in ``status.admittedAs``; None when absent or unreadable (then the spec is acted on)."""
    raw = dig(status, FIELD)
    cp_name = text(dig(raw, "controlPlaneRef", "name"))
    cp_namespace = text(dig(raw, "controlPlaneRef", "namespace"))
    user_name = text(dig(raw, "userName"))
    cluster = dig(raw, "cluster")
    if not (cp_name and cp_namespace and user_name) or not isinstance(cluster, str):
        return None
    return AdmissionRecord(cp_namespace, cp_name, user_name, cluster)


def refs_of(order: Any, cluster: str) -> AdmissionRecord:
    """Where the order's children live and what user it names: the record, else the spec as far as it reads
    (with ``cluster``, the one the order is read on). Used by the edge to find the children and by the teardown;
    never raises."""
    record = parse_record(dig(order, "status"))
    if record is not None:
        return record
    namespace = text(dig(order, "metadata", "namespace"))
    spec = dig(order, "spec")
    return AdmissionRecord(
        cp_namespace=text(dig(spec, "controlPlaneRef", "namespace"), namespace),
        cp_name=text(dig(spec, "controlPlaneRef", "name")),
        user_name=text(dig(spec, "userName"), text(dig(order, "metadata", "name"))),
        cluster=cluster,
    )
