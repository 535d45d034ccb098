# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""One typed error for every gateway failure: admin ops, IAM and S3 alike.

``status`` is the HTTP status (None when no HTTP answer came: refused, timed out, TLS failure), ``code`` the
gateway's error code (S3/IAM ``Error.Code``, or a transport code of ours), ``message`` its text with every
known key removed. Callers branch on the properties, never on the text.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
from typing import Dict, Optional, Tuple
from urllib.parse import urlsplit

from ansible_collections.c5c3.orders.plugins.module_utils.errors import C5C3Error

# A signed request whose credential the gateway does not accept (as opposed to one it accepts but forbids).
CREDENTIAL_REJECTED = frozenset({"InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidClientTokenId",
                                 "AuthorizationHeaderMalformed", "RequestTimeTooSkewed"})
ALREADY_EXISTS = frozenset({"AccountAlreadyExists", "EntityAlreadyExists", "BucketAlreadyOwnedByYou",
                            "UserAlreadyExists", "KeyExists"})


class RgwError(C5C3Error):
    """Every gateway failure, and the root of the RGW edge's exceptions (the tree: ``module_utils/errors.py``)."""

    def __init__(self, status: Optional[int], code: str, message: str = "", operation: str = ""):
        self.status = status
        self.code = code or (f"HTTP{status}" if status else "TransportError")
        self.message = message or ""
        self.operation = operation
        super().__init__(str(self))

    def __str__(self):
        where = f"{self.operation}: " if self.operation else ""
        seen = f"HTTP {self.status} {self.code}" if self.status is not None else f"no answer ({self.code})"
        return f"{where}{seen}" + (f": {self.message}" if self.message else "")

    def __repr__(self):
        return f"RgwError(status={self.status!r}, code={self.code!r}, operation={self.operation!r})"

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def forbidden(self) -> bool:
        return self.status == 403

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def method_not_allowed(self) -> bool:
        return self.status == 405

    @property
    def transient(self) -> bool:
        """Worth another try later: no answer at all, or a server-side failure."""
        return self.status is None or self.status >= 500

    @property
    def credential_rejected(self) -> bool:
        return self.status == 403 and self.code in CREDENTIAL_REJECTED

    @property
    def already_exists(self) -> bool:
        return self.status == 409 and self.code in ALREADY_EXISTS


_XML_FIELD = re.compile(r"<(Code|Message)>([^<]*)</\1>")


def parse_error_body(body: bytes) -> Tuple[str, str]:
    """(code, message) from an RGW error body, JSON (admin ops with format=json) or XML (S3, IAM, and
    admin ops refused before the format is read); empty strings when the body says nothing."""
    text = (body or b"").decode("utf-8", "replace").strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = {}
        if isinstance(data, dict):
            return str(data.get("Code") or ""), str(data.get("Message") or "")
    found = dict(_XML_FIELD.findall(text))
    return found.get("Code", ""), found.get("Message", "")


# Transport codes after which an endpoint is taken for unresponsive at once: it gave no answer within the timeout,
# or nothing accepted the connection. Another transport failure (a reused connection closed under the request) is
# sent once more first.
NO_ANSWER = frozenset({"ReadTimeout", "ConnectTimeout", "ConnectionFailed", "ReadTimeoutError",
                       "ConnectTimeoutError", "EndpointConnectionError"})


def endpoint_key(endpoint: str) -> str:
    """``scheme://host:port`` of an endpoint URL (the port made explicit), so every client aimed at one gateway
    shares one entry whatever path or spelling its URL has."""
    parts = urlsplit(endpoint)
    scheme = (parts.scheme or "http").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or (443 if scheme == "https" else 80)
    host = (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


class Unresponsive:
    """The endpoints that gave no answer in one pass, shared by every gateway client made in it.

    A frozen gateway (it accepts connections and never answers) costs each request the whole timeout; one pass
    over several stores or orders on it would wait that long for each. After the first request without an answer
    the endpoint is recorded here, and every later request of the pass to it fails at once with the same transport
    code and ``status`` None: the core sees it exactly as a timeout (no answer), and sends nothing more there.
    The record lives as long as the pass (one per ``passes.gateways.ClientFactory``); the next pass asks again.
    """

    def __init__(self) -> None:
        self._seen: Dict[str, Tuple[str, str]] = {}  # endpoint key -> (transport code, the operation that met it)

    def record(self, endpoint: str, code: str, operation: str = "") -> None:
        """``endpoint`` gave no answer (``code``): the first failure is kept."""
        self._seen.setdefault(endpoint_key(endpoint), (code or "TransportError", operation))

    def check(self, endpoint: str, operation: str = "") -> None:
        """Raise the recorded failure, without sending anything, when ``endpoint`` gave no answer earlier."""
        key = endpoint_key(endpoint)
        seen = self._seen.get(key)
        if seen is None:
            return
        code, first = seen
        where = f" to {first}" if first else ""
        raise RgwError(None, code, f"{key} gave no answer{where} earlier in this pass; not asked again until "
                                   "the next pass", operation)

    def __contains__(self, endpoint: str) -> bool:
        return endpoint_key(endpoint) in self._seen

    def endpoints(self) -> Tuple[str, ...]:
        return tuple(sorted(self._seen))
