"""parse_order applies the effective defaults (docs/keystoneuser-crd.md, "Defaults") and refuses, with
OrderSpecError and a clear message, anything it cannot read (no trust in admission)."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import parse_status
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.spec import OrderSpecError, parse_order


def raw(**spec):
    body = {"controlPlaneRef": {"name": "cp"}}
    body.update(spec)
    return {"metadata": {"name": "workflow", "namespace": "tenant-a", "uid": "u", "generation": 4},
            "spec": body}


def test_defaults_user_name_generation_interval_and_control_plane_namespace():
    spec = parse_order(raw())
    assert spec.user_name == "workflow"
    assert spec.password_generation == 1
    assert spec.rotation_interval == timedelta(hours=720) and spec.schedule_on
    assert (spec.control_plane_name, spec.control_plane_namespace) == ("cp", "tenant-a")
    assert spec.identity.generation == 4 and spec.identity.uid == "u"


@pytest.mark.parametrize("spec, field, value", [
    ({"userName": "svc"}, "user_name", "svc"),
    ({"userName": ""}, "user_name", "workflow"),
    ({"passwordGeneration": 0}, "password_generation", 1),     # a stored 0 reads as 1
    ({"passwordGeneration": 7}, "password_generation", 7),
    ({"rotation": {}}, "rotation_interval", timedelta(hours=720)),
    ({"rotation": {"interval": "0s"}}, "rotation_interval", timedelta(0)),
    ({"rotation": {"interval": "1m"}}, "rotation_interval", timedelta(minutes=1)),
    ({"rotation": {"interval": "87600h"}}, "rotation_interval", timedelta(hours=87600)),
    ({"controlPlaneRef": {"name": "cp", "namespace": "openstack"}}, "control_plane_namespace", "openstack"),
])
def test_effective_values(spec, field, value):
    assert getattr(parse_order(raw(**spec)), field) == value


@pytest.mark.parametrize("order, words", [
    ({"metadata": {"name": "x", "namespace": "y"}}, "spec"),
    (raw(controlPlaneRef={}), "controlPlaneRef.name"),
    (raw(controlPlaneRef="cp"), "controlPlaneRef"),
    (raw(userName=5), "userName"),
    (raw(userName="a,b"), "comma"),
    (raw(userName="x" * 256), "255"),
    (raw(passwordGeneration="2"), "passwordGeneration"),
    (raw(passwordGeneration=True), "passwordGeneration"),
    (raw(rotation={"interval": "1d"}), "rotation.interval"),
    (raw(rotation={"interval": "30s"}), "0s or at least 1m"),
    (raw(rotation={"interval": "87601h"}), "at most 87600h"),
    (raw(rotation={"interval": "-1h"}), "negative"),
    (raw(rotation="720h"), "rotation"),
    ({"metadata": {"name": "n" * 64, "namespace": "y"}, "spec": {}}, "63 bytes"),
    ({"metadata": {"namespace": "y"}, "spec": {}}, "metadata.name"),
    ("not an object", "order"),
])
def test_unreadable_orders_raise_order_spec_error_with_a_clear_message(order, words):
    with pytest.raises(OrderSpecError) as caught:
        parse_order(order)
    assert words in str(caught.value)


@pytest.mark.parametrize("status", [None, [], "x", {"conditions": [1, {"type": "Ready"}], "passwordGeneration": -3,
                                                    "userID": 7, "secretKeys": "x", "nextPasswordRotation": 5}])
def test_status_is_read_defensively(status):
    parsed = parse_status({"status": status})
    assert parsed.password_generation == 0 and parsed.user_id == "" and parsed.next_rotation is None
