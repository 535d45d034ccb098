# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The ``target_clusters`` option of the modules that handle orders on target clusters as well
    (``k8s.module.TARGET_CLUSTER_OPTIONS`` is its argument spec)."""

    DOCUMENTATION = r"""
options:
  target_clusters:
    description:
      - Target clusters whose orders are handled too. An order's delivered Secret lives on its own cluster; its
        other children live on the management cluster.
      - Connection options not given for a target are not inherited from the management cluster's.
      - A target cluster is read only in the namespaces a ControlPlane assigns on it (and in one whose assignment
        was withdrawn while orders there still have children, so their teardown runs). One that cannot be read
        (unreachable, options that do not load, a missing grant) is reported and every other cluster is handled
        normally.
    type: list
    elements: dict
    suboptions:
      name:
        description: The name the cluster is registered under (a label value, at most 63 characters).
        type: str
        required: true
      kubeconfig:
        description:
          - Path to the target cluster's kubeconfig, or the kubeconfig as a dictionary.
          - Treated as a secret (C(no_log)), like O(kubeconfig).
        type: raw
      context:
        description: The kubeconfig context to use.
        type: str
      host:
        description: URL of the target cluster's API server.
        type: str
      api_key:
        description: Bearer token for the target cluster.
        type: str
      ca_cert:
        description: CA bundle to verify the target cluster with.
        type: path
      validate_certs:
        description: Whether to verify the target cluster's certificate.
        type: bool
"""
