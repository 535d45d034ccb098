# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The read skeleton every pass shares: which clusters and namespaces it may read, and what it could not read.

Reads follow the access contract (docs/install.md): the management cluster is discovered and its ControlPlanes
listed first, and a target cluster is read only in the namespaces some ControlPlane assigns on it (plus those a
limited selection names, or a teardown still drains), so a target is not read at all when the management cluster
or its ControlPlanes cannot be. Orders are listed across the management cluster and per such namespace on a
target; the Secrets beside the orders only in the namespaces that hold orders and may be read.

Every list may fail on its own (``k8s.reads``): a cluster that cannot be read at all, or a namespace whose orders
could not be listed, is reported (``read_errors``) together with the orders the children in the ControlPlane
namespaces still name (``unreadable_orders``); everything else is reconciled normally. Each pass
(``passes/keystoneuser.py``, ``passes/objectstorage.py``) adds what it reads beside its orders.

Given the platform's allowlist (the module option ``tenant_namespace_selector``), a pass lists the Namespaces carrying
the mark, once per cluster that holds orders (``read_tenant_marks``): admission then refuses an order in an assigned
namespace the list did not return (``orders/tenantmarks.py``). A list that fails is reported like every other read
error, and that cluster's orders are not checked.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Set, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.reads import Listing, guarded_list
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import read_control_plane
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import OrderResult
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import labels_of, name_of, namespace_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import NO_MARKS, TenantMarks
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection

ObjectKey = Tuple[str, str]  # (namespace, name)
OrderKey = Tuple[str, str, str]  # (cluster, namespace, name); cluster "" = management
# Cluster-scoped and read only (no action names it, so ``k8s.resources`` leaves it out): ``collection()`` is
# /api/v1/namespaces (the marked ones, ``read_tenant_marks``); ``item("", name)`` /api/v1/namespaces/<name>, which a
# RoleBinding in that namespace may grant (an account's tenant uid, ``passes/objectstorage.py``).
NAMESPACE = R.Resource("v1", "Namespace", "namespaces")
# The module option of both passes (doc fragment ``tenant_namespace_selector``): the platform's allowlist.
TENANT_MARK_OPTION = dict(type="dict")


def tenant_mark_problem(mark: Optional[Mapping[str, Any]]) -> Optional[str]:
    """Why ``tenant_namespace_selector`` cannot be used, or None. A label value is a string: an unquoted ``true``
    would never match, and every order would be refused."""
    bad = sorted(str(key) for key, value in (mark or {}).items() if not isinstance(value, str))
    if bad:
        return f"tenant_namespace_selector maps label keys to string values (quote \"true\"), not for {', '.join(bad)}"
    return None


def assigned_namespaces(control_planes: Iterable[Mapping[str, Any]], cluster: str) -> Set[str]:
    """Every namespace some ControlPlane assigns on ``cluster`` ("" = management)."""
    found: Set[str] = set()
    for raw in control_planes:
        found.update(ns for ns, on in read_control_plane(raw).assignments if on == cluster)
    return found


class ClusterReads:
    """One cluster's orders and the objects beside them, by namespace."""

    def __init__(self, name: str, service: Any) -> None:
        self.name = name
        self.service = service
        self.served: FrozenSet[str] = frozenset()
        self.error: Optional[str] = None          # the cluster could not be read at all
        self.orders: List[Mapping[str, Any]] = []
        self.listed: List[Mapping[str, Any]] = []  # every order listed, wanted or not: the rivals are drawn from it
        self.order_failures: Dict[str, str] = {}  # namespace -> why its orders could not be listed
        self.secrets: Dict[str, Listing] = {}     # namespace -> labelled Secrets
        self._secret_names: Dict[str, Dict[str, Mapping[str, Any]]] = {}  # namespace -> name -> Secret (lazily)
        self.role_assignments: Dict[str, Listing] = {}
        self.app_credentials: Dict[str, Listing] = {}
        self.read_namespaces: Set[str] = set()   # a target's namespaces read: assigned, and draining
        self.listed_from: Set[str] = set()       # the namespaces whose orders were listed ("" = cluster-wide)

    def serves(self, resource: R.Resource) -> bool:
        return resource.plural in self.served

    def secret_named(self, namespace: str, name: str) -> Optional[Mapping[str, Any]]:
        """The listed Secret ``name`` in ``namespace`` (the first, as listed), found through an index built once per
        namespace: looking through the list for each order made a pass quadratic in its orders."""
        index = self._secret_names.get(namespace)
        if index is None:
            listing = self.secrets.get(namespace)
            index = {}
            for secret in listing.items if listing is not None else ():
                index.setdefault(name_of(secret), secret)
            self._secret_names[namespace] = index
        return index.get(name)

    def discover(self) -> bool:
        try:
            self.served = self.service.served(R.C5C3)
        except KubeError as exc:
            self.error = f"cluster {self.name or 'management'} cannot be read: {exc.summary()}"
            return False
        return True


