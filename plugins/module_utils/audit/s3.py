# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Does an S3 key still work on its bucket? One signed ``ListObjectsV2`` with ``max-keys=1``.

The request is read-only and cheap, needs exactly the permission every delivered key has (its bucket), and fails
in the three ways that matter: the gateway no longer knows or accepts the key (``InvalidAccessKeyId``,
``SignatureDoesNotMatch``), the key lost its grant on the bucket (``AccessDenied``), or the bucket is gone
(``NoSuchBucket``). The call goes through the collection's boto3 edge (``rgw.s3``): SigV4, path-style, low
timeouts and retries, and errors that carry a code and a status but never a key.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ansible_collections.c5c3.orders.plugins.module_utils.audit.outcome import ERROR, FAILED, OK
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.s3 import RgwS3


@dataclass(frozen=True)
class KeyCheck:
    state: str
    message: str = ""


def check_bucket_key(endpoint: str, region: str, bucket: str, access_key: str, secret_key: str,
                     ca_cert: Optional[str] = None, timeout: float = 15.0) -> KeyCheck:
    try:
        s3 = RgwS3(endpoint, RgwCredentials(access_key, secret_key), region, ca_cert=ca_cert, timeout=timeout)
        with s3.calling("s3:ListObjectsV2"):
            s3.client.list_objects_v2(Bucket=bucket, MaxKeys=1)
    except ValueError as exc:  # an empty key, an endpoint botocore cannot use
        return KeyCheck(FAILED, f"the key cannot be used: {exc}")
    except RgwError as exc:
        if exc.status in (401, 403, 404):
            return KeyCheck(FAILED, f"the gateway at {endpoint} refused it on bucket {bucket}: {exc}")
        return KeyCheck(ERROR, f"the gateway at {endpoint} did not answer as needed: {exc}")
    return KeyCheck(OK)
