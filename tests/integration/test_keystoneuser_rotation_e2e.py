"""KeystoneUser password rotation end to end on the real stack (docs/reconciler.md, "Password rotation"): through
spec.passwordGeneration, then on a one-minute schedule, with real K-ORC applying the password in Keystone and real ESO
pushing the document to OpenBao before the delivered Secret changes.

The module has no clock option, so the schedule runs on real time: the scheduled part waits about a minute.
"""
import time
from datetime import datetime, timedelta, timezone

import pytest

from orders import unique
from passes import assigned_namespace, moment, ready, order_summary, reconcile_until, run_pass

SCHEDULE_WAIT = 150  # seconds: a one-minute schedule plus K-ORC and ESO


@pytest.fixture
def tenant(stack):
    with assigned_namespace(stack, "rotate") as ns:
        yield ns




class RotationWatch:
    """Between two passes, the invariants of a rotation from ``old`` to ``new`` generation.

    Reads the order's status and the delivered Secret before K-ORC's User and OpenBao, so a state K-ORC or
    ESO reach later can only make the later reads newer, never the earlier ones.
    """

    def __init__(self, stack, namespace, name, old_generation, old_delivered, user_id, not_before=None):
        self.stack, self.namespace, self.name = stack, namespace, name
        self.old, self.new = old_generation, old_generation + 1
        self.old_delivered = old_delivered
        self.user_id = user_id
        self.not_before = not_before    # a scheduled rotation must not start before this moment
        self.new_ref = f"{stack.base_name(namespace, name)}-password-v{self.new}"
        self.path = stack.backup_path(namespace, name)
        self.passes = 0
        self.seen_in_flight = False     # a pass saw the User pointed at the new Secret, not yet applied
        self.old_secret_gone_at = None  # pass index
        self.applied_at = None          # pass index K-ORC was first seen to have applied the new Secret
        self.delivered_changed_at = None
        self.backup_gate_seen = False   # a pass held the delivery on BackupNotSynced for the new document

    def observe(self, result):
        stack, ns, name = self.stack, self.namespace, self.name
        self.passes += 1
        order = stack.order(ns, name)
        status = order["status"]
        delivered = stack.delivered(ns, name)
        secrets = stack.password_secrets(ns, name)
        user = stack.korc_user(ns, name)
        backup = stack.backup(self.path)
        applied = ((user.get("status") or {}).get("resource") or {}).get("appliedPasswordRef")
        pointed = ((user.get("spec") or {}).get("resource") or {}).get("passwordRef")
        if self.not_before is not None and (self.new in secrets or pointed == self.new_ref):
            assert datetime.now(timezone.utc) >= self.not_before, "rotated before nextPasswordRotation"

        if applied == self.new_ref and self.applied_at is None:
            self.applied_at = self.passes
            # no grace period: once Keystone holds the new password the old one is refused
            assert not stack.authenticates(self.old_delivered["clouds.yaml"]), "old password still authenticates"
        if pointed == self.new_ref and applied != self.new_ref:
            self.seen_in_flight = True
        if applied != self.new_ref:
            # until K-ORC reports the new generation applied: status stays at N, delivered keeps the old password
            assert status.get("passwordGeneration") == self.old, status
            assert delivered["password"] == self.old_delivered["password"]
        if self.old not in secrets:
            # the generation-N Secret goes only after generation N+1 is applied
            assert applied == self.new_ref, (applied, sorted(secrets))
            assert status.get("passwordGeneration") == self.new, status
            if self.old_secret_gone_at is None:
                self.old_secret_gone_at = self.passes
        if delivered["password"] != self.old_delivered["password"]:
            # backup first: whatever the delivered Secret carries, OpenBao held it already
            assert backup is not None and backup["password"] == delivered["password"]
            assert backup["clouds.yaml"] == delivered["clouds.yaml"]
            assert status.get("passwordGeneration") == self.new
            assert delivered["password"] == secrets.get(self.new)
            if self.delivered_changed_at is None:
                self.delivered_changed_at = self.passes
        entry = order_summary(result, ns, name)
        if entry is not None and entry["reasons"].get("DeliveryReady") == "BackupNotSynced":
            self.backup_gate_seen = True
        return (entry is not None and entry["ready"] and not entry["changed"]
                and status.get("passwordGeneration") == self.new
                and delivered["password"] != self.old_delivered["password"])

    def check_order_of_events(self):
        assert self.applied_at is not None and self.old_secret_gone_at is not None
        assert self.delivered_changed_at is not None and self.backup_gate_seen
        assert self.applied_at <= self.old_secret_gone_at <= self.delivered_changed_at


