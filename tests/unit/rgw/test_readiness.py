"""The readiness classifier: observations in, ready or exactly one cause out, with a message that names
the capability to grant or the status seen. Answers are the ones measured on Tentacle 20.2.4 and Reef
18.2.7 (tests/integration/test_rgw_store_info.py proves each against the real gateways)."""
import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.readiness import (
    CREDENTIAL_INVALID, MISSING_ACCOUNTS, MISSING_INFO, MISSING_USERS, NEEDED, PREDATES_ACCOUNTS, UNREACHABLE,
    Answer, Observations, classify, missing_caps, perms_of)

URL = "http://rgw:7480/admin"
OK = Answer(200)
DENIED = Answer(403, "AccessDenied")
FULL = (("accounts", "*"), ("buckets", "*"), ("info", "*"), ("users", "*"))


def obs(info=OK, accounts=Answer(404, "NoSuchKey"), own=OK, caps=FULL, uid="admin"):
    return Observations(URL, info, accounts, own, uid, caps)


def grant_of(message):
    """The caps the message's ``radosgw-admin caps add`` line grants."""
    return message.split("--caps='", 1)[1].split("'", 1)[0]


def test_ready():
    verdict = classify(obs())
    assert (verdict.ready, verdict.cause, verdict.reason, verdict.accounts_served) == (True, None, "Ready", True)


def test_the_flows_need_info_read_users_read_and_write_accounts_write():
    assert dict(NEEDED) == {"info": {"read"}, "users": {"read", "write"}, "accounts": {"write"}}


@pytest.mark.parametrize("accounts", [Answer(404, "NoSuchKey"), DENIED, Answer(200)])
def test_any_account_answer_but_405_means_served(accounts):
    """Squid answers 403 to an account GET whatever the caps; it must not count against readiness."""
    assert classify(obs(accounts=accounts)).ready


@pytest.mark.parametrize("caps", [
    (("accounts", "write"), ("info", "read"), ("users", "*")),
    (("accounts", "read, write"), ("info", "*"), ("users", "read, write")),
    (("info", "read"), ("users", "*"), ("accounts", "*")),
])
def test_exactly_what_the_flows_use_suffices(caps):
    assert classify(obs(caps=caps)).ready


@pytest.mark.parametrize("perm, perms", [
    ("*", {"read", "write"}), ("read", {"read"}), ("write", {"write"}), ("read, write", {"read", "write"}),
    ("read,write", {"read", "write"}), ("<none>", set()), ("", set()),
])
def test_perms_of_reads_what_the_gateway_writes(perm, perms):
    assert perms_of(perm) == perms


def test_info_and_accounts_without_users_is_missing_users_not_accounts():
    """The own record is refused for lack of users=read: nothing can be said of accounts, so it is not blamed."""
    verdict = classify(obs(own=DENIED, caps=(), uid=""))
    assert (verdict.ready, verdict.cause, verdict.accounts_served) == (False, MISSING_USERS, True)
    for word in ["'users' capability", "cannot read its own capabilities", "HTTP 403 AccessDenied",
                 f"{URL}/user", "users=read", "users=write"]:
        assert word in verdict.message, word
    assert grant_of(verdict.message) == "users=*"
    assert "accounts" not in verdict.message


@pytest.mark.parametrize("caps, cause, grant, words", [
    ((("accounts", "*"), ("info", "*"), ("users", "read")), MISSING_USERS, "users=write",
     ["'users' capability with write access", "it holds users=read", "--uid=admin"]),
    ((("accounts", "*"), ("info", "*"), ("users", "write")), MISSING_USERS, "users=read",
     ["'users' capability with read access", "it holds users=write"]),
    ((("info", "*"), ("users", "*")), MISSING_ACCOUNTS, "accounts=write",
     ["'accounts' capability with write access", "no 'accounts' capability", "info=*;users=*"]),
    ((("accounts", "read"), ("info", "*"), ("users", "*")), MISSING_ACCOUNTS, "accounts=write",
     ["it holds accounts=read"]),
    ((("info", "*"), ("users", "read")), MISSING_ACCOUNTS, "users=write;accounts=write",
     ["'users' capability with write access", "'accounts' capability with write access"]),
    ((("info", "*"), ("user-info-without-keys", "read")), MISSING_ACCOUNTS, "users=*;accounts=write",
     ["'users' capability with read and write access", "it has no 'users' capability"]),
])
def test_every_missing_capability_is_named(caps, cause, grant, words):
    verdict = classify(obs(caps=caps))
    assert (verdict.ready, verdict.cause, verdict.accounts_served) == (False, cause, True)
    assert grant_of(verdict.message) == grant
    for word in words:
        assert word in verdict.message, word


def test_without_info_every_other_missing_capability_is_named_when_the_record_reads():
    verdict = classify(obs(info=DENIED, accounts=None, caps=(("accounts", "*"), ("users", "read")), uid="adm"))
    assert verdict.cause == MISSING_INFO
    assert grant_of(verdict.message) == "info=read;users=write"
    assert "--uid=adm" in verdict.message and "HTTP 403 AccessDenied" in verdict.message


def test_without_info_and_users_read_both_are_named():
    verdict = classify(obs(info=DENIED, accounts=None, own=DENIED, caps=(), uid=""))
    assert verdict.cause == MISSING_INFO
    assert grant_of(verdict.message) == "info=read;users=*"
    assert "cannot read its own capabilities" in verdict.message


def test_missing_caps_lists_in_needed_order_only_what_lacks():
    assert [(m.kind, set(m.perms)) for m in missing_caps((("users", "read"),))] == [
        ("info", {"read"}), ("users", {"write"}), ("accounts", {"write"})]
    assert missing_caps(FULL) == ()


@pytest.mark.parametrize("observed, cause, words", [
    (obs(info=DENIED, accounts=None, own=None, caps=(), uid="adm"), MISSING_INFO,
     ["'info' capability", "HTTP 403 AccessDenied", "--uid=adm", "info=read"]),
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
    (obs(own=Answer(404, "NoSuchUser")), UNREACHABLE, ["/admin/user", "HTTP 404 NoSuchUser"]),
    (obs(info=Answer(403, "InvalidAccessKeyId"), accounts=None, own=None), CREDENTIAL_INVALID,
     ["rejects the admin credential", "HTTP 403 InvalidAccessKeyId"]),
    (obs(info=Answer(403, "SignatureDoesNotMatch"), accounts=None, own=None), CREDENTIAL_INVALID,
     ["SignatureDoesNotMatch"]),
    (obs(own=Answer(403, "SignatureDoesNotMatch")), CREDENTIAL_INVALID, ["SignatureDoesNotMatch"]),
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
