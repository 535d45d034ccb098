# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The platform's allowlist of tenant namespaces: the option the install's controller and CronJob pass."""

    DOCUMENTATION = r"""
options:
  tenant_namespace_selector:
    description:
      - The labels (key to value) the platform marks the namespaces with where tenants may order credentials, as the
        install's C(c5c3_install_tenant_namespace_selector) (by default the label C(c5c3.io/tenant=true)). The access
        sync grants nothing in an unmarked namespace, so an order in a namespace a ControlPlane assigns but the
        platform has not marked is frozen with both conditions C(False/NamespaceNotMarked), the message naming the
        labels, and nothing is written for it but its status.
      - Given, the pass lists the marked Namespaces once per cluster that holds orders (a label-selector list; the
        controller's account needs C(list) on namespaces). A list that fails is reported in RV(unreadable) and
        that cluster's orders are not checked, never refused on a guess.
      - Omitted (or empty), nothing is checked and nothing more is read.
      - Values are strings; quote C("true").
    type: dict
    version_added: 0.2.0
"""
