# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""SigV4 for RGW admin ops: URLs with a canonical query, signed by botocore's own signer.

The query is encoded here once, RFC 3986 style (``%20``, never ``+``), sorted, and the signer canonicalises
that very string, so what is signed is byte for byte what is sent. Every header sent is signed, the
Content-Type among them: Tentacle (and Squid from 19.2.6) refuses a request with an unsigned one.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
from typing import Dict, Mapping, Optional
from urllib.parse import quote, urlsplit

try:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    HAS_BOTOCORE = True
    BOTOCORE_IMPORT_ERROR = None
except ImportError as exc:  # reported by the module with missing_required_lib
    HAS_BOTOCORE = False
    BOTOCORE_IMPORT_ERROR = exc

UNRESERVED = "-_.~"
SERVICE = "s3"


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def encode_query(params: Optional[Mapping[str, object]]) -> str:
    """``k=v&...`` sorted by key, both sides percent-encoded except the unreserved characters; ``None``
    values are dropped, booleans are ``true``/``false``, a sub-resource flag (``key``, ``quota``) is
    given as an empty string and sent as ``key=``."""
    pairs = sorted((quote(str(k), safe=UNRESERVED), quote(_text(v), safe=UNRESERVED))
                   for k, v in (params or {}).items() if v is not None)
    return "&".join(f"{k}={v}" for k, v in pairs)


def admin_url(endpoint: str, admin_path: str, resource: str, params: Optional[Mapping[str, object]]) -> str:
    """The URL of admin resource ``resource`` (``info``, ``account``, ``user``, ...) under ``admin_path``."""
    base = endpoint.rstrip("/")
    path = "/" + "/".join(quote(part, safe=UNRESERVED) for part in (admin_path.strip("/"), resource) if part)
    query = encode_query(params)
    return f"{base}{path}?{query}" if query else f"{base}{path}"


def host_header(url: str) -> str:
    """What the client sends as Host: the netloc without a default port, as botocore signs it."""
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


def _request(method: str, url: str, body: bytes, content_type: Optional[str]):
    headers = {"Host": host_header(url), "X-Amz-Content-SHA256": hashlib.sha256(body).hexdigest()}
    if content_type:
        headers["Content-Type"] = content_type
    return AWSRequest(method=method, url=url, data=body, headers=headers)


def signed_headers(method: str, url: str, credentials, region: str, body: bytes = b"",
                   content_type: Optional[str] = None) -> Dict[str, str]:
    """The headers to send with the request: Host, the payload hash, the Content-Type (when there is one),
    X-Amz-Date and the Authorization that signs all of them."""
    request = _request(method, url, body, content_type)
    signer = SigV4Auth(Credentials(credentials.access_key, credentials.secret_key), SERVICE, region)
    signer.add_auth(request)
    return dict(request.headers.items())


def canonical_request(method: str, url: str, credentials, region: str, body: bytes = b"",
                      content_type: Optional[str] = None) -> str:
    """The canonical request SigV4 signs for these inputs (for tests and for debugging a 403)."""
    request = _request(method, url, body, content_type)
    signer = SigV4Auth(Credentials(credentials.access_key, credentials.secret_key), SERVICE, region)
    signer.add_auth(request)
    return signer.canonical_request(request)
