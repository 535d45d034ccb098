# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""An S3 key pair that cannot leak through repr, str, a log line or an error message."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from dataclasses import dataclass, field

REDACTED = "<redacted>"


@dataclass(frozen=True)
class RgwCredentials:
    """Both halves are hidden from repr: an access key id names a credential an attacker can then target,
    and the secret is the credential itself."""

    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)

    def __post_init__(self):
        for name in ("access_key", "secret_key"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"an RGW {name.replace('_', ' ')} is required (a non-empty string)")

    def __repr__(self):
        return f"RgwCredentials(access_key={REDACTED}, secret_key={REDACTED})"

    __str__ = __repr__

    def redact(self, text: str) -> str:
        """``text`` with both halves of the pair replaced, for messages that quote a gateway's words."""
        return redact(text, (self.secret_key, self.access_key))


def redact(text: str, secrets) -> str:
    text = "" if text is None else str(text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text
