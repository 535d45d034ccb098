"""RgwError: one type for admin ops, IAM and S3, told apart by status and code, never by text."""
import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError, parse_error_body


@pytest.mark.parametrize("status, code, flags", [
    (404, "NoSuchKey", {"not_found"}),
    (403, "AccessDenied", {"forbidden"}),
    (403, "InvalidAccessKeyId", {"forbidden", "credential_rejected"}),
    (403, "SignatureDoesNotMatch", {"forbidden", "credential_rejected"}),
    (405, "MethodNotAllowed", {"method_not_allowed"}),
    (409, "AccountAlreadyExists", {"conflict", "already_exists"}),
    (409, "LimitExceeded", {"conflict"}),
    (409, "BucketNotEmpty", {"conflict"}),
    (503, "ServiceUnavailable", {"transient"}),
    (None, "ConnectionFailed", {"transient"}),
    (400, "InvalidArgument", set()),
])
def test_properties(status, code, flags):
    error = RgwError(status, code, "text", "GET /admin/x")
    names = ("not_found", "forbidden", "conflict", "method_not_allowed", "transient", "credential_rejected",
             "already_exists")
    assert {n for n in names if getattr(error, n)} == flags


def test_text_names_operation_status_and_code():
    assert str(RgwError(409, "AccountAlreadyExists", "", "POST /admin/account")) == \
        "POST /admin/account: HTTP 409 AccountAlreadyExists"
    assert str(RgwError(None, "ReadTimeout", "read timed out", "GET /admin/info")) == \
        "GET /admin/info: no answer (ReadTimeout): read timed out"
    assert RgwError(500, "").code == "HTTP500"


def test_parse_json_and_xml_bodies():
    assert parse_error_body(b'{"Code":"NoSuchKey","RequestId":"tx1","HostId":"h"}') == ("NoSuchKey", "")
    xml = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>'
           b'<Message>bad</Message><RequestId>tx</RequestId></Error>')
    assert parse_error_body(xml) == ("SignatureDoesNotMatch", "bad")
    assert parse_error_body(b"") == ("", "")
    assert parse_error_body(b"<html>gateway timeout</html>") == ("", "")
    assert parse_error_body(b"{not json") == ("", "")
