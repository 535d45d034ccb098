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
from typing import Optional, Tuple

# A signed request whose credential the gateway does not accept (as opposed to one it accepts but forbids).
CREDENTIAL_REJECTED = frozenset({"InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidClientTokenId",
                                 "AuthorizationHeaderMalformed", "RequestTimeTooSkewed"})
ALREADY_EXISTS = frozenset({"AccountAlreadyExists", "EntityAlreadyExists", "BucketAlreadyOwnedByYou",
                            "UserAlreadyExists", "KeyExists"})


class RgwError(Exception):
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
