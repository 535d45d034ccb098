# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The platform's allowlist of tenant namespaces as one pass read it (docs/install.md, "The allowlist of namespaces").

The edge (``passes/reader.py``) lists, once per cluster and pass, the Namespaces carrying the mark; the result rides,
the same for every order, in each snapshot, so admission (``consent.admit``) stays a function of the snapshot. A
namespace the list did not return is unmarked. A cluster whose Namespaces were not listed (no allowlist given, no
order there, or the list failed) is unknown: its orders are not checked, never refused on a guess.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders.consent import Refusal, admit
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import ControlPlaneView


@dataclass(frozen=True)
class TenantMarks:
    """``mark``: the labels a tenant namespace carries (None: no allowlist, nothing checked); ``marked``: per cluster
    ("" = management) whose Namespaces were listed, its marked namespaces with their labels."""

    mark: Optional[Mapping[str, str]] = None
    marked: Mapping[str, Mapping[str, Mapping[str, str]]] = field(default_factory=dict)

    def mark_on(self, cluster: str) -> Optional[Mapping[str, str]]:
        """The mark to check on ``cluster``: None when there is no allowlist or the cluster's Namespaces were not
        listed."""
        return self.mark if self.mark is not None and cluster in self.marked else None

    def labels(self, cluster: str, namespace: str) -> Optional[Mapping[str, str]]:
        """The labels of ``namespace`` when it is marked on ``cluster``; None when the list did not return it."""
        return self.marked.get(cluster, {}).get(namespace)


NO_MARKS = TenantMarks()


def admit_marked(namespace: str, cluster: str, cp_namespace: str, cp_name: str,
                 control_plane: Optional[ControlPlaneView], marks: TenantMarks) -> Optional[Refusal]:
    """``consent.admit`` with the labels of the order's namespace and the mark of its cluster as the pass read them."""
    return admit(namespace, cluster, cp_namespace, cp_name, control_plane,
                 namespace_labels=marks.labels(cluster, namespace), tenant_mark=marks.mark_on(cluster))
