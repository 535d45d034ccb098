"""Teardown, as the end-to-end flows found it wanting: an order whose account is usable at once gets its finalizer in
its first pass (found by the demo: the patch was decided, then dropped with the refusal's Outcome, so a second order
of a tenant was deleted without its keys being revoked), and an order refused because another holds its bucket
leaves the gateway alone when it goes."""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.gateway import GatewayCall

from .test_flows import account_of
from .world import World


def test_a_second_order_of_a_tenant_gets_its_finalizer_and_its_deletion_revokes_its_keys():
    world = World()
    world.add_order("photos", "photos")
    world.converge()
    world.add_order("logs", "logs")
    world.step()
    assert naming.FINALIZER in world.order("logs")["metadata"].get("finalizers", []), "installed in the first pass"
    world.converge()
    account_id = account_of(world)["status"]["accountID"]
    key = world.delivered("logs")["AWS_ACCESS_KEY_ID"]
    world.delete_order("logs")
    world.converge()
    assert world.order("logs") is None and key in world.revoked and "logs" not in world.gateway.iam[account_id]
    assert "logs" in world.gateway.buckets, "the bucket stays"


def test_deleting_a_refused_second_order_of_a_bucket_leaves_the_holders_credential_alone():
    """The refused order never held the bucket: its teardown sends nothing to the gateway (it used to delete the
    holder's inline policy and grant, which the holder's pass then put back: a window in which its key was
    denied)."""
    world = World()
    world.add_order("photos", "photos")
    world.converge()
    world.add_order("again", "photos")
    world.converge()
    assert world.reason(world.order("again"), "CredentialReady") == "BucketCredentialExists"
    world.delete_order("again")
    sent = []
    for _ in range(10):
        decisions = world.step()
        sent += [a.op for name, d in decisions.items() for a in d.actions if isinstance(a, GatewayCall)]
        if world.order("again") is None:
            break
    assert world.order("again") is None and sent == [], sent
    assert world.gateway.can(world.delivered("photos")["AWS_ACCESS_KEY_ID"], "photos")
