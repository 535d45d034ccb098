"""The admin client against a tiny loopback HTTP server standing in for the gateway (the real gateway is
in tests/integration): one retry on a 5xx, none on a 4xx or on no answer, every attempt counted, typed
errors, a signed Content-Type when a body goes out, JSON in and out."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwAdminClient
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError

CREDS = RgwCredentials("AKIATEST", "secret-test")


class Gateway:
    """Answers queued (status, body) pairs in order and records each request it got."""

    def __init__(self):
        self.answers, self.seen = [], []
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                gateway.seen.append((self.command, self.path, dict(self.headers), self.rfile.read(length)))
                status, body = gateway.answers.pop(0)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = _answer

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def gateway():
    gw = Gateway()
    yield gw
    gw.server.shutdown()


def test_json_answer_and_query_with_format(gateway):
    gateway.answers.append((200, {"info": {"storage_backends": [{"name": "rados", "cluster_id": "c"}]}}))
    client = RgwAdminClient(gateway.url, CREDS)
    assert client.info() == {"storage_backends": [{"name": "rados", "cluster_id": "c"}]}
    method, path, headers, _ = gateway.seen[0]
    assert (method, path) == ("GET", "/admin/info?format=json")
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIATEST/")
    assert "Content-Type" not in headers
    assert client.requests == 1


def test_one_retry_on_a_5xx_then_the_error(gateway):
    gateway.answers += [(503, b""), (500, {"Code": "InternalError"})]
    client = RgwAdminClient(gateway.url, CREDS)
    with pytest.raises(RgwError) as err:
        client.info()
    assert (err.value.status, err.value.code, err.value.transient) == (500, "InternalError", True)
    assert client.requests == 2


def test_a_5xx_then_success(gateway):
    gateway.answers += [(502, b""), (200, {"id": "RGW00000000000000042"})]
    client = RgwAdminClient(gateway.url, CREDS)
    assert client.get_account("RGW00000000000000042") == {"id": "RGW00000000000000042"}
    assert client.requests == 2


def test_no_retry_on_a_4xx_and_conflict_is_typed(gateway):
    gateway.answers.append((409, {"Code": "AccountAlreadyExists"}))
    client = RgwAdminClient(gateway.url, CREDS)
    with pytest.raises(RgwError) as err:
        client.create_account("RGW00000000000000042", "acme")
    assert err.value.conflict and err.value.code == "AccountAlreadyExists"
    assert client.requests == 1
    gateway.answers.append((409, {"Code": "AccountAlreadyExists"}))
    assert client.create_account("RGW00000000000000042", "acme", exist_ok=True) is None
    gateway.answers.append((409, {"Code": "BucketNotEmpty"}))
    with pytest.raises(RgwError):
        client.create_account("RGW00000000000000042", "acme", exist_ok=True)


def test_parameters_of_user_calls(gateway):
    gateway.answers += [(200, {"user_id": "tenant-a", "type": "root", "account_id": "RGW00000000000000042",
                               "keys": [], "caps": []}), (200, b""), (200, b"")]
    client = RgwAdminClient(gateway.url, CREDS, admin_path="rgwadmin")
    user = client.adopt_user("tenant-a", "RGW00000000000000042")
    assert user.is_account_root
    client.remove_key("AKIAOLD", uid="tenant-a")
    client.modify_account("RGW00000000000000042", max_access_keys=2)
    paths = [(m, p) for m, p, _, _ in gateway.seen]
    assert paths == [
        ("POST", "/rgwadmin/user?account-id=RGW00000000000000042&account-root=true&format=json&uid=tenant-a"),
        ("DELETE", "/rgwadmin/user?access-key=AKIAOLD&format=json&key=&key-type=s3&uid=tenant-a"),
        ("PUT", "/rgwadmin/account?format=json&id=RGW00000000000000042&max-access-keys=2"),
    ]


def test_a_body_goes_out_with_a_signed_content_type(gateway):
    gateway.answers.append((200, b""))
    client = RgwAdminClient(gateway.url, CREDS)
    client.request("POST", "user", {"uid": "u"}, body=b"x=1", content_type="application/x-www-form-urlencoded")
    _, _, headers, body = gateway.seen[0]
    assert body == b"x=1"
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert "content-type" in headers["Authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")


def test_unknown_limits_and_bad_lookups_are_refused_before_any_request():
    client = RgwAdminClient("http://127.0.0.1:9", CREDS)
    with pytest.raises(ValueError):
        client.modify_account("RGW00000000000000042", max_keys=2)
    with pytest.raises(ValueError):
        client.get_user()
    with pytest.raises(ValueError):
        RgwAdminClient("rgw.example", CREDS)
    assert client.requests == 0


def test_no_answer_is_not_retried_and_typed():
    """A refused connection is not sent again, nor is any later request to that endpoint (the client's own record
    of unresponsive endpoints; a pass shares one between its clients: test_unresponsive_gateway.py)."""
    client = RgwAdminClient("http://127.0.0.1:9", CREDS, timeout=1)
    with pytest.raises(RgwError) as err:
        client.info()
    assert err.value.status is None and err.value.code == "ConnectionFailed"
    assert client.requests == 1
    with pytest.raises(RgwError) as again:
        client.get_user(uid="tenant-a")
    assert again.value.status is None and again.value.code == "ConnectionFailed"
    assert client.requests == 1
