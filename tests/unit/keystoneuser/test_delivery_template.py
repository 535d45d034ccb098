"""The delivered Secret carries spec.secretTemplate (docs/keystoneuser-crd.md "Secret template"): added on delivery,
repaired when edited on the Secret, removed when it leaves the template (the world applies like server-side apply:
a field the Secret got at its POST is never removed by a later apply, so only the merge patch can), left alone when
somebody else added it, and a converged pass writes nothing. A bad template freezes the order as InvalidSpec."""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import RECORD_ANNOTATIONS, RECORD_LABELS

from . import scenario
from .world import converged_world, standard_world

RELOADER = {"reloader.stakater.com/match": "true"}
TEMPLATE = {"labels": {"app.kubernetes.io/part-of": "billing", "team": "a"}, "annotations": RELOADER}


def _metadata(secret):
    return secret["metadata"].get("labels", {}), secret["metadata"].get("annotations", {})


def _writes(decision):
    return [(a.verb, a.kind, a.name) for a in decision.actions]


def test_a_keystoneuser_delivers_its_template_and_a_converged_pass_writes_nothing():
    world = converged_world(secretTemplate=TEMPLATE)
    labels, annotations = _metadata(scenario.delivered(world))
    assert labels["app.kubernetes.io/part-of"] == "billing" and labels["team"] == "a"
    assert labels["c5c3.io/keystoneuser-name"] == world.order["metadata"]["name"]
    assert annotations == {**RELOADER, RECORD_LABELS: "app.kubernetes.io/part-of,team",
                           RECORD_ANNOTATIONS: "reloader.stakater.com/match"}
    assert _writes(world.reconcile()) == []


def test_an_edited_template_entry_is_repaired_and_an_entry_somebody_added_stays():
    world = converged_world(secretTemplate=TEMPLATE)
    secret = scenario.delivered(world)
    secret["metadata"]["labels"]["team"] = "edited"
    del secret["metadata"]["annotations"]["reloader.stakater.com/match"]
    secret["metadata"]["labels"]["theirs"] = "kept"
    world.touch(secret)
    world.converge()
    labels, annotations = _metadata(scenario.delivered(world))
    assert labels["team"] == "a" and annotations["reloader.stakater.com/match"] == "true"
    assert labels["theirs"] == "kept"


def test_an_entry_removed_from_the_template_leaves_the_secret_on_the_next_pass():
    world = converged_world(secretTemplate=TEMPLATE)
    world.edit_spec(secretTemplate={"labels": {"team": "a"}})
    decision = world.reconcile()
    assert [verb for verb, kind, _name in _writes(decision) if kind == "Secret"] == ["apply", "patch"]
    world.execute(decision)
    labels, annotations = _metadata(scenario.delivered(world))
    assert "app.kubernetes.io/part-of" not in labels and labels["team"] == "a"
    assert annotations == {RECORD_LABELS: "team"}
    assert _writes(world.reconcile()) == []


def test_removing_the_whole_template_restores_the_plain_contract():
    world = converged_world(secretTemplate=TEMPLATE)
    world.edit_spec(secretTemplate=None)
    world.converge()
    labels, annotations = _metadata(scenario.delivered(world))
    assert set(labels) == {"c5c3.io/keystoneuser-name", "c5c3.io/keystoneuser-namespace"}
    assert annotations == {}
    assert _writes(world.reconcile()) == []


def test_an_order_without_a_template_delivers_no_annotation():
    world = converged_world()
    assert "annotations" not in scenario.delivered(world)["metadata"]


def test_a_template_under_our_prefix_is_invalid_spec_on_both_conditions():
    world = standard_world(secretTemplate={"labels": {"c5c3.io/keystoneuser-name": "other"}})
    decision = world.reconcile()
    assert scenario.reasons(decision) == ("InvalidSpec", "InvalidSpec")
    assert "spec.secretTemplate.labels" in scenario.message(decision, "DeliveryReady")