def converged_after_rotation(stack, namespace, name, watch, before):
    """The final state of a rotation: new password works and is backed up, the old one is refused."""
    order = stack.order(namespace, name)
    status = order["status"]
    delivered = stack.delivered(namespace, name)
    assert status["passwordGeneration"] == watch.new
    assert stack.condition(order, "Ready")["reason"] == "AllReady"
    assert status["secretName"] == f"{name}-credentials" and status["secretKeys"] == ["clouds.yaml", "password"]
    assert sorted(stack.password_secrets(namespace, name)) == [watch.new]
    access = stack.token_from_clouds_yaml(delivered["clouds.yaml"])
    assert access.user_id == status["userID"] == watch.user_id  # the same Keystone user, new password
    assert not stack.authenticates(watch.old_delivered["clouds.yaml"])
    backup = stack.backup(watch.path)
    assert backup["password"] == delivered["password"] and backup["clouds.yaml"] == delivered["clouds.yaml"]
    last = moment(status["lastPasswordRotation"])
    assert last >= before
    return order, delivered


def rotate(stack, namespace, name, start, timeout, what, not_before=None):
    """Passes until the rotation from the current generation has finished; returns the watch."""
    order = stack.order(namespace, name)
    watch = RotationWatch(stack, namespace, name, order["status"]["passwordGeneration"],
                          stack.delivered(namespace, name), order["status"]["userID"], not_before)
    start()
    reconcile_until(watch.observe, timeout, what, orders=[f"{namespace}/{name}"])
    watch.check_order_of_events()
    return watch


def test_rotation_through_spec_then_on_a_one_minute_schedule(stack, tenant):
    name = unique("rotate")
    ref = [f"{tenant}/{name}"]
    started = time.monotonic()
    stack.create_order(tenant, name)
    reconcile_until(ready(tenant, name), 180, "the order to become Ready", orders=ref)
    order = stack.order(tenant, name)
    assert order["status"]["passwordGeneration"] == 1
    first = stack.delivered(tenant, name)
    assert stack.authenticates(first["clouds.yaml"])
    provisioned = time.monotonic()

    # -- 1. raise spec.passwordGeneration by one -------------------------------------------------------
    before = datetime.now(timezone.utc).replace(microsecond=0)
    watch = rotate(stack, tenant, name,
                   lambda: stack.patch_order(tenant, name, {"spec": {"passwordGeneration": 2}}),
                   120, "the rotation to generation 2")
    order, second = converged_after_rotation(stack, tenant, name, watch, before)
    status = order["status"]
    last2 = moment(status["lastPasswordRotation"])
    # the default schedule (720h) is on: the next rotation is one interval after the last
    assert moment(status["nextPasswordRotation"]) == last2 + timedelta(hours=720)
    assert stack.order(tenant, name)["spec"]["passwordGeneration"] == 2
    spec_rotated = time.monotonic()

    # -- 2. a one-minute schedule ------------------------------------------------------------------------
    stack.patch_order(tenant, name, {"spec": {"rotation": {"interval": "1m"}}})
    run_pass(orders=ref)
    status = stack.order(tenant, name)["status"]
    assert status["passwordGeneration"] == 2, "the schedule fell due before it was set"
    assert moment(status["lastPasswordRotation"]) == last2
    due = moment(status["nextPasswordRotation"])
    assert due == last2 + timedelta(minutes=1)
    watch = rotate(stack, tenant, name, lambda: None, SCHEDULE_WAIT, "the scheduled rotation to generation 3",
                   not_before=due)
    order, third = converged_after_rotation(stack, tenant, name, watch, due)
    status = order["status"]
    last3 = moment(status["lastPasswordRotation"])
    next3 = moment(status["nextPasswordRotation"])
    assert last3 >= due and next3 == last3 + timedelta(minutes=1) and next3 > due
    # the spec no longer follows the status once the schedule has rotated
    assert order["spec"]["passwordGeneration"] == 2 and status["passwordGeneration"] == 3
    scheduled = time.monotonic()

    # -- 3. interval 0s turns the schedule off and clears nextPasswordRotation ---------------------------
    stack.patch_order(tenant, name, {"spec": {"rotation": {"interval": "0s"}}})
    result = run_pass(orders=ref)
    status = stack.order(tenant, name)["status"]
    assert "nextPasswordRotation" not in status
    assert status["passwordGeneration"] == 3 and moment(status["lastPasswordRotation"]) == last3
    assert order_summary(result, tenant, name)["requeue_after"] is None  # converged, nothing scheduled
    # raising the spec to the status' generation is not a rotation: automation sets status + 1
    stack.patch_order(tenant, name, {"spec": {"passwordGeneration": 3}})
    result = run_pass(orders=ref)
    assert order_summary(result, tenant, name)["actions"] == []
    assert sorted(stack.password_secrets(tenant, name)) == [3]
    assert stack.delivered(tenant, name)["password"] == third["password"]
    print(f"\nprovision {provisioned - started:.1f}s, spec rotation {spec_rotated - provisioned:.1f}s, "
          f"schedule {scheduled - spec_rotated:.1f}s ({watch.passes} passes, in flight seen: {watch.seen_in_flight})")
    assert first["password"] != second["password"] != third["password"]
