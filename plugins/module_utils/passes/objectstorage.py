# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What an object-storage pass reads, and the three sources ``k8s.runner`` drives over it.

One pass decides the three kinds in dependency order -- ObjectStores, then the ObjectStoreAccounts it must
create, then the accounts, then the BucketCredentials -- and each later kind sees the earlier objects *as the
pass settled them*: a status the pass has just written replaces the status it listed, so a store probed ready
is used by its accounts in the same pass, and an account set up by it is used by its credentials.

Reads follow the access contract (docs/install.md) through the skeleton the KeystoneUser pass uses too
(``passes/reader.py``): nothing Secret-bearing is listed cluster-wide and a target cluster is read only in the
namespaces a ControlPlane assigns on it.
- management: ``controlplanes`` and ``bucketcredentials`` cluster-wide; in each ControlPlane namespace
  ``objectstores`` and ``objectstoreaccounts``, and where they (or an order) are: Secrets and PushSecrets carrying
  ``c5c3.io/objectstoreaccount-name``, those carrying ``c5c3.io/bucketcredential-name``, the SecretStores, and one
  GET per store of its admin credential Secret; in each namespace assigned on the management cluster that holds
  orders: the Secrets carrying ``c5c3.io/bucketcredential-name`` (the delivered ``<name>-s3``);
- target ``t``: in each namespace assigned on ``t``: its BucketCredentials and the labelled Secrets.
Gateway reads are made per object, in ``snapshot``, only when the core will use them (``passes.gateways``).
The accounts the pass creates (the short path) are ``Create`` actions like every other write
(``passes/accounts.py``).

