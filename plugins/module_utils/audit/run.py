# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""One audit over every order of the chosen kinds, on the management cluster and the given target clusters.

Orders are listed as a pass lists them: cluster-wide on the management cluster (or per selected namespace), and on
a target cluster only in the namespaces some ControlPlane assigns there. A kind the cluster does not serve has no
orders there; any other list that fails is reported in ``unreadable`` (a finding: those orders were not proved).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.audit.context import MANAGEMENT, AuditContext
from ansible_collections.c5c3.orders.plugins.module_utils.audit.kinds import KINDS, KindAudit
from ansible_collections.c5c3.orders.plugins.module_utils.audit.outcome import OrderAudit
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.protocols import KubeReads
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import name_of, namespace_of
from ansible_collections.c5c3.orders.plugins.module_utils.passes.reader import assigned_namespaces
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection


@dataclass
class AuditReport:
    orders: List[OrderAudit] = field(default_factory=list)
    unreadable: List[Dict[str, str]] = field(default_factory=list)

    @property
    def with_findings(self) -> List[OrderAudit]:
        return [order for order in self.orders if order.findings]

    def summary(self) -> Dict[str, int]:
        audited = [order for order in self.orders if order.audited]
        return {"orders": len(self.orders), "audited": len(audited),
                "clean": sum(1 for order in audited if order.clean), "with_findings": len(self.with_findings),
                "not_audited": len(self.orders) - len(audited), "unreadable": len(self.unreadable)}

    def findings(self) -> List[Dict[str, Any]]:
        flat = []
        for order in self.with_findings:
            result = order.result()
            for finding in result["findings"]:
                flat.append(dict(finding, kind=order.kind, namespace=order.namespace, name=order.name,
                                 cluster=order.cluster))
        return flat


def _list(service: KubeReads, kind: KindAudit, namespace: Optional[str], cluster: str,
          report: AuditReport) -> Sequence[Mapping[str, Any]]:
    try:
        return service.list(kind.resource, namespace=namespace)
    except KubeError as exc:
        if exc.not_found:  # the kind is not served there: no orders of it
            return []
        where = f"{kind.resource.plural}" + (f" in namespace {namespace}" if namespace else "")
        report.unreadable.append({"cluster": cluster, "kind": kind.resource.kind,
                                  "error": f"cannot list {where}: {exc.summary()}"})
        return []


def _namespaces(cluster: str, selection: Selection,
                control_planes: Iterable[Mapping[str, Any]]) -> Sequence[Optional[str]]:
    """Where to list on ``cluster``: None (cluster-wide) on an unlimited management audit, else namespaces."""
    if cluster == MANAGEMENT:
        if selection.namespaces:
            return sorted(selection.namespaces)
        if selection.orders:
            return sorted({order.split("/", 1)[0] for order in selection.orders})
        return [None]
    return sorted(ns for ns in assigned_namespaces(control_planes, cluster) if selection.may_want_namespace(ns))


def _control_planes(ctx: AuditContext, report: AuditReport) -> Sequence[Mapping[str, Any]]:
    if set(ctx.clusters) == {MANAGEMENT}:
        return []
    try:
        return ctx.clusters[MANAGEMENT].list(R.CONTROLPLANE)
    except KubeError as exc:
        report.unreadable.append({"cluster": MANAGEMENT, "kind": R.CONTROLPLANE.kind,
                                  "error": f"cannot list controlplanes (the target clusters' namespaces): "
                                           f"{exc.summary()}"})
        return []


def _position(entry: Tuple[KindAudit, str, Mapping[str, Any]]) -> Tuple[str, str, str, str]:
    """Sort key of a found order: kind, cluster, namespace, name."""
    return entry[0].resource.kind, entry[1], namespace_of(entry[2]), name_of(entry[2])


def run_audit(ctx: AuditContext, kinds: Iterable[str], selection: Selection) -> AuditReport:
    report = AuditReport()
    control_planes = _control_planes(ctx, report)
    found: List[Tuple[KindAudit, str, Mapping[str, Any]]] = []
    for kind_name in kinds:
        kind = KINDS[kind_name]
        for cluster, service in sorted(ctx.clusters.items()):
            for namespace in _namespaces(cluster, selection, control_planes):
                for order in _list(service, kind, namespace, cluster, report):
                    if selection.wants(namespace_of(order), name_of(order)):
                        found.append((kind, cluster, order))
    for kind, cluster, order in sorted(found, key=_position):
        report.orders.append(kind.audit(ctx, order, cluster))
    return report
