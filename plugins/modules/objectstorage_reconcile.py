#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: objectstorage_reconcile
short_description: Reconcile every ObjectStore, ObjectStoreAccount and BucketCredential in one pass
version_added: 0.2.0
description:
  - One pass over the three C(c5c3.io/v1alpha1) object-storage kinds, in dependency order. First every
    ObjectStore - its gateway is probed at most every 5 minutes (every 30 s while not ready) and again after a
    spec change, and its C(PerBucketCredentialsReady) condition names the cause when it is not ready. Then the ObjectStoreAccount of
    every tenant whose first admitted BucketCredential needs a ready store and has none yet is created. Then
    every ObjectStoreAccount - its RGW account and root user, its key kept in C(<account>-root-key) in the
    ControlPlane namespace and backed up to OpenBao first, migration and root-key rotation. Then every
    BucketCredential - the bucket, the IAM user named after it with its bucket-scoped inline policy, the grant in
    the bucket policy, the key slots, the backup, and the delivered Secret C(<name>-s3) beside the order.
  - One module for the three kinds, because a credential depends on its account and its store as decided in the
    same pass - a store probed ready is used by the tenant's new account at once, and an account set up in the
    pass is used by its credentials - where three modules would each see the others' state of the previous pass.
    Each later kind sees the earlier objects with the status this pass wrote.
  - Reads follow the collection's access contract - nothing Secret-bearing is listed cluster-wide, a target
    cluster is read only in the namespaces a ControlPlane assigns on it. Gateway requests are made only when a
    decision needs them; a converged pass writes nothing to Kubernetes or to a gateway.
  - BucketCredentials on target clusters (O(target_clusters)) get their status, finalizer and delivered Secret
    there; their children, their account and their store stay on the management cluster. A target cluster that
    cannot be read is reported in RV(unreadable) with the orders its children still name.
  - A failure on one object is reported on that object (its conditions and RV(orders)) and does not stop the
    pass.
  - Never returns an access key or a secret key; every key the pass handles is kept out of results, conditions,
    Events and error texts.
author:
  - c5c3.orders developers (@c5c3)
extends_documentation_fragment:
  - c5c3.orders.k8s_auth
  - c5c3.orders.target_clusters
  - c5c3.orders.shards
  - c5c3.orders.tenant_namespace_selector
  - c5c3.orders.attributes
attributes:
  check_mode:
    support: full
    details:
      - Every Kubernetes write is sent as a server-side dry run (C(dryRun=All)), so admission runs and nothing is
        stored.
      - No gateway write is sent; the actions report what would be done. Gateway reads are still made.
  diff_mode:
    support: full
    details: Per changed object, the status before and after and the actions taken (never Secret data).
requirements:
  - kubernetes
  - boto3
