"""needs_repair over the template entries (plugins/module_utils/orders/delivery.py): a missing, different or former
template entry, or a missing record, asks for a repair; a Secret that carries the template does not."""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.orders.delivery import DeliveredSecret, needs_repair
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import (
    RECORD_LABELS,
    SecretTemplate,
    templated,
)


def _delivered(template, **live_metadata):
    desired = templated({"metadata": {"name": "s", "namespace": "ns", "labels": {"c5c3.io/x-name": "s"}},
                         "data": {}}, template)
    live = {"metadata": dict({"labels": {"c5c3.io/x-name": "s"},
                              "ownerReferences": [{"uid": "u", "controller": True}]}, **live_metadata), "data": {}}
    return live, DeliveredSecret(desired, "u", (), "")


def test_needs_repair_sees_a_missing_a_different_and_a_former_template_entry():
    template = SecretTemplate(labels=(("team", "a"),))
    record = {RECORD_LABELS: "team"}
    cases = [
        ({"labels": {"c5c3.io/x-name": "s", "team": "a"}, "annotations": record}, False),
        ({"labels": {"c5c3.io/x-name": "s"}, "annotations": record}, True),
        ({"labels": {"c5c3.io/x-name": "s", "team": "b"}, "annotations": record}, True),
        ({"labels": {"c5c3.io/x-name": "s", "team": "a"}}, True),  # the record is missing
    ]
    for metadata, want in cases:
        live, delivered = _delivered(template, **metadata)
        assert needs_repair(live, delivered) is want, metadata
    live, delivered = _delivered(SecretTemplate(), labels={"c5c3.io/x-name": "s", "team": "a"}, annotations=record)
    assert needs_repair(live, delivered) is True  # a former entry, recorded: it goes