A pass limited to namespaces or orders (``Selection``) reconciles the credentials it names and the stores and
accounts they depend on, and the stores and accounts it names itself. A sharded pass (a controller replica's)
holds stores and accounts by their own namespace and credentials by their store's, so every object on a store is
decided by one replica.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import replace
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.reads import guarded_list
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import PassResult, run_pass
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import claim
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import account as account_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import credential as credential_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import rollout
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import snapshot as parts
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import consumers
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.consumers import Workloads
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import store as store_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.snapshot import (
    AccountSnapshot,
    CredentialSnapshot,
    StoreSnapshot,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.spec import parse_store
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.store import StoreView, read_store
from ansible_collections.c5c3.orders.plugins.module_utils.orders import kinds as order_kinds
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds import OrderKind
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import read_control_plane
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import OrderResult
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import ActionError, Decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    dig,
    is_deleting,
    labels_of,
    name_of,
    namespace_of,
    text,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import admit_marked
from ansible_collections.c5c3.orders.plugins.module_utils.passes.accounts import AccountCreation
from ansible_collections.c5c3.orders.plugins.module_utils.passes.gateways import Gateways
from ansible_collections.c5c3.orders.plugins.module_utils.passes.reader import NAMESPACE, ClusterReads, PassReader
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection

ObjectKey = Tuple[str, str]  # (namespace, name)
LABELS = naming.LABELS


def store_ref(order: Mapping[str, Any]) -> ObjectKey:
    """The (namespace, name) of the ObjectStore an order is reconciled against: the one it holds its bucket on
    (``objectstorage.claim``), else the one its spec names."""
    return claim.store_of(order)


def account_store(account: Mapping[str, Any]) -> ObjectKey:
    """An account's store: ``spec.objectStoreRef.name`` in the account's own namespace."""
    return namespace_of(account), text(dig(account, "spec", "objectStoreRef", "name"))


class ObjectStorageReads(PassReader):
    """Everything one object-storage pass lists, indexed, and the objects as the pass has settled them."""

    reports_control_plane_error = True

    def __init__(self, management: Any, targets: Mapping[str, Any], selection: Selection, redactor: Redactor,
                 gateways: Gateways, tenant_mark: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(management, targets, selection, redactor, tenant_mark)
        self.reach = selection.unsharded()  # what a sharded pass reads: the credentials are held by their store
        self.gateways = gateways
        self.done = False
        self.stores: Dict[ObjectKey, Mapping[str, Any]] = {}
        self.accounts: Dict[ObjectKey, Mapping[str, Any]] = {}
        self.namespace_failures: Dict[str, str] = {}   # ControlPlane namespace -> stores/accounts not listed
        self.children_failures: Dict[str, str] = {}    # ControlPlane namespace -> labelled objects not listed
        self.store_failures: Dict[str, str] = {}       # ControlPlane namespace -> SecretStores not listed
        self.secret_stores: Dict[str, Dict[str, Mapping[str, Any]]] = {}
        self.account_children: Dict[ObjectKey, List[Mapping[str, Any]]] = defaultdict(list)
        self.credential_children: Dict[Tuple[str, str, str], List[Mapping[str, Any]]] = defaultdict(list)
        self.rivals: Dict[Tuple[str, str, str], List[Tuple[str, Mapping[str, Any]]]] = defaultdict(list)
        self.wanted_stores: Set[ObjectKey] = set()
        self.wanted_accounts: Set[ObjectKey] = set()
        self.created: Dict[ObjectKey, str] = {}        # accounts this pass created -> the action line
        self.namespace_uids: Dict[Tuple[str, str], Tuple[Optional[str], str]] = {}  # (cluster, ns) -> (uid, error)
        self.workload_lists: Dict[Tuple[str, str], Workloads] = {}  # (cluster, ns) -> its Pods and workloads

    # -- lists --------------------------------------------------------------------------------------------
    def read(self) -> None:
        if self.done:
            return
        self.done = True
        cps = self.read_control_planes()
        if cps is None:
            return
        self._read_orders(self.management, cps, set())
        for namespace in sorted({key[0] for key in self.control_planes}):
            self._read_platform(namespace)
        if self.selection.limited:  # the selection names its orders' namespaces: read them even when withdrawn
            wanted = self.selected_namespaces()

            def extra(_target: ClusterReads) -> Set[str]:
                return wanted
            choose: Callable[[ClusterReads], Set[str]] = extra
        else:  # children first: a target's withdrawn namespace whose orders still have children is read too
            for namespace in sorted({key[0] for key in self.control_planes}):
                self._read_children(namespace)
            choose = self._draining
        self.read_targets(lambda target: self._read_orders(target, cps, choose(target)))
        self._choose()
        for namespace in sorted(self._children_namespaces() - set(self.secret_stores)):  # each namespace once
            self._read_children(namespace)
        for key in sorted(self.wanted_stores):
            self._read_admin_secret(key)
        for cluster in self.clusters:
            if cluster.error is None:
                self.read_delivered(cluster, LABELS.name, write_times=True)
        for cluster in self.clusters:
            for order in cluster.listed:
                self.rivals[store_ref(order) + (claim.bucket_of(order),)].append((cluster.name, order))
        self.read_tenant_marks()

    def _draining(self, target: ClusterReads) -> Set[str]:
        """A target's namespaces whose assignment was withdrawn while orders there still have children: their
        teardown must run, and the access sync keeps the grant there until it has (draining)."""
        return {namespace for cluster, namespace, _name in self.credential_children if cluster == target.name}

    def _read_orders(self, cluster: ClusterReads, cps: List[Mapping[str, Any]], extra: Set[str]) -> None:
        # a credential is held by its store's share, so a failed list anywhere the pass reads may hide its orders
        self.list_orders(cluster, R.BUCKETCREDENTIAL, cps, extra, reach=self.reach, report=self.reach)
        cluster.orders = [o for o in cluster.listed if self.wants_credential(o)]

    def wants_credential(self, order: Mapping[str, Any]) -> bool:
        """Whether the pass reconciles a BucketCredential: a sharded pass by the share of its store's namespace, where
        its account and store are reconciled too (so no two replicas decide one account), else by its own."""
        if not self.selection.holds(store_ref(order)[0]):
            return False
        return self.reach.wants(namespace_of(order), name_of(order))

    def _read_platform(self, namespace: str) -> None:
        service = self.management.service
        errors = []
        for resource, index in ((R.OBJECTSTORE, self.stores), (R.OBJECTSTOREACCOUNT, self.accounts)):
            if not self.management.serves(resource):
                continue
            listing = guarded_list(service, resource, namespace)
            if not listing.ok:
                errors.append(listing.error or "")
            for obj in listing.items:
                index[(namespace, name_of(obj))] = obj
        if errors:
            self.namespace_failures[namespace] = "; ".join(errors)

    def _choose(self) -> None:
        """The stores and accounts this pass reconciles: those selected, and those a selected order needs."""
        for key in self.stores:  # unlimited: every store (of the shares held)
            if self.selection.wants(*key):
                self.wanted_stores.add(key)
        for key, account in self.accounts.items():
            if self.selection.wants(*key):
                self.wanted_accounts.add(key)
                self.wanted_stores.add(account_store(account))
        for cluster in self.clusters:
            for order in cluster.orders:
                store = store_ref(order)
                self.wanted_stores.add(store)
                serving = account_core.account_for(list(self.accounts.values()), *store, namespace_of(order),
                                                   cluster.name)
                if serving is not None:
                    self.wanted_accounts.add((namespace_of(serving), name_of(serving)))
        self.wanted_stores &= set(self.stores)

    def _children_namespaces(self) -> Set[str]:
        needed = {key[0] for key in self.wanted_stores | self.wanted_accounts}
        needed |= {store_ref(o)[0] for c in self.clusters for o in c.orders}
        return needed & {key[0] for key in self.control_planes}

    def _read_children(self, namespace: str) -> None:
        service = self.management.service
        listings = [guarded_list(service, resource, namespace, label)
                    for label in (naming.ACCOUNT_LABEL, LABELS.name) for resource in (R.SECRET, R.PUSHSECRET)]
        errors = [listing.error for listing in listings if not listing.ok]
        if errors:
            self.children_failures[namespace] = "; ".join(e for e in errors if e)
        for listing in listings:
            for obj in listing.items:
                if obj.get("kind") == "Secret":
                    self.redactor.add_secret(obj)
                labels = labels_of(obj)
                if naming.ACCOUNT_LABEL in labels:
                    self.account_children[(namespace, labels[naming.ACCOUNT_LABEL])].append(obj)
                elif LABELS.cluster in labels:  # not a delivered Secret of an order living in this namespace
                    owner = (labels[LABELS.cluster], labels.get(LABELS.namespace, ""), labels.get(LABELS.name, ""))
                    self.credential_children[owner].append(obj)
        stores = guarded_list(service, R.SECRETSTORE, namespace)
        if not stores.ok:
            self.store_failures[namespace] = stores.error or ""
        self.secret_stores[namespace] = {name_of(s): s for s in stores.items}
        for key, account in self.accounts.items():
            if key[0] == namespace:
                self._add_account_key(account)

    def _add_account_key(self, account: Mapping[str, Any]) -> None:
        secret = self.account_key_secret(account)
        if secret is not None:
            self.gateways.add_account_key(account_store(account), name_of(account), secret)

    def _read_admin_secret(self, key: ObjectKey) -> None:
        try:
            spec = parse_store(self.stores[key])
        except OrderSpecError:
            return  # refused on its own status; no credential is needed
        try:
            secret = self.management.service.get(R.SECRET, spec.identity.namespace, spec.admin_secret)
        except KubeError as exc:
            if exc.not_found:
                self.gateways.add_store(spec, None)
            else:
                self.gateways.add_store(spec, None, self.redactor.scrub(exc.summary()))
            return
        self.gateways.add_store(spec, secret)

    def workloads(self, cluster_name: str, namespace: str) -> Workloads:
        """The Pods and workload objects of an order's namespace (``spec.revokeAfterRollout``), listed once per
        pass and namespace, only when an order there waits at the gate (``rollout.waits``)."""
        key = (cluster_name, namespace)
        if key not in self.workload_lists:
            service = self.cluster(cluster_name).service
            listings = [guarded_list(service, resource, namespace, cluster=cluster_name)
                        for resource in (R.POD, *R.WORKLOADS)]
            errors = "; ".join(listing.error or "" for listing in listings if not listing.ok)
            self.workload_lists[key] = Workloads(pods=tuple(listings[0].items), error=errors,
                                                 owners=tuple(o for listing in listings[1:] for o in listing.items))
        return self.workload_lists[key]

    # -- what the sources look up ---------------------------------------------------------------------------
    def store_view(self, key: ObjectKey) -> Optional[StoreView]:
        view = read_store(self.stores.get(key))
        return view if view is not None and view.key == key else None

    def control_plane_of(self, view: Optional[StoreView]) -> Optional[Mapping[str, Any]]:
        if view is None:
            return None
        return self.control_planes.get((view.spec.cp_namespace, view.spec.cp_name))

    def account_key_secret(self, account: Optional[Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
        if account is None:
            return None
        names = naming.AccountNames(name_of(account), namespace_of(account))
        return next((c for c in self.account_children.get((names.namespace, names.account), ())
                     if c.get("kind") == "Secret" and name_of(c) == names.root_key), None)

    def account_of(self, store: ObjectKey, namespace: str, cluster: str) -> Optional[Mapping[str, Any]]:
        return account_core.account_for(list(self.accounts.values()), *store, namespace, cluster)

    def tenant_credentials(self, account: Mapping[str, Any]) -> List[Mapping[str, Any]]:
        """The tenant's BucketCredentials on the account's store, from the tenant's cluster (every one listed)."""
        tenant = (text(dig(account, "spec", "tenant", "namespace")), text(dig(account, "spec", "tenant", "cluster")))
        store = account_store(account)
        cluster = self.find(tenant[1])
        return [o for o in (cluster.listed if cluster is not None else ()) if namespace_of(o) == tenant[0]
                and store_ref(o) == store]

    def namespace_uid(self, cluster: str, namespace: str) -> Tuple[Optional[str], str]:
        """The tenant Namespace's uid on its cluster: ("", "") when there is none, (None, why) when it could not be
        read. One GET per (cluster, namespace) and pass, allowed by ``get`` on namespaces in the per-namespace grant
        (docs/install.md); an account serves only the namespace uid it records (``account.decide_account``)."""
        key = (cluster, namespace)
        if key not in self.namespace_uids:
            self.namespace_uids[key] = self._read_namespace_uid(cluster, namespace)
        return self.namespace_uids[key]

    def _read_namespace_uid(self, cluster: str, namespace: str) -> Tuple[Optional[str], str]:
        reads = self.find(cluster)
        if reads is None:
            return None, f"cluster {cluster} is not registered"
        if reads.error:
            return None, reads.error
        try:
            found = reads.service.get(NAMESPACE, "", namespace)
        except KubeError as exc:
            return ("", "") if exc.not_found else (None, self.redactor.scrub(exc.summary()))
        return text(dig(found, "metadata", "uid")), ""

    def admitted(self, order: Mapping[str, Any], cluster: str, view: StoreView) -> bool:
        cp = self.control_plane_of(view)
        return admit_marked(namespace_of(order), cluster, view.spec.cp_namespace, view.spec.cp_name,
                            read_control_plane(cp) if cp is not None else None, self.tenant_marks) is None

    # -- settling ---------------------------------------------------------------------------------------------
    def settle(self, index: Dict[ObjectKey, Mapping[str, Any]], written: Mapping[ObjectKey, Mapping[str, Any]]) -> None:
        """Objects whose status the pass wrote are seen with that status from now on."""
        for key, obj in written.items():
            if key in index:
                index[key] = obj

    def add_account(self, account: Mapping[str, Any], line: str) -> None:
        """An account the pass created (as the API server returned it): decided, set up and used in this pass."""
        key = (namespace_of(account), name_of(account))
        self.accounts[key] = account
        self.wanted_accounts.add(key)
        self.created[key] = line

    # -- what could not be read -------------------------------------------------------------------------------
    def read_errors(self) -> List[Dict[str, str]]:
        """The reader's (the ControlPlane list included), then the ControlPlane namespaces whose stores or accounts
        could not be listed."""
        errors = super().read_errors()
        errors += [{"cluster": "", "namespace": ns, "error": e} for ns, e in sorted(self.namespace_failures.items())]
        return errors


class _Source:
    """What the three sources share: the reads, the gateways, and each object's final decision (the status the
    runner wrote is what later kinds see)."""

    descriptor: OrderKind = order_kinds.OBJECTSTORE  # each source's kind: resource, decide, failure (orders/kinds/)
    kind = ""
    resource = R.OBJECTSTORE

    def __init__(self, reads: ObjectStorageReads, gateways: Gateways) -> None:
        self.reads = reads
        self.gateways = gateways
        self.final: Dict[Tuple[str, str, str], Tuple[Mapping[str, Any], Decision]] = {}
        self._raw: Dict[Tuple[str, str, str], Mapping[str, Any]] = {}

    def read(self) -> None:
        self.reads.read()

    def _key(self, decision: Decision) -> Tuple[str, str, str]:
        identity = decision.context.identity if decision.context is not None else {}
        return (text(identity.get("cluster")), text(identity.get("namespace")), text(identity.get("name")))

    def _decided(self, cluster: str, raw: Mapping[str, Any], decision: Decision) -> Decision:
        self._raw[(cluster, namespace_of(raw), name_of(raw))] = raw
        self.final[(cluster, namespace_of(raw), name_of(raw))] = (raw, decision)
        return decision

    def on_action_failure(self, decision: Decision, action: Any, error: ActionError) -> Decision:
        rewritten = self._rewrite(decision, action, error)
        key = self._key(decision)
        if key in self._raw:
            self.final[key] = (self._raw[key], rewritten)
        return rewritten

    def _rewrite(self, decision: Decision, action: Any, error: ActionError) -> Decision:
        failure = self.descriptor.on_action_failure
        return failure(decision, action, error) if failure is not None else decision

    def with_live(self, snapshot: Any, _live: Mapping[str, Any]) -> Any:
        return snapshot

    def live_objects(self, _snapshot: Any) -> List[Mapping[str, Any]]:
        return []

    def unreadable(self) -> List[OrderResult]:
        return []

    def read_errors(self) -> List[Dict[str, str]]:
        return []

    def execute_other(self, action: Any) -> None:
        self.gateways.execute(action)

    def written(self, result: Any) -> Dict[ObjectKey, Mapping[str, Any]]:
        """The objects whose status the pass wrote, with that status (management-cluster objects only)."""
        found: Dict[ObjectKey, Mapping[str, Any]] = {}
        for entry in result.results:
            key = (entry.cluster, entry.namespace, entry.name)
            if entry.status_written and key in self.final and entry.kind == self.kind:
                raw, decision = self.final[key]
                if decision.status is not None:
                    found[key[1:]] = {**raw, "status": decision.status}
        return found


class StoreSource(_Source):
    """ObjectStores: readiness for per-bucket credentials, probed when due (``store.probe_due``)."""

    descriptor = order_kinds.OBJECTSTORE
    kind = descriptor.kind
    resource = descriptor.resource

    def orders(self) -> Iterable[Tuple[str, Mapping[str, Any]]]:
        for key in sorted(self.reads.wanted_stores):
            yield "", self.reads.stores[key]

    def snapshot(self, _cluster: str, raw: Mapping[str, Any], now: datetime) -> StoreSnapshot:
        key = (namespace_of(raw), name_of(raw))
        problem = self.gateways.admin_problem(key)
        outcome = None
        if not problem and read_store(raw) is not None and store_core.probe_due(raw, now):
            outcome = self.gateways.probe(key)
        return StoreSnapshot(store=raw, now=now, probe=outcome, admin_secret_problem=problem)

    def reconcile(self, snapshot: StoreSnapshot) -> Decision:
        return self._decided("", snapshot.store, self.descriptor.decide(snapshot))

    def read_errors(self) -> List[Dict[str, str]]:
        return self.reads.read_errors()  # reported once, by the first source of the pass


class AccountSource(_Source):
    """ObjectStoreAccounts: the tenant's RGW account, its key (backed up first), migration and root rotation."""

    descriptor = order_kinds.OBJECTSTOREACCOUNT
    kind = descriptor.kind
    resource = descriptor.resource

    def read(self) -> None:
        """Accounts created by the pass carry no key yet; nothing else to read."""

    def orders(self) -> Iterable[Tuple[str, Mapping[str, Any]]]:
        for key in sorted(self.reads.wanted_accounts):
            yield "", self.reads.accounts[key]

    def snapshot(self, _cluster: str, raw: Mapping[str, Any], now: datetime) -> AccountSnapshot:
        namespace, name = namespace_of(raw), name_of(raw)
        store_key = account_store(raw)
        view = self.reads.store_view(store_key)
        key_user = buckets = None
        if view is not None and view.ready:
            uid = account_core.key_uid(raw)
            if uid:
                key_user = self.gateways.key_user(store_key, uid)
            if key_user is not None and key_user.ok and account_core.wants_buckets(raw):
                buckets = self.gateways.buckets(store_key, name)
        failures = {}
        tenant_uid, tenant_error = self.reads.namespace_uid(text(dig(raw, "spec", "tenant", "cluster")),
                                                            text(dig(raw, "spec", "tenant", "namespace")))
        if tenant_error:
            failures[account_core.TENANT_NAMESPACE] = tenant_error
        if namespace in self.reads.children_failures:
            failures[parts.CHILDREN] = self.reads.children_failures[namespace]
        if namespace in self.reads.store_failures:
            failures[parts.SECRET_STORES] = self.reads.store_failures[namespace]
        return AccountSnapshot(
            account=raw, store=self.reads.stores.get(store_key), now=now,
            children=list(self.reads.account_children.get((namespace, name), ())),
            secret_stores=self.reads.secret_stores.get(namespace, {}),
            control_plane=self.reads.control_plane_of(view), key_user=key_user, buckets=buckets,
            credentials=self.reads.tenant_credentials(raw), read_failures=failures, tenant_uid=tenant_uid)

    def reconcile(self, snapshot: AccountSnapshot) -> Decision:
        return self._decided("", snapshot.account, self.descriptor.decide(snapshot))

    def live_objects(self, snapshot: AccountSnapshot) -> List[Mapping[str, Any]]:
        return list(snapshot.children)


class CredentialSource(_Source):
    """BucketCredentials: the bucket's own IAM user and key slots, backup first, the Secret beside the order."""

    descriptor = order_kinds.BUCKETCREDENTIAL
    kind = descriptor.kind
    resource = descriptor.resource

    def read(self) -> None:
        """Everything was listed before the stores were decided."""

    def orders(self) -> Iterable[Tuple[str, Mapping[str, Any]]]:
        for cluster in self.reads.clusters:
            for order in cluster.orders:
                yield cluster.name, order

    def snapshot(self, cluster_name: str, order: Mapping[str, Any], now: datetime) -> CredentialSnapshot:
        reads = self.reads
        cluster = reads.cluster(cluster_name)
        namespace, name = namespace_of(order), name_of(order)
        store_key = store_ref(order)
        view = reads.store_view(store_key)
        account = reads.account_of(store_key, namespace, cluster_name) if view is not None else None
        account_key = reads.account_key_secret(account)
        failures: Dict[str, str] = {}
        cp_namespace = store_key[0]
        if reads.cp_error:
            failures[parts.CHILDREN] = reads.cp_error
        elif cp_namespace in reads.children_failures:
            failures[parts.CHILDREN] = reads.children_failures[cp_namespace]
        if cp_namespace in reads.store_failures:
            failures[parts.SECRET_STORES] = reads.store_failures[cp_namespace]
        delivered_list = cluster.secrets.get(namespace)
        if delivered_list is not None and not delivered_list.ok:
            failures[parts.DELIVERED] = delivered_list.error or ""
        delivered = next((s for s in (delivered_list.items if delivered_list is not None else ())
                          if name_of(s) == f"{name}-s3"), None)
        snapshot = CredentialSnapshot(
            order=order, cluster=cluster_name, now=now, store=reads.stores.get(store_key),
            control_plane=reads.control_plane_of(view), account=account, account_key=account_key,
            children=[c for c in reads.credential_children.get((cluster_name, namespace, name), ())
                      if namespace_of(c) == cp_namespace],
            delivered=delivered, secret_stores=reads.secret_stores.get(cp_namespace, {}),
            rivals=tuple(reads.rivals.get((*store_key, claim.bucket_of(order)), ())),
            read_failures=failures, tenant_marks=reads.tenant_marks,
            workloads=self._workloads(cluster_name, order, delivered) if rollout.waits(order) else None)
        return self._gateway_reads(snapshot, view)

    def _workloads(self, cluster_name: str, order: Mapping[str, Any],
                   delivered: Optional[Mapping[str, Any]]) -> Workloads:
        """The namespace's Pods and workloads, and when this pass's field manager last wrote the order's delivered
        Secret, from the Secret as listed (``k8s/managed.py`` keeps that time): the rollout gate's reads."""
        service = self.reads.cluster(cluster_name).service
        written = consumers.written_at(delivered, text(getattr(service, "field_manager", "")))
        return replace(self.reads.workloads(cluster_name, namespace_of(order)), secret_written=written)

    def _gateway_reads(self, snapshot: CredentialSnapshot, view: Optional[StoreView]) -> CredentialSnapshot:
        """GetBucketPolicy, then ListAccessKeys and GetUserPolicy of the bucket's IAM user: only for an order the
        core will act on at the gateway (its store ready, its account usable and keyed, admitted or being
        deleted), and each only while the ones before it were answered."""
        order, account = snapshot.order, snapshot.account
        if view is not None and view.ready:
            snapshot = self._key_owners(snapshot, view)
        if view is None or not view.ready or account is None or snapshot.account_key is None:
            return snapshot
        targets = credential_core.gateway_targets(order, account)
        deleting = is_deleting(order)
        if targets is None or not (deleting or self.reads.admitted(order, snapshot.cluster, view)):
            return snapshot
        bucket, read_user = targets
        store_key, account_name = view.key, name_of(account)
        policy = self.gateways.bucket_policy(store_key, account_name, bucket)
        if not read_user or (policy.status is None and not policy.ok):
            return replace(snapshot, bucket_policy=policy)
        keys = self.gateways.user_keys(store_key, account_name, bucket)
        user_policy = names = None
        if keys.ok and not deleting:
            user_policy = self.gateways.user_policy(store_key, account_name, bucket)
            names = self.gateways.user_policy_names(store_key, account_name, bucket)
        return replace(snapshot, bucket_policy=policy, user_keys=keys, user_policy=user_policy,
                       user_policy_names=names)

    def _key_owners(self, snapshot: CredentialSnapshot, view: StoreView) -> CredentialSnapshot:
        """For an order being deleted: who holds each key it recorded (admin reads, at most one per key), the
        teardown's proof that a key is gone even when the order's account is not there to ask."""
        issued = credential_core.teardown_keys(snapshot.order, snapshot.children, snapshot.cluster)
        if not issued:
            return snapshot
        return replace(snapshot, key_owners={k: self.gateways.key_owner(view.key, k) for k in issued})

    def reconcile(self, snapshot: CredentialSnapshot) -> Decision:
        return self._decided(snapshot.cluster, snapshot.order, self.descriptor.decide(snapshot))

    def with_live(self, snapshot: CredentialSnapshot, live: Mapping[str, Any]) -> CredentialSnapshot:
        return replace(snapshot, delivered=live)

    def live_objects(self, snapshot: CredentialSnapshot) -> List[Mapping[str, Any]]:
        return list(snapshot.children)

    def unreadable(self) -> List[OrderResult]:
        """The orders of a cluster (or namespace) that could not be listed, as named by their children."""
        return self.reads.unreadable_orders(self.kind, self.reads.credential_children)


def scrubbed(redactor: Redactor, value: Any) -> Any:
    """``value`` (JSON data) with every known secret masked: a diff shows statuses, and a BucketCredential's status
    names its access key ids, which no diff may show."""
    return json.loads(redactor.scrub(json.dumps(value)))


def create_missing_accounts(reads: ObjectStorageReads, services: Mapping[str, Any], now: datetime) -> PassResult:
    """The short path, run by ``k8s.runner`` like every kind: each account to create is one ``Create``
    (``passes/accounts.py``). Created ones join the pass's accounts at once, as the API server returned them (in
    check mode, its dry run's answer); the result's entries are the creations that failed."""
    creation = AccountCreation(reads)
    result = run_pass(creation, creation.services(services), reads.redactor, now=now)
    failed = PassResult(duration=result.duration)
    for entry in result.results:
        created = creation.created(entry)
        if created is None:
            failed.record(entry)
            continue
        created.setdefault("apiVersion", account_core.API_VERSION)
        created.setdefault("kind", account_core.KIND)
        reads.add_account(created, entry.actions[0])
    return failed


def reconcile_object_storage(reads: ObjectStorageReads, services: Mapping[str, Any], now: datetime,
                             want_diff: bool = False) -> PassResult:
    """One pass over the three kinds in dependency order (stores, missing accounts, accounts, credentials), each
    later kind seeing the statuses the pass wrote; one result, ObjectStores first and failed creations last. An
    account the pass created shows that creation first among its actions."""
    gateways, redactor = reads.gateways, reads.redactor
    stores = StoreSource(reads, gateways)
    results = [run_pass(stores, services, redactor, now=now, want_diff=want_diff)]
    reads.settle(reads.stores, stores.written(results[-1]))
    failed = create_missing_accounts(reads, services, now)
    accounts = AccountSource(reads, gateways)
    results.append(run_pass(accounts, services, redactor, now=now, want_diff=want_diff))
    reads.settle(reads.accounts, accounts.written(results[-1]))
    results.append(run_pass(CredentialSource(reads, gateways), services, redactor, now=now, want_diff=want_diff))

    merged = PassResult()
    for result in results:
        for entry in result.results:
            line = reads.created.get((entry.namespace, entry.name)) if entry.kind == account_core.KIND else None
            merged.record(replace(entry, actions=(line, *entry.actions), changed=True) if line else entry)
        merged.clusters += result.clusters
        merged.diff += [scrubbed(redactor, d) for d in result.diff]
        merged.duration += result.duration
    for entry in failed.results:
        merged.record(entry)
    merged.duration += failed.duration
    return merged
