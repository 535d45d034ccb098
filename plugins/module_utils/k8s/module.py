# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Base class of the collection's Kubernetes modules, shaped like openstack.cloud's OpenStackModule.

A module declares ``argument_spec``, ``module_kwargs`` and ``run()``; the base merges in the connection
options, checks the ``kubernetes`` library, and turns connection failures into ``fail_json`` with a
clear message instead of a traceback.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.auth import auth_argument_spec, resolve_auth
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import client as k8s_client
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import ConnectionConfigError, KubeError


class C5c3K8sModule:
    argument_spec = {}
    module_kwargs = {}

    def __init__(self):
        spec = auth_argument_spec()
        spec.update(self.argument_spec)
        self.ansible = AnsibleModule(argument_spec=spec, **self.module_kwargs)
        self.params = self.ansible.params
        if not k8s_client.HAS_KUBERNETES:
            self.ansible.fail_json(msg=missing_required_lib("kubernetes"),
                                   exception="".join(traceback.format_exception_only(
                                       type(k8s_client.KUBERNETES_IMPORT_ERROR),
                                       k8s_client.KUBERNETES_IMPORT_ERROR)))

    def connect(self, overrides=None, name=""):
        """A counted client for the management cluster (task options, then ``K8S_AUTH_*``), or, with
        ``overrides``, for a target cluster described by those options alone (no environment fallback,
        so a target never silently inherits the management cluster's credentials)."""
        if overrides is None:
            auth = resolve_auth(self.params)
        else:
            auth = dict((k, v) for k, v in overrides.items() if v is not None)
        for secret in ("api_key", "password"):
            if auth.get(secret):
                self.ansible.no_log_values.add(auth[secret])
        return k8s_client.KubeClient(auth, name=name)

    def run(self):
        raise NotImplementedError

    def __call__(self):
        try:
            self.run()
        except ConnectionConfigError as exc:
            self.ansible.fail_json(msg=str(exc))
        except KubeError as exc:
            self.ansible.fail_json(msg="Kubernetes API request failed: %s" % exc, status=exc.status,
                                   reason=exc.reason)
