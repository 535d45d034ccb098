#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: target_tokens
short_description: Keep the target clusters' kubeconfigs on short-lived service-account tokens, renewed in time
version_added: 0.3.0
description:
  - The management cluster holds, per target cluster, a kubeconfig in one key of a Secret (the key is the
    cluster's name) - the operator's, mounted into the controller and the reconcile CronJob, and the access sync's
    own. This module renews the bearer token of each such kubeconfig with a TokenRequest on its target cluster
    before it expires, and writes the kubeconfig back with the new token; server, CA and everything else stay.
  - A token is renewed once O(renew_after) of its lifetime has passed (the kubelet's rule for projected tokens),
    when it has expired, when it never expires (a legacy token Secret's), or when it lives longer than
    O(duration) (a year-long token handed over at the install is replaced at the first run).
  - The token is asked for the service account it names itself (its claims are read, not verified), on the
    target cluster, with the identity given in O(target_clusters) for that cluster (the access sync's). A kubeconfig
    without a service-account token (a client certificate, a static token) is reported and left as it is.
  - One read of each Secret, at most one TokenRequest per kubeconfig due, and one merge patch per Secret that
    changed (guarded by its resourceVersion, so a concurrent edit is never overwritten).
  - The controller picks a renewed token up without a restart (it reloads a kubeconfig after a 401, and a mounted
    Secret is updated in place); every pass reads the file anew.
  - Never returns or logs a token or a kubeconfig.
author:
  - c5c3.orders developers (@c5c3)
extends_documentation_fragment:
  - c5c3.orders.k8s_auth
  - c5c3.orders.target_clusters
  - c5c3.orders.attributes
attributes:
  check_mode:
    support: full
    details: In check mode nothing is requested or written; a token that is due is reported as C(due).
  diff_mode:
    support: none
options:
  namespace:
    description: The namespace of the Secrets on the management cluster (the install's).
    type: str
    required: true
  secrets:
    description:
      - The Secrets holding one kubeconfig per target cluster, keyed by the cluster's name. Renewed in this order
        (put the access sync's own last, so the others are renewed with a token known to work).
    type: list
    elements: str
    required: true
  duration:
    description:
      - The lifetime asked for, in seconds (at least 600, the API server's minimum). The API server may cap it at
        its C(--service-account-max-token-expiration).
    type: int
    default: 86400
  renew_after:
    description: The share of a token's lifetime after which it is renewed (between 0 and 1).
    type: float
    default: 0.8
  timeout:
    description: Seconds to wait for each answer of a target cluster.
    type: float
    default: 20
notes:
  - RBAC - on the management cluster, C(get) and C(patch) of the named Secrets (give them by C(resourceNames));
    on each target cluster, C(create) of C(serviceaccounts/token) for the accounts the tokens belong to only.
seealso:
  - module: c5c3.orders.keystoneuser_reconcile
requirements:
  - kubernetes (the Python client)
  - PyYAML
"""

EXAMPLES = r"""
- name: Renew the operator's and the access sync's target tokens (what the access-sync CronJob runs)
  c5c3.orders.target_tokens:
    namespace: c5c3-orders-system
    secrets: [c5c3-orders-targets, c5c3-orders-access-targets]
    duration: 86400
    target_clusters:
      - name: edge-1
        kubeconfig: /etc/c5c3-orders/access-targets/edge-1
  register: renewed

- name: Report what is due without renewing
  c5c3.orders.target_tokens:
    namespace: c5c3-orders-system
    secrets: [c5c3-orders-targets]
    target_clusters: "{{ access_targets }}"
  check_mode: true
"""

RETURN = r"""
tokens:
  description: One entry per kubeconfig found in a Secret for a given target cluster.
  returned: always
  type: list
  elements: dict
  contains:
    secret:
      description: The Secret holding the kubeconfig.
      type: str
      sample: c5c3-orders-targets
    cluster:
      description: The target cluster (the Secret's key).
      type: str
      sample: edge-1
    service_account:
      description: C(<namespace>/<name>) of the account the token belongs to; empty when it names none.
      type: str
      sample: c5c3-orders-system/c5c3-orders
    action:
      description:
        - C(kept) (valid, not yet due), C(renewed), C(due) (check mode), C(unrenewable) (not a service
          account's token, left as it is) or C(failed).
      type: str
      sample: renewed
    reason:
      description: Why, in words (names no value).
      type: str
      sample: 80% of the token's lifetime has passed
    expires:
      description: When the token now in the Secret expires (RFC 3339); empty when it does not say.
      type: str
      sample: "2026-12-06T08:00:00Z"
    renew_at:
      description: When it will be renewed (RFC 3339); empty when not known.
      type: str
      sample: "2026-12-06T03:12:00Z"
errors:
  description: Why a token could not be renewed or a Secret not be read or written, one line each.
  returned: always
  type: list
  elements: str
  sample: []
api_requests:
  description: Requests sent to all clusters.
  returned: always
  type: int
  sample: 3
"""

import base64
import binascii
from datetime import datetime, timezone

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.c5c3.orders.plugins.module_utils.audit.cloudsyaml import HAS_YAML
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.module import (
    TARGET_CLUSTER_OPTIONS,
    C5c3K8sModule,
    ModuleFailure,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.tokens.claims import read_claims
from ansible_collections.c5c3.orders.plugins.module_utils.tokens.kubeconfigs import (
    KubeconfigError,
    current_token,
    with_token,
)
from ansible_collections.c5c3.orders.plugins.module_utils.tokens.renewal import RenewalPolicy, decide

if HAS_YAML:
    import yaml


def _when(moment):
    return timestamps.render(moment) if moment is not None else ""


class TargetTokens(C5c3K8sModule):
    argument_spec = dict(
        namespace=dict(type="str", required=True),
        secrets=dict(type="list", elements="str", required=True, no_log=False),  # names, not secrets
        duration=dict(type="int", default=86400),
        renew_after=dict(type="float", default=0.8),
        timeout=dict(type="float", default=20),
        target_clusters=dict(type="list", elements="dict", options=TARGET_CLUSTER_OPTIONS),
    )
    module_kwargs = dict(supports_check_mode=True)

    def run(self):
        if not HAS_YAML:
            raise ModuleFailure(missing_required_lib("PyYAML"))
        p = self.params
        policy = RenewalPolicy(p["duration"], p["renew_after"])
        if policy.problems():
            raise ModuleFailure(policy.problems())
        self.management = self.connect(name="")
        self.targets = {t["name"]: t for t in p["target_clusters"] or []}
        self.connected = {}
        tokens, errors = [], []
        for name in p["secrets"]:
            entries, problems = self._secret(name, policy)
            tokens.extend(entries)
            errors.extend(problems)
        changed = any(t["action"] in ("renewed", "due") for t in tokens)
        return dict(changed=changed, tokens=tokens, errors=errors, api_requests=self.api_requests)

    def _path(self, name):
        return f"/api/v1/namespaces/{self.params['namespace']}/secrets/{name}"

    def _secret(self, name, policy):
        """One Secret: every target cluster's kubeconfig in it, renewed where due, written back in one patch."""
        try:
            secret = self.management.request("GET", self._path(name), timeout=self.params["timeout"])
        except KubeError as exc:
            return [], [f"{self.params['namespace']}/{name}: cannot read: {exc.summary()}"]
        data = secret.get("data") or {}
        now = timestamps.truncate(datetime.now(timezone.utc))
        entries, errors, writes = [], [], {}
        for cluster in sorted(self.targets):
            if cluster not in data:
                continue
            entry, fresh = self._one(name, cluster, data[cluster], now, policy)
            entries.append(entry)
            if entry["action"] == "failed":
                errors.append(f"{name}/{cluster}: {entry['reason']}")
            if fresh is not None:
                writes[cluster] = fresh
        if writes:
            patch = {"metadata": {"resourceVersion": secret["metadata"]["resourceVersion"]}, "data": writes}
            try:
                self.management.request("PATCH", self._path(name), body=patch, patch="merge",
                                        timeout=self.params["timeout"])
            except KubeError as exc:
                for entry in entries:
                    if entry["cluster"] in writes:
                        entry.update(action="failed", reason=f"the renewed token could not be written: "
                                                             f"{exc.summary()}")
                        errors.append(f"{name}/{entry['cluster']}: {entry['reason']}")
        return entries, errors

    def _one(self, secret, cluster, encoded, now, policy):
        """(the entry, the new kubeconfig base64-encoded or None) for one cluster's kubeconfig."""
        entry = dict(secret=secret, cluster=cluster, service_account="", action="failed", reason="", expires="",
                     renew_at="")
        try:
            doc = yaml.safe_load(base64.b64decode(encoded, validate=True))
            token = current_token(doc)
        except (binascii.Error, ValueError, yaml.YAMLError, KubeconfigError) as exc:
            reason = str(exc) if isinstance(exc, KubeconfigError) else "not a readable kubeconfig"
            return dict(entry, reason=reason), None
        self.hide([token])
        claims = read_claims(token or "")
        if claims is None:
            return dict(entry, action="unrenewable", reason="the kubeconfig carries no service-account token"), None
        entry.update(service_account=f"{claims.namespace}/{claims.service_account}", expires=_when(claims.expires_at))
        verdict = decide(claims, now, policy)
        entry.update(reason=verdict.reason, renew_at=_when(verdict.renew_at))
        if not verdict.renew:
            return dict(entry, action="kept"), None
        if self.ansible.check_mode:
            return dict(entry, action="due"), None
        try:
            fresh, expires = self._request(cluster, claims.namespace, claims.service_account, policy.seconds)
        except KubeError as exc:
            return dict(entry, reason=f"TokenRequest refused: {exc.summary()}"), None
        except ModuleFailure as exc:
            return dict(entry, reason=exc.msg), None
        renewed = read_claims(fresh)
        renew_at = decide(renewed, now, policy).renew_at if renewed is not None else None
        entry.update(action="renewed", expires=expires, renew_at=_when(renew_at))
        body = yaml.safe_dump(with_token(doc, fresh), default_flow_style=False, sort_keys=False)
        return entry, base64.b64encode(body.encode("utf-8")).decode("ascii")

    def _request(self, cluster, namespace, account, seconds):
        """A new token of ``namespace/account`` on ``cluster``, asked with the cluster's given identity."""
        client = self.connected.get(cluster)
        if client is None:
            client = self.connect_target(self.targets[cluster])
            if not isinstance(client, KubeClient):
                raise ModuleFailure(f"cannot connect to {cluster}: {client.why}")
            self.connected[cluster] = client
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": seconds}}
        answer = client.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
                                body=body, timeout=self.params["timeout"])
        status = answer.get("status") or {}
        token = status.get("token")
        if not isinstance(token, str) or not token:
            raise ModuleFailure("the TokenRequest returned no token")
        self.hide([token])
        return token, str(status.get("expirationTimestamp") or "")


def main():
    TargetTokens()()


if __name__ == "__main__":
    main()
