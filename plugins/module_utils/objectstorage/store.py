# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The ObjectStore: is the gateway ready for per-bucket credentials, and what should the platform fix?

docs/object-storage.md "Readiness causes" and "Design rules and their tests" (rows 1); docs/objectstore-crd.md.
The readiness verdict itself is ``rgw.readiness.classify`` over what the edge's probe observed (the same
classifier the ``rgw_store_info`` module reports); here:
- a ready store is probed at most every 5 minutes and again whenever its spec changes (``probe_due``), so a
  gateway upgrade is picked up with no edit; a store that is not ready is probed again after 30 s, so a fix made
  where no event reaches us (a corrected admin key in the platform's Secret, a gateway brought back) is seen soon;
  between probes the status stands and nothing is written;
- an admin credential Secret that is missing or lacks ``accessKey``/``secretKey`` is AdminCredentialInvalid
  without a probe;
- the condition message names the cause precisely (platform namespace only); tenants only ever see a generic
  StoreNotReady (``credential``).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Dict, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.reasons import (
    INVALID_SPEC,
    PER_BUCKET_CREDENTIALS_READY,
    STORE_CONDITIONS,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.snapshot import StoreSnapshot
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.spec import StoreSpec, parse_store
from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue, timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict, verdict_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import build_decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Decision, DecisionContext
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    condition_is_true,
    dig,
    find_condition,
    generation_of,
    mappings,
    name_of,
    namespace_of,
    text,
)
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.readiness import CREDENTIAL_INVALID

KIND = "ObjectStore"
PROBE_INTERVAL = timedelta(minutes=5)
RETRY_PROBE_INTERVAL = timedelta(seconds=30)  # a store that is not ready
MAX_BACKENDS = 16


@dataclass(frozen=True)
class StoreView:
    """What accounts and credentials read of a store: its spec and its readiness as last probed."""

    spec: StoreSpec
    ready: bool

    @property
    def key(self) -> Tuple[str, str]:
        return self.spec.identity.namespace, self.spec.identity.name


def read_store(raw: Any) -> Optional[StoreView]:
    """None for a store whose spec cannot be read (it is then refused on its own status)."""
    if raw is None:
        return None
    try:
        spec = parse_store(raw)
    except OrderSpecError:
        return None
    return StoreView(spec, condition_is_true(raw, PER_BUCKET_CREDENTIALS_READY))


def probe_interval(ready: bool) -> timedelta:
    return PROBE_INTERVAL if ready else RETRY_PROBE_INTERVAL


def probe_due(raw: Any, now: datetime) -> bool:
    status = dig(raw, "status")
    last = timestamps.parse(dig(status, "lastProbeTime"))
    if last is None or dig(status, "observedGeneration") != generation_of(raw):
        return True
    return now - last >= probe_interval(condition_is_true(raw, PER_BUCKET_CREDENTIALS_READY))


@dataclass(frozen=True)
class StoreFields:
    last_probe: Optional[datetime]
    accounts_supported: Optional[bool]
    backends: Tuple[str, ...]

    def render(self) -> Dict[str, Any]:
        status: Dict[str, Any] = {}
        if self.last_probe is not None:
            status["lastProbeTime"] = timestamps.render(self.last_probe)
        if self.accounts_supported is not None:
            status["accountsSupported"] = self.accounts_supported
        if self.backends:
            status["backends"] = list(self.backends)
        return status

    def summary(self) -> Dict[str, Any]:
        return {}


def _carried(raw: Any) -> StoreFields:
    status = dig(raw, "status")
    supported = dig(status, "accountsSupported")
    backends = dig(status, "backends")
    return StoreFields(
        last_probe=timestamps.parse(dig(status, "lastProbeTime")),
        accounts_supported=supported if isinstance(supported, bool) else None,
        backends=tuple(b for b in backends if isinstance(b, str))[:MAX_BACKENDS] if isinstance(backends, list)
        else (),
    )


def decide_store(snapshot: StoreSnapshot) -> Decision:
    raw = snapshot.store
    fields = _carried(raw)
    previous = dig(raw, "status") if isinstance(dig(raw, "status"), dict) else {}
    unknown = Verdict(False, "Probing", "the store has not been probed yet")
    verdict = verdict_of(mappings(previous.get("conditions")), PER_BUCKET_CREDENTIALS_READY, unknown)
    generation = dig(previous, "observedGeneration") if isinstance(dig(previous, "observedGeneration"), int) else 0
    wait: Optional[timedelta] = requeue.REFUSAL
    try:
        parse_store(raw)
    except OrderSpecError as err:
        verdict, generation = Verdict(False, INVALID_SPEC, f"the store cannot be read: {err}"), generation_of(raw)
    else:
        if snapshot.admin_secret_problem:
            verdict = Verdict(False, CREDENTIAL_INVALID, snapshot.admin_secret_problem)
            generation = generation_of(raw)
            wait = requeue.ERROR_RETRY
        elif snapshot.probe is not None:
            probe = snapshot.probe
            verdict = Verdict(probe.ready, probe.cause or "Ready", probe.message or "the store is ready for "
                              "per-bucket credentials")
            fields = StoreFields(snapshot.now, probe.accounts_served, tuple(probe.backends)[:MAX_BACKENDS]
                                 or fields.backends)
            generation = generation_of(raw)
        last = fields.last_probe or snapshot.now
        wait = requeue.earliest([wait, requeue.until(timestamps.add(last, probe_interval(verdict.ok)), snapshot.now)
                                 or requeue.MINIMUM])
    context = DecisionContext(
        now=snapshot.now, generation=generation, conditions=STORE_CONDITIONS, previous=previous, fields=fields,
        verdicts={PER_BUCKET_CREDENTIALS_READY: verdict},
        identity={"kind": KIND, "name": name_of(raw), "namespace": namespace_of(raw), "cluster": ""},
    )
    return build_decision(context, [], wait)


def condition_message(raw: Any) -> str:
    return text(dig(find_condition(raw, PER_BUCKET_CREDENTIALS_READY), "message"))
