# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Connection options, spelled and defaulted exactly as kubernetes.core spells them.

A user who set ``K8S_AUTH_KUBECONFIG`` or ``module_defaults`` for kubernetes.core gets the same
cluster here without learning anything new.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

# option -> (type, no_log, environment variable, aliases). The kubeconfig is secret: given as a dictionary it can
# carry a token or a client key (as kubernetes.core marks it too); a path is masked as well.
AUTH_OPTIONS: Dict[str, Tuple[str, bool, str, List[str]]] = {
    "kubeconfig": ("raw", True, "K8S_AUTH_KUBECONFIG", []),
    "context": ("str", False, "K8S_AUTH_CONTEXT", []),
    "host": ("str", False, "K8S_AUTH_HOST", []),
    "api_key": ("str", True, "K8S_AUTH_API_KEY", []),
    "username": ("str", False, "K8S_AUTH_USERNAME", []),
    "password": ("str", True, "K8S_AUTH_PASSWORD", []),
    "client_cert": ("path", False, "K8S_AUTH_CERT_FILE", ["cert_file"]),
    "client_key": ("path", False, "K8S_AUTH_KEY_FILE", ["key_file"]),
    "ca_cert": ("path", False, "K8S_AUTH_SSL_CA_CERT", ["ssl_ca_cert"]),
    "validate_certs": ("bool", False, "K8S_AUTH_VERIFY_SSL", ["verify_ssl"]),
    "proxy": ("str", False, "K8S_AUTH_PROXY", []),
    "no_proxy": ("str", False, "K8S_AUTH_NO_PROXY", []),
    "impersonate_user": ("str", False, "K8S_AUTH_IMPERSONATE_USER", []),
    "impersonate_groups": ("list", False, "K8S_AUTH_IMPERSONATE_GROUPS", []),
}


def auth_argument_spec() -> Dict[str, Dict[str, Any]]:
    """The AnsibleModule argument spec for the connection options."""
    spec: Dict[str, Dict[str, Any]] = {}
    for name, (kind, no_log, _env, aliases) in AUTH_OPTIONS.items():
        entry: Dict[str, Any] = {"type": kind}
        if no_log:
            entry["no_log"] = True
        if aliases:
            entry["aliases"] = aliases
        if kind == "list":
            entry["elements"] = "str"
        spec[name] = entry
    return spec


def _env_value(name: str, kind: str, env: Mapping[str, str]) -> Any:
    raw = env.get(AUTH_OPTIONS[name][2])
    if raw is None or raw == "":
        return None
    if kind == "bool":
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if kind == "list":
        return [item.strip() for item in raw.split(",") if item.strip()]
    return raw


def resolve_auth(params: Mapping[str, Any], env: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """Task options win; an unset option falls back to its ``K8S_AUTH_*`` variable."""
    env = os.environ if env is None else env
    resolved: Dict[str, Any] = {}
    for name, (kind, _no_log, _env, _aliases) in AUTH_OPTIONS.items():
        value = params.get(name)
        if value is None:
            value = _env_value(name, kind, env)
        if value is not None:
            resolved[name] = value
    return resolved
