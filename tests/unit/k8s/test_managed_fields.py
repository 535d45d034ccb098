"""k8s/managed.py: a read object keeps only its own field manager's write times of ``metadata.managedFields``."""
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import managed

ENTRIES = [
    {"manager": "c5c3-orders", "operation": "Apply", "time": "2026-12-05T10:00:00Z", "fieldsV1": {"f:data": {}}},
    {"manager": "kubectl-edit", "operation": "Update", "time": "2026-12-05T10:01:00Z", "fieldsV1": {"f:data": {}}},
]


def test_only_the_own_managers_entries_stay_without_their_fields():
    meta = {"name": "photos-s3", "managedFields": [dict(e) for e in ENTRIES]}
    managed.slim(meta, "c5c3-orders")
    assert meta["managedFields"] == [{"manager": "c5c3-orders", "operation": "Apply", "time": "2026-12-05T10:00:00Z"}]


def test_no_own_entry_or_no_manager_drops_them_all():
    for manager in ("someone-else", ""):
        meta = {"managedFields": [dict(e) for e in ENTRIES]}
        managed.slim(meta, manager)
        assert "managedFields" not in meta


def test_odd_values_are_dropped_not_raised():
    meta = {"managedFields": "not a list"}
    managed.slim(meta, "c5c3-orders")
    assert meta == {}
    meta = {"managedFields": ["text", None, {"manager": "c5c3-orders"}]}
    managed.slim(meta, "c5c3-orders")
    assert meta == {"managedFields": [{"manager": "c5c3-orders"}]}
