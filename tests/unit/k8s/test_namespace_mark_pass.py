"""The tenant mark in the KeystoneUser pass against an in-memory API server (docs/install.md, "The allowlist of
namespaces"): with the allowlist the pass lists the marked Namespaces once per cluster, freezes an order in an
assigned but unmarked namespace with NamespaceNotMarked writing nothing but its status (and, converged, nothing at
all); without it nothing more is read; a Namespace list that fails is reported and refuses nobody."""
from __future__ import annotations

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import run_pass
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.passes.keystoneuser import KeystoneUserSource
from ansible_collections.c5c3.orders.plugins.module_utils.passes.reader import tenant_mark_problem
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection

from .fakeapi import FakeApi
from .test_edge import NOW, entry, world

MARK = {"c5c3.io/tenant": "true"}
NAMESPACES = "/api/v1/namespaces"


class NamespacesForbidden(KubeService):
    """A management cluster whose account may not list Namespaces (a missing grant)."""

    def list(self, resource, namespace=None, label_selector=None, write_times=False):
        if resource.plural == "namespaces":
            raise KubeError("GET", NAMESPACES, 403, "Forbidden", "namespaces is forbidden: cannot list")
        return super().list(resource, namespace, label_selector)


def namespace(api, name, labels):
    api.objects[f"{NAMESPACES}/{name}"] = {"metadata": {"name": name, "labels": dict(labels)}}


def marked_world(assignments=(("tenant-a", ""), ("tenant-b", ""))):
    """tenant-a carries the mark, tenant-b another label: both assigned, each with an order."""
    api = world(assignments)
    namespace(api, "tenant-a", dict(MARK, team="a"))
    namespace(api, "tenant-b", {"team": "b"})
    return api


def one_pass(api, mark, service=KubeService):
    services = {"": service(api, "c5c3-orders")}
    redactor = Redactor()
    source = KeystoneUserSource(services[""], {}, Selection(), lambda: "p" * 43, redactor, tenant_mark=mark)
    return run_pass(source, services, redactor, now=NOW)


def namespace_lists(api):
    return [path for method, path in api.log if method == "GET" and path == NAMESPACES]


def reasons(result, ns):
    """The reasons of the sub-conditions (the aggregate Ready apart)."""
    return {r for kind, r in entry(result, ns).get("reasons", {}).items() if kind != "Ready"}


# (what, the option, the service, tenant-b frozen?, Namespace lists, a read error reported?)
CASES = [
    ("marked admitted, unmarked frozen", MARK, KubeService, True, 1, False),
    ("no option: no check, nothing more read", None, KubeService, False, 0, False),
    ("an empty option: no check, nothing more read", {}, KubeService, False, 0, False),
    ("the Namespace list fails: reported, nobody refused", MARK, NamespacesForbidden, False, 0, True),
]


@pytest.mark.parametrize("what,mark,service,frozen,lists,reported", CASES, ids=[c[0] for c in CASES])
def test_the_pass_with_the_tenant_mark(what, mark, service, frozen, lists, reported):
    api = marked_world()
    result = one_pass(api, mark, service)
    assert "NamespaceNotMarked" not in reasons(result, "tenant-a"), what
    assert entry(result, "tenant-a")["actions"], "the marked order is acted on"
    assert len(namespace_lists(api)) == lists
    errors = [e for e in result.clusters if "namespaces" in e["error"]]
    assert bool(errors) == reported, result.clusters
    if reported:
        assert errors[0]["cluster"] == "" and "not checked" in errors[0]["error"]
    unmarked = entry(result, "tenant-b")
    if not frozen:
        assert "NamespaceNotMarked" not in reasons(result, "tenant-b") and unmarked["actions"]
        return
    assert reasons(result, "tenant-b") == {"NamespaceNotMarked"} and not unmarked["ready"]
    assert unmarked["actions"] == [] and unmarked["status_written"]
    assert [path for _method, path in api.write_log if "/tenant-b/" in path] == \
        ["/apis/c5c3.io/v1alpha1/namespaces/tenant-b/keystoneusers/app/status"], "only its status"
    status = api.get("c5c3.io/v1alpha1", "KeystoneUser", "tenant-b", "app")["status"]
    message = next(c["message"] for c in status["conditions"] if c["type"] == "UserReady")
    assert "c5c3.io/tenant=true" in message and "'tenant-b'" in message


def test_a_converged_pass_over_a_frozen_order_writes_nothing_and_lists_namespaces_once():
    api = marked_world(assignments=(("tenant-b", ""),))
    first = one_pass(api, MARK)
    assert reasons(first, "tenant-b") == {"NamespaceNotMarked"}
    writes = api.writes
    again = one_pass(api, MARK)
    assert api.writes == writes and not again.changed
    assert len(namespace_lists(api)) == 2, "one Namespace list per pass"


def test_the_mark_may_come_later():
    api = marked_world(assignments=(("tenant-b", ""),))
    assert reasons(one_pass(api, MARK), "tenant-b") == {"NamespaceNotMarked"}
    namespace(api, "tenant-b", MARK)
    admitted = one_pass(api, MARK)
    assert "NamespaceNotMarked" not in reasons(admitted, "tenant-b") and entry(admitted, "tenant-b")["actions"]


@pytest.mark.parametrize("mark,problem", [
    (None, False), ({}, False), (MARK, False), ({"c5c3.io/tenant": True}, True), ({"a": "1", "b": 2}, True)])
def test_the_option_takes_string_values_only(mark, problem):
    assert bool(tenant_mark_problem(mark)) == problem
