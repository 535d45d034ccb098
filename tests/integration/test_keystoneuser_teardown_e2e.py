"""KeystoneUser teardown end to end on the real stack (docs/reconciler.md, "Teardown"): the credential-order holds, the
deletion down to the OpenBao path (real K-ORC deletes the Keystone user, real ESO purges the path), a frozen order torn
down the same way, and a KeystoneApplicationCredential being deleted holding a due scheduled rotation."""
import time
from datetime import datetime, timedelta, timezone

import pytest

from kubewait import wait_for
from orders import unique
from passes import assigned_namespace, moment, ready, order_summary, reconcile_until, run_pass

HOLD = "test.c5c3.io/hold"
RA, AC = "KeystoneRoleAssignment", "KeystoneApplicationCredential"


@pytest.fixture
def tenant(stack):
    with assigned_namespace(stack, "teardown", finalizer=HOLD) as ns:
        yield ns




def provisioned(stack, namespace, name, **spec):
    """Create an order, run passes until it is Ready, and return what a teardown must remove."""
    stack.create_order(namespace, name, **spec)
    reconcile_until(ready(namespace, name), 180, "the order to become Ready", orders=[f"{namespace}/{name}"])
    order = stack.order(namespace, name)
    delivered = stack.delivered(namespace, name)
    base = stack.base_name(namespace, name)
    expected = sorted([f"{base}-user", f"{base}-backup", f"{base}-password-v1", f"{base}-source"])
    # the probe was deleted once the managed User existed; K-ORC lets it go shortly after
    children = wait_for(lambda: sorted(stack.children(namespace, name)) == expected and expected, 30,
                        what="the probe to go")
    assert stack.keystone_users_named(name) == [order["status"]["userID"]]
    assert stack.backup(stack.backup_path(namespace, name))["password"] == delivered["password"]
    return order, delivered, children


def assert_untouched(stack, namespace, name, delivered, children):
    """A held deletion deletes nothing: children, delivered Secret, backup and Keystone user all stay."""
    order = stack.order(namespace, name)
    assert order is not None and order["metadata"].get("deletionTimestamp")
    assert order["metadata"]["finalizers"] == ["c5c3.io/keystoneuser-teardown"]
    assert sorted(stack.children(namespace, name)) == children
    assert stack.delivered(namespace, name) == delivered
    assert stack.backup(stack.backup_path(namespace, name))["password"] == delivered["password"]
    assert stack.authenticates(delivered["clouds.yaml"])
    return order


def assert_held(stack, namespace, name, reason, holder, delivered, children):
    result = run_pass(orders=[f"{namespace}/{name}"])
    entry = order_summary(result, namespace, name)
    assert entry["reasons"]["UserReady"] == reason and entry["actions"] == []
    assert entry["requeue_after"] == 60  # checked again every minute
    order = assert_untouched(stack, namespace, name, delivered, children)
    cond = stack.condition(order, "UserReady")
    assert (cond["status"], cond["reason"]) == ("False", reason)
    assert holder in cond["message"] and namespace in cond["message"]
    assert stack.condition(order, "Ready")["status"] == "False"


def assert_gone(stack, namespace, name, user_id, delivered):
    """Deleted down to the OpenBao path."""
    assert stack.order(namespace, name) is None
    assert not stack.authenticates(delivered["clouds.yaml"])
    assert stack.keystone_users_named(name) == []
    path = stack.backup_path(namespace, name)
    assert stack.backup(path) is None and not stack.backup_exists(path)
    assert stack.children(namespace, name) == []
    assert stack.delivered(namespace, name) is None
    assert user_id  # the user existed


def test_deletion_waits_for_role_assignments_then_application_credentials(stack, tenant):
    name = unique("held")
    started = time.monotonic()
    order, delivered, children = provisioned(stack, tenant, name)
    ra, ac = unique("ra"), unique("ac")
    stack.create_credential_order(RA, tenant, ra, name)
    stack.create_credential_order(AC, tenant, ac, name)
    stack.create_credential_order(RA, tenant, unique("other"), "somebody-else")  # names another order

    stack.delete_order(tenant, name)
    assert_held(stack, tenant, name, "ReferencedByRoleAssignments", ra, delivered, children)
    assert_held(stack, tenant, name, "ReferencedByRoleAssignments", ra, delivered, children)  # still, next pass
    cond = stack.condition(stack.order(tenant, name), "UserReady")
    assert ac not in cond["message"]  # the role assignments are the first hold

    stack.delete_credential_order(RA, tenant, ra)
    assert_held(stack, tenant, name, "ReferencedByApplicationCredentials", ac, delivered, children)
    held = time.monotonic()

    stack.delete_credential_order(AC, tenant, ac)
    reconcile_until(lambda r: stack.order(tenant, name) is None, 120, "the teardown", orders=[f"{tenant}/{name}"])
    assert_gone(stack, tenant, name, order["status"]["userID"], delivered)
    print(f"\nprovision+holds {held - started:.1f}s, teardown {time.monotonic() - held:.1f}s")


