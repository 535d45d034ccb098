# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The order kinds the audit knows, each a resource and one function ``(context, order, cluster) -> OrderAudit``.

Adding a kind is adding its function and a row here: listing, selection, target clusters, counting and the
module's result are the same for every kind.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping

from ansible_collections.c5c3.orders.plugins.module_utils.audit.bucketcredential import audit_bucketcredential
from ansible_collections.c5c3.orders.plugins.module_utils.audit.context import AuditContext
from ansible_collections.c5c3.orders.plugins.module_utils.audit.keystoneuser import audit_keystoneuser
from ansible_collections.c5c3.orders.plugins.module_utils.audit.outcome import OrderAudit
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import Resource


@dataclass(frozen=True)
class KindAudit:
    resource: Resource
    audit: Callable[[AuditContext, Mapping[str, Any], str], OrderAudit]


KINDS: Dict[str, KindAudit] = {
    "KeystoneUser": KindAudit(R.KEYSTONEUSER, audit_keystoneuser),
    "BucketCredential": KindAudit(R.BUCKETCREDENTIAL, audit_bucketcredential),
}
