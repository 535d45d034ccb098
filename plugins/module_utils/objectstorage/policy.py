# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The two policy documents of a bucket credential, rebuilt from their inputs on every pass.

docs/object-storage.md "Design rules and their tests" (rows 3): the IAM user's inline policy allows ``s3:*`` on
the bucket and its objects; the bucket policy carries a statement granting that user too (an identity policy alone
cannot reach objects the account root wrote before the account was migrated: measured on Tentacle 20.2.4), and the
public-read statement when ``spec.publicRead`` is true. The bucket policy is built from both inputs at once, so
neither overwrites the other, and a policy written straight to the gateway is found different and restored.
Statements are compared in a canonical form (the gateway may hand a single principal or action back as a string
instead of a list).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

VERSION = "2012-10-17"
GRANT_SID = "c5c3-bucket-credential"
PUBLIC_READ_SID = "c5c3-public-read"


def bucket_arn(bucket: str) -> str:
    return f"arn:aws:s3:::{bucket}"


def inline_policy(bucket: str) -> Dict[str, Any]:
    return {"Version": VERSION, "Statement": [{
        "Effect": "Allow", "Action": ["s3:*"], "Resource": [bucket_arn(bucket), f"{bucket_arn(bucket)}/*"]}]}


def bucket_policy(bucket: str, public_read: bool, grantee_arn: Optional[str]) -> Optional[Dict[str, Any]]:
    """The whole bucket policy; None when it has no statement (then the bucket has no policy)."""
    statements: List[Dict[str, Any]] = []
    if grantee_arn:
        statements.append({"Sid": GRANT_SID, "Effect": "Allow", "Principal": {"AWS": [grantee_arn]},
                           "Action": ["s3:*"], "Resource": [bucket_arn(bucket), f"{bucket_arn(bucket)}/*"]})
    if public_read:
        statements.append({"Sid": PUBLIC_READ_SID, "Effect": "Allow", "Principal": "*",
                           "Action": ["s3:GetObject"], "Resource": [f"{bucket_arn(bucket)}/*"]})
    if not statements:
        return None
    return {"Version": VERSION, "Statement": statements}


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        items = [_canonical(v) for v in value]
        return items[0] if len(items) == 1 else sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def canonical(document: Any) -> Any:
    """A policy document in a form two equal policies share (single-item lists as scalars, lists sorted)."""
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            return document
    if not isinstance(document, dict):
        return document
    statements = document.get("Statement")
    if isinstance(statements, dict):
        statements = [statements]
    return {"Version": document.get("Version"),
            "Statement": sorted((_canonical(s) for s in statements or []), key=lambda s: json.dumps(s, sort_keys=True))}


def same_policy(live: Any, desired: Optional[Dict[str, Any]]) -> bool:
    if desired is None:
        return live is None
    return live is not None and canonical(live) == canonical(desired)


def _statements(document: Any) -> List[Any]:
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            return []
    statements = document.get("Statement") if isinstance(document, dict) else None
    return [statements] if isinstance(statements, dict) else list(statements or [])


def _grants(statement: Any, grantee_arn: str) -> bool:
    if not isinstance(statement, dict):
        return False
    if statement.get("Sid") == GRANT_SID:
        return True
    principal = statement.get("Principal")
    aws = principal.get("AWS") if isinstance(principal, dict) else None
    return grantee_arn in ([aws] if isinstance(aws, str) else aws or [])


def granted(document: Any, grantee_arn: str) -> bool:
    """Whether a live bucket policy still holds the credential's grant (by its Sid or its principal)."""
    return any(_grants(s, grantee_arn) for s in _statements(document))


def without_grant(document: Any, grantee_arn: str) -> Optional[Dict[str, Any]]:
    """A live bucket policy less the credential's grant, everything else kept as written; None when nothing
    else is left (then the policy is deleted)."""
    kept = [s for s in _statements(document) if not _grants(s, grantee_arn)]
    if not kept:
        return None
    version = document.get("Version", VERSION) if isinstance(document, dict) else VERSION
    return {"Version": version, "Statement": kept}
