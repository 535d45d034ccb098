# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""boto3 clients aimed at a gateway: low timeouts and retries, every HTTP attempt counted, and every
botocore failure turned into :class:`RgwError` (code and status only, no request detail, no key)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
from typing import Optional

try:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError
    HAS_BOTO3 = True
    BOTO3_IMPORT_ERROR = None
except ImportError as exc:  # reported by the module with missing_required_lib
    HAS_BOTO3 = False
    BOTO3_IMPORT_ERROR = exc

    class BotoCoreError(Exception):
        """Stands in while botocore is missing (nothing raises it then)."""

    class ClientError(Exception):
        """Stands in while botocore is missing (nothing raises it then)."""

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError

DEFAULT_TIMEOUT = 20.0


class BotoEdge:
    """What the IAM and S3 wrappers share: one botocore client, a request counter, error translation."""

    service = ""

    def __init__(self, endpoint: str, credentials: RgwCredentials, region: str = "us-east-1",
                 validate_certs: bool = True, ca_cert: Optional[str] = None,
                 timeout: float = DEFAULT_TIMEOUT):
        self.endpoint = endpoint.rstrip("/")
        self.requests = 0
        self._credentials = credentials
        config = Config(retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=min(timeout, 10.0),
                        read_timeout=timeout, s3={"addressing_style": "path"}, signature_version="v4")
        session = boto3.session.Session()
        self.client = session.client(self.service, endpoint_url=self.endpoint, region_name=region,
                                     aws_access_key_id=credentials.access_key,
                                     aws_secret_access_key=credentials.secret_key,
                                     verify=ca_cert if (ca_cert and validate_certs) else validate_certs,
                                     config=config)
        self.client.meta.events.register("before-send", self._count)

    def __repr__(self):
        return f"{type(self).__name__}(endpoint={self.endpoint!r})"

    def _count(self, **_kwargs):
        self.requests += 1  # once per HTTP attempt, retries included; returning None lets it go out

    @contextlib.contextmanager
    def calling(self, operation: str):
        """Run one boto call; its failure leaves as RgwError, the original suppressed (``from None``) so
        no traceback shows its text or its request."""
        failure = None
        try:
            yield
        except ClientError as exc:
            error = exc.response.get("Error", {})
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            failure = RgwError(status, str(error.get("Code", "")),
                               self._credentials.redact(error.get("Message", "")), operation)
        except BotoCoreError as exc:
            failure = RgwError(None, type(exc).__name__, self._credentials.redact(str(exc)), operation)
        if failure is not None:
            raise failure from None
