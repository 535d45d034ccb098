# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The one place a KeystoneUser decision is assembled, on every path of a pass.

Admitted, refused, frozen, gated on the admin credential or tearing down: each path hands its verdicts, status
fields and actions here, and ``orders.outcome.build_decision`` composes the status and the summary.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Dict, List, Optional, Sequence

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import (
    KEYSTONEUSER_CONDITIONS,
    verdicts,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import OrderStatus, StatusFields
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import build_decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Claim, Decision, DecisionContext
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, generation_of, text

KIND = "KeystoneUser"


def decide(
    snapshot: Snapshot,
    status: OrderStatus,
    fields: StatusFields,
    user: Verdict,
    delivery: Verdict,
    actions: List[Any],
    wait: Optional[timedelta],
    *,
    claims: Sequence[Claim] = (),
    requeue_cap: Optional[timedelta] = None,
    writes_status: bool = True,
    deleting: bool = False,
) -> Decision:
    identity: Dict[str, Any] = {
        "kind": KIND,
        "name": text(dig(snapshot.order, "metadata", "name")),
        "namespace": text(dig(snapshot.order, "metadata", "namespace")),
        "cluster": snapshot.cluster,
    }
    if deleting:
        identity["deleting"] = True
    context = DecisionContext(
        now=snapshot.now,
        generation=generation_of(snapshot.order),
        conditions=KEYSTONEUSER_CONDITIONS,
        previous=status.raw,
        fields=fields,
        verdicts=verdicts(user, delivery),
        identity=identity,
        claims=tuple(claims),
        requeue_cap=requeue_cap,
        writes_status=writes_status,
    )
    return build_decision(context, actions, wait)
