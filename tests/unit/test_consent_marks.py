"""Orders in namespaces the platform did not mark: the pure rule of ``orders.consent`` that freezes
an order in an assigned but unmarked namespace with ``NamespaceNotMarked`` (docs/install.md, "Security model"),
after every other admission rule, and only when the pass knows the allowlist."""
from __future__ import annotations

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.consent import (
    admit,
    describe_mark,
    mark_refusal,
    namespace_marked,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import read_control_plane
from ansible_collections.c5c3.orders.plugins.module_utils.orders.reasons import (
    CLUSTER_NAME_TOO_LONG,
    CONTROL_PLANE_NOT_FOUND,
    NAMESPACE_NOT_ASSIGNED,
    NAMESPACE_NOT_MARKED,
)

MARK = {"c5c3.io/tenant": "true"}
CP = read_control_plane({
    "metadata": {"namespace": "openstack", "name": "cp"},
    "spec": {"namespaceAssignments": [{"namespace": "tenant-a"}, {"namespace": "openbao"},
                                      {"namespace": "edge-a", "targetClusterRef": {"name": "edge-1"}}]},
})

# (what, namespace, cluster, control plane, namespace labels, mark, expected reason or None)
CASES = [
    ("marked and assigned: admitted", "tenant-a", "", CP, MARK, MARK, None),
    ("more labels than the mark: admitted", "tenant-a", "", CP, dict(MARK, team="a"), MARK, None),
    ("assigned but unmarked: NamespaceNotMarked", "openbao", "", CP, {}, MARK, NAMESPACE_NOT_MARKED),
    ("the mark with another value", "openbao", "", CP, {"c5c3.io/tenant": "false"}, MARK, NAMESPACE_NOT_MARKED),
    ("labels not read (None) with a mark", "openbao", "", CP, None, MARK, NAMESPACE_NOT_MARKED),
    ("no allowlist known: the check is skipped", "openbao", "", CP, {}, None, None),
    ("an empty mark admits any namespace", "openbao", "", CP, {}, {}, None),
    ("on a target cluster too", "edge-a", "edge-1", CP, {}, MARK, NAMESPACE_NOT_MARKED),
    ("marked on a target", "edge-a", "edge-1", CP, MARK, MARK, None),
    ("not assigned wins over not marked", "tenant-b", "", CP, {}, MARK, NAMESPACE_NOT_ASSIGNED),
    ("the ControlPlane's own namespace wins", "openstack", "", CP, {}, MARK, NAMESPACE_NOT_ASSIGNED),
    ("a missing ControlPlane wins", "tenant-a", "", None, {}, MARK, CONTROL_PLANE_NOT_FOUND),
    ("a missing ControlPlane on a target reads NotAssigned", "edge-a", "edge-1", None, {}, MARK,
     NAMESPACE_NOT_ASSIGNED),
    ("a cluster name too long wins", "edge-a", "e" * 64, CP, {}, MARK, CLUSTER_NAME_TOO_LONG),
]


@pytest.mark.parametrize("what,namespace,cluster,cp,labels,mark,reason", CASES, ids=[c[0] for c in CASES])
def test_admit_with_the_allowlist(what, namespace, cluster, cp, labels, mark, reason):
    refusal = admit(namespace, cluster, "openstack", "cp", cp, namespace_labels=labels, tenant_mark=mark)
    assert (refusal.reason if refusal else None) == reason, what


def test_admit_without_the_new_arguments_is_unchanged():
    assert admit("openbao", "", "openstack", "cp", CP) is None
    assert admit("tenant-b", "", "openstack", "cp", CP).reason == NAMESPACE_NOT_ASSIGNED


def test_the_refusal_freezes_the_order_and_says_what_is_missing():
    refusal = mark_refusal("openbao", "", "openstack", "cp", {"other": "x"}, MARK)
    assert refusal.reason == NAMESPACE_NOT_MARKED and refusal.requeue_after == requeue.FROZEN
    assert "'openbao'" in refusal.message and "the management cluster" in refusal.message
    assert "c5c3.io/tenant=true" in refusal.message and "openstack/cp" in refusal.message
    assert "frozen" in refusal.message
    on_target = mark_refusal("edge-a", "edge-1", "openstack", "cp", {}, MARK)
    assert "cluster 'edge-1'" in on_target.message


@pytest.mark.parametrize("labels,mark,expected", [
    ({"a": "1"}, {"a": "1"}, True), ({"a": "1", "b": "2"}, {"a": "1"}, True), ({}, {"a": "1"}, False),
    ({"a": "2"}, {"a": "1"}, False), ({"a": "1"}, {}, True), (None, {"a": "1"}, False), (None, {}, True),
    ("a=1", {"a": "1"}, False), ({"a": "1", "b": "2"}, {"a": "1", "b": "2"}, True), ({"a": "1"}, {"a": "1", "b": "2"},
                                                                                   False),
])
def test_namespace_marked(labels, mark, expected):
    assert namespace_marked(labels, mark) is expected


def test_the_rule_is_the_access_syncs():
    """The pass and the access sync (plugins/filter/namespace_grants.py) decide a mark alike."""
    import importlib.util
    from pathlib import Path
    plugin = Path(__file__).resolve().parents[2] / "plugins" / "filter" / "namespace_grants.py"
    spec = importlib.util.spec_from_file_location("namespace_grants_consent", plugin)
    grants = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grants)
    for labels, mark in [({"a": "1"}, {"a": "1"}), ({}, {"a": "1"}), ({"a": "2"}, {"a": "1"}), (None, {}),
                         ({"a": "1", "b": "2"}, {"b": "2"})]:
        assert grants.marked(labels, mark) == namespace_marked(labels, mark), (labels, mark)


def test_describe_mark():
    assert describe_mark({"b": "2", "a": "1"}) == "a=1, b=2"
    assert describe_mark({}) == "(none)"
