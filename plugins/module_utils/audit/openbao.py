# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Reading an order's backup from OpenBao's KV version 2 engine (``GET /v1/<mount>/data/<path>``).

The audit reads with a token it is given (a policy allowing ``read`` on the backups' paths is enough); OpenBao's
dev server, Vault and OpenBao clusters answer alike. 404 means no live version at the path (never written, or its
latest version deleted or destroyed): the backup is gone. 403 is the token's policy, which the audit reports as
not proved rather than as a lost backup.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional
from urllib.parse import quote

from ansible_collections.c5c3.orders.plugins.module_utils.audit.errors import AuditError
from ansible_collections.c5c3.orders.plugins.module_utils.audit.http import Endpoint, Unreachable, request_json


class BackupUnreadable(AuditError):
    """OpenBao did not let the audit read the path (or did not answer)."""


@dataclass(frozen=True)
class OpenBao:
    address: str
    token: str
    mount: str = "kv-v2"
    endpoint: Endpoint = Endpoint()

    def data_url(self, path: str) -> str:
        return f"{self.address.rstrip('/')}/v1/{quote(self.mount.strip('/'))}/data/{quote(path.strip('/'))}"

    def read(self, path: str) -> Optional[Dict[str, str]]:
        """The string values at ``path``, or None when it holds no live version."""
        url = self.data_url(path)
        try:
            reply = request_json(self.endpoint, "GET", url, headers={"X-Vault-Token": self.token})
        except Unreachable as exc:
            raise BackupUnreadable(f"OpenBao did not answer: {exc}") from None
        if reply.status == 404:
            return None
        if reply.status != 200:
            hint = " (the token's policy must allow read on this path)" if reply.status == 403 else ""
            raise BackupUnreadable(f"OpenBao answered HTTP {reply.status} for {self.mount}/data/{path}{hint}")
        data = ((reply.body or {}).get("data") or {}).get("data")
        if not isinstance(data, dict):
            return None
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
