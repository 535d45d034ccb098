"""Delivery, rotation and teardown (docs/reconciler.md) end to end on the in-memory world: one order from nothing to
Ready, through a scheduled and a spec-driven rotation, an edit of the delivered Secret, and its teardown -- checking the
ordering guarantees on every action and that a converged pass emits no action and no status."""
from __future__ import annotations

from datetime import timedelta

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps

from . import scenario
from .world import NAME, b64, standard_world


def test_an_order_lives_from_nothing_to_ready_through_rotations_and_teardown():
    world = standard_world(rotation={"interval": "2h"})

    # From nothing to Ready.
    final = world.converge()
    assert final.ready and final.actions == [] and final.status is None
    status = world.order["status"]
    assert status["passwordGeneration"] == 1
    assert scenario.delivered_password(world) == scenario.password_of(world, 1) == world.keystone[NAME]["password"]

    # The schedule falls due: generation 2, old Secret gone only after 2 is applied.
    world.now = timestamps.parse(status["nextPasswordRotation"]) + timedelta(seconds=1)
    world.converge()
    assert world.order["status"]["passwordGeneration"] == 2
    assert scenario.password_generations(world) == [2]
    assert scenario.delivered_password(world) == world.keystone[NAME]["password"]

    # The owner raises the spec: generation 3 at once.
    world.edit_spec(passwordGeneration=3)
    world.converge()
    assert world.order["status"]["passwordGeneration"] == 3
    assert world.openbao[scenario.names(world).remote_key]["password"] == scenario.delivered_password(world)

    # Someone edits the delivered password: restored, and nothing else moves.
    scenario.delivered(world)["data"]["password"] = b64("nope")
    repair = world.reconcile()
    assert [a.name for a in repair.actions] == [f"{NAME}-credentials"]
    quiet = world.converge()
    assert quiet.actions == [] and quiet.status is None

    # Converged: a pass emits nothing, and comes back at the next rotation.
    converged = world.reconcile()
    assert converged.actions == [] and converged.status is None
    assert converged.requeue_after <= timedelta(hours=2)

    # Teardown down to nothing.
    remote_key = scenario.names(world).remote_key
    world.delete_and_drain()
    assert world.order is None
    assert NAME not in world.keystone and remote_key not in world.openbao
    assert not [k for k, o in world.objects.items() if o["metadata"].get("labels", {}).get(
        "c5c3.io/keystoneuser-name") == NAME]

    # Guarantees held on every action the world executed.
    assert world.violations == []


def test_many_short_rotations_never_deliver_an_unpushed_password_or_drop_a_live_secret():
    world = standard_world(rotation={"interval": "1m"})
    world.converge()
    for round_ in range(8):
        world.eso_running = round_ % 2 == 0          # ESO lags every other round
        world.korc_running = round_ % 3 != 0         # K-ORC lags every third
        for _ in range(6):
            world.step(seconds=15)
        world.eso_running = world.korc_running = True
        world.converge(seconds=15)
        assert scenario.delivered_password(world) == world.keystone[NAME]["password"]
    assert world.order["status"]["passwordGeneration"] > 3
    assert world.violations == []
