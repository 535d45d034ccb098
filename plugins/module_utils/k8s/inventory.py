# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Everything a KeystoneUser pass reads, in a handful of list calls, indexed for per-order lookups.

Reads do not grow with the number of orders: one list per kind and cluster, children found by their
``c5c3.io/keystoneuser-*`` labels. A pass limited to named orders narrows the labelled lists with a
set-based selector (``c5c3.io/keystoneuser-name in (...)``) instead of sending a GET per order.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R

LABEL_NAME = "c5c3.io/keystoneuser-name"
LABEL_NAMESPACE = "c5c3.io/keystoneuser-namespace"
LABEL_CLUSTER = "c5c3.io/keystoneuser-cluster"
DEFAULT_STORE = "openbao-tenant-store"
MAX_SELECTOR_NAMES = 50


def labels_of(obj):
    return (obj.get("metadata") or {}).get("labels") or {}


def ns_name(obj):
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


def child_selector(order_names):
    """Our labelled objects: all of them, or (for a targeted pass) only the named orders'."""
    if order_names is None or len(order_names) > MAX_SELECTOR_NAMES:
        return LABEL_NAME
    return "%s in (%s)" % (LABEL_NAME, ",".join(sorted(order_names)))


class ClusterInventory:
    """One cluster's orders, the delivered Secrets beside them and the credential orders naming them."""

    def __init__(self, name, service, wanted):
        self.name = name
        self.service = service
        self.served = service.served(R.KEYSTONEUSER.api_version)
        orders = service.list(R.KEYSTONEUSER) if R.KEYSTONEUSER.plural in self.served else []
        self.orders = [o for o in orders if wanted(name, *ns_name(o))]
        self.secrets = []
        self.delivered = {}
        self.role_assignments = None
        self.app_credentials = None

    def load(self, selector):
        """Second round of lists, once every cluster's orders (hence the selector) are known."""
        if self.orders or self.name == "":
            self.secrets = self.service.list(R.SECRET, label_selector=selector)
        for secret in self.secrets:
            self.delivered[ns_name(secret)] = secret
        self.role_assignments = self._by_namespace(R.ROLE_ASSIGNMENT)
        self.app_credentials = self._by_namespace(R.APP_CREDENTIAL)

    def _by_namespace(self, resource):
        """Objects of a credential-order kind by namespace; None when the cluster does not serve it."""
        if resource.plural not in self.served:
            return None
        index = {}
        if self.orders:
            for obj in self.service.list(resource):
                index.setdefault(ns_name(obj)[0], []).append(obj)
        return index

    def delivered_for(self, namespace, name):
        secret = self.delivered.get((namespace, name + "-credentials"))
        if secret is not None and labels_of(secret).get(LABEL_NAME) == name:
            return secret
        return None

    def credential_orders(self, namespace):
        ra = None if self.role_assignments is None else self.role_assignments.get(namespace, [])
        ac = None if self.app_credentials is None else self.app_credentials.get(namespace, [])
        return ra, ac


class ManagementInventory(ClusterInventory):
    """The management cluster also holds the ControlPlanes, the stores and every order's children."""

    def __init__(self, service, wanted):
        ClusterInventory.__init__(self, "", service, wanted)
        self.control_planes = {}
        self.children = {}
        self._stores = None
        self._cluster_stores = None

    def load(self, selector):
        ClusterInventory.load(self, selector)
        self.control_planes = dict((ns_name(cp), cp) for cp in self.service.list(R.CONTROLPLANE))
        objects = list(self.secrets)
        objects += self.service.list(R.KORC_USER, label_selector=selector)
        objects += self.service.list(R.PUSHSECRET, label_selector=selector)
        for obj in objects:
            labels = labels_of(obj)
            if LABEL_CLUSTER in labels:  # a child; delivered Secrets carry no cluster label
                key = (labels[LABEL_CLUSTER], labels.get(LABEL_NAMESPACE, ""), labels.get(LABEL_NAME, ""))
                self.children.setdefault(key, []).append(obj)

    def children_for(self, cluster, namespace, name, cp_namespace):
        return [c for c in self.children.get((cluster, namespace, name), ()) if ns_name(c)[0] == cp_namespace]

    def control_plane(self, namespace, name):
        return self.control_planes.get((namespace, name))

    def store_for(self, control_plane):
        """(store or None, kind): ``spec.secretStoreRef`` (empty kind = ClusterSecretStore), else
        the namespace's SecretStore ``openbao-tenant-store``. Listed once, on first use."""
        ref = (control_plane.get("spec") or {}).get("secretStoreRef") or {}
        cp_ns = ns_name(control_plane)[0]
        if ref.get("name") and (ref.get("kind") or "ClusterSecretStore") == "ClusterSecretStore":
            if self._cluster_stores is None:
                self._cluster_stores = dict((ns_name(s)[1], s) for s in self.service.list(R.CLUSTERSECRETSTORE))
            return self._cluster_stores.get(ref["name"]), "ClusterSecretStore"
        if self._stores is None:
            self._stores = dict((ns_name(s), s) for s in self.service.list(R.SECRETSTORE))
        return self._stores.get((cp_ns, ref.get("name") or DEFAULT_STORE)), "SecretStore"
