"""RgwIam.get_user_policy (added for the pass): the document as a dict however the gateway encodes it, None for a
missing user or policy, any other failure raised as RgwError. botocore's Stubber answers in place of a gateway."""
from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from botocore.stub import Stubber

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.iam import RgwIam

DOCUMENT = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": ["*"]}]}


@pytest.fixture
def iam():
    client = RgwIam("http://rgw.fake:8080", RgwCredentials("AKSTUB", "stub-secret-key"))
    with Stubber(client.client) as stub:
        yield client, stub


def expect(stub, document):
    stub.add_response("get_user_policy", {"UserName": "u", "PolicyName": "p", "PolicyDocument": document},
                      {"UserName": "u", "PolicyName": "p"})


@pytest.mark.parametrize("document", [json.dumps(DOCUMENT), quote(json.dumps(DOCUMENT))])
def test_the_document_is_read_plain_or_url_encoded(iam, document):
    client, stub = iam
    expect(stub, document)
    assert client.get_user_policy("u", "p") == DOCUMENT


def test_a_missing_user_or_policy_reads_none_and_other_failures_raise(iam):
    client, stub = iam
    stub.add_client_error("get_user_policy", "NoSuchEntity", "no such policy", 404)
    assert client.get_user_policy("u", "p") is None
    stub.add_client_error("get_user_policy", "AccessDenied", "denied", 403)
    with pytest.raises(RgwError) as denied:
        client.get_user_policy("u", "p")
    assert (denied.value.status, denied.value.code) == (403, "AccessDenied")


def test_a_document_that_is_not_a_json_object_reads_none(iam):
    client, stub = iam
    expect(stub, "[1, 2]")
    assert client.get_user_policy("u", "p") is None
