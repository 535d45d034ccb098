"""No key or secret in any repr, str or error text of the RGW edge, whatever the gateway echoes back."""
import traceback

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwAdminClient, RgwUser
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.iam import IssuedKey, RgwIam
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.s3 import RgwS3

ACCESS = "AKIAC5C3ACCESSKEY123"
SECRET = "s3cr3t/C5C3+never-shown"
CREDS = RgwCredentials(ACCESS, SECRET)


def clean(text):
    return SECRET not in text and ACCESS not in text


def test_credentials_hide_both_halves():
    assert clean(repr(CREDS)) and clean(str(CREDS)) and clean(f"{CREDS}") and clean(repr([CREDS]))
    assert CREDS.redact(f"key {ACCESS} secret {SECRET}") == "key <redacted> secret <redacted>"


@pytest.mark.parametrize("access, secret", [("", "x"), ("x", ""), ("x", None), (" ", "x")])
def test_credentials_refuse_empty_halves_without_echoing_them(access, secret):
    with pytest.raises(ValueError) as err:
        RgwCredentials(access, secret)
    assert "required" in str(err.value)


def test_user_and_issued_key_reprs_hide_keys():
    user = RgwUser.from_json({"user_id": "u", "keys": [{"user": "u", "access_key": ACCESS, "secret_key": SECRET}],
                              "caps": [{"type": "users", "perm": "*"}]})
    assert user.keys[0].access_key == ACCESS
    assert clean(repr(user)) and clean(str(user))
    key = IssuedKey("bucket-a", CREDS, "Active", "2026-01-01T00:00:00Z")
    assert clean(repr(key))


def test_admin_client_repr_and_transport_error_hide_keys():
    client = RgwAdminClient("http://127.0.0.1:9", CREDS, timeout=1, retries=0)
    assert clean(repr(client))
    with pytest.raises(RgwError) as err:
        client.info()
    assert err.value.transient and err.value.status is None
    assert clean(str(err.value)) and clean(repr(err.value))


@pytest.mark.parametrize("edge", [RgwIam, RgwS3])
def test_client_errors_become_rgw_errors_without_keys(edge):
    client = edge("http://127.0.0.1:9", CREDS)
    assert clean(repr(client))
    echoed = {"Error": {"Code": "SignatureDoesNotMatch", "Message": f"computed with {SECRET} for {ACCESS}"},
              "ResponseMetadata": {"HTTPStatusCode": 403}}
    with pytest.raises(RgwError) as err:
        with client.calling("iam:CreateAccessKey"):
            raise ClientError(echoed, "CreateAccessKey")
    error = err.value
    assert (error.status, error.code, error.credential_rejected) == (403, "SignatureDoesNotMatch", True)
    assert clean(str(error)) and clean(repr(error)) and clean(error.message)
    shown = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert error.__suppress_context__ and clean(shown)  # no traceback shows the botocore error
    with pytest.raises(RgwError) as err:
        with client.calling("s3:ListBuckets"):
            raise EndpointConnectionError(endpoint_url="http://127.0.0.1:9")
    assert err.value.status is None and err.value.transient and err.value.code == "EndpointConnectionError"
