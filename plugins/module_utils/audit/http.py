# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""JSON over HTTP for the audit's two services (Keystone, OpenBao), with Ansible's ``open_url``.

``open_url`` is what Ansible modules use for HTTP (standard library underneath, TLS verification with a CA path,
proxies from the environment), so the audit adds no client library. Three rules keep secrets in: redirects are
not followed (a token header would travel to wherever the redirect points), ``.netrc`` is not read, and a
failure is described by its HTTP status and reason only, never by a body that might quote the request.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional
from urllib.error import HTTPError, URLError

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import open_url

from ansible_collections.c5c3.orders.plugins.module_utils.audit.errors import AuditError


@dataclass
class Reply:
    """An HTTP answer: status, headers (lower-case names) and the decoded JSON body (empty when none)."""

    status: int
    headers: Dict[str, str] = field(default_factory=dict)
    body: Any = None


class Unreachable(AuditError):
    """No HTTP answer: refused, timed out, TLS failure, a redirect not followed."""


@dataclass(frozen=True)
class Endpoint:
    """Where a service is and how to trust it."""

    ca_cert: Optional[str] = None
    timeout: float = 15.0


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def request_json(endpoint: Endpoint, method: str, url: str, body: Optional[Mapping[str, Any]] = None,
                 headers: Optional[Mapping[str, str]] = None) -> Reply:
    """Send one request; an HTTP error status is a ``Reply`` too, only no answer at all raises ``Unreachable``."""
    send = {"Accept": "application/json", **(headers or {})}
    data = None
    if body is not None:
        send["Content-Type"] = "application/json"
        data = json.dumps(body)
    try:
        resp = open_url(url, data=data, headers=send, method=method, timeout=endpoint.timeout,
                        validate_certs=True, ca_path=endpoint.ca_cert, follow_redirects="none",
                        use_netrc=False, http_agent="c5c3.orders-credentials-audit")
        return Reply(resp.status, {k.lower(): v for k, v in resp.headers.items()}, _decode(resp.read()))
    except HTTPError as exc:
        if 300 <= exc.code < 400:
            raise Unreachable(f"{method} {url}: HTTP {exc.code} redirect, not followed") from None
        try:
            raw = exc.read()
        except Exception:  # pylint: disable=broad-except
            raw = b""
        return Reply(exc.code, {k.lower(): v for k, v in (exc.headers or {}).items()}, _decode(raw))
    except (URLError, UrlsConnectionError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise Unreachable(f"{method} {url}: {reason}") from None
