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
  - A Secret is returned without its values (C(data), C(stringData) and kubectl's last-applied copy of them).
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
      - The reads; the result has one entry per read, under its O(reads[].id).
    type: list
    elements: dict
    required: true
    suboptions:
      id:
        description: The read's name in the result, of the caller's choosing (unique).
        type: str
        required: true
      api_version:
        description: The kind's C(apiVersion).
        type: str
        required: true
      kind:
        description: The kind.
        type: str
        required: true
      names:
        description:
          - Read these objects by name (those found; an empty list reads none). Without it, the objects are listed.
        type: list
        elements: str
      namespace:
        description: A namespaced kind's namespace; all namespaces when left out.
        type: str
      label_selectors:
        description: Selectors a listed object must match, joined with commas (as in C(kubernetes.core.k8s_info)).
        type: list
        elements: str
  timeout:
    description: Seconds to wait for each answer of the API server.
    type: float
    default: 20
notes:
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
      - id: crds
        api_version: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        names: [users.openstack.k-orc.cloud, pushsecrets.external-secrets.io]
      - {id: controlplanes, api_version: c5c3.io/v1alpha1, kind: ControlPlane}
      - id: bindings
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
  description: One entry per read, under its O(reads[].id).
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


class ClusterReads(C5c3K8sModule):
    argument_spec = dict(
        reads=dict(type="list", elements="dict", required=True, options=dict(
            id=dict(type="str", required=True),
            api_version=dict(type="str", required=True),
            kind=dict(type="str", required=True),
            names=dict(type="list", elements="str"),
            namespace=dict(type="str"),
            label_selectors=dict(type="list", elements="str"),
        )),
        timeout=dict(type="float", default=20),
    )
    module_kwargs = dict(supports_check_mode=True)

    def run(self):
        reads = self.params["reads"]
        ids = [r["id"] for r in reads]
        twice = sorted(set(i for i in ids if ids.count(i) > 1))
        if twice:
            raise ModuleFailure(f"each read needs an id of its own: {', '.join(twice)}")
        client = self.connect(name="")
        timeout = self.params["timeout"]
        reader = Reader(lambda path, query: client.request("GET", path, query=query, timeout=timeout))
        answers = {r["id"]: reader.read(r) for r in reads}
        failed = [f"{key}: {a['error']}" for key, a in sorted(answers.items()) if "error" in a]
        if failed:
            raise ModuleFailure("; ".join(failed), reads=answers, api_requests=self.api_requests)
        return dict(changed=False, reads=answers, api_requests=self.api_requests)


def main():
    ClusterReads()()


if __name__ == "__main__":
    main()
