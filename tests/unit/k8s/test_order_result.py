"""The per-order entry of the pass modules (plugins/module_utils/orders/outcome.py ``OrderResult``): exactly the
keys the modules' RETURN docs list, byte for byte the entry a decided order always had, and the same keys on every
other path -- an unreadable cluster (plugins/module_utils/passes/reader.py), a bug in the core
(plugins/module_utils/k8s/runner.py), which now carries ``reasons`` too."""
from __future__ import annotations

import ast
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple

import pytest
import yaml

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import PassResult, run_pass
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import OrderResult
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import ActionError, Decision
from ansible_collections.c5c3.orders.plugins.module_utils.passes.reader import PassReader
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection

MODULES = Path(__file__).resolve().parents[3] / "plugins" / "modules"
NOW = datetime(2026, 9, 1, 12, 0, 0, tzinfo=timezone.utc)


def returned_order_keys(module: str) -> Dict[str, bool]:
    """The keys of ``orders`` in a module's RETURN doc -> whether they are returned always."""
    tree = ast.parse((MODULES / f"{module}.py").read_text())
    text = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                and any(getattr(t, "id", "") == "RETURN" for t in node.targets))
    contains = yaml.safe_load(text)["orders"]["contains"]
    return {key: spec.get("returned", "always") == "always" for key, spec in contains.items()}


def decision(requeue: Any = timedelta(seconds=30), error: str = "") -> Decision:
    summary = {"kind": "KeystoneUser", "name": "app", "namespace": "tenant-a", "cluster": "edge-1"}
    if error:
        summary["error"] = error
    return Decision(actions=[], status=None, requeue_after=requeue, ready=True,
                    reasons={"Ready": "AllReady", "UserReady": "UserProvisioned"}, summary=summary)


@pytest.mark.parametrize("module", ["keystoneuser_reconcile", "objectstorage_reconcile"])
def test_every_path_returns_exactly_the_keys_the_module_documents(module):
    documented = returned_order_keys(module)
    always = {k for k, is_always in documented.items() if is_always}
    decided = OrderResult.of_decision(decision(), ["create Secret a/b: why"], True).to_dict()
    failed = OrderResult.of_decision(decision(), [], False, "status write: HTTP 409").to_dict()
    unreadable = OrderResult.failed("KeystoneUser", "app", "tenant-a", "edge-1", "cluster edge-1 cannot be read")
    assert set(decided) == always
    assert set(failed) == set(documented) == set(unreadable.to_dict())


def test_a_decided_order_reads_byte_for_byte_as_before():
    entry = OrderResult.of_decision(decision(timedelta(days=30)), ["create Secret a/b: why"], False,
                                    "status write: HTTP 409 Conflict")
    assert json.dumps(entry.to_dict()) == (
        '{"name": "app", "namespace": "tenant-a", "cluster": "edge-1", "kind": "KeystoneUser", "ready": true, '
        '"reasons": {"Ready": "AllReady", "UserReady": "UserProvisioned"}, "changed": true, '
        '"actions": ["create Secret a/b: why"], "status_written": false, "requeue_after": 2592000.0, '
        '"error": "status write: HTTP 409 Conflict"}')
    quiet = OrderResult.of_decision(decision(None), [], False, "").to_dict()
    assert "error" not in quiet and quiet["requeue_after"] is None and not quiet["changed"]
    assert OrderResult.of_decision(decision(None), [], True).to_dict()["changed"], "a status written is a change"


def test_a_failed_entry_is_not_ready_has_no_reasons_and_comes_back_after_the_error_retry():
    entry = OrderResult.failed("BucketCredential", "photos", "tenant-a", "", "cannot list bucketcredentials")
    assert entry.to_dict() == {
        "name": "photos", "namespace": "tenant-a", "cluster": "", "kind": "BucketCredential", "ready": False,
        "reasons": {}, "changed": False, "actions": [], "status_written": False, "requeue_after": 30.0,
        "error": "cannot list bucketcredentials"}
    assert OrderResult.failed("K", "n", "ns", "", "boom", retry=None).requeue_after is None


def test_the_pass_result_counts_what_it_records_and_returns_dicts():
    result = PassResult()
    result.record(OrderResult.of_decision(decision(timedelta(seconds=60)), [], False))
    result.record(OrderResult.failed("K", "n", "ns", "", "boom"))
    result.record(OrderResult.of_decision(decision(None), ["apply X a/b: why"], False))
    assert (result.errors, result.changed, result.requeue_after) == (1, True, 30.0)
    assert [e["name"] for e in result.orders] == ["app", "n", "app"]
    assert all(isinstance(e, dict) for e in result.orders)


class Broken:
    """An order source whose core raises: the runner reports the order, by type only."""

    kind = "KeystoneUser"
    resource = None

    def read(self) -> None:
        """Nothing to read."""

    def orders(self) -> List[Tuple[str, Mapping[str, Any]]]:
        return [("", {"metadata": {"name": "app", "namespace": "tenant-a"}})]

    def snapshot(self, _cluster: str, order: Mapping[str, Any], _now: datetime) -> Mapping[str, Any]:
        return order

    def reconcile(self, _snapshot: Any) -> Decision:
        raise RuntimeError("a secret the text of a bug may hold")

    def on_action_failure(self, made: Decision, _action: Any, _error: ActionError) -> Decision:
        return made

    def with_live(self, snapshot: Any, _live: Mapping[str, Any]) -> Any:
        return snapshot

    def live_objects(self, _snapshot: Any) -> List[Mapping[str, Any]]:
        return []

    def unreadable(self) -> List[OrderResult]:
        return []

    def read_errors(self) -> List[Dict[str, str]]:
        return []


def test_a_bug_in_the_core_is_reported_with_every_key_reasons_included():
    result = run_pass(Broken(), {}, Redactor(), now=NOW)
    assert result.orders == [{
        "name": "app", "namespace": "tenant-a", "cluster": "", "kind": "KeystoneUser", "ready": False,
        "reasons": {}, "changed": False, "actions": [], "status_written": False, "requeue_after": None,
        "error": "internal error: RuntimeError"}]
    assert result.errors == 1


def test_the_reader_reports_the_orders_an_unreadable_cluster_still_names():
    selection = Selection.of(namespaces=["tenant-a", "tenant-b"])
    reader = PassReader(object(), {"edge-1": object(), "edge-2": object()}, selection, Redactor())
    reader.cluster("edge-1").error = "cluster edge-1 cannot be read: no response from the API server"
    reader.cluster("edge-2").order_failures["tenant-b"] = "cannot list keystoneusers in namespace tenant-b"
    named = [("edge-1", "tenant-a", "app"), ("edge-1", "tenant-z", "other"), ("edge-2", "tenant-a", "fine"),
             ("edge-2", "tenant-b", "hidden"), ("", "tenant-a", "local")]
    entries = reader.unreadable_orders("KeystoneUser", named)
    assert [(e.cluster, e.namespace, e.name, e.error) for e in entries] == [
        ("edge-1", "tenant-a", "app", "cluster edge-1 cannot be read: no response from the API server"),
        ("edge-2", "tenant-b", "hidden", "cannot list keystoneusers in namespace tenant-b")]
    assert all(e.to_dict()["reasons"] == {} and e.requeue_after == 30.0 for e in entries)
    assert reader.read_errors() == [
        {"cluster": "edge-1", "error": "cluster edge-1 cannot be read: no response from the API server"},
        {"cluster": "edge-2", "namespace": "tenant-b", "error": "cannot list keystoneusers in namespace tenant-b"}]
