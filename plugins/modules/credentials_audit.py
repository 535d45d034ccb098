#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: credentials_audit
short_description: Prove that every delivered credential works, is backed up and is current
version_added: 0.2.0
description:
  - Audits every credential order (C(KeystoneUser), C(BucketCredential)) of the management cluster and of the
    given target clusters, read-only, and returns per order what holds and what does not, in four checks.
  - C(delivered) - KeystoneUser - the Secret C(<name>-credentials) beside the order is there with C(clouds.yaml)
    and C(password), the file reads as a client reads it, and its password is the C(password) key.
    BucketCredential - the Secret C(<name>-s3) holds C(AWS_ACCESS_KEY_ID), C(AWS_SECRET_ACCESS_KEY), C(endpoint),
    C(bucket) (the order's) and C(region), and the C(slot<N>-*) pair of every slot in C(status.slots) with the
    access key id the status records.
  - C(authenticates) - KeystoneUser - Keystone issues a token (C(POST /v3/auth/tokens), password method, unscoped)
    for the C(auth) section of the delivered C(clouds.yaml), for the user id the order reports in
    C(status.userID). BucketCredential - a signed C(ListObjectsV2) (C(max-keys=1)) on the bucket succeeds with
    every delivered key, at the delivered endpoint.
  - C(backup) - the OpenBao KV v2 backup at the order's path holds the same secret values as the delivered Secret.
  - C(generation) - KeystoneUser - the K-ORC User asks for and has applied the password Secret of
    C(status.passwordGeneration), and that Secret holds the delivered password. BucketCredential - each slot's key
    Secret of the generation C(status.slots) reports holds the recorded access key id and the delivered secret key
    (skipped for an account-scoped credential, which has no slots).
  - An order that has delivered nothing yet, or is being deleted, is listed with a note and no checks.
  - Never returns a password, a secret key, a token or a Secret's data; values are compared as SHA-256 digests.
  - Findings do not fail the task unless O(fail_on_findings) is set.
author:
  - c5c3.orders developers (@c5c3)
extends_documentation_fragment:
  - c5c3.orders.k8s_auth
  - c5c3.orders.target_clusters
  - c5c3.orders.attributes
attributes:
  check_mode:
    support: full
    details: The module only reads (Kubernetes GETs and lists, one Keystone login per order, OpenBao reads); it
      runs the same in check mode and always reports C(changed=false).
  diff_mode:
    support: none
notes:
  - A check is C(ok), C(failed) (the audit proved something wrong), C(error) (it could not prove anything, for
    example Keystone or OpenBao did not answer, or a read was forbidden) or C(skipped) (it does not apply, for
    example no OpenBao token was given). C(failed) and C(error) are findings.
  - Requests per order - a few Kubernetes GETs (the delivered Secret, and the K-ORC User and password Secret or
    the key Secrets), one OpenBao read, and one Keystone login or one S3 request per delivered key.
  - The Kubernetes reads need what the controller is granted (C(get) on Secrets in the assigned namespaces and the
    ControlPlane's namespace, K-ORC Users there, and list on the order kinds); the OpenBao token needs C(read) on
    the backups' paths, for example C(kv-v2/data/openstack/keystone/*) and C(kv-v2/data/objectstorage/*).
seealso:
  - module: c5c3.orders.keystoneuser_reconcile
requirements:
  - kubernetes (the Python client)
  - PyYAML
  - boto3 (for BucketCredential orders)
options:
  kinds:
    description:
      - The order kinds to audit.
    type: list
    elements: str
    choices: [BucketCredential, KeystoneUser]
    default: [BucketCredential, KeystoneUser]
  namespaces:
    description:
      - Only audit the orders in these namespaces (on every cluster). Default is every namespace.
    type: list
    elements: str
  orders:
    description:
      - Only audit these orders, each given as C(<namespace>/<name>).
    type: list
    elements: str
  keystone_urls:
    description:
      - Where to reach Keystone instead of a delivered C(auth_url), keyed by that C(auth_url). For an audit run
        outside the cluster whose delivered Secrets name the in-cluster Keystone Service.
    type: dict
    default: {}
  keystone_ca_cert:
    description:
      - CA bundle to verify Keystone's certificate with (HTTPS is always verified). Default is the system's.
    type: path
  s3_endpoints:
    description:
      - Where to reach an object store instead of a delivered C(endpoint), keyed by that C(endpoint).
    type: dict
    default: {}
  s3_ca_cert:
    description:
      - CA bundle to verify the object stores' certificates with (HTTPS is always verified). Default is the system's.
    type: path
  openbao_addr:
    description:
      - OpenBao's address, for example C(https://openbao.example.com:8200).
      - Defaults to E(BAO_ADDR), then E(VAULT_ADDR). Without an address and a token the C(backup) check is skipped.
    type: str
  openbao_token:
    description:
      - A token allowed to read the backups. Defaults to E(BAO_TOKEN), then E(VAULT_TOKEN).
    type: str
  openbao_mount:
    description:
      - The KV version 2 mount the backups are under (the SecretStore's C(path)).
    type: str
    default: kv-v2
    aliases: [mount]
  openbao_ca_cert:
    description:
      - CA bundle to verify OpenBao's certificate with (HTTPS is always verified). Default is the system's.
    type: path
  timeout:
    description:
      - Seconds to wait for each Keystone, S3 and OpenBao request.
    type: float
    default: 15
  fail_on_findings:
    description:
      - Fail the task when any order has a finding or a list could not be read. The result is returned either way.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Audit every KeystoneUser credential of the management cluster
  c5c3.orders.credentials_audit:
    openbao_addr: https://openbao.example.com:8200
    openbao_token: "{{ audit_openbao_token }}"
  register: audit

- name: Show the findings
  ansible.builtin.debug:
    var: audit.findings

- name: Audit two tenants, on a target cluster too, and fail on any finding
  c5c3.orders.credentials_audit:
    namespaces: [tenant-a, tenant-b]
    target_clusters:
      - name: edge-1
        kubeconfig: /etc/c5c3/edge-1.kubeconfig
    fail_on_findings: true

- name: Audit from outside the cluster, reaching Keystone through its public endpoint
  c5c3.orders.credentials_audit:
    keystone_urls:
      http://cp-keystone.openstack.svc:5000/v3: https://keystone.example.com/v3
"""

RETURN = r"""
orders:
  description: One entry per order looked at, sorted by kind, cluster, namespace and name. Never contains a secret.
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: The order's kind.
      type: str
      sample: KeystoneUser
    namespace:
      description: The order's namespace.
      type: str
      sample: tenant-a
    name:
      description: The order's name.
      type: str
      sample: workflow
    cluster:
      description: The order's cluster; empty for the management cluster.
      type: str
      sample: ""
    audited:
      description: Whether any check ran (false for an order that delivered nothing yet or is being deleted).
      type: bool
      sample: true
    clean:
      description: Whether the order was audited and no check is C(failed) or C(error).
      type: bool
      sample: true
    note:
      description: Why an order was not audited; empty otherwise.
      type: str
      sample: ""
    checks:
      description: Check name to state (C(ok), C(failed), C(error), C(skipped)).
      type: dict
      sample: {"delivered": "ok", "authenticates": "ok", "backup": "ok", "generation": "ok"}
    findings:
      description: The checks that are C(failed) or C(error), with a message naming what was found.
      type: list
      elements: dict
      sample: [{"check": "authenticates", "state": "failed",
                "message": "Keystone refused the credential (HTTP 401) at http://keystone:5000/v3/auth/tokens"}]
findings:
  description: Every finding of every order in one list, each with the order's kind, namespace, name and cluster.
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "KeystoneUser", "namespace": "tenant-a", "name": "workflow", "cluster": "", "check": "backup",
            "state": "failed", "message": "no backup at kv-v2/openstack/keystone/openstack/workflow-1a2b3c4d-user/service-accounts/credentials"}]
summary:
  description: Counts over the audit.
  returned: always
  type: dict
  contains:
    orders:
      description: Orders looked at.
      type: int
    audited:
      description: Orders with at least one check.
      type: int
    clean:
      description: Audited orders without findings.
      type: int
    with_findings:
      description: Orders with at least one finding.
      type: int
    not_audited:
      description: Orders that delivered nothing yet or are being deleted.
      type: int
    unreadable:
      description: Entries of RV(unreadable).
      type: int
  sample: {"orders": 3, "audited": 2, "clean": 2, "with_findings": 0, "not_audited": 1, "unreadable": 0}
unreadable:
  description: The lists that failed (their orders were not audited), with the cluster, kind and error.
  returned: always
  type: list
  elements: dict
  sample: [{"cluster": "edge-1", "kind": "KeystoneUser", "error": "cannot list keystoneusers in namespace t: HTTP 403 Forbidden"}]
api_requests:
  description: The number of Kubernetes API requests the audit made, over all clusters.
  returned: always
  type: int
  sample: 7
duration:
  description: Wall time of the audit in seconds.
  returned: always
  type: float
  sample: 0.42
"""

import time

from ansible.module_utils.basic import env_fallback, missing_required_lib

from ansible_collections.c5c3.orders.plugins.module_utils.audit.cloudsyaml import HAS_YAML

from ansible_collections.c5c3.orders.plugins.module_utils.audit.context import MANAGEMENT, AuditContext
from ansible_collections.c5c3.orders.plugins.module_utils.audit.http import Endpoint
from ansible_collections.c5c3.orders.plugins.module_utils.audit.kinds import KINDS
from ansible_collections.c5c3.orders.plugins.module_utils.audit.openbao import OpenBao
from ansible_collections.c5c3.orders.plugins.module_utils.audit.run import run_audit
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.module import (
    TARGET_CLUSTER_OPTIONS,
    C5c3K8sModule,
    ModuleFailure,
)
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.boto import HAS_BOTO3

FIELD_MANAGER = "c5c3-orders-audit"  # never used for a write: the audit only reads
MAX_NAMED_IN_MSG = 10


class CredentialsAudit(C5c3K8sModule):
    argument_spec = dict(
        kinds=dict(type="list", elements="str", choices=sorted(KINDS), default=sorted(KINDS)),
        namespaces=dict(type="list", elements="str"),
        orders=dict(type="list", elements="str"),
        target_clusters=dict(type="list", elements="dict", options=TARGET_CLUSTER_OPTIONS),
        keystone_urls=dict(type="dict", default={}, no_log=False),  # URLs, not secrets
        keystone_ca_cert=dict(type="path"),
        s3_endpoints=dict(type="dict", default={}, no_log=False),  # URLs, not secrets
        s3_ca_cert=dict(type="path"),
        openbao_addr=dict(type="str", fallback=(env_fallback, ["BAO_ADDR", "VAULT_ADDR"])),
        openbao_token=dict(type="str", no_log=True, fallback=(env_fallback, ["BAO_TOKEN", "VAULT_TOKEN"])),
        openbao_mount=dict(type="str", default="kv-v2", aliases=["mount"]),
        openbao_ca_cert=dict(type="path"),
        timeout=dict(type="float", default=15),
        fail_on_findings=dict(type="bool", default=False),
    )
    module_kwargs = dict(supports_check_mode=True)

    def _validate(self):
        p = self.params
        for entry in p["orders"] or []:
            if entry.count("/") != 1 or not all(entry.split("/")):
                raise ModuleFailure(f"orders entries are <namespace>/<name>, got {entry!r}")
        for option, what in (("keystone_urls", "auth_url"), ("s3_endpoints", "endpoint")):
            for key, url in (p[option] or {}).items():
                if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                    raise ModuleFailure(f"{option} maps a delivered {what} to an http(s) URL; the value for "
                                        f"{key!r} is not one")
        if p["openbao_addr"] and not p["openbao_addr"].startswith(("http://", "https://")):
            raise ModuleFailure(f"openbao_addr must be an http(s) URL, got {p['openbao_addr']!r}")
        if p["timeout"] <= 0:
            raise ModuleFailure("timeout must be a positive number of seconds")

    def _context(self):
        p = self.params
        clusters = {MANAGEMENT: KubeService(self.connect(name=MANAGEMENT), FIELD_MANAGER)}
        for target in p["target_clusters"] or []:
            client = self.connect_target(target)
            clusters[target["name"]] = KubeService(client, FIELD_MANAGER) if isinstance(client, KubeClient) \
                else client
        openbao = None
        if p["openbao_addr"] and p["openbao_token"]:
            openbao = OpenBao(p["openbao_addr"], p["openbao_token"], p["openbao_mount"],
                              Endpoint(p["openbao_ca_cert"], p["timeout"]))
        return AuditContext(clusters=clusters, keystone=Endpoint(p["keystone_ca_cert"], p["timeout"]),
                            keystone_urls=p["keystone_urls"] or {}, openbao=openbao,
                            s3=Endpoint(p["s3_ca_cert"], p["timeout"]), s3_endpoints=p["s3_endpoints"] or {})

    def run(self):
        if not HAS_YAML:
            raise ModuleFailure(missing_required_lib("PyYAML"))
        if "BucketCredential" in self.params["kinds"] and not HAS_BOTO3:
            raise ModuleFailure(missing_required_lib("boto3"))
        self._validate()
        started = time.monotonic()
        p = self.params
        report = run_audit(self._context(), p["kinds"], Selection.of(p["namespaces"], p["orders"]))
        result = dict(
            changed=False, orders=[order.result() for order in report.orders], findings=report.findings(),
            summary=report.summary(), unreadable=report.unreadable, api_requests=self.api_requests,
            duration=round(time.monotonic() - started, 3),
        )
        if p["fail_on_findings"] and (report.with_findings or report.unreadable):
            named = [order.ref for order in report.with_findings[:MAX_NAMED_IN_MSG]]
            more = len(report.with_findings) - len(named)
            named += [f"{len(report.unreadable)} unreadable list(s)"] if report.unreadable else []
            raise ModuleFailure(
                f"the audit found {len(report.with_findings)} order(s) with findings: {', '.join(named)}"
                + (f" and {more} more" if more > 0 else ""), **result)
        return result


def main():
    CredentialsAudit()()


if __name__ == "__main__":
    main()