options:
  namespaces:
    description:
      - Only reconcile the BucketCredentials in these namespaces (on every cluster), with the stores and accounts
        they need, and the stores and accounts in these namespaces. Default is every namespace.
    type: list
    elements: str
  orders:
    description:
      - Only reconcile these objects, each given as C(<namespace>/<name>) (a BucketCredential, an ObjectStore or
        an ObjectStoreAccount), and the stores and accounts the named credentials need. Used for event-driven
        passes.
    type: list
    elements: str
  gateway_validate_certs:
    description:
      - Whether to verify the TLS certificate of every gateway an ObjectStore names (C(https://) endpoints).
    type: bool
    default: true
  gateway_ca_cert:
    description:
      - CA bundle to verify the gateways with.
    type: path
  gateway_timeout:
    description:
      - Seconds to wait for one gateway request (connecting takes at most 10 of them).
      - A request that gets no answer within it (or whose connection is refused) is not sent again, and the pass
        sends nothing more to that gateway (C(scheme://host:port)) - every later request to it fails at once as
        unanswered - so a frozen gateway costs one pass at most about one timeout. Its stores and orders get a
        transient condition (C(AdminAPIUnreachable), C(GatewayError)) and come back at their requeue; nothing is
        written or revoked for them. The gateways are listed in RV(unresponsive_gateways).
    type: float
    default: 20
  field_manager:
    description:
      - The server-side apply field manager, and the field manager of every other write.
    type: str
    default: c5c3-orders
"""

EXAMPLES = r"""
- name: Reconcile every object-storage object of the management cluster
  c5c3.orders.objectstorage_reconcile:
    kubeconfig: ~/.kube/config
  register: pass_result

- name: Reconcile one order after an event, also on a target cluster
  c5c3.orders.objectstorage_reconcile:
    orders:
      - tenant-a/images
    target_clusters:
      - name: edge-1
        kubeconfig: /etc/c5c3/edge-1.kubeconfig

- name: Reach the gateways with a private CA
  c5c3.orders.objectstorage_reconcile:
    gateway_ca_cert: /etc/c5c3/rgw-ca.pem

- name: See what a pass would do, without writing to Kubernetes or to a gateway
  c5c3.orders.objectstorage_reconcile:
  check_mode: true
  diff: true
"""

RETURN = r"""
orders:
  description:
    - One summary per object the pass looked at - ObjectStores first, then ObjectStoreAccounts, then
      BucketCredentials. Never contains a key.
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: The object's kind.
      type: str
      sample: BucketCredential
    name:
      description: The object's name.
      type: str
      sample: images
    namespace:
      description: The object's namespace.
      type: str
      sample: tenant-a
    cluster:
      description: The object's cluster; empty for the management cluster.
      type: str
      sample: ""
    ready:
      description:
        - Whether the object's Ready condition is True (an ObjectStore has none - its C(PerBucketCredentialsReady)).
      type: bool
      sample: true
    reasons:
      description: Condition type to reason.
      type: dict
      sample: {"Ready": "AllReady", "CredentialReady": "CredentialIssued", "DeliveryReady": "Delivered"}
    changed:
      description: Whether anything was written for this object (Kubernetes or a gateway).
      type: bool
      sample: false
    actions:
      description:
        - The writes made for this object, one line each (kind, name and why; never data). Gateway calls read
          C(call gateway <store> <operation> <target>). In check mode, what would be written.
      type: list
      elements: str
      sample: ["call gateway openstack/rgw s3.create_bucket images: create bucket images in the tenant's account"]
    status_written:
      description: Whether the object's status was written.
      type: bool
      sample: false
    requeue_after:
      description: Seconds until this object wants another pass; null waits for events.
      type: float
      sample: 600.0
    error:
      description: The failure this object met, if any (the gateway's status and error code, never a key).
      type: str
      returned: on failure
      sample: "call gateway openstack/rgw s3.create_bucket images: HTTP 403 AccessDenied"
unreadable:
  description:
    - The clusters, or namespaces, that could not be read, with the error text.
  returned: always
  type: list
  elements: dict
  sample: [{"cluster": "edge-1", "error": "cluster edge-1 cannot be read: no response from the API server"}]
requeue_after:
  description: The earliest requeue any object asked for, in seconds; null when every object waits for events.
  returned: always
  type: float
  sample: 300.0
api_requests:
  description: The number of Kubernetes API requests the pass made, over all clusters.
  returned: always
  type: int
  sample: 12
api_writes:
  description: How many of RV(api_requests) were writes (dry runs in check mode).
  returned: always
  type: int
  sample: 0
gateway_requests:
  description:
    - The number of HTTP requests the pass sent to gateways (admin ops, IAM and S3; retries included).
  returned: always
  type: int
  sample: 4
gateway_writes:
  description: How many of RV(gateway_requests) carried a gateway write; 0 in check mode and in a converged pass.
  returned: always
  type: int
  sample: 0
unresponsive_gateways:
  description:
    - The gateways (C(scheme://host:port)) that gave no answer within O(gateway_timeout) in this pass, or refused the
      connection; the pass sent them nothing more after that.
  returned: always
  type: list
  elements: str
  sample: ["http://127.0.0.1:7480"]
errors:
  description: The number of objects whose pass met a failure, plus the number of RV(unreadable) entries.
  returned: always
  type: int
  sample: 0
duration:
  description: Wall time of the pass in seconds.
  returned: always
  type: float
  sample: 0.42
"""

import os
import traceback
from datetime import datetime, timezone

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.module import (
    TARGET_CLUSTER_OPTIONS,
    C5c3K8sModule,
    ModuleFailure,
)
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.passes.gateways import (
    ClientFactory,
    GatewayOptions,
    Gateways,
)
from ansible_collections.c5c3.orders.plugins.module_utils.passes.objectstorage import (
    ObjectStorageReads,
    reconcile_object_storage,
)
from ansible_collections.c5c3.orders.plugins.module_utils.passes.reader import TENANT_MARK_OPTION, tenant_mark_problem
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from ansible_collections.c5c3.orders.plugins.module_utils.passes.sharding import SHARDS_OPTION, shards_problem
from ansible_collections.c5c3.orders.plugins.module_utils.rgw import boto


class ObjectStorageReconcile(C5c3K8sModule):
    argument_spec = dict(
        namespaces=dict(type="list", elements="str"),
        orders=dict(type="list", elements="str"),
        target_clusters=dict(type="list", elements="dict", options=TARGET_CLUSTER_OPTIONS),
        gateway_validate_certs=dict(type="bool", default=True),
        gateway_ca_cert=dict(type="path"),
        gateway_timeout=dict(type="float", default=20),
        field_manager=dict(type="str", default="c5c3-orders"),
        shards=SHARDS_OPTION,
        tenant_namespace_selector=TENANT_MARK_OPTION,
    )
    module_kwargs = dict(supports_check_mode=True)

    def _check(self):
        p = self.params
        if not boto.HAS_BOTO3:
            self.ansible.fail_json(msg=missing_required_lib("boto3"), exception="".join(
                traceback.format_exception_only(type(boto.BOTO3_IMPORT_ERROR), boto.BOTO3_IMPORT_ERROR)))
        for entry in p["orders"] or []:
            if entry.count("/") != 1 or not all(entry.split("/")):
                raise ModuleFailure(f"orders entries are <namespace>/<name>, got {entry!r}")
        if shards_problem(p.get("shards")):
            raise ModuleFailure(shards_problem(p.get("shards")))
        if tenant_mark_problem(p["tenant_namespace_selector"]):
            raise ModuleFailure(tenant_mark_problem(p["tenant_namespace_selector"]))
        if p["gateway_timeout"] <= 0:
            raise ModuleFailure("gateway_timeout must be a positive number of seconds")
        if p["gateway_ca_cert"] and not os.path.isfile(p["gateway_ca_cert"]):
            raise ModuleFailure(f"gateway_ca_cert {p['gateway_ca_cert']} is not a readable file")

    def run(self):
        self._check()
        p = self.params
        dry_run = self.ansible.check_mode
        services = self.services(p["field_manager"], dry_run)
        management = services[""]
        targets = {name: service for name, service in services.items() if name}
        redactor = Redactor()
        options = GatewayOptions(p["gateway_validate_certs"], p["gateway_ca_cert"], p["gateway_timeout"])
        factory = ClientFactory(options)
        gateways = Gateways(management, redactor, dry_run, factory)
        selection = Selection.of(p["namespaces"], p["orders"], p["shards"])
        reads = ObjectStorageReads(management, targets, selection, redactor, gateways, p["tenant_namespace_selector"])
        want_diff = self.ansible._diff
        try:
            result = reconcile_object_storage(reads, services, datetime.now(timezone.utc), want_diff)
        finally:
            self.hide(redactor.written)
        out = dict(
            changed=result.changed, orders=result.orders, unreadable=result.clusters,
            requeue_after=result.requeue_after, api_requests=self.api_requests, api_writes=self.api_writes,
            gateway_requests=gateways.requests, gateway_writes=gateways.writes,
            unresponsive_gateways=list(factory.unresponsive.endpoints()),
            errors=result.errors + len(result.clusters), duration=round(result.duration, 3),
        )
        if want_diff:
            out["diff"] = result.diff
        return out


def main():
    ObjectStorageReconcile()()


if __name__ == "__main__":
    main()