class PassReader:
    """The clusters of one pass (management first, then the targets by name) and the skeleton of its reads."""

    # whether a ControlPlane list that failed is reported on its own in ``read_errors`` (besides landing on the
    # orders that need it and on every target, which is then not read)
    reports_control_plane_error = False

    def __init__(self, management: Any, targets: Mapping[str, Any], selection: Selection,
                 redactor: Redactor, tenant_mark: Optional[Mapping[str, str]] = None) -> None:
        self.clusters = [ClusterReads("", management)] + [ClusterReads(n, s) for n, s in sorted(targets.items())]
        self.selection = selection
        self.redactor = redactor
        self.control_planes: Dict[ObjectKey, Mapping[str, Any]] = {}
        self.cp_error: Optional[str] = None
        # the allowlist's labels; None (or empty: every namespace carries it) checks nothing and lists nothing
        self.tenant_mark: Optional[Dict[str, str]] = dict(tenant_mark) if tenant_mark else None
        self.tenant_marks: TenantMarks = NO_MARKS
        self.mark_failures: Dict[str, str] = {}   # cluster -> why its Namespaces could not be listed

    @property
    def management(self) -> ClusterReads:
        return self.clusters[0]

    def find(self, name: str) -> Optional[ClusterReads]:
        """The cluster ``name`` ("" = management), or None when it is not part of the pass."""
        return next((c for c in self.clusters if c.name == name), None)

    def cluster(self, name: str) -> ClusterReads:
        found = self.find(name)
        if found is None:
            raise KeyError(f"cluster {name!r} is not part of the pass")
        return found

    # -- the skeleton ---------------------------------------------------------------------------------------
    def read_control_planes(self) -> Optional[List[Mapping[str, Any]]]:
        """Discover the management cluster and list its ControlPlanes (they say which namespaces a target may be read
        in). None when the management cluster cannot be read: then no target is read either."""
        management = self.management
        if not management.discover():
            for target in self.clusters[1:]:
                target.error = (f"cluster {target.name} is not read: its namespaces come from the ControlPlanes, "
                                f"and {management.error}")
            return None
        cps = guarded_list(management.service, R.CONTROLPLANE) if management.serves(R.CONTROLPLANE) else Listing("")
        if not cps.ok:
            self.cp_error = cps.error
        self.control_planes = {(namespace_of(cp), name_of(cp)): cp for cp in cps.items}
        return list(cps.items)

    def selected_namespaces(self) -> Set[str]:
        """The namespaces a limited selection names: read on a target even where the assignment was withdrawn."""
        return set(self.selection.namespaces) | {o.split("/", 1)[0] for o in self.selection.orders}

    def read_targets(self, read_orders: Callable[[ClusterReads], None]) -> None:
        """``read_orders`` for each target cluster that can be discovered, unless the ControlPlanes (the namespaces
        it may be read in) could not be listed."""
        for target in self.clusters[1:]:
            if self.cp_error:
                target.error = f"cluster {target.name} is not read: {self.cp_error}"
            elif target.discover():
                read_orders(target)

    def list_orders(self, cluster: ClusterReads, resource: R.Resource, control_planes: List[Mapping[str, Any]],
                    extra: Set[str], reach: Selection, report: Selection) -> None:
        """Every order of ``resource`` on ``cluster`` into ``cluster.listed``: one list across the management
        cluster (it failing makes the cluster unreadable); on a target one per namespace assigned on it or in
        ``extra`` that ``reach`` may want orders in, a failed one reported when ``report`` may want orders there."""
        if not cluster.serves(resource):
            return
        if cluster.name == "":
            listing = guarded_list(cluster.service, resource)
            if not listing.ok:
                cluster.error = listing.error
            cluster.listed = list(listing.items)
            cluster.listed_from = {""}
            return
        cluster.read_namespaces = assigned_namespaces(control_planes, cluster.name) | extra
        for namespace in sorted(cluster.read_namespaces):
            if not reach.may_want_namespace(namespace):
                continue
            listing = guarded_list(cluster.service, resource, namespace, cluster=cluster.name)
            if not listing.ok and report.may_want_namespace(namespace):
                cluster.order_failures[namespace] = listing.error or ""
            cluster.listed += listing.items
            cluster.listed_from.add(namespace)

    def readable_namespaces(self, cluster: ClusterReads) -> Set[str]:
        """The namespaces of ``cluster`` the pass may read beside its orders: assigned on it, or read for a
        selection or a teardown."""
        return assigned_namespaces(self.control_planes.values(), cluster.name) | cluster.read_namespaces

    def read_delivered(self, cluster: ClusterReads, selector: str, write_times: bool = False) -> None:
        """The labelled Secrets (``selector``) in each readable namespace of ``cluster`` that holds orders: the
        delivered Secrets beside them. Each is a secret to the redactor before anything can report it.
        ``write_times``: keep when this pass's field manager wrote each (``k8s/managed.py``), for a kind that
        needs it (the rollout gate of object storage); a KeystoneUser pass does not hold them."""
        holding = {namespace_of(o) for o in cluster.orders}
        for namespace in sorted(holding & self.readable_namespaces(cluster)):
            listing = guarded_list(cluster.service, R.SECRET, namespace, selector, cluster.name, write_times)
            for secret in listing.items:
                self.redactor.add_secret(secret)
            cluster.secrets[namespace] = listing

    def read_tenant_marks(self) -> None:
        """With an allowlist, one list per readable cluster that holds orders of the Namespaces carrying the mark (a
        label selector: the marked ones only, however many namespaces the cluster has). Called last, once every order
        (rivals included) is listed."""
        if self.tenant_mark is None:
            return
        selector = ",".join(f"{key}={value}" for key, value in sorted(self.tenant_mark.items()))
        marked: Dict[str, Dict[str, Mapping[str, str]]] = {}
        for cluster in self.clusters:
            if cluster.error is not None or not cluster.listed:
                continue
            listing = guarded_list(cluster.service, NAMESPACE, None, selector, cluster.name)
            if not listing.ok:
                self.mark_failures[cluster.name] = f"{listing.error}; the tenant mark is not checked there"
                continue
            marked[cluster.name] = {name_of(ns): labels_of(ns) for ns in listing.items}
        self.tenant_marks = TenantMarks(self.tenant_mark, marked)

    # -- what could not be read ---------------------------------------------------------------------------
    def read_errors(self) -> List[Dict[str, str]]:
        """The clusters that could not be read, the namespaces whose orders could not be listed, then the clusters
        whose marked Namespaces could not be listed."""
        errors = [{"cluster": c.name, "error": c.error} for c in self.clusters if c.error]
        if self.reports_control_plane_error and self.cp_error and not self.management.error:
            errors.append({"cluster": "", "error": self.cp_error})
        errors += [{"cluster": c.name, "namespace": ns, "error": e}
                   for c in self.clusters for ns, e in sorted(c.order_failures.items())]
        errors += [{"cluster": name, "error": e} for name, e in sorted(self.mark_failures.items())]
        return errors

    def unreadable_orders(self, kind: str, named: Iterable[OrderKey]) -> List[OrderResult]:
        """The wanted orders of a cluster (or namespace) that could not be listed, as ``named`` by their children
        (cluster, namespace, name): each reported with the error, to be tried again."""
        entries = []
        for cluster in self.clusters:
            if cluster.error is None and not cluster.order_failures:
                continue
            found = {(ns, n) for (cl, ns, n) in named if cl == cluster.name and self.selection.wants(ns, n)}
            for namespace, name in sorted(found):
                if cluster.error is None and namespace not in cluster.order_failures:
                    continue
                entries.append(OrderResult.failed(kind, name, namespace, cluster.name,
                                                  cluster.error or cluster.order_failures[namespace]))
        return entries