def test_frozen_order_tears_down_the_same_way(stack, tenant):
    name = unique("frozen")
    order, delivered, children = provisioned(stack, tenant, name)
    stack.withdraw(tenant)
    run_pass(orders=[f"{tenant}/{name}"])
    assert stack.condition(stack.order(tenant, name), "UserReady")["reason"] == "NamespaceNotAssigned"
    assert sorted(stack.children(tenant, name)) == children

    started = time.monotonic()
    stack.delete_order(tenant, name)
    reconcile_until(lambda r: stack.order(tenant, name) is None, 120, "the teardown of the frozen order",
                    orders=[f"{tenant}/{name}"])
    assert_gone(stack, tenant, name, order["status"]["userID"], delivered)
    print(f"\nfrozen teardown {time.monotonic() - started:.1f}s")


def test_credential_order_being_deleted_holds_a_due_scheduled_rotation_but_not_a_raised_spec(stack, tenant):
    name = unique("sched")
    ref = [f"{tenant}/{name}"]
    order, first, _ = provisioned(stack, tenant, name, rotation={"interval": "1m"})
    due = moment(order["status"]["nextPasswordRotation"])
    assert due == moment(order["status"]["lastPasswordRotation"]) + timedelta(minutes=1)

    ac = unique("ac")
    stack.create_credential_order(AC, tenant, ac, name, finalizers=[HOLD])
    stack.delete_credential_order(AC, tenant, ac)
    assert stack.credential_order(AC, tenant, ac)["metadata"].get("deletionTimestamp")

    def held(generation, due_at):
        """A pass past the due time rotates nothing and says why."""
        wait = (due_at - datetime.now(timezone.utc)).total_seconds() + 1
        if wait > 0:
            time.sleep(wait)
        result = run_pass(orders=ref)
        entry = order_summary(result, tenant, name)
        assert entry["actions"] == [] and entry["requeue_after"] == 60, entry
        current = stack.order(tenant, name)
        cond = stack.condition(current, "UserReady")
        assert (cond["status"], cond["reason"]) == ("True", "UserProvisioned")
        assert ac in cond["message"] and "waits" in cond["message"], cond["message"]
        assert current["status"]["passwordGeneration"] == generation
        assert moment(current["status"]["nextPasswordRotation"]) == due_at  # not advanced: nothing rotated
        assert sorted(stack.password_secrets(tenant, name)) == [generation]
        return current

    started = time.monotonic()
    held(1, due)
    assert stack.authenticates(first["clouds.yaml"])

    # a raised spec.passwordGeneration does not wait for the credential order
    stack.patch_order(tenant, name, {"spec": {"passwordGeneration": 2}})
    reconcile_until(lambda r: ready(tenant, name)(r)
                    and stack.order(tenant, name)["status"]["passwordGeneration"] == 2,
                    90, "the spec-driven rotation while the credential order is being deleted", orders=ref)
    assert stack.credential_order(AC, tenant, ac)["metadata"].get("deletionTimestamp")  # still there
    second = stack.delivered(tenant, name)
    assert second["password"] != first["password"] and stack.authenticates(second["clouds.yaml"])
    assert not stack.authenticates(first["clouds.yaml"])
    status = stack.order(tenant, name)["status"]
    due2 = moment(status["nextPasswordRotation"])
    assert due2 == moment(status["lastPasswordRotation"]) + timedelta(minutes=1) and due2 > due

    # its next scheduled rotation falls due: held again; once the credential order is gone, it starts
    held(2, due2)
    stack.drop_finalizer(AC, tenant, ac, HOLD)
    assert stack.credential_order(AC, tenant, ac) is None
    reconcile_until(lambda r: ready(tenant, name)(r)
                    and stack.order(tenant, name)["status"]["passwordGeneration"] == 3,
                    90, "the held scheduled rotation to start once the credential order is gone", orders=ref)
    third = stack.delivered(tenant, name)
    assert third["password"] != second["password"] and stack.authenticates(third["clouds.yaml"])
    assert stack.backup(stack.backup_path(tenant, name))["password"] == third["password"]
    print(f"\nhold, spec rotation, hold, release {time.monotonic() - started:.1f}s")

    stack.patch_order(tenant, name, {"spec": {"rotation": {"interval": "0s"}}})  # no further rotation
    stack.delete_order(tenant, name)
    reconcile_until(lambda r: stack.order(tenant, name) is None, 120, "the teardown", orders=ref)
    assert_gone(stack, tenant, name, order["status"]["userID"], third)
