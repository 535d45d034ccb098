"""The readiness classifier: observations in, ready or exactly one cause out, with a message that names
the capability to grant or the status seen. Answers are the ones measured on Tentacle 20.2.4 and Reef
18.2.7 (tests/integration/test_rgw_store_info.py proves each against the real gateways)."""
import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.readiness import (
    CREDENTIAL_INVALID, MISSING_ACCOUNTS, MISSING_INFO, PREDATES_ACCOUNTS, UNREACHABLE, Answer, Observations,
    classify)

URL = "http://rgw:7480/admin"
OK = Answer(200)
FULL = (("accounts", "*"), ("buckets", "*"), ("info", "*"), ("users", "*"))


def obs(info=OK, accounts=Answer(404, "NoSuchKey"), own=OK, caps=FULL, uid="admin"):
    return Observations(URL, info, accounts, own, uid, caps)


def test_ready():
    verdict = classify(obs())
    assert (verdict.ready, verdict.cause, verdict.reason, verdict.accounts_served) == (True, None, "Ready", True)


@pytest.mark.parametrize("accounts", [Answer(404, "NoSuchKey"), Answer(403, "AccessDenied"), Answer(200)])
def test_any_account_answer_but_405_means_served(accounts):
    """Squid answers 403 to an account GET whatever the caps; it must not count against readiness."""
    assert classify(obs(accounts=accounts)).ready


@pytest.mark.parametrize("perm", ["write", "read, write", "*"])
def test_accounts_with_write_suffices(perm):
    assert classify(obs(caps=(("accounts", perm), ("info", "read")))).ready


@pytest.mark.parametrize("observed, cause, words", [
    (obs(info=Answer(403, "AccessDenied"), accounts=None, own=None, caps=(), uid="adm"), MISSING_INFO,
     ["'info' capability", "HTTP 403 AccessDenied", "--uid=adm", "info=read"]),
    (obs(caps=(("info", "*"), ("users", "*"))), MISSING_ACCOUNTS,
     ["'accounts' capability", "no 'accounts' capability", "info=*;users=*", "--uid=admin", "accounts=*"]),
    (obs(caps=(("accounts", "read"), ("users", "read"))), MISSING_ACCOUNTS, ["it holds accounts=read"]),
    (obs(own=Answer(403, "AccessDenied"), caps=()), MISSING_ACCOUNTS,
     ["cannot read its own capabilities", "HTTP 403 AccessDenied", "users=read"]),
    (obs(accounts=Answer(405, "MethodNotAllowed"), own=None, caps=()), PREDATES_ACCOUNTS,
     ["HTTP 405 MethodNotAllowed", "/admin/account", "Squid 19.2"]),
    (obs(info=Answer(405, "MethodNotAllowed"), accounts=None, own=None), PREDATES_ACCOUNTS, ["HTTP 405"]),
    (obs(info=Answer(404, ""), accounts=None, own=None), PREDATES_ACCOUNTS, ["HTTP 404", "/admin/info"]),
    (obs(info=Answer(404, "NoSuchBucket"), accounts=None, own=None), UNREACHABLE,
     ["nothing serves admin ops", "admin path"]),
    (obs(info=Answer(None, "ConnectionFailed", "[Errno 111] Connection refused"), accounts=None, own=None),
     UNREACHABLE, ["no answer (ConnectionFailed", "Connection refused", URL]),
    (obs(info=Answer(None, "ReadTimeout"), accounts=None, own=None), UNREACHABLE, ["ReadTimeout"]),
    (obs(info=Answer(503, "ServiceUnavailable"), accounts=None, own=None), UNREACHABLE, ["HTTP 503"]),
    (obs(info=Answer(400, "InvalidRequest"), accounts=None, own=None), UNREACHABLE, ["HTTP 400 InvalidRequest"]),
    (obs(accounts=Answer(502, "")), UNREACHABLE, ["HTTP 502", "/admin/account"]),
    (obs(own=Answer(None, "ReadTimeout")), UNREACHABLE, ["/admin/user", "ReadTimeout"]),
    (obs(info=Answer(403, "InvalidAccessKeyId"), accounts=None, own=None), CREDENTIAL_INVALID,
     ["rejects the admin credential", "HTTP 403 InvalidAccessKeyId"]),
    (obs(info=Answer(403, "SignatureDoesNotMatch"), accounts=None, own=None), CREDENTIAL_INVALID,
     ["SignatureDoesNotMatch"]),
])
def test_causes(observed, cause, words):
    verdict = classify(observed)
    assert (verdict.ready, verdict.cause, verdict.reason) == (False, cause, cause)
    for word in words:
        assert word in verdict.message, word


def test_predates_says_accounts_are_not_served_and_unreachable_does_not_know():
    assert classify(obs(accounts=Answer(405, "MethodNotAllowed"))).accounts_served is False
    assert classify(obs(info=Answer(None, "ConnectionFailed"), accounts=None)).accounts_served is None


def test_observations_that_stop_too_early_are_a_programming_error():
    with pytest.raises(ValueError):
        classify(obs(accounts=None))
    with pytest.raises(ValueError):
        classify(obs(own=None))
