# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The shares of the namespaces a pass decides: the option a replica of the sharded controller passes."""

    DOCUMENTATION = r"""
options:
  shards:
    description:
      - Reconcile only the orders whose namespace falls in these shares of the namespaces (a replica of the
        controller run with several shares passes the ones it holds; a consistent hash assigns a namespace to a
        share). Omitted, every namespace.
      - The pass still reads what an unsharded pass reads. A KeystoneUser's user-name claim is ranked against the
        orders of every share, and a new claim waits until every order created up to the same second is visible.
        A BucketCredential counts by its ObjectStore's namespace, so one replica decides every object on a store.
    type: dict
    version_added: 0.2.0
    suboptions:
      count:
        description: The number of shares the namespaces are split into.
        type: int
        required: true
      held:
        description: The shares (0 to O(shards.count) - 1) this pass reconciles.
        type: list
        elements: int
        required: true
"""
