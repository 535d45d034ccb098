#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: cluster_reads
short_description: Several reads of one Kubernetes cluster in one module run, each answered like k8s_info
version_added: 0.3.0
description:
  - Reads objects of any served kind - one by name, or a list in a namespace or across all, by label - and answers
    each read the way C(kubernetes.core.k8s_info) does, with C(api_found) and C(resources).
  - The roles of this collection read a handful of kinds before they write (the install's prerequisites, the access
    sync's namespaces, grants and orders). One C(kubernetes.core.k8s_info) run per kind costs a process importing the
    whole C(kubernetes) library; this module reads them all in one process, with the collection's lean client.
  - The REST path of a kind comes from the API server's discovery of its group version (one request per group
    version), so a CRD's kind reads too and an unserved kind is reported with C(api_found=false), never guessed.
  - A read that fails has C(error) and no C(resources); the module then fails, naming every failed read, so a
    caller that wants to go on registers the result with C(failed_when=false) and looks at each read.
author:
  - c5c3.orders developers (@c5c3)
extends_documentation_fragment:
  - c5c3.orders.k8s_auth
  - c5c3.orders.attributes
attributes:
  diff_mode:
    support: none
  check_mode:
    support: full
    details: Nothing is written by this module, so check mode reads exactly as a normal run does.
options:
  reads:
    description:
      - The reads, by a name of the caller's choosing; the result has one entry per name.
    type: dict
    required: true
  timeout:
    description: Seconds to wait for each answer of the API server.
    type: float
    default: 20
notes:
  - "Each read is a dictionary: C(api_version) and C(kind) (required), C(name) (one object; none found gives no
    resources), C(names) (several objects by name, those found), C(namespace) (a namespaced kind's namespace; all
    namespaces when left out) and C(label_selectors) (a list of selectors, joined with commas, as in
    C(kubernetes.core.k8s_info))."
  - RBAC - C(get) of each object read by name, C(list) of each kind listed, and the discovery of their group
    versions (public to every authenticated user by default).
seealso:
  - module: kubernetes.core.k8s_info
requirements:
  - kubernetes (the Python client)
"""

EXAMPLES = r"""
- name: Read what the install needs before it applies anything
  c5c3.orders.cluster_reads:
    reads:
      crds:
        api_version: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        names: [users.openstack.k-orc.cloud, pushsecrets.external-secrets.io]
      controlplanes: {api_version: c5c3.io/v1alpha1, kind: ControlPlane}
      bindings:
        api_version: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        label_selectors: [app.kubernetes.io/instance=c5c3-orders]
  register: found

- name: Every ControlPlane's name
  ansible.builtin.debug:
    msg: "{{ found.reads.controlplanes.resources | map(attribute='metadata.name') | list }}"
"""

RETURN = r"""
reads:
  description: One entry per read, under the name it was given.
  returned: always
  type: dict
  contains:
    api_found:
      description: Whether the cluster serves the kind.
      type: bool
      sample: true
    resources:
      description: The objects read, each with its C(apiVersion) and C(kind); absent when the read failed.
      type: list
      elements: dict
      sample: []
    error:
      description: Why the read failed (only when it did).
      type: str
      sample: "cannot read RoleBinding (rbac.authorization.k8s.io/v1): HTTP 403 Forbidden: ..."
api_requests:
  description: Requests sent.
  returned: always
  type: int
  sample: 4
"""

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.cluster_reads import Reader
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.module import C5c3K8sModule, ModuleFailure

QUERY_KEYS = ("api_version", "kind", "name", "names", "namespace", "label_selectors")


def _problem(key, query):
    """Why a read is malformed, or None."""
    if not isinstance(query, dict):
        return f"read {key!r} is not a dictionary"
    unknown = sorted(set(query) - set(QUERY_KEYS))
    if unknown:
        return f"read {key!r} has unknown keys {unknown} (known: {', '.join(QUERY_KEYS)})"
    for field in ("api_version", "kind"):
        if not isinstance(query.get(field), str) or not query[field]:
            return f"read {key!r} needs {field}"
    for field in ("name", "namespace"):
        if query.get(field) is not None and not isinstance(query[field], str):
            return f"read {key!r}: {field} must be a string"
    for field in ("names", "label_selectors"):
        values = query.get(field)
        if values is not None and not (isinstance(values, list) and all(isinstance(v, str) for v in values)):
            return f"read {key!r}: {field} must be a list of strings"
    return None


class ClusterReads(C5c3K8sModule):
    argument_spec = dict(
        reads=dict(type="dict", required=True),
        timeout=dict(type="float", default=20),
    )
    module_kwargs = dict(supports_check_mode=True)

    def run(self):
        reads = self.params["reads"]
        problems = [p for p in (_problem(k, q) for k, q in sorted(reads.items())) if p]
        if problems:
            raise ModuleFailure("; ".join(problems))
        client = self.connect(name="")
        timeout = self.params["timeout"]
        reader = Reader(lambda path, query: client.request("GET", path, query=query, timeout=timeout))
        answers = {key: reader.read(query) for key, query in sorted(reads.items())}
        failed = [f"{key}: {a['error']}" for key, a in sorted(answers.items()) if "error" in a]
        if failed:
            raise ModuleFailure("; ".join(failed), reads=answers, api_requests=self.api_requests)
        return dict(changed=False, reads=answers, api_requests=self.api_requests)


def main():
    ClusterReads()()


if __name__ == "__main__":
    main()
