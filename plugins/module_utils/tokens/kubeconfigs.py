# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The token of a kubeconfig's current context, and the same kubeconfig carrying another: only that user's
``token`` changes (a ``tokenFile`` or client certificate of the user gives way to it); server, CA and every other
entry stay as the platform wrote them."""
from __future__ import annotations

import copy
from typing import Any, Dict, Mapping, Optional, Tuple


# What authenticated the user before: gives way to the token.
REPLACED = frozenset(["token", "tokenFile", "client-certificate", "client-certificate-data", "client-key",
                      "client-key-data", "username", "password", "exec", "auth-provider"])


class KubeconfigError(ValueError):
    """The document is not a kubeconfig whose current context names a user (the message names no value)."""


def _current_user(doc: Mapping[str, Any]) -> Tuple[int, Mapping[str, Any]]:
    if not isinstance(doc, dict):
        raise KubeconfigError("not a kubeconfig (a mapping)")
    contexts = [c for c in doc.get("contexts") or [] if isinstance(c, dict)]
    current = doc.get("current-context")
    if not current and len(contexts) == 1:
        current = contexts[0].get("name")
    context = next((c.get("context") for c in contexts if c.get("name") == current), None)
    if not isinstance(context, dict) or not context.get("user"):
        raise KubeconfigError("the kubeconfig's current context names no user")
    users = doc.get("users") or []
    for index, user in enumerate(users):
        if isinstance(user, dict) and user.get("name") == context["user"]:
            found = user.get("user")
            return index, found if isinstance(found, dict) else {}
    raise KubeconfigError(f"the kubeconfig has no user {context['user']!r}")


def current_token(doc: Mapping[str, Any]) -> Optional[str]:
    """The bearer token the current context's user carries inline; None without one."""
    _index, user = _current_user(doc)
    token = user.get("token")
    return token if isinstance(token, str) and token else None


def with_token(doc: Mapping[str, Any], token: str) -> Dict[str, Any]:
    """A copy of ``doc`` whose current user authenticates with ``token`` alone."""
    index, user = _current_user(doc)
    fresh = copy.deepcopy(dict(doc))
    kept = {k: v for k, v in user.items() if k not in REPLACED}
    kept["token"] = token
    fresh["users"][index] = dict(fresh["users"][index], user=kept)
    return fresh
