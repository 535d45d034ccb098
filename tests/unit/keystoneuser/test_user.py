"""UserReady rows and the child rows (docs/reconciler.md, "Conditions and reasons", "Where the children live"):
names and labels, ownership, SecretStoreNotReady,
WaitingForServiceAccounts, ServiceAccountsFailed with the unlatch, TransportErrorRetryFailed,
ServiceAccountError, UserProvisioned, and the External-mode classified causes."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.collision import NAME_KEY_LABEL, name_key
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import (
    LABEL_CLUSTER,
    LABEL_NAME,
    LABEL_NAMESPACE,
    child_names,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    ActionError,
    ClearProgressing,
    MergePatch,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.unlatch import UNLATCHED_AT_ANNOTATION

from . import scenario
from .scenario import message, reasons, set_korc_conditions, verbs
from .world import CP_NS, NAME, NS, STORE, control_plane, converged_world, rfc3339, secret_store, standard_world

TRANSPORT = "Get \"http://keystone:5000/v3/users\": dial tcp 10.0.0.7:5000: connect: connection refused"


def test_children_are_named_from_the_order_and_carry_the_three_labels():
    world = converged_world()
    base = scenario.names(world).base
    assert base.startswith(f"{NAME}-") and base.endswith("-user") and len(base) == len(NAME) + 14
    children = {key[3]: obj for key, obj in world.objects.items() if key[0] == "" and key[2] == CP_NS
                and obj["metadata"].get("labels", {}).get(LABEL_NAME) == NAME}
    assert sorted(children) == sorted([f"{base}-user", f"{base}-password-v1", f"{base}-source", f"{base}-backup"])
    for name, obj in children.items():
        labels = dict(obj["metadata"]["labels"])
        if name == f"{base}-user":  # the managed User also carries the digest of its folded name (collision)
            assert labels.pop(NAME_KEY_LABEL) == name_key("workflow")
        assert labels == {LABEL_NAME: NAME, LABEL_NAMESPACE: NS, LABEL_CLUSTER: ""}


def test_cluster_label_is_present_and_empty_for_the_management_cluster_and_named_on_a_target():
    world = converged_world(cluster="edge-1", cp=control_plane(assignments=((NS, "edge-1"),),
                                                                publicEndpoint="https://ks.example/v3"))
    assert scenario.user(world)["metadata"]["labels"][LABEL_CLUSTER] == "edge-1"


def test_child_hash_covers_cluster_namespace_and_name():
    bases = {child_names(c, ns, n, CP_NS).base for c, ns, n in
             [("", NS, NAME), ("edge-1", NS, NAME), ("", "tenant-b", NAME), ("", NS, "other")]}
    assert len(bases) == 4
    assert child_names("", NS, NAME, CP_NS).base == child_names("", NS, NAME, "elsewhere").base


def test_longest_child_name_is_the_order_name_plus_35_bytes():
    names = child_names("", NS, "n" * 63, CP_NS)
    assert len(names.password(10 ** 9)) == 63 + 35


def test_foreign_object_with_our_name_is_never_overwritten():
    world = standard_world()
    probe_name = scenario.names(world).probe
    foreign = world.put({"apiVersion": "openstack.k-orc.cloud/v1alpha1", "kind": "User",
                         "metadata": {"name": probe_name, "namespace": CP_NS}, "spec": {"foreign": True}})
    decision = world.reconcile()
    assert reasons(decision)[0] == "ServiceAccountError"
    assert f"User {CP_NS}/{probe_name} exists and is not owned by this order" in message(decision, "UserReady")
    assert world.get("User", probe_name) == foreign


def test_labelled_object_with_a_name_not_ours_is_never_touched():
    world = converged_world()
    stray = world.put({"apiVersion": "v1", "kind": "Secret",
                       "metadata": {"name": "stray", "namespace": CP_NS,
                                    "labels": dict(scenario.user(world)["metadata"]["labels"])}})
    assert world.reconcile().actions == []
    world.delete_and_drain()
    assert world.get("Secret", "stray") == stray


@pytest.mark.parametrize("store", [None, secret_store(ready=False)])
def test_secret_store_not_ready_stops_provisioning(store):
    world = standard_world()
    del world.objects[("", "SecretStore", CP_NS, STORE)]
    if store is not None:
        world.put(store)
    decision = world.reconcile()
    assert reasons(decision) == ("SecretStoreNotReady", "WaitingForServiceAccounts")
    assert verbs(decision) == [("patch", "KeystoneUser", NAME)]
    assert STORE in message(decision, "UserReady")


def _user_created(world):
    world.step()
    world.korc_running = False
    world.step()          # the managed User exists now, K-ORC has not reported on it
    return scenario.user(world)


def test_waiting_for_service_accounts_until_the_user_is_available():
    world = standard_world()
    _user_created(world)
    decision = world.reconcile()
    assert reasons(decision) == ("WaitingForServiceAccounts", "WaitingForServiceAccounts")
    assert decision.requeue_after <= timedelta(seconds=10)


def test_waiting_for_service_accounts_until_the_current_password_is_applied():
    world = standard_world()
    user = _user_created(world)
    set_korc_conditions(user, available=("True", "Success", ""), progressing=("False", "Success", ""))
    user["status"]["id"] = "ks-1"
    user["status"]["resource"] = {"appliedPasswordRef": "something-else"}
    decision = world.reconcile()
    assert reasons(decision)[0] == "WaitingForServiceAccounts"
    assert "apply password generation 1" in message(decision, "UserReady")


@pytest.mark.parametrize("reason", ["InvalidConfiguration", "UnrecoverableError"])
def test_service_accounts_failed_relays_a_terminal_k_orc_error(reason):
    world = standard_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("False", reason, "Keystone said 409: duplicate"),
                        available=("False", reason, "Keystone said 409: duplicate"))
    decision = world.reconcile()
    assert reasons(decision) == ("ServiceAccountsFailed", "WaitingForServiceAccounts")
    assert "Keystone said 409: duplicate" in message(decision, "UserReady")
    assert decision.actions == []
    assert decision.requeue_after == timedelta(minutes=10)


def test_a_terminal_reason_at_an_older_generation_is_not_terminal():
    world = standard_world()
    user = _user_created(world)
    user["metadata"]["generation"] = 3
    set_korc_conditions(user, progressing=("False", "InvalidConfiguration", "old"), generation=2)
    assert reasons(world.reconcile())[0] == "WaitingForServiceAccounts"


def test_a_latched_transport_error_is_cleared_first_and_stamped():
    world = standard_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("False", "InvalidConfiguration", TRANSPORT))
    rv = user["metadata"]["resourceVersion"]
    decision = world.reconcile()
    clear, stamp = decision.actions
    assert isinstance(clear, ClearProgressing) and clear.name == user["metadata"]["name"]
    assert clear.resource_version == rv
    assert isinstance(stamp, MergePatch)
    assert stamp.patch == {"metadata": {"annotations": {UNLATCHED_AT_ANNOTATION: rfc3339(world.now)}}}
    assert reasons(decision)[0] == "ServiceAccountsFailed"
    assert "cleared the latched transport error" in message(decision, "UserReady")
    assert not any(c["type"] == "Progressing" for c in user["status"]["conditions"])


def test_a_later_latch_waits_30s_plus_the_per_object_offset():
    world = standard_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("False", "InvalidConfiguration", TRANSPORT))
    user["metadata"]["annotations"] = {UNLATCHED_AT_ANNOTATION: rfc3339(world.now - timedelta(seconds=10))}
    decision = world.reconcile()
    assert decision.actions == []
    assert timedelta(seconds=19) <= decision.requeue_after <= timedelta(seconds=50)
    world.tick(61)
    assert isinstance(world.reconcile().actions[0], ClearProgressing)


@pytest.mark.parametrize("stamp", ["yesterday", "2999-01-01T00:00:00Z"])
def test_a_bad_or_future_unlatch_stamp_counts_as_due(stamp):
    world = standard_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("False", "InvalidConfiguration", TRANSPORT))
    user["metadata"]["annotations"] = {UNLATCHED_AT_ANNOTATION: stamp}
    assert isinstance(world.reconcile().actions[0], ClearProgressing)


@pytest.mark.parametrize("text", ["x509: certificate signed by unknown authority",
                                  "The request you have made requires authentication. (HTTP 401)",
                                  "Unauthorized"])
def test_tls_and_401_errors_are_never_unlatched(text):
    world = standard_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("False", "InvalidConfiguration", f"{text}; dial tcp refused"))
    decision = world.reconcile()
    assert decision.actions == []
    assert reasons(decision)[0] == "ServiceAccountsFailed"


def _failed_clear(error):
    """A pass over a User with a latched transport error whose clear the edge answers with ``error``."""
    world = standard_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("False", "InvalidConfiguration", TRANSPORT))
    world.fail[("clear Progressing on", "User", user["metadata"]["name"])] = error
    return world.reconcile(), user


def test_transport_error_retry_failed_when_the_clear_is_refused():
    decision, _ = _failed_clear(ActionError(403, "Forbidden", "users.openstack.k-orc.cloud/status is forbidden"))
    assert reasons(decision)[0] == "TransportErrorRetryFailed"
    assert "forbidden" in message(decision, "UserReady")
    assert decision.requeue_after == timedelta(seconds=30)


@pytest.mark.parametrize("status, reason", [(404, "NotFound"), (409, "Conflict"), (429, "TooManyRequests"),
                                            (500, "InternalError"), (503, "ServiceUnavailable"),
                                            (None, "Timeout"), (504, "Timeout")])
def test_every_failed_clear_is_transport_error_retry_failed_and_a_short_lived_cause_comes_back_soon(status, reason):
    """Before, a 404/409/429/5xx/timeout on the clear left UserReady at ServiceAccountsFailed (as decided) and only
    other codes read TransportErrorRetryFailed; the TransportErrorRetryFailed row (docs/reconciler.md, "Conditions
    and reasons") applies whenever the clear fails."""
    decision, user = _failed_clear(ActionError(status, reason, f"the clear met {reason}"))
    assert reasons(decision)[0] == "TransportErrorRetryFailed"
    text = message(decision, "UserReady")
    assert f"the clear met {reason}" in text and user["metadata"]["name"] in text
    assert decision.requeue_after <= timedelta(seconds=10)  # the K-ORC progress interval, not the 30 s error retry
    assert any(c["type"] == "Progressing" for c in user["status"]["conditions"])  # nothing was cleared


def test_a_failed_clear_reports_the_status_code_when_the_server_gives_no_text():
    decision, _ = _failed_clear(ActionError(422, "", ""))
    assert reasons(decision)[0] == "TransportErrorRetryFailed"
    assert "HTTP 422" in message(decision, "UserReady")


def test_service_account_error_carries_the_kubernetes_error_text():
    world = standard_world()
    world.step()
    names = scenario.names(world)
    world.fail[("create", "Secret", names.password(1))] = ActionError(403, "Forbidden", "secrets is forbidden")
    decision = world.reconcile()
    assert reasons(decision)[0] == "ServiceAccountError"
    assert "secrets is forbidden" in message(decision, "UserReady")
    assert scenario.user(world) is None       # the edge stopped at the failure
    assert decision.requeue_after == timedelta(seconds=30)


def test_user_provisioned_reports_user_id_generation_and_the_first_rotation_time():
    world = standard_world()
    for _ in range(3):
        decision = world.step()
    assert reasons(decision)[0] == "UserProvisioned"
    status = decision.status
    assert status["userID"] == scenario.user(world)["status"]["id"]
    assert status["passwordGeneration"] == 1
    assert status["lastPasswordRotation"] == rfc3339(world.now - timedelta(seconds=5))
    assert "nextPasswordRotation" in status


EXTERNAL_CASES = [
    ("No suitable endpoint could be found in the service catalog", "CatalogEndpointMismatch"),
    ("You are not authorized to perform identity:create_application_credential", "CredentialDrift"),
    ("tls: failed to verify certificate: x509: certificate signed by unknown authority", "TLSVerificationFailed"),
    ("The request you have made requires authentication. (HTTP 401)", "AuthenticationFailed"),
    ("Unauthorized", "AuthenticationFailed"),
    ("dial tcp: lookup keystone.example: no such host", "EndpointUnreachable"),
    ("connect: connection refused", "EndpointUnreachable"),
    ("read tcp: i/o timeout", "EndpointUnreachable"),
    ("x509 and 401 and no such host", "TLSVerificationFailed"),   # the first rule that matches wins
    ("Waiting for Domain/cp-domain-default to be ready", "WaitingForServiceAccounts"),
]


def external_world():
    cp = control_plane()
    cp["spec"]["services"]["keystone"] = {"mode": "External", "external": {"authURL": "https://ks.ext/v3"}}
    return standard_world(cp=cp)


@pytest.mark.parametrize("text, reason", EXTERNAL_CASES)
def test_external_mode_replaces_a_wait_on_the_user_with_the_classified_cause(text, reason):
    world = external_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("True", "TransientError", text), available=("False", "TransientError", text))
    decision = world.reconcile()
    assert reasons(decision)[0] == reason
    if reason != "WaitingForServiceAccounts":
        assert message(decision, "UserReady").startswith(f"external Keystone at https://ks.ext/v3: {text}")


def test_external_mode_classifies_the_probe_wait_too():
    world = external_world()
    world.korc_running = False
    world.reconcile()
    set_korc_conditions(scenario.probe(world), progressing=("True", "TransientError", "connection refused"),
                        available=("False", "TransientError", "connection refused"))
    assert reasons(world.reconcile())[0] == "EndpointUnreachable"


def test_external_mode_does_not_classify_an_available_user():
    world = external_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("True", "TransientError", "x509: stale"),
                        available=("True", "Success", ""))
    assert reasons(world.reconcile())[0] == "WaitingForServiceAccounts"


def test_managed_mode_never_classifies():
    world = standard_world()
    user = _user_created(world)
    set_korc_conditions(user, progressing=("True", "TransientError", "connection refused"),
                        available=("False", "TransientError", "connection refused"))
    assert reasons(world.reconcile())[0] == "WaitingForServiceAccounts"
