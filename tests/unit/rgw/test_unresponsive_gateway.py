"""A frozen gateway (it accepts connections and never answers) costs one pass one timeout: the first request without
an answer is not retried, and every later request of the pass to that endpoint - from any admin, IAM or S3 client the
pass's ``ClientFactory`` made, for any store on it - fails at once with the same transport code and status None.
Another endpoint is not affected, and a 5xx or a connection closed under the request is still tried once more.

The frozen gateway is a loopback socket that accepts and holds every connection without reading it (bounded: at most
``MAX_HELD`` connections, closed at the end of the test)."""
from __future__ import annotations

import base64
import socket
import threading
import time

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.spec import parse_store
from ansible_collections.c5c3.orders.plugins.module_utils.passes.gateways import (
    ClientFactory,
    GatewayOptions,
    Gateways,
)
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwAdminClient
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError, Unresponsive, endpoint_key
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.readiness import UNREACHABLE

from .test_admin_client import Gateway

pytest.importorskip("boto3")
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.iam import RgwIam  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.s3 import RgwS3  # noqa: E402

CREDS = RgwCredentials("AKIATEST", "secret-test")
TIMEOUT = 1.0
AT_ONCE = 0.5  # seconds: a request the record stops sends nothing (generous for a loaded machine)
MAX_HELD = 32


