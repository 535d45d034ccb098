# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The steps every kind's audit takes the same way: reading the delivered Secret (or saying why there is none to
audit) and comparing it with its OpenBao backup. What differs per kind is passed in: the Secret's name, the backup
path, which keys to compare and which of them are secret."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.audit.context import AuditContext, ReadFailed
from ansible_collections.c5c3.orders.plugins.module_utils.audit.equality import differing_keys
from ansible_collections.c5c3.orders.plugins.module_utils.audit.openbao import BackupUnreadable
from ansible_collections.c5c3.orders.plugins.module_utils.audit.outcome import ERROR, FAILED, OK, SKIPPED, OrderAudit
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    condition_is_true,
    dig,
    find_condition,
    is_deleting,
    secret_strings,
    text,
)


def claims_delivery(order: Mapping[str, Any]) -> bool:
    """Whether the order says it delivered (Ready, or a status.secretName): then a missing Secret is a finding."""
    return condition_is_true(order, "Ready") or bool(text(dig(order, "status", "secretName")))


def not_delivered_note(order: Mapping[str, Any]) -> str:
    ready = find_condition(order, "Ready")
    reason = text((ready or {}).get("reason"), "no Ready condition yet")
    return f"nothing delivered yet ({reason})"


def read_delivered(audit: OrderAudit, ctx: AuditContext, order: Mapping[str, Any], cluster: str,
                   secret_name: str, secret_keys: Iterable[str]) -> Optional[Dict[str, str]]:
    """The delivered Secret's values (its ``secret_keys`` registered for scrubbing), or None when this order's audit
    ends here: being deleted or nothing delivered yet (a note), missing or unreadable (a finding)."""
    if is_deleting(order):
        audit.note = "being deleted"
        return None
    try:
        secret = ctx.get(cluster, R.SECRET, audit.namespace, secret_name)
    except ReadFailed as exc:
        audit.record("delivered", ERROR, str(exc))
        return None
    if secret is None:
        if claims_delivery(order):
            audit.record("delivered", FAILED, f"the delivered Secret {secret_name} is missing")
        else:
            audit.note = not_delivered_note(order)
        return None
    delivered = secret_strings(secret)
    audit.redactor.add_all(delivered.get(key) for key in secret_keys)
    return delivered


def check_backup(audit: OrderAudit, ctx: AuditContext, remote_key: str, delivered: Mapping[str, str],
                 compared: Iterable[str], secret_keys: Iterable[str]) -> None:
    """The backup at ``remote_key`` holds what the delivered Secret holds, key by key over ``compared`` (a key
    present on one side only differs)."""
    if ctx.openbao is None:
        audit.record("backup", SKIPPED, "no OpenBao address and token given")
        return
    where = f"{ctx.openbao.mount}/{remote_key}"
    try:
        backup = ctx.openbao.read(remote_key)
    except BackupUnreadable as exc:
        audit.record("backup", ERROR, str(exc))
        return
    if backup is None:
        audit.record("backup", FAILED, f"no backup at {where}")
        return
    audit.redactor.add_all(backup.get(key) for key in secret_keys)
    differ = differing_keys(delivered, backup, [key for key in compared if key in delivered or key in backup])
    if differ:
        audit.record("backup", FAILED, f"the backup at {where} differs from the delivered Secret in "
                                       f"{', '.join(differ)}")
        return
    audit.record("backup", OK)
