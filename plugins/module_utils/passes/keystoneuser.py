# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a KeystoneUser pass reads, and each order's snapshot built from it.

Reads follow the access contract (docs/install.md): nothing Secret-bearing is listed cluster-wide, and a target
cluster is read only in the namespaces assigned on it. The skeleton -- discovery, the ControlPlanes, the orders per
cluster and namespace, the delivered Secrets, what could not be read -- is ``passes/reader.py``'s, shared with the
object-storage pass; this module adds what a KeystoneUser needs beside its orders.

Management cluster: ``controlplanes``, ``keystoneusers`` and the two credential-order kinds cluster-wide; in each
ControlPlane namespace an order needs: Secrets, K-ORC Users and PushSecrets carrying ``c5c3.io/keystoneuser-name``,
and the SecretStores; in each namespace assigned on the management cluster that holds orders: the labelled
Secrets. Target cluster ``t``: in each namespace assigned on ``t`` (by any ControlPlane): its KeystoneUsers,
labelled Secrets and credential orders. A pass limited to named orders narrows the labelled lists with a set-based
selector (``c5c3.io/keystoneuser-name in (...)``) and reads only those orders' namespaces.

Every list may fail on its own (``k8s.reads``): the orders that need it get the error through their snapshot's
``read_failures``, a cluster that cannot be read at all is reported with the orders the management cluster's
children still name (``PassReader.unreadable_orders``), and everything else is reconciled normally.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.reads import Listing, guarded_list
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import collision, snapshot as parts
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import (
    LABEL_CLUSTER,
    LABEL_NAME,
    LABEL_NAMESPACE,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import refs_of
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot
from ansible_collections.c5c3.orders.plugins.module_utils.orders import kinds as order_kinds
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import read_control_plane
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import OrderResult
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import ActionError, Decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    is_deleting,
    labels_of,
    name_of,
    namespace_of,
)
from ansible_collections.c5c3.orders.plugins.module_utils.passes.reader import (
    ClusterReads,
    PassReader,
    assigned_namespaces,
)
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from ansible_collections.c5c3.orders.plugins.module_utils.passes.snapshot import CachedReads

MAX_SELECTOR_NAMES = 50


def child_selector(order_names: Optional[Set[str]]) -> str:
    """Our labelled objects: all of them, or (for a targeted pass) only the named orders'."""
    if order_names is None or len(order_names) > MAX_SELECTOR_NAMES:
        return LABEL_NAME
    return f"{LABEL_NAME} in ({','.join(sorted(order_names))})"


