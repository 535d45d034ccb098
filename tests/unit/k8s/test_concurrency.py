"""A pass writes for many orders side by side, bounded, and backs off on 429 (docs/benchmarks.md, "What the numbers
mean").

Against the in-memory API server (fakeapi.py) with a little latency per request, so requests really overlap: a
pass with a pool of workers makes, for every order, the very writes a one-at-a-time pass makes, in the same order
(finalizer before any child, each order's actions in sequence), reports the orders in listing order, never has
more requests in flight than its bound, and sends every write the server refused with 429 again. The throttle's
arithmetic (pause, halving, growing back, giving up) runs on an injected clock. Timings are never asserted.
"""
from __future__ import annotations

import threading
from collections import defaultdict
from typing import Dict, List, Tuple

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import run_pass
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.throttle import Throttle
from ansible_collections.c5c3.orders.plugins.module_utils.passes.keystoneuser import KeystoneUserSource
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection

from .fakeapi import FakeApi
from .test_edge import NOW, control_plane, order, store

NAMESPACES = ("tenant-a", "tenant-b", "tenant-c")
ORDERS = 36
BOUND = 4


def world(**kwargs) -> FakeApi:
    api = FakeApi(**kwargs)
    api.put(control_plane([(ns, "") for ns in NAMESPACES]))
    api.put(store())
    for i in range(ORDERS):
        api.put(order(NAMESPACES[i % len(NAMESPACES)], f"o{i:03d}"))
    return api


def one_pass(api: FakeApi, workers: int):
    service = KubeService(api, "c5c3-orders")
    redactor = Redactor()
    source = KeystoneUserSource(service, {}, Selection(), lambda: "p" * 43, redactor)
    return run_pass(source, {"": service}, redactor, now=NOW, workers=workers)


def writes_per_order(api: FakeApi) -> Dict[str, List[Tuple[str, str]]]:
    """Each order's writes in the order the server carried them out (an order's name is in every path it writes)."""
    found: Dict[str, List[Tuple[str, str]]] = defaultdict(list)
    for method, path in api.write_log:
        owners = [f"o{i:03d}" for i in range(ORDERS) if f"/o{i:03d}" in path or f"/o{i:03d}-" in path]
        assert len(owners) == 1, path
        found[owners[0]].append((method, path))
    return dict(found)


def test_a_pool_of_workers_writes_what_one_worker_writes_in_each_orders_order():
    alone = world()
    sequential = one_pass(alone, workers=1)
    assert alone.peak_in_flight == 1

    shared = world(latency=0.002, throttle=Throttle(BOUND))
    concurrent = one_pass(shared, workers=8)

    assert writes_per_order(shared) == writes_per_order(alone)
    assert all(writes[0][0] == "PATCH" and writes[0][1].endswith("/keystoneusers/" + name)
               for name, writes in writes_per_order(shared).items()), "the finalizer is every order's first write"
    assert [(e["namespace"], e["name"]) for e in concurrent.orders] == \
        [(e["namespace"], e["name"]) for e in sequential.orders], "results are reported in listing order"
    assert concurrent.orders == sequential.orders
    assert 1 < shared.peak_in_flight <= BOUND, shared.peak_in_flight


def test_writes_refused_with_429_are_sent_again_and_the_pass_succeeds():
    throttle = Throttle(BOUND, sleep=lambda seconds: None)
    api = world(latency=0.001, throttle=throttle)
    api.refuse_writes(every=5, total=12)
    result = one_pass(api, workers=8)

    assert api.refused == 12 and throttle.throttled == 12
    assert result.errors == 0 and all(not e.get("error") for e in result.orders)
    reference = world()
    one_pass(reference, workers=1)
    assert writes_per_order(api) == writes_per_order(reference), "a refused write is sent again, in its place"
    assert api.peak_in_flight <= BOUND


def test_a_source_that_does_not_allow_it_runs_its_orders_one_at_a_time():
    api = world(latency=0.001)
    service = KubeService(api, "c5c3-orders")
    redactor = Redactor()
    source = KeystoneUserSource(service, {}, Selection(), lambda: "p" * 43, redactor)
    source.concurrent_orders = False
    run_pass(source, {"": service}, redactor, now=NOW)
    assert api.peak_in_flight == 1


# -- the throttle alone, on an injected clock ------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: List[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def too_many(retry_after=None) -> KubeError:
    return KubeError("PATCH", "/x", 429, "TooManyRequests", "slow down", retry_after=retry_after)


def answers(*outcomes):
    """A send() that raises or returns the given outcomes in turn."""
    queue = list(outcomes)

    def send():
        outcome = queue.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
    return send


def test_a_429_pauses_for_retry_after_halves_the_window_and_the_window_grows_back():
    clock = Clock()
    throttle = Throttle(8, clock=clock, sleep=clock.sleep)
    assert throttle.call(answers(too_many(retry_after=3.0), "ok")) == "ok"
    assert clock.slept == [3.0] and throttle.window == 4 and throttle.throttled == 1
    for _ in range(4 + 5 + 6 + 7):  # a window's worth of calm answers adds one request, up to the bound
        throttle.call(answers("ok"))
    assert throttle.window == 8
    throttle.call(answers("ok"))
    assert throttle.window == 8


def test_without_retry_after_the_pause_doubles_and_is_capped():
    clock = Clock()
    throttle = Throttle(2, max_wait=1.0, clock=clock, sleep=clock.sleep)
    assert throttle.call(answers(too_many(), too_many(), too_many(), too_many(), "ok")) == "ok"
    assert clock.slept == [0.25, 0.5, 1.0, 1.0]
    assert throttle.throttled == 4 and throttle.window == 2  # halved to 1 at once, grown back by the answer


def test_a_request_refused_too_often_fails_and_other_errors_are_not_retried():
    clock = Clock()
    throttle = Throttle(2, retries=2, clock=clock, sleep=clock.sleep)
    with pytest.raises(KubeError) as refused:
        throttle.call(answers(too_many(0), too_many(0), too_many(0), "never"))
    assert refused.value.status == 429 and throttle.throttled == 3
    with pytest.raises(KubeError) as conflict:
        throttle.call(answers(KubeError("POST", "/x", 409, "AlreadyExists", "taken"), "never"))
    assert conflict.value.status == 409 and throttle.in_flight == 0


def test_no_more_requests_than_the_window_are_ever_in_flight():
    throttle = Throttle(3)
    gate = threading.Event()
    lock = threading.Lock()
    seen = {"now": 0, "peak": 0}

    def send():
        with lock:
            seen["now"] += 1
            seen["peak"] = max(seen["peak"], seen["now"])
        gate.wait(0.05)
        with lock:
            seen["now"] -= 1
        return "ok"

    threads = [threading.Thread(target=throttle.call, args=(send,)) for _ in range(12)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join()
    assert seen["peak"] <= 3 and throttle.peak <= 3 and throttle.in_flight == 0