class FrozenGateway:
    """Accepts connections on loopback and never answers (as a SIGSTOPped radosgw whose kernel still accepts)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(MAX_HELD)
        self.sock.settimeout(0.2)
        self.held, self.accepted = [], 0
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._hold, daemon=True)
        self.thread.start()

    def _hold(self):
        while not self._stop.is_set() and len(self.held) < MAX_HELD:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)
            self.accepted += 1

    def close(self):
        self._stop.set()
        self.thread.join(2)
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture
def frozen():
    gw = FrozenGateway()
    yield gw
    gw.close()


@pytest.fixture
def healthy():
    gw = Gateway()
    yield gw
    gw.server.shutdown()


def store(name, endpoint):
    return parse_store({"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStore",
                        "metadata": {"name": name, "namespace": "openstack", "uid": name},
                        "spec": {"endpoint": endpoint, "adminCredentialsRef": {"name": "admin"},
                                 "controlPlaneRef": {"name": "cp"}}})


def admin_secret():
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "admin", "namespace": "openstack"},
            "data": {"accessKey": b64(CREDS.access_key), "secretKey": b64(CREDS.secret_key)}}


def b64(text):
    return base64.b64encode(text.encode()).decode()


def timed(call):
    started = time.monotonic()
    try:
        call()
    except RgwError as exc:
        return time.monotonic() - started, exc
    return time.monotonic() - started, None


def test_endpoint_key_names_scheme_host_and_port():
    assert endpoint_key("http://RGW.example") == "http://rgw.example:80"
    assert endpoint_key("https://rgw.example/some/path") == "https://rgw.example:443"
    assert endpoint_key("http://127.0.0.1:7480/") == "http://127.0.0.1:7480"
    record = Unresponsive()
    record.record("http://127.0.0.1:7480/admin", "ReadTimeout", "GET /admin/info")
    assert "http://127.0.0.1:7480" in record and "http://127.0.0.1:7481" not in record
    with pytest.raises(RgwError) as err:
        record.check("http://127.0.0.1:7480", "GET /admin/user")
    assert (err.value.status, err.value.code, err.value.transient) == (None, "ReadTimeout", True)
    assert "GET /admin/info" in err.value.message and err.value.operation == "GET /admin/user"


def test_a_timeout_is_not_retried_and_later_requests_of_any_client_fail_at_once(frozen):
    record = Unresponsive()
    first = RgwAdminClient(frozen.url, CREDS, timeout=TIMEOUT, unresponsive=record)
    spent, err = timed(first.info)
    assert err is not None and err.status is None and err.code == "ReadTimeout"
    assert TIMEOUT * 0.9 <= spent < TIMEOUT * 1.8  # one timeout, not two (the retry is gone)
    assert first.requests == 1
    second = RgwAdminClient(frozen.url + "/", RgwCredentials("AKIAOTHER", "other-secret"), timeout=TIMEOUT,
                            unresponsive=record)
    spent, err = timed(lambda: second.get_user(uid="tenant-a"))
    assert spent < AT_ONCE and err.status is None and err.code == "ReadTimeout" and err.transient
    assert second.requests == 0
    iam = RgwIam(frozen.url, CREDS, timeout=TIMEOUT, unresponsive=record)
    s3 = RgwS3(frozen.url, CREDS, timeout=TIMEOUT, unresponsive=record)
    for call in (lambda: iam.list_access_keys("photos"), s3.list_buckets, lambda: s3.get_bucket_policy("photos")):
        spent, err = timed(call)
        assert spent < AT_ONCE and err.status is None and err.code == "ReadTimeout"
    assert iam.requests == s3.requests == 0


def test_a_boto_timeout_is_not_retried_and_closes_the_endpoint_for_the_admin_client(frozen):
    record = Unresponsive()
    s3 = RgwS3(frozen.url, CREDS, timeout=TIMEOUT, unresponsive=record)
    spent, err = timed(s3.list_buckets)
    assert err is not None and err.status is None
    assert spent < TIMEOUT * 1.8 and s3.requests == 1
    admin = RgwAdminClient(frozen.url, CREDS, timeout=TIMEOUT, unresponsive=record)
    spent, err = timed(admin.info)
    assert spent < AT_ONCE and err.status is None and err.code == record_code(record, frozen.url)
    assert admin.requests == 0


def record_code(record, url):
    try:
        record.check(url)
    except RgwError as exc:
        return exc.code
    return None


def test_two_stores_on_one_frozen_gateway_cost_one_timeout_and_another_gateway_still_answers(frozen, healthy):
    """The pass's probes of three stores, two on the frozen gateway: about one timeout, both unreachable; the store
    on the healthy gateway is probed as usual."""
    factory = ClientFactory(GatewayOptions(timeout=TIMEOUT))
    gateways = Gateways(None, Redactor(), False, factory)
    for name, url in (("frozen-a", frozen.url), ("frozen-b", frozen.url + "/"), ("healthy", healthy.url)):
        gateways.add_store(store(name, url), admin_secret())
    healthy.answers += [(200, {"info": {"storage_backends": [{"name": "rados"}]}}), (405, b""), ]
    started = time.monotonic()
    outcomes = {name: gateways.probe(("openstack", name)) for name in ("frozen-a", "frozen-b", "healthy")}
    spent = time.monotonic() - started
    assert TIMEOUT * 0.9 <= spent < TIMEOUT * 1.8, spent
    assert outcomes["frozen-a"].cause == outcomes["frozen-b"].cause == UNREACHABLE
    assert not outcomes["frozen-a"].ready and not outcomes["frozen-b"].ready
    assert outcomes["healthy"].cause != UNREACHABLE and outcomes["healthy"].backends == ("rados",)
    assert factory.unresponsive.endpoints() == (endpoint_key(frozen.url),)
    assert frozen.accepted == 1  # one connection, one request: nothing more was sent there
    assert gateways.requests == 1 + 2  # the frozen gateway's one request, the healthy gateway's two


def test_a_refused_connection_is_not_retried_and_not_tried_again_in_the_pass():
    with socket.socket() as probe_sock:  # a port nothing listens on
        probe_sock.bind(("127.0.0.1", 0))
        port = probe_sock.getsockname()[1]
    record = Unresponsive()
    client = RgwAdminClient(f"http://127.0.0.1:{port}", CREDS, timeout=1, unresponsive=record)
    for _ in range(2):
        with pytest.raises(RgwError) as err:
            client.info()
        assert err.value.status is None and err.value.code == "ConnectionFailed"
    assert client.requests == 1


def test_a_5xx_is_still_tried_once_more_and_marks_nothing(healthy):
    """An answer, even a 5xx, costs no timeout: it keeps its one retry (admin and boto alike)."""
    record = Unresponsive()
    client = RgwAdminClient(healthy.url, CREDS, unresponsive=record)
    healthy.answers += [(503, b""), (200, {"info": {}})]
    assert client.info() == {}
    assert client.requests == 2 and not record.endpoints()
    s3 = RgwS3(healthy.url, CREDS, unresponsive=record)
    healthy.answers += [(500, b""), (200, b"<ListAllMyBucketsResult><Buckets></Buckets></ListAllMyBucketsResult>")]
    assert s3.list_buckets() == []
    assert s3.requests == 2 and not record.endpoints()
