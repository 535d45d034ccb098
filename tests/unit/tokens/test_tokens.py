"""The pure rules of short-lived target tokens (plugins/module_utils/tokens/): what a token says of itself, when it
is renewed, and that a kubeconfig changes only in its current user's token."""
import base64
import json
from datetime import datetime, timedelta, timezone

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.tokens.claims import read_claims
from ansible_collections.c5c3.orders.plugins.module_utils.tokens.kubeconfigs import (
    KubeconfigError,
    current_token,
    with_token,
)
from ansible_collections.c5c3.orders.plugins.module_utils.tokens.renewal import RenewalPolicy, decide

NOW = datetime(2026, 12, 5, 12, 0, 0, tzinfo=timezone.utc)


def jwt(payload):
    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
    return f"{part({'alg': 'RS256'})}.{part(payload)}.c2lnbmF0dXJl"


def bound(issued, lifetime, ns="c5c3-orders-system", name="c5c3-orders"):
    return jwt({"iat": int(issued.timestamp()), "exp": int((issued + lifetime).timestamp()),
                "kubernetes.io": {"namespace": ns, "serviceaccount": {"name": name, "uid": "u"}}})


def test_a_bound_token_names_its_account_and_lifetime():
    claims = read_claims(bound(NOW, timedelta(hours=24)))
    assert (claims.namespace, claims.service_account) == ("c5c3-orders-system", "c5c3-orders")
    assert claims.issued_at == NOW and claims.lifetime_seconds == 86400


def test_a_legacy_token_secret_names_its_account_and_never_expires():
    claims = read_claims(jwt({"kubernetes.io/serviceaccount/namespace": "sys",
                              "kubernetes.io/serviceaccount/service-account.name": "op"}))
    assert (claims.namespace, claims.service_account, claims.expires_at) == ("sys", "op", None)


@pytest.mark.parametrize("token", ["", "static-token", "a.b", "a.!!!.c", jwt(["list"]), jwt({"sub": "someone"}),
                                   jwt({"kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": ""}}}),
                                   jwt({"kubernetes.io": "x"})])
def test_anything_but_a_service_accounts_token_has_no_claims(token):
    assert read_claims(token) is None


POLICY = RenewalPolicy(seconds=86400, renew_after=0.8)


@pytest.mark.parametrize("issued, lifetime, renew, why", [
    (NOW - timedelta(hours=1), timedelta(hours=24), False, "valid"),
    (NOW - timedelta(hours=19), timedelta(hours=24), False, "valid"),
    (NOW - timedelta(hours=19, minutes=12), timedelta(hours=24), True, "80% of the token's lifetime"),
    (NOW - timedelta(hours=25), timedelta(hours=24), True, "expired"),
    (NOW - timedelta(days=1), timedelta(days=365), True, "longer than the 86400 s allowed"),
    (NOW, timedelta(hours=24, minutes=4), False, "valid"),  # the API server may round up a little
    (NOW - timedelta(minutes=9), timedelta(minutes=10), True, "80%"),
])
def test_when_a_token_is_renewed(issued, lifetime, renew, why):
    verdict = decide(read_claims(bound(issued, lifetime)), NOW, POLICY)
    assert verdict.renew is renew and why in verdict.reason


def test_a_kept_token_says_when_it_will_be_renewed():
    verdict = decide(read_claims(bound(NOW, timedelta(hours=10))), NOW, POLICY)
    assert verdict.renew_at == NOW + timedelta(hours=8)


def test_a_token_that_never_expires_is_replaced():
    claims = read_claims(jwt({"kubernetes.io/serviceaccount/namespace": "s",
                              "kubernetes.io/serviceaccount/service-account.name": "o"}))
    assert decide(claims, NOW, POLICY).renew


@pytest.mark.parametrize("policy, says", [(RenewalPolicy(599), "at least 600"), (RenewalPolicy(3600, 1.0), "between"),
                                          (RenewalPolicy(3600, 0), "between")])
def test_a_policy_outside_the_api_servers_limits_is_refused(policy, says):
    assert says in policy.problems()


def kubeconfig(user):
    return {"apiVersion": "v1", "kind": "Config", "current-context": "edge",
            "clusters": [{"name": "edge", "cluster": {"server": "https://edge:6443", "certificate-authority-data": "Q0E="}}],
            "contexts": [{"name": "other", "context": {"cluster": "edge", "user": "admin"}},
                         {"name": "edge", "context": {"cluster": "edge", "user": "op"}}],
            "users": [{"name": "admin", "user": {"token": "admin-token"}}, {"name": "op", "user": user}]}


def test_only_the_current_users_token_changes():
    doc = kubeconfig({"token": "old", "client-key-data": "S0VZ"})
    assert current_token(doc) == "old"
    fresh = with_token(doc, "new")
    assert current_token(fresh) == "new" and fresh["users"][1]["user"] == {"token": "new"}
    assert fresh["users"][0] == doc["users"][0] and fresh["clusters"] == doc["clusters"]
    assert doc["users"][1]["user"]["token"] == "old", "the input is not changed"


def test_a_token_file_gives_way_to_the_token():
    assert with_token(kubeconfig({"tokenFile": "/t"}), "new")["users"][1]["user"] == {"token": "new"}
    assert current_token(kubeconfig({"tokenFile": "/t"})) is None


@pytest.mark.parametrize("doc", [[], "text", {"contexts": []}, dict(kubeconfig({}), users=[])])
def test_not_a_kubeconfig_says_so_without_values(doc):
    with pytest.raises(KubeconfigError):
        current_token(doc)