class KeystoneUserSource(PassReader):
    """The KeystoneUser ``OrderSource`` of ``k8s.runner``."""

    descriptor = order_kinds.KEYSTONEUSER  # the kind's resource, decide and failure functions (orders/kinds/)
    kind = descriptor.kind
    resource = descriptor.resource
    # Each order's snapshot is built from the lists alone and its decision touches nothing shared, so the runner
    # may carry out several orders' actions side by side (each order's own actions stay in order).
    concurrent_orders = True

    def __init__(self, management: Any, targets: Mapping[str, Any], selection: Selection,
                 new_password: Callable[[], str], redactor: Redactor,
                 keystone_internal_urls: Optional[Mapping[str, str]] = None,
                 tenant_mark: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(management, targets, selection, redactor, tenant_mark)
        self.limited = selection.limited
        self.new_password = new_password
        self.internal_urls = dict(keystone_internal_urls or {})
        self._cp_views: Dict[Tuple[str, str], Any] = {}  # each ControlPlane read once for the whole pass
        self.children: Dict[Tuple[str, str, str], List[Mapping[str, Any]]] = defaultdict(list)
        self.children_failures: Dict[str, str] = {}       # ControlPlane namespace -> error
        self.stores: Dict[str, Dict[str, Mapping[str, Any]]] = {}
        self.store_failures: Dict[str, str] = {}
        self.owners: Dict[Tuple[str, str], Set[Tuple[str, str, str]]] = defaultdict(set)
        self.rivals: Dict[Tuple[str, str, str], List[Tuple[str, Mapping[str, Any]]]] = defaultdict(list)
        # a sharded pass decides beside other replicas: when it listed every order it ranks against (collision)
        self.orders_listed_at: Optional[datetime] = None

    # -- reads -------------------------------------------------------------------------------------
    def read(self) -> None:
        cps = self.read_control_planes()
        if cps is None:
            return
        if self.selection.shard_count and not self.limited:
            self.orders_listed_at = datetime.now(timezone.utc)
        self._read_orders(self.management, cps, set())
        if self.limited:  # the selection names its orders' namespaces: read them on targets even when withdrawn
            wanted = self.selected_namespaces()
            self.read_targets(lambda target: self._read_orders(target, cps, wanted))
            self._read_children(child_selector({name_of(o) for c in self.clusters for o in c.orders}))
        else:  # children first: a target's withdrawn namespace whose orders still have children is read too
            self._read_children(LABEL_NAME)
            self.read_targets(lambda target: self._read_orders(target, cps, self._draining(target)))
            self._read_children(LABEL_NAME)  # a target's teardown may name a ControlPlane namespace not read yet
        for cluster in self.clusters:
            if cluster.error is None:
                self._read_beside_orders(cluster, LABEL_NAME if not self.limited else child_selector(
                    {name_of(o) for c in self.clusters for o in c.orders}))
        if self.selection.shard_count and self.limited:
            self._list_rivals_for_new_claims(cps)
        self._index_rivals()
        self.read_tenant_marks()

    def _draining(self, target: ClusterReads) -> Set[str]:
        """The namespaces of a target whose assignment was withdrawn while orders there still have children: their
        teardown must run, and the access sync keeps the grant there until it has (draining)."""
        return {namespace for cluster, namespace, _name in self.children if cluster == target.name}

    def _read_orders(self, cluster: ClusterReads, cps: List[Mapping[str, Any]], extra: Set[str]) -> None:
        # a sharded pass lists the other shares' orders too: they rank against its own for a user name (collision);
        # a failed list is this pass's error only where its own shares may hold orders
        self.list_orders(cluster, R.KEYSTONEUSER, cps, extra, reach=self.selection.unsharded(), report=self.selection)
        cluster.orders = [o for o in cluster.listed if self.selection.wants(namespace_of(o), name_of(o))]

    def _cp_namespaces(self) -> Set[str]:
        """The ControlPlane namespaces whose children the pass needs: every ControlPlane's (a limited pass: those
        its orders name), and those a teardown names whose ControlPlane is gone."""
        needed = set() if self.limited else {namespace for namespace, _name in self.control_planes}
        for cluster in self.clusters:
            for order in cluster.orders:
                refs = refs_of(order, cluster.name)
                if (refs.cp_namespace, refs.cp_name) in self.control_planes or is_deleting(order):
                    needed.add(refs.cp_namespace)
        return needed

    def _read_children(self, selector: str) -> None:
        service = self.clusters[0].service
        for namespace in sorted(self._cp_namespaces() - set(self.stores)):  # each namespace read once
            listings = [guarded_list(service, R.SECRET, namespace, selector),
                        guarded_list(service, R.KORC_USER, namespace, selector),
                        guarded_list(service, R.PUSHSECRET, namespace, selector)]
            errors = [lst.error for lst in listings if not lst.ok]
            if errors:
                self.children_failures[namespace] = "; ".join(e for e in errors if e)
            for listing in listings:
                for obj in listing.items:
                    labels = labels_of(obj)
                    if LABEL_CLUSTER not in labels:
                        continue  # a delivered Secret (of an order in the ControlPlane namespace): not a child
                    if obj.get("kind") == "Secret":
                        self.redactor.add_secret(obj)
                    key = (labels[LABEL_CLUSTER], labels.get(LABEL_NAMESPACE, ""), labels.get(LABEL_NAME, ""))
                    self.children[key].append(obj)
                    if obj.get("kind") == "User" and collision.NAME_KEY_LABEL in labels:
                        self.owners[(namespace, labels[collision.NAME_KEY_LABEL])].add(key)
            if self.limited:
                self._read_owners(service, namespace)
            stores = guarded_list(service, R.SECRETSTORE, namespace)
            if not stores.ok:
                self.store_failures[namespace] = stores.error or ""
            self.stores[namespace] = {name_of(s): s for s in stores.items}

    def _read_owners(self, service: Any, namespace: str) -> None:
        """A limited pass sees only its orders' children: find every owner of their names with one narrow list."""
        keys = sorted({collision.name_key(refs_of(o, c.name).user_name) for c in self.clusters for o in c.orders
                       if refs_of(o, c.name).cp_namespace == namespace})
        if not keys or len(keys) > MAX_SELECTOR_NAMES:
            return
        listing = guarded_list(service, R.KORC_USER, namespace, f"{collision.NAME_KEY_LABEL} in ({','.join(keys)})")
        if not listing.ok:
            self.children_failures[namespace] = listing.error or ""
        for user in listing.items:
            labels = labels_of(user)
            self.owners[(namespace, labels.get(collision.NAME_KEY_LABEL, ""))].add(
                (labels.get(LABEL_CLUSTER, ""), labels.get(LABEL_NAMESPACE, ""), labels.get(LABEL_NAME, "")))

    def _read_beside_orders(self, cluster: ClusterReads, selector: str) -> None:
        self.read_delivered(cluster, selector)
        holding = {namespace_of(o) for o in cluster.orders}
        if not holding:
            return
        assigned = self.readable_namespaces(cluster)
        for resource, index in ((R.ROLE_ASSIGNMENT, cluster.role_assignments),
                                (R.APP_CREDENTIAL, cluster.app_credentials)):
            if not cluster.serves(resource):
                continue
            if cluster.name == "":  # not secret: one list for the whole management cluster
                listing = guarded_list(cluster.service, resource)
                for namespace in holding:
                    index[namespace] = Listing(listing.what, [o for o in listing.items
                                                              if namespace_of(o) == namespace], listing.error)
            else:
                for namespace in sorted(holding & assigned):
                    index[namespace] = guarded_list(cluster.service, resource, namespace, cluster=cluster.name)

    def _list_rivals_for_new_claims(self, cps: List[Mapping[str, Any]]) -> None:
        """A sharded targeted pass (its orders may come from the controller's watch cache, which can lag behind an
        order another replica's share just got) lists every order, on every cluster, once one of its orders holds
        no User yet: a new claim ranks against all of them (``collision.settle_wait``). An order that holds its
        User keeps it whatever the others ask for, so a repair never pays for this list."""
        holding = set().union(*self.owners.values()) if self.owners else set()
        if all((c.name, namespace_of(o), name_of(o)) in holding for c in self.clusters for o in c.orders):
            return
        self.orders_listed_at = datetime.now(timezone.utc)
        for cluster in self.clusters:
            if cluster.error is not None or not cluster.serves(R.KEYSTONEUSER):
                continue
            cached = isinstance(cluster.service, CachedReads)  # what came from the cache is listed again
            service = cluster.service.service if cached else cluster.service
            done = set() if cached else cluster.listed_from
            if cluster.name == "":
                listings = [] if "" in done else [guarded_list(service, R.KEYSTONEUSER)]
            else:
                listings = [guarded_list(service, R.KEYSTONEUSER, namespace, cluster=cluster.name)
                            for namespace in sorted(assigned_namespaces(cps, cluster.name) - done)]
            known = {(namespace_of(o), name_of(o)) for o in cluster.listed}
            cluster.listed += [o for listing in listings for o in listing.items
                               if (namespace_of(o), name_of(o)) not in known]

    def _index_rivals(self) -> None:
        for cluster in self.clusters:
            for order in cluster.listed:
                self.rivals[collision.claim_key(order, cluster.name)].append((cluster.name, order))

    # -- per order ---------------------------------------------------------------------------------
    def orders(self) -> Iterable[Tuple[str, Mapping[str, Any]]]:
        for cluster in self.clusters:
            for order in cluster.orders:
                yield cluster.name, order

    def snapshot(self, cluster_name: str, order: Mapping[str, Any], now: datetime) -> Snapshot:
        cluster = self.cluster(cluster_name)
        namespace, name = namespace_of(order), name_of(order)
        refs = refs_of(order, cluster_name)
        failures: Dict[str, str] = {}
        if refs.cp_namespace in self.children_failures:
            failures[parts.CHILDREN] = self.children_failures[refs.cp_namespace]
        if refs.cp_namespace in self.store_failures:
            failures[parts.SECRET_STORES] = self.store_failures[refs.cp_namespace]
        secrets = cluster.secrets.get(namespace)
        if secrets is not None and not secrets.ok:
            failures[parts.DELIVERED] = secrets.error or ""
        role_assignments = self._credential_orders(cluster, cluster.role_assignments, R.ROLE_ASSIGNMENT, namespace,
                                                   failures, parts.ROLE_ASSIGNMENTS)
        app_credentials = self._credential_orders(cluster, cluster.app_credentials, R.APP_CREDENTIAL, namespace,
                                                  failures, parts.APP_CREDENTIALS)
        if self.cp_error:
            failures[parts.CHILDREN] = self.cp_error
        delivered = cluster.secret_named(namespace, f"{name}-credentials")
        key = collision.claim_key(order, cluster_name)
        cp_key = (refs.cp_namespace, refs.cp_name)
        control_plane = self.control_planes.get(cp_key)
        if control_plane is not None and cp_key not in self._cp_views:
            self._cp_views[cp_key] = read_control_plane(control_plane)
        return Snapshot(
            order=order,
            cluster=cluster_name,
            now=now,
            control_plane=control_plane,
            control_plane_view=self._cp_views.get(cp_key),
            secret_stores=self.stores.get(refs.cp_namespace, {}),
            children=[c for c in self.children.get((refs.cluster, namespace, name), ())
                      if namespace_of(c) == refs.cp_namespace],
            delivered=delivered,
            role_assignments=role_assignments,
            app_credentials=app_credentials,
            new_password=self.new_password,
            rivals=tuple(self.rivals.get(key, ())),
            orders_listed_at=self.orders_listed_at,
            owners=tuple(sorted(self.owners.get((refs.cp_namespace, collision.name_key(refs.user_name)), ()))),
            read_failures=failures,
            keystone_internal_url=self.internal_urls.get(f"{refs.cp_namespace}/{refs.cp_name}", ""),
            tenant_marks=self.tenant_marks,
        )

    @staticmethod
    def _credential_orders(cluster: ClusterReads, index: Dict[str, Listing], resource: R.Resource, namespace: str,
                           failures: Dict[str, str], part: str) -> Optional[List[Mapping[str, Any]]]:
        if not cluster.serves(resource):
            return None  # the cluster does not serve the kind: nothing can hold the order
        listing = index.get(namespace)
        if listing is None:
            return []
        if not listing.ok:
            failures[part] = listing.error or ""
        return list(listing.items)

    def reconcile(self, snapshot: Snapshot) -> Decision:
        return self.descriptor.decide(snapshot)

    def on_action_failure(self, decision: Decision, action: Any, error: ActionError) -> Decision:
        failure = self.descriptor.on_action_failure
        return failure(decision, action, error) if failure is not None else decision

    def with_live(self, snapshot: Snapshot, live: Mapping[str, Any]) -> Snapshot:
        return replace(snapshot, delivered=live)

    def live_objects(self, snapshot: Snapshot) -> List[Mapping[str, Any]]:
        return list(snapshot.children)

    # -- what could not be read (``read_errors``: the reader's) ---------------------------------------
    def unreadable(self) -> List[OrderResult]:
        """The orders of a cluster (or namespace) that could not be listed, as named by their children."""
        return self.unreadable_orders(self.kind, self.children)
