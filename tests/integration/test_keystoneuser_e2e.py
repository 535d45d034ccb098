"""KeystoneUser end to end on the real stack: K-ORC creates the Keystone user, ESO backs the
password up to OpenBao, the module delivers the Secret, which authenticates against Keystone; repairs,
refusals and the freeze behave as docs/reconciler.md says."""

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import order_hash
from orders import unique
from passes import assigned_namespace, ready, order_summary, reconcile_until, run_pass


@pytest.fixture
def tenant(stack):
    with assigned_namespace(stack, "tenant") as ns:
        yield ns



def backup_path(namespace, name):
    return f"openstack/keystone/openstack/{name}-{order_hash('', namespace, name)}-user/service-accounts/credentials"


def teardown(stack, namespace, name):
    stack.delete_order(namespace, name)
    reconcile_until(lambda r: stack.order(namespace, name) is None, 120, "the teardown", orders=[f"{namespace}/{name}"])


def test_order_is_delivered_authenticates_and_is_repaired(stack, tenant):
    name = unique("workflow")
    stack.create_order(tenant, name)
    result = reconcile_until(ready(tenant, name), 180, "the order to become Ready", orders=[f"{tenant}/{name}"])
    order = stack.order(tenant, name)
    status = order["status"]
    assert status["secretName"] == f"{name}-credentials"
    assert status["secretKeys"] == ["clouds.yaml", "password"]
    assert status["passwordGeneration"] == 1 and status["userID"] and status["lastPasswordRotation"]
    assert order["metadata"]["finalizers"] == ["c5c3.io/keystoneuser-teardown"]
    assert stack.condition(order, "Ready")["reason"] == "AllReady"

    delivered = stack.delivered(tenant, name)
    assert set(delivered) == {"clouds.yaml", "password"}
    access = stack.token_from_clouds_yaml(delivered["clouds.yaml"])
    assert access.user_id == status["userID"] and not access.scoped
    assert stack.backup(backup_path(tenant, name))["password"] == delivered["password"]
    assert delivered["password"] not in str(result)  # the module never returns a password

    # a converged pass writes nothing
    again = run_pass(orders=[f"{tenant}/{name}"])
    assert again["changed"] is False and again["api_writes"] == 0

    # an edited password is restored; a key somebody else added stays
    secret_name = f"{name}-credentials"
    stack.core.patch_namespaced_secret(secret_name, tenant, {"data": {"password": "ZWRpdGVk", "extra": "eA=="}})
    reconcile_until(ready(tenant, name), 60, "the repair", orders=[f"{tenant}/{name}"])
    repaired = stack.delivered(tenant, name)
    assert repaired["password"] == delivered["password"] and repaired["extra"] == "x"

    # a deleted Secret is written again
    stack.core.delete_namespaced_secret(secret_name, tenant)
    reconcile_until(ready(tenant, name), 60, "the Secret to be rewritten", orders=[f"{tenant}/{name}"])
    assert stack.delivered(tenant, name)["password"] == delivered["password"]
    teardown(stack, tenant, name)


def test_unassigned_namespace_is_refused_and_nothing_is_created(stack):
    ns = unique("unassigned")
    stack.core.create_namespace({"metadata": {"name": ns}})
    try:
        stack.create_order(ns, "intruder")
        run_pass(orders=[f"{ns}/intruder"])
        order = stack.order(ns, "intruder")
        for kind in ("UserReady", "DeliveryReady"):
            cond = stack.condition(order, kind)
            assert (cond["status"], cond["reason"]) == ("False", "NamespaceNotAssigned")
            assert "spec.namespaceAssignments" in cond["message"]
        assert not order["metadata"].get("finalizers")
        assert stack.children(ns, "intruder") == [] and stack.delivered(ns, "intruder") is None
        stack.delete_order(ns, "intruder")  # no finalizer: goes at once
        assert stack.order(ns, "intruder") is None
    finally:
        stack.core.delete_namespace(ns)


def test_withdrawn_assignment_freezes_and_restoring_it_resumes(stack, tenant):
    name = unique("frozen")
    stack.create_order(tenant, name)
    reconcile_until(ready(tenant, name), 180, "the order to become Ready", orders=[f"{tenant}/{name}"])
    children = sorted(stack.children(tenant, name))
    delivered = stack.delivered(tenant, name)
    path = backup_path(tenant, name)

    stack.withdraw(tenant)
    run_pass(orders=[f"{tenant}/{name}"])
    order = stack.order(tenant, name)
    assert stack.condition(order, "UserReady")["reason"] == "NamespaceNotAssigned"
    # frozen: nothing repaired, nothing swept
    stack.core.patch_namespaced_secret(f"{name}-credentials", tenant, {"data": {"password": "ZWRpdGVk"}})
    result = run_pass(orders=[f"{tenant}/{name}"])
    assert order_summary(result, tenant, name)["requeue_after"] == 60
    assert stack.delivered(tenant, name)["password"] == "edited"
    assert sorted(stack.children(tenant, name)) == children
    assert stack.backup(path)["password"] == delivered["password"]
    stack.token_from_clouds_yaml(delivered["clouds.yaml"])  # the Keystone user still authenticates

    stack.assign(tenant)  # restoring the entry brings the order back without an edit to it
    reconcile_until(ready(tenant, name), 120, "the order to resume", orders=[f"{tenant}/{name}"])
    assert stack.delivered(tenant, name)["password"] == delivered["password"]
    teardown(stack, tenant, name)
