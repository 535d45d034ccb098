# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Base class of the collection's Kubernetes modules, shaped like openstack.cloud's OpenStackModule.

A module declares ``argument_spec``, ``module_kwargs`` and ``run()``, which *returns* its result (or raises
``ModuleFailure``); the base merges in the connection options, checks the ``kubernetes`` library, masks the
secret values a pass generated or wrote out of its result (``hide``, ``k8s.mask``), and turns every expected
failure into ``fail_json`` with a clear message instead of a traceback. A module is therefore testable by calling ``run()``.
"""
from __future__ import annotations

import threading
import traceback
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Union

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import client as k8s_client
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.auth import auth_argument_spec, resolve_auth
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import (
    ConnectionConfigError,
    KubeError,
    KubernetesError,
)
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.mask import SecretMask
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.protocols import KubeApi
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService

TARGET_AUTH_KEYS = ("kubeconfig", "context", "host", "api_key", "ca_cert", "validate_certs")
TARGET_CLUSTER_OPTIONS = dict(
    name=dict(type="str", required=True),
    kubeconfig=dict(type="raw", no_log=True),  # a dictionary can carry a token
    context=dict(type="str"),
    host=dict(type="str"),
    api_key=dict(type="str", no_log=True),
    ca_cert=dict(type="path"),
    validate_certs=dict(type="bool"),
)


class ModuleFailure(KubernetesError):
    """A failure the module reports with ``fail_json`` (``msg`` plus extra result keys)."""

    def __init__(self, msg: str, **extra: Any) -> None:
        super().__init__(msg)
        self.msg = msg
        self.extra = extra


class UnconnectedService:
    """Stands for a cluster whose connection options could not be loaded: every request fails with why, so the
    pass reports that cluster and reconciles the others."""

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        self.why = why

    def __getattr__(self, verb: str) -> Any:
        def fail(*_args: Any, **_kwargs: Any) -> Any:
            raise KubeError(verb, self.name, None, "Configuration", self.why)
        return fail


class C5c3K8sModule:
    argument_spec: Dict[str, Any] = {}
    module_kwargs: Dict[str, Any] = {}

    def __init__(self) -> None:
        spec = auth_argument_spec()
        spec.update(self.argument_spec)
        self.ansible = AnsibleModule(argument_spec=spec, **self.module_kwargs)
        self.params = self.ansible.params
        self.clients: List[k8s_client.KubeClient] = []
        self._hidden: Set[str] = set()  # masked out of the result (hide)
        self._hidden_lock = threading.Lock()  # passwords are made on the pass's worker threads
        if not k8s_client.HAS_KUBERNETES:
            self.ansible.fail_json(msg=missing_required_lib("kubernetes"),
                                   exception="".join(traceback.format_exception_only(
                                       type(k8s_client.KUBERNETES_IMPORT_ERROR),
                                       k8s_client.KUBERNETES_IMPORT_ERROR)))

    def hide(self, values: Iterable[Optional[str]]) -> None:
        """Never let these values reach the module's output: they are masked out of its result and failure
        (``k8s.mask``, in one walk; registering thousands with Ansible's ``no_log_values`` made its filter
        quadratic in the orders of a pass)."""
        with self._hidden_lock:
            self._hidden.update(value for value in values if value)

    def connect(self, overrides: Optional[Mapping[str, Any]] = None, name: str = "") -> "k8s_client.KubeClient":
        """A counted client for the management cluster (task options, then ``K8S_AUTH_*``), or, with
        ``overrides``, for a target cluster described by those options alone (no environment fallback,
        so a target never silently inherits the management cluster's credentials)."""
        if overrides is None:
            auth = resolve_auth(self.params)
        else:
            auth = {k: v for k, v in overrides.items() if v is not None}
        self.hide(auth.get(secret) for secret in ("api_key", "password"))
        client = k8s_client.KubeClient(auth, name=name)
        self.clients.append(client)
        return client

    def connect_target(self, target: Mapping[str, Any]) -> Union[k8s_client.KubeClient, UnconnectedService]:
        """A target cluster's client, or an ``UnconnectedService`` naming why its options do not load."""
        if not (target.get("kubeconfig") or target.get("host")):
            raise ModuleFailure(f"target cluster {target['name']!r} needs a kubeconfig or a host")
        try:
            return self.connect({k: target.get(k) for k in TARGET_AUTH_KEYS}, name=target["name"])
        except ConnectionConfigError as exc:
            return UnconnectedService(target["name"], str(exc))

    def services(self, field_manager: str, dry_run: bool) -> Dict[str, KubeApi]:
        """A ``KubeService`` per cluster a pass talks to: "" for the management cluster, then each of the module's
        ``target_clusters`` by name (an ``UnconnectedService`` for one whose options do not load)."""
        found: Dict[str, KubeApi] = {"": KubeService(self.connect(name=""), field_manager, dry_run, share=True)}
        for target in self.params.get("target_clusters") or []:
            client = self.connect_target(target)
            found[target["name"]] = KubeService(client, field_manager, dry_run, share=True) \
                if isinstance(client, k8s_client.KubeClient) else client
        return found

    @property
    def api_requests(self) -> int:
        return sum(c.requests for c in self.clients)

    @property
    def api_writes(self) -> int:
        return sum(c.writes for c in self.clients)

    def run(self) -> Dict[str, Any]:
        raise NotImplementedError

    def _fail(self, **result: Any) -> None:
        self.ansible.fail_json(**SecretMask(self._hidden).apply(result))

    def __call__(self) -> None:
        try:
            result = self.run()
        except ModuleFailure as exc:
            self._fail(msg=exc.msg, **exc.extra)
        except ConnectionConfigError as exc:
            self._fail(msg=str(exc))
        except KubeError as exc:
            self._fail(msg=f"Kubernetes API request failed: {exc.summary()}", status=exc.status, reason=exc.reason)
        finally:
            for client in self.clients:
                client.close()
        self.ansible.exit_json(**SecretMask(self._hidden).apply(result))
