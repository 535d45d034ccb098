# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Reading the ``auth`` section of a delivered ``clouds.yaml``, as a consumer of the Secret would.

The collection renders the file itself (``keystoneuser.cloudsyaml``); the audit reads it back with a YAML parser,
so it proves what a client sees rather than what the renderer meant. A parse error is reported by line only:
PyYAML's message quotes the offending line, which holds the password.
"""
from __future__ import annotations

from typing import Any, Dict

from ansible_collections.c5c3.orders.plugins.module_utils.audit.errors import AuditError

try:
    import yaml
    HAS_YAML = True
except ImportError:  # the module reports it with missing_required_lib
    HAS_YAML = False

AUTH_KEYS = ("auth_url", "username", "password", "user_domain_name")


class CloudsYamlError(AuditError, ValueError):
    """The file is not a clouds.yaml with one cloud and a complete password ``auth`` section."""


def read_auth(text: str) -> Dict[str, str]:
    """The ``auth`` mapping of the file's only cloud, with the four keys a password login needs."""
    try:
        document: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise CloudsYamlError(f"clouds.yaml is not valid YAML{where}") from None
    clouds = document.get("clouds") if isinstance(document, dict) else None
    if not isinstance(clouds, dict) or len(clouds) != 1:
        raise CloudsYamlError("clouds.yaml does not hold exactly one cloud under 'clouds'")
    cloud = next(iter(clouds.values()))
    auth = cloud.get("auth") if isinstance(cloud, dict) else None
    if not isinstance(auth, dict):
        raise CloudsYamlError("the cloud in clouds.yaml has no 'auth' section")
    missing = [key for key in AUTH_KEYS if not isinstance(auth.get(key), str) or not auth.get(key)]
    if missing:
        raise CloudsYamlError(f"the auth section of clouds.yaml lacks {', '.join(missing)}")
    return {key: auth[key] for key in AUTH_KEYS}
