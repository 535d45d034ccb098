# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Kubernetes failures as values a pass can report on one order without stopping the others."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

MAX_MESSAGE = 2048


class ConnectionConfigError(Exception):
    """The connection options do not describe a reachable cluster configuration."""


class KubeError(Exception):
    """One failed API request: HTTP status (None for transport errors), reason and message."""

    def __init__(self, method, path, status, reason, message):
        self.method = method
        self.path = path
        self.status = status
        self.reason = reason or ""
        self.message = (message or "")[:MAX_MESSAGE]
        Exception.__init__(self, "%s %s: %s %s: %s" % (method, path, status, self.reason, self.message))

    @classmethod
    def from_response(cls, method, path, status, reason, body):
        """Prefer the Status object's reason and message over the bare HTTP reason phrase."""
        message = body.decode("utf-8", "replace") if isinstance(body, bytes) else (body or "")
        try:
            status_obj = json.loads(message)
            reason = status_obj.get("reason") or reason
            message = status_obj.get("message") or message
        except (ValueError, AttributeError):
            pass
        return cls(method, path, status, reason, message)

    @property
    def not_found(self):
        return self.status == 404

    @property
    def conflict(self):
        return self.status == 409

    @property
    def transient(self):
        """Worth retrying on the next pass: throttling, timeouts, server errors, transport."""
        return self.status is None or self.status == 429 or self.status >= 500
