# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""boto3 clients aimed at a gateway: low timeouts and retries, every HTTP attempt counted, and every
botocore failure turned into :class:`RgwError` (code and status only, no request detail, no key).

Retries are ours, as admin.py's: one more attempt after a 5xx or a connection closed under the request, none after
a timeout or a refused connection. Those mark the endpoint in the pass's ``Unresponsive`` record (errors.py), shared
with the admin client, and every later call to it fails at once: a frozen gateway costs a pass one timeout."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
from typing import TYPE_CHECKING, Optional

try:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError, ConnectionClosedError, HTTPClientError
    HAS_BOTO3 = True
    BOTO3_IMPORT_ERROR = None
except ImportError as exc:  # reported by the module with missing_required_lib
    HAS_BOTO3 = False
    BOTO3_IMPORT_ERROR = exc

    if not TYPE_CHECKING:  # a type checker reads botocore's names, not these
        class BotoCoreError(Exception):
            """Stands in while botocore is missing (nothing raises it then)."""

        class ClientError(Exception):
            """Stands in while botocore is missing (nothing raises it then)."""

        class HTTPClientError(BotoCoreError):
            """Stands in while botocore is missing (nothing raises it then)."""

        class ConnectionClosedError(HTTPClientError):
            """Stands in while botocore is missing (nothing raises it then)."""

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError, Unresponsive

DEFAULT_TIMEOUT = 20.0
RETRY_DELAY = 0.2  # seconds before the one retry of a 5xx or a closed connection


class BotoEdge:
    """What the IAM and S3 wrappers share: one botocore client, a request counter, error translation."""

    service = ""

    def __init__(self, endpoint: str, credentials: RgwCredentials, region: str = "us-east-1",
                 validate_certs: bool = True, ca_cert: Optional[str] = None,
                 timeout: float = DEFAULT_TIMEOUT, unresponsive: Optional[Unresponsive] = None):
        """``unresponsive``: the pass's record of endpoints that gave no answer (shared by its clients); without
        one the client keeps its own."""
        self.endpoint = endpoint.rstrip("/")
        self.requests = 0
        self.unresponsive = unresponsive if unresponsive is not None else Unresponsive()
        self._credentials = credentials
        # botocore's own retries are off (one attempt): _retry decides, so a timeout is never waited out twice
        config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=min(timeout, 10.0),
                        read_timeout=timeout, s3={"addressing_style": "path"}, signature_version="v4")
        session = boto3.session.Session()
        self.client = session.client(self.service, endpoint_url=self.endpoint, region_name=region,
                                     aws_access_key_id=credentials.access_key,
                                     aws_secret_access_key=credentials.secret_key,
                                     verify=ca_cert if (ca_cert and validate_certs) else validate_certs,
                                     config=config)
        self.client.meta.events.register("before-send", self._count)
        self.client.meta.events.register("needs-retry", self._retry)

    def __repr__(self):
        return f"{type(self).__name__}(endpoint={self.endpoint!r})"

    def _count(self, **_kwargs):
        self.requests += 1  # once per HTTP attempt, retries included; returning None lets it go out

    def _retry(self, attempts=1, response=None, caught_exception=None, **_kwargs):
        """botocore's ``needs-retry``: the delay before one more attempt, or None. A 5xx or a connection closed
        under the request is tried once more; a timeout or a refused connection is not (the endpoint is then taken
        for unresponsive, see ``calling``)."""
        if attempts > 1 or self.endpoint in self.unresponsive:
            return None
        if caught_exception is not None:
            return RETRY_DELAY if isinstance(caught_exception, ConnectionClosedError) else None
        http = response[0] if response else None
        status = getattr(http, "status_code", None)
        return RETRY_DELAY if isinstance(status, int) and status >= 500 else None

    @contextlib.contextmanager
    def calling(self, operation: str):
        """Run one boto call; its failure leaves as RgwError, the original suppressed (``from None``) so
        no traceback shows its text or its request."""
        self.unresponsive.check(self.endpoint, operation)
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
            if isinstance(exc, HTTPClientError):  # no answer: not asked again in this pass
                self.unresponsive.record(self.endpoint, failure.code, operation)
        if failure is not None:
            raise failure from None
