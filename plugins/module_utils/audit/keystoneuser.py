# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The audit of one KeystoneUser order: does what it delivered still work, is it backed up, is it current?

Four checks, each on what exists now, never on what the status claims:
- ``delivered``: the Secret ``<name>-credentials`` is there with ``clouds.yaml`` and ``password``, the file reads
  as a consumer reads it, and its password is the ``password`` key;
- ``authenticates``: Keystone issues a token for the clouds.yaml's ``auth`` section, for the user id the order
  reports in ``status.userID``;
- ``backup``: the OpenBao backup at the order's path (``ChildNames.remote_key``) holds the same ``password`` and
  ``clouds.yaml``;
- ``generation``: the K-ORC User asks for and has applied the password Secret of ``status.passwordGeneration``
  (``<base>-password-v<N>``), and that Secret holds the delivered password.
An order that never delivered anything (not admitted, still provisioning) or is being deleted is listed with a
note and no checks. Children are found from ``status.admittedAs`` as the pass finds them (``record.refs_of``).
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.audit.cloudsyaml import CloudsYamlError, read_auth
from ansible_collections.c5c3.orders.plugins.module_utils.audit.context import MANAGEMENT, AuditContext, ReadFailed
from ansible_collections.c5c3.orders.plugins.module_utils.audit.equality import same
from ansible_collections.c5c3.orders.plugins.module_utils.audit.keystone import check_token
from ansible_collections.c5c3.orders.plugins.module_utils.audit.outcome import (
    ERROR,
    FAILED,
    OK,
    OrderAudit,
)
from ansible_collections.c5c3.orders.plugins.module_utils.audit.shared import check_backup, read_delivered
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import korc
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import ChildNames, child_names
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import refs_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    dig,
    name_of,
    namespace_of,
    secret_strings,
    text,
)

KIND = "KeystoneUser"
DELIVERED_KEYS = ("clouds.yaml", "password")


def audit_keystoneuser(ctx: AuditContext, order: Mapping[str, Any], cluster: str) -> OrderAudit:
    namespace, name = namespace_of(order), name_of(order)
    audit = OrderAudit(KIND, namespace, name, cluster)
    refs = refs_of(order, cluster)
    names = child_names(refs.cluster, namespace, name, refs.cp_namespace)
    delivered = read_delivered(audit, ctx, order, cluster, names.delivered, DELIVERED_KEYS)
    if delivered is None:
        return audit
    auth = _check_delivered(audit, names, delivered)
    if auth is None:
        return audit
    _check_authenticates(audit, ctx, order, auth)
    check_backup(audit, ctx, names.remote_key, delivered, DELIVERED_KEYS, DELIVERED_KEYS)
    _check_generation(audit, ctx, order, names, delivered["password"])
    return audit


def _check_delivered(audit: OrderAudit, names: ChildNames, delivered: Dict[str, str]) -> Optional[Dict[str, str]]:
    """The clouds.yaml ``auth`` section, or None when the Secret is incomplete or the file unreadable (then no
    other check can run). A file whose password is not the ``password`` key is a finding, and still audited."""
    missing = [key for key in DELIVERED_KEYS if not delivered.get(key)]
    if missing:
        audit.record("delivered", FAILED, f"the delivered Secret {names.delivered} lacks {', '.join(missing)}")
        return None
    try:
        auth = read_auth(delivered["clouds.yaml"])
    except CloudsYamlError as exc:
        audit.record("delivered", FAILED, f"{names.delivered}: {exc}")
        return None
    if not same(auth["password"], delivered["password"]):
        audit.record("delivered", FAILED, f"in {names.delivered}, the clouds.yaml password is not the password key")
    else:
        audit.record("delivered", OK)
    return auth


def _check_authenticates(audit: OrderAudit, ctx: AuditContext, order: Mapping[str, Any],
                         auth: Mapping[str, str]) -> None:
    outcome = check_token(ctx.keystone, auth, ctx.keystone_url(auth["auth_url"]))
    reported = text(dig(order, "status", "userID"))
    if outcome.state == OK and reported and outcome.user_id != reported:
        audit.record("authenticates", FAILED, f"the credential logs in as user id {outcome.user_id}, but the "
                                              f"order reports status.userID {reported}")
        return
    audit.record("authenticates", outcome.state, "" if outcome.state == OK else outcome.message)


def _check_generation(audit: OrderAudit, ctx: AuditContext, order: Mapping[str, Any], names: ChildNames,
                      password: str) -> None:
    generation = dig(order, "status", "passwordGeneration")
    if not isinstance(generation, int) or isinstance(generation, bool) or generation < 1:
        audit.record("generation", FAILED, "the order reports no status.passwordGeneration")
        return
    current = names.password(generation)
    try:
        user = ctx.get(MANAGEMENT, R.KORC_USER, names.cp_namespace, names.user)
        secret = ctx.get(MANAGEMENT, R.SECRET, names.cp_namespace, current)
    except ReadFailed as exc:
        audit.record("generation", ERROR, str(exc))
        return
    problems = []
    if user is None:
        problems.append(f"the K-ORC User {names.user} is missing")
    else:
        if korc.password_ref(user) != current:
            problems.append(f"the K-ORC User asks for {korc.password_ref(user) or 'no password Secret'}")
        if korc.applied_password_ref(user) != current:
            problems.append(f"K-ORC has applied {korc.applied_password_ref(user) or 'no password Secret'}")
    if secret is None:
        problems.append(f"the password Secret {current} is missing")
    else:
        stored = secret_strings(secret).get("password")
        audit.redactor.add(stored)
        if not same(stored, password):
            problems.append(f"the delivered password is not the one in {current}")
    if problems:
        audit.record("generation", FAILED, f"generation {generation} ({current}): " + "; ".join(problems))
        return
    audit.record("generation", OK)
