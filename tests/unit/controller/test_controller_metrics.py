"""The controller's metrics: what the families count, that they are the ones docs/controller.md lists, and that the
endpoint serves them in the text format that ``ControllerProcess.metrics()`` (and so the integration tests) reads."""
import re
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from c5c3_orders_controller.metrics import Metrics, MetricsServer, parse

DOCS = Path(__file__).resolve().parents[3] / "docs" / "controller.md"
PREFIX = "c5c3_orders_controller_"


def _order(name, ready, reason):
    return {"namespace": "t", "name": name, "cluster": "", "ready": ready, "reasons": {"Ready": reason}}


def test_metrics_exposition():
    ticks = iter([1234.5, 2000.0, 3000.0])
    m = Metrics(clock=lambda: next(ticks))
    m.set_leader(True)
    m.api_request("lease", 3)
    m.api_error("watch")
    m.record_pass("full", "success", 2.5, {"api_requests": 9, "errors": 0, "gateway_requests": 2, "orders": [
        _order("a", True, "AllReady"), _order("b", False, "WaitingForKORC")]})
    m.record_pass("targeted", "success", 0.7, {"api_requests": 4, "errors": 1, "orders": [
        _order("b", True, "AllReady")]}, keys={"t/b"})
    m.record_pass("targeted", "canceled", 1.0)
    values = parse(m.render())
    assert values[PREFIX + 'passes_total{kind="full",result="success"}'] == 1
    assert values[PREFIX + 'passes_total{kind="targeted",result="success"}'] == 1
    assert values[PREFIX + 'passes_total{kind="targeted",result="canceled"}'] == 1
    assert values[PREFIX + 'passes_total{kind="full",result="failed"}'] == 0  # every kind and result from the start
    assert values[PREFIX + 'orders{ready="True",reason="AllReady"}'] == 2
    assert PREFIX + 'orders{ready="False",reason="WaitingForKORC"}' not in values
    assert values[PREFIX + 'api_requests_total{source="pass"}'] == 13
    assert values[PREFIX + 'api_requests_total{source="lease"}'] == 3
    assert values[PREFIX + 'api_requests_total{source="list"}'] == 0
    assert values[PREFIX + 'api_errors_total{source="pass"}'] == 1
    assert values[PREFIX + 'api_errors_total{source="watch"}'] == 1
    assert values[PREFIX + "gateway_requests_total"] == 2
    # the library writes a bound as a float: le="1.0", not le="1"
    assert values[PREFIX + 'pass_duration_seconds_bucket{kind="targeted",le="1.0"}'] == 2
    assert values[PREFIX + 'pass_duration_seconds_bucket{kind="targeted",le="0.5"}'] == 0
    assert values[PREFIX + 'pass_duration_seconds_bucket{kind="targeted",le="+Inf"}'] == 2
    assert values[PREFIX + 'pass_duration_seconds_sum{kind="targeted"}'] == 1.7
    assert values[PREFIX + 'pass_duration_seconds_count{kind="full"}'] == 1
    assert values[PREFIX + "leader"] == 1
    # the targeted pass had an order error: the last success is the full pass's
    assert values[PREFIX + "last_success_timestamp_seconds"] == 1234.5


def test_the_state_gauges_follow_the_last_update():
    m = Metrics()
    values = parse(m.render())
    assert values[PREFIX + "leader"] == 0
    assert PREFIX + "last_success_timestamp_seconds" not in values  # no pass has succeeded yet
    m.set_watches({"management": 17, "edge-1": 6})
    m.set_shards([0, 3])
    m.record_pass("full", "success", 1.0, {"orders": [_order("a", True, "AllReady")]})
    values = parse(m.render())
    assert values[PREFIX + 'watches{cluster="management"}'] == 17
    assert values[PREFIX + 'watches{cluster="edge-1"}'] == 6
    assert {k for k in values if k.startswith(PREFIX + "shard_held")} == {
        PREFIX + 'shard_held{shard="0"}', PREFIX + 'shard_held{shard="3"}'}
    assert values[PREFIX + 'orders{ready="True",reason="AllReady"}'] == 1
    m.set_watches({"management": 17})
    m.set_shards([3])
    m.forget_orders()  # the Lease was lost: what this replica last saw is no longer its to report
    values = parse(m.render())
    assert PREFIX + 'watches{cluster="edge-1"}' not in values
    assert PREFIX + 'shard_held{shard="0"}' not in values and values[PREFIX + 'shard_held{shard="3"}'] == 1
    assert not [k for k in values if k.startswith(PREFIX + "orders")]


def test_phases_sum_and_count_per_kind_and_phase():
    m = Metrics()
    m.record_phases("targeted", {"start": 0.25, "pass": 0.5})
    m.record_phases("targeted", {"start": 0.5})
    m.trigger("keystoneusers")
    m.watch_event("secrets")
    m.pass_cause("event+requeue")
    values = parse(m.render())
    assert values[PREFIX + 'pass_phase_seconds_sum{kind="targeted",phase="start"}'] == 0.75
    assert values[PREFIX + 'pass_phase_seconds_count{kind="targeted",phase="start"}'] == 2
    assert values[PREFIX + 'pass_phase_seconds_count{kind="targeted",phase="pass"}'] == 1
    assert values[PREFIX + 'event_triggers_total{kind="keystoneusers"}'] == 1
    assert values[PREFIX + 'watch_events_total{kind="secrets"}'] == 1
    assert values[PREFIX + 'pass_causes_total{cause="event+requeue"}'] == 1
    assert values[PREFIX + 'pass_causes_total{cause="schedule"}'] == 0


def test_the_families_are_those_the_docs_list_with_no_created_samples():
    m = Metrics()
    m.record_phases("full", {"start": 1.0})  # a summary shows its TYPE line either way; give it a sample too
    text = m.render()
    served = dict(re.findall(r"^# TYPE (%s\S+) (\S+)$" % PREFIX, text, re.M))
    section = DOCS.read_text().split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    documented = dict(re.findall(r"^\| `(%s\w+)` \| (\w+) \|" % PREFIX, section, re.M))
    assert served == documented, (sorted(served.items()), sorted(documented.items()))
    assert "_created" not in text  # switched off: a creation time per child doubles the lines
    # the library's own parser reads every sample the same as parse() (which the integration tests use)
    values = parse(text)
    samples = [s for family in text_string_to_metric_families(text) for s in family.samples]
    assert len(samples) == len(values)
    for sample in samples:
        if sample.name.startswith(PREFIX):
            labels = ",".join(f'{k}="{v}"' for k, v in sample.labels.items())
            assert values[sample.name + ("{%s}" % labels if labels else "")] == sample.value, sample.name


def test_the_process_and_gc_collectors_are_served_and_not_the_platform_one():
    values = parse(Metrics().render())
    assert values["process_resident_memory_bytes"] > 0
    assert any(k.startswith("python_gc_collections_total") for k in values)
    assert not any(k.startswith("python_info") for k in values)


def test_the_server_binds_a_free_port_and_serves_the_text_format():
    m = Metrics()
    m.set_leader(True)
    server = MetricsServer(m, "127.0.0.1", 0)
    try:
        assert server.port > 0
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5) as resp:
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            values = parse(resp.read().decode("utf-8"))
        assert values[PREFIX + "leader"] == 1
    finally:
        server.stop()
