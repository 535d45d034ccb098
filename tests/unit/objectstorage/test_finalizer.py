"""An order whose account is usable at once gets its teardown finalizer in its first pass (found by the demo: the
patch was decided, then dropped with the refusal's actions, so a second order of a tenant was deleted without its
keys being revoked)."""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming

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
