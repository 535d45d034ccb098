# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Kubernetes failures as values a pass can report on one order without stopping the others."""
from __future__ import annotations

import json
from typing import Any, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.errors import C5C3Error

MAX_MESSAGE = 2048


def parse_retry_after(headers: Any) -> Optional[float]:
    """The ``Retry-After`` header in seconds (the API server sends an integer); None when absent or unreadable."""
    if not headers:
        return None
    try:
        raw = headers.get("Retry-After")
    except AttributeError:
        return None
    try:
        return max(0.0, float(raw)) if raw is not None else None
    except (TypeError, ValueError):
        return None


class KubernetesError(C5C3Error):
    """Root of the Kubernetes edge's exceptions (``k8s/``); the whole tree is in ``module_utils/errors.py``."""


class ConnectionConfigError(KubernetesError):
    """The connection options do not describe a reachable cluster configuration."""


class KubeError(KubernetesError):
    """One failed API request: HTTP status (None for transport errors), reason and message. The controller's
    ``kube.ApiError`` is this class: one error type for a failed request, in the passes and the controller alike.

    Ask it (``not_found``, ``conflict``, ``transient``) rather than parsing its text. Its message may echo a
    request body: the executor scrubs it (``redact``) before it reaches a condition or a result.
    """

    def __init__(self, method: str, path: str, status: Optional[int], reason: str, message: str = "",
                 retry_after: Optional[float] = None) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.reason = reason or ""
        self.message = (message or "")[:MAX_MESSAGE]
        self.retry_after = retry_after  # seconds the server asked us to wait (Retry-After of a 429), if it said
        super().__init__(f"{method} {path}: {status} {self.reason}: {self.message}")

    @classmethod
    def from_response(cls, method: str, path: str, status: int, reason: str, body: Any,
                      headers: Any = None) -> "KubeError":
        """Prefer the Status object's reason and message over the bare HTTP reason phrase."""
        message = body.decode("utf-8", "replace") if isinstance(body, bytes) else (body or "")
        try:
            status_obj = json.loads(message)
            reason = status_obj.get("reason") or reason
            message = status_obj.get("message") or message
        except (ValueError, AttributeError):
            pass
        return cls(method, path, status, reason, message, retry_after=parse_retry_after(headers))

    def summary(self) -> str:
        """One line for a condition: the status and the server's message (no request body of ours)."""
        if self.status is None:
            return f"no response from the API server ({self.message or self.reason})"
        return f"HTTP {self.status} {self.reason}: {self.message}".rstrip(": ")

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def forbidden(self) -> bool:
        return self.status == 403

    @property
    def transient(self) -> bool:
        """Worth retrying soon: throttling, timeouts, server errors, transport."""
        return self.status is None or self.status == 429 or self.status >= 500
