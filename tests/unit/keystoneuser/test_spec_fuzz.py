"""parse_order, fed arbitrary raw objects, never raises anything but OrderSpecError; and the whole pass
never crashes on them either (docs/reconciler.md, "Bounded input")."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reconcile import reconcile
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.spec import OrderSpecError, parse_order

from .world import NOW, STORE, control_plane, secret_store

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=20)
durations = st.one_of(st.sampled_from(["720h", "0s", "1m", "30s", "1.5h", "87601h", "-1h", "h", ""]),
                      st.from_regex(r"[0-9.]{0,4}(ns|us|ms|s|m|h){0,2}", fullmatch=True), json_values)

# Orders that look almost right, so the fuzzer reaches the deeper fields.
spec_like = st.fixed_dictionaries({}, optional={
    "controlPlaneRef": st.one_of(json_values, st.fixed_dictionaries(
        {}, optional={"name": st.one_of(st.text(max_size=8), json_values),
                      "namespace": st.one_of(st.text(max_size=8), json_values)})),
    "userName": st.one_of(st.text(max_size=300), json_values),
    "passwordGeneration": st.one_of(st.integers(), json_values),
    "rotation": st.one_of(json_values, st.fixed_dictionaries({}, optional={"interval": durations})),
})
metadata_like = st.fixed_dictionaries({}, optional={
    "name": st.one_of(st.text(max_size=70), json_values),
    "namespace": st.one_of(st.text(max_size=10), json_values),
    "uid": json_values, "generation": st.one_of(st.integers(), json_values),
    "finalizers": st.one_of(st.lists(st.text(max_size=40), max_size=3), json_values),
    "deletionTimestamp": json_values, "resourceVersion": json_values,
})
orders = st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "metadata": st.one_of(metadata_like, json_values), "spec": st.one_of(spec_like, json_values),
    "status": json_values}))


@settings(max_examples=400, deadline=None)
@given(orders)
def test_parse_order_raises_nothing_but_order_spec_error(raw):
    try:
        parse_order(raw)
    except OrderSpecError as err:
        assert str(err)


@settings(max_examples=200, deadline=None)
@given(orders, st.sampled_from(["", "edge-1", "x" * 64]))
def test_a_pass_over_any_raw_order_returns_a_decision(raw, cluster):
    snapshot = Snapshot(order=raw if isinstance(raw, dict) else {"metadata": raw}, cluster=cluster, now=NOW,
                        control_plane=control_plane(), secret_stores={STORE: secret_store()}, children=[], delivered=None,
                        role_assignments=[], app_credentials=[], new_password=lambda: "p" * 43)
    decision = reconcile(snapshot)
    assert decision.reasons["UserReady"]
