# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What an audit says about one order: a state per check, and a finding for every check that is not ``ok``.

A check is ``failed`` when the audit proved something wrong (a refused credential, a backup that differs),
``error`` when it could not prove anything (Keystone, OpenBao or the API server did not answer as needed), and
``skipped`` when it does not apply (no OpenBao token given). Both ``failed`` and ``error`` are findings: an audit
that could not look has not proved the credential. Messages carry names, states and HTTP statuses, never a value;
as a second guard, each order's messages are scrubbed of every secret value its checks read (``k8s.redact``), a
handful per order, which costs far less than registering them all with Ansible's ``no_log_values`` (that filter
scans every result string for every value: minutes for thousands of orders).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor

OK = "ok"
FAILED = "failed"
ERROR = "error"
SKIPPED = "skipped"
FINDING_STATES = (FAILED, ERROR)


@dataclass
class Check:
    name: str
    state: str
    message: str = ""


@dataclass
class OrderAudit:
    """The checks of one order. ``note`` says why an order was not audited (nothing delivered yet, deleting)."""

    kind: str
    namespace: str
    name: str
    cluster: str
    checks: List[Check] = field(default_factory=list)
    note: str = ""
    redactor: Redactor = field(default_factory=Redactor, repr=False)

    def record(self, name: str, state: str, message: str = "") -> str:
        self.checks.append(Check(name, state, message))
        return state

    @property
    def audited(self) -> bool:
        return bool(self.checks)

    @property
    def findings(self) -> List[Check]:
        return [check for check in self.checks if check.state in FINDING_STATES]

    @property
    def clean(self) -> bool:
        return self.audited and not self.findings

    @property
    def ref(self) -> str:
        where = f" on {self.cluster}" if self.cluster else ""
        return f"{self.kind} {self.namespace}/{self.name}{where}"

    def result(self) -> Dict[str, Any]:
        return {
            "kind": self.kind, "namespace": self.namespace, "name": self.name, "cluster": self.cluster,
            "audited": self.audited, "clean": self.clean, "note": self.note,
            "checks": {check.name: check.state for check in self.checks},
            "findings": [{"check": c.name, "state": c.state, "message": self.redactor.scrub(c.message)}
                         for c in self.findings],
        }
