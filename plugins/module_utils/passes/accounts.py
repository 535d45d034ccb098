# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The short path of an object-storage pass: the ObjectStoreAccounts its BucketCredentials need, created through
the Decision contract (``orders/plan.py``) like every other write.

Which accounts are missing is the core's rule, ``objectstorage/account.py`` ``accounts_to_create`` (the rule the
unit tests check is the one that runs). This module adds only what the pass knows and the core cannot:

- a store namespace whose ObjectStores or ObjectStoreAccounts could not be listed gets no account (one may exist
  unseen, and a second would hold the tenant's buckets apart);
- the tenant Namespace's uid, which binds the account to it, is read only for an account about to be created (one
  GET per tenant, ``ObjectStorageReads.namespace_uid``), so a converged pass reads nothing more.

Each manifest becomes one ``Create`` of its own decision, which ``k8s.runner`` carries out with the same executor as
every other action: a server-side dry run in check mode, one action line per creation, a failure reported on the
account with the redacted error and retried. The object the API server returned (its uid, resourceVersion,
generation) joins the pass at once (``created``), so the account is decided, set up and used by its credentials in
the same pass.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Dict, Iterable, List, Mapping, Optional, Protocol, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import account as account_core
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import OrderResult
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    LEG_ORDER,
    ActionError,
    Create,
    Decision,
    describe,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, name_of, namespace_of, text
from ansible_collections.c5c3.orders.plugins.module_utils.orders.requeue import ERROR_RETRY
from ansible_collections.c5c3.orders.plugins.module_utils.orders.summary import decision_summary
from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import TenantMarks
from ansible_collections.c5c3.orders.plugins.module_utils.passes.reader import ClusterReads

ObjectKey = Tuple[str, str]  # (namespace, name)
Obj = Dict[str, Any]


class CreationReads(Protocol):
    """What the short path reads of the pass (``ObjectStorageReads``), as settled by the stores decided before."""

    clusters: List[ClusterReads]
    stores: Dict[ObjectKey, Mapping[str, Any]]
    accounts: Dict[ObjectKey, Mapping[str, Any]]
    control_planes: Dict[ObjectKey, Mapping[str, Any]]
    namespace_failures: Dict[str, str]
    tenant_marks: TenantMarks

    def namespace_uid(self, cluster: str, namespace: str) -> Tuple[Optional[str], str]: ...


class Creates(Protocol):
    """The one verb the short path writes with (``KubeService.create``): the stored object, or ``KubeError``."""

    def create(self, obj: Mapping[str, Any]) -> Obj: ...


class RecordingCreates:
    """A cluster's service that keeps what the API server answered to each create. The executor reports only the
    action line; the account decided next must be the object as stored, as a list would return it."""

    def __init__(self, service: Creates) -> None:
        self.service = service
        self.answers: Dict[Tuple[str, str, str], Obj] = {}  # (kind, namespace, name) -> the created object

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    def create(self, obj: Mapping[str, Any]) -> Obj:
        created = self.service.create(obj)
        self.answers[(text(obj.get("kind")), namespace_of(obj), name_of(obj))] = created
        return created


def missing_accounts(reads: CreationReads) -> List[Obj]:
    """The accounts the pass creates, each bound to its tenant Namespace's uid as read now ("" when it could not
    be read: bound by the account's own pass once it can, ``account.decide_account``)."""
    credentials = [(cluster.name, order) for cluster in reads.clusters for order in cluster.orders]

    def wanted(uids: Optional[Mapping[Tuple[str, str], str]]) -> List[Obj]:
        manifests = account_core.accounts_to_create(credentials, list(reads.stores.values()),
                                                    list(reads.accounts.values()), reads.control_planes, uids,
                                                    reads.tenant_marks)
        return [m for m in manifests if namespace_of(m) not in reads.namespace_failures]

    needed = wanted(None)
    if not needed:
        return []
    uids: Dict[Tuple[str, str], str] = {}
    for manifest in needed:
        tenant = tenant_of(manifest)
        uid, _error = reads.namespace_uid(*tenant)
        uids[tenant] = uid or ""
    return wanted(uids)


def tenant_of(manifest: Mapping[str, Any]) -> Tuple[str, str]:
    """(cluster, namespace) of the tenant an account serves."""
    return text(dig(manifest, "spec", "tenant", "cluster")), text(dig(manifest, "spec", "tenant", "namespace"))


def creation_decision(manifest: Mapping[str, Any]) -> Decision:
    """One account to create: its ``Create``, no status of its own yet (its own decision follows in the pass)."""
    cluster, namespace = tenant_of(manifest)
    where = f"cluster {cluster}" if cluster else "the management cluster"
    create = Create(obj=manifest, cluster="", leg=LEG_ORDER,
                    why=f"the first order of namespace {namespace} on {where} needs the store")
    decision = Decision(actions=[create], status=None, requeue_after=None, ready=False, reasons={}, summary={})
    decision.summary = {"kind": account_core.KIND, "name": name_of(manifest), "namespace": namespace_of(manifest),
                        "cluster": "", **decision_summary(decision)}
    return decision


def creation_failed(decision: Decision, action: Any, error: ActionError) -> Decision:
    """The account could not be created: reported on it with the redacted error, tried again soon."""
    return Decision(actions=decision.actions, status=None, requeue_after=ERROR_RETRY, ready=False, reasons={},
                    summary=dict(decision.summary, error=f"{describe(action)} failed: {error.message}"))


class AccountCreation:
    """The short path as an ``OrderSource`` of ``k8s.runner``: one entry per account to create."""

    kind = account_core.KIND
    resource = R.OBJECTSTOREACCOUNT

    def __init__(self, reads: CreationReads) -> None:
        self.reads = reads
        self.manifests: List[Obj] = []
        self._recording: Optional[RecordingCreates] = None

    def services(self, services: Mapping[str, Any]) -> Dict[str, Any]:
        """The pass's services, the management cluster's keeping what each create returned."""
        self._recording = RecordingCreates(services[""])
        return {**services, "": self._recording}

    def created(self, entry: OrderResult) -> Optional[Obj]:
        """The account ``entry`` reports created, as the API server returned it; None when it was not created."""
        if entry.error or self._recording is None:
            return None
        return self._recording.answers.get((self.kind, entry.namespace, entry.name))

    # -- the OrderSource ------------------------------------------------------------------------------------
    def read(self) -> None:
        """Everything was read before the stores were decided; only the tenant Namespaces' uids are read here."""
        self.manifests = missing_accounts(self.reads)

    def orders(self) -> Iterable[Tuple[str, Mapping[str, Any]]]:
        for manifest in self.manifests:
            yield "", manifest

    def snapshot(self, _cluster: str, manifest: Mapping[str, Any], _now: datetime) -> Mapping[str, Any]:
        return manifest

    def reconcile(self, manifest: Mapping[str, Any]) -> Decision:
        return creation_decision(manifest)

    def on_action_failure(self, decision: Decision, action: Any, error: ActionError) -> Decision:
        return creation_failed(decision, action, error)

    def with_live(self, snapshot: Mapping[str, Any], _live: Mapping[str, Any]) -> Mapping[str, Any]:
        return snapshot  # no read_on_conflict: a 409 is a failure like any other

    def live_objects(self, _snapshot: Mapping[str, Any]) -> List[Mapping[str, Any]]:
        return []

    def unreadable(self) -> List[OrderResult]:
        return []

    def read_errors(self) -> List[Dict[str, str]]:
        return []  # reported by the stores' source
