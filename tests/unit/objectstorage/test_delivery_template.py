"""The delivered <name>-s3 carries spec.secretTemplate (docs/bucketcredential-crd.md "Secret template"), drops an
entry removed from it, and the status names the newest key's creation time (the Key printer column)."""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import RECORD_ANNOTATIONS

from .world import NS, World

RELOADER = {"reloader.stakater.com/match": "true"}
TEMPLATE = {"labels": {"app.kubernetes.io/part-of": "billing", "team": "a"}, "annotations": RELOADER}


def _metadata(secret):
    return secret["metadata"].get("labels", {}), secret["metadata"].get("annotations", {})


def test_a_bucketcredential_delivers_its_template_and_drops_a_removed_entry():
    world = World()
    world.add_order("photos", "photos", secretTemplate=TEMPLATE)
    world.converge()
    secret = world.get("Secret", "photos-s3", NS)
    labels, annotations = _metadata(secret)
    assert labels["team"] == "a" and annotations["reloader.stakater.com/match"] == "true"
    assert world.order("photos")["status"]["newestKeyCreated"] == world.order("photos")["status"]["slots"][0][
        "created"]
    world.edit("photos", secretTemplate={"annotations": RELOADER})
    world.converge()
    labels, annotations = _metadata(world.get("Secret", "photos-s3", NS))
    assert "team" not in labels and "app.kubernetes.io/part-of" not in labels
    assert annotations == {**RELOADER, RECORD_ANNOTATIONS: "reloader.stakater.com/match"}
    assert all(not d.actions and d.status is None for d in world.step().values())


def test_a_bucketcredential_with_a_bad_template_is_invalid_spec():
    world = World()
    world.add_order("photos", "photos", secretTemplate={"annotations": {"c5c3.io/x": "y"}})
    world.step()
    assert world.reason(world.order("photos"), "CredentialReady") == "InvalidSpec"
