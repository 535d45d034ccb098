# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""One pass over every order of one kind on every cluster: read, decide (pure core), write.

Shaped like controller-runtime's reconcile contract, but for all orders at once. The kind's ``OrderSource``
(``passes/``) does the reads (a few list calls) and builds each order's snapshot; the core decides; the executor
writes only what differs. Per order, in this order:

1. decide; a bug in the core fails that order only ("internal error", its type, no text that could hold data);
2. execute the actions, stopping at the first failure; a first action's 409 read back (``read_on_conflict``) is
   decided again at once with the live object, so an owned Secret whose labels were removed is repaired in one
   pass; any other failure is handed to the kind's ``on_action_failure``, which decides the status to report;
3. write the status when it differs.
A failure on one order is reported on that order and the pass goes on; what could not be read at all (a
cluster that cannot be listed) is reported as such, with the orders it can still name (``unreadable``). Every
order's entry is an ``orders.outcome.OrderResult``, whichever of these paths it took.

Every order is decided in turn on the calling thread (the core is pure and fast; a converged pass ends there).
The orders that have something to write are carried out by a small pool of workers (``workers``; a source says
whether its orders may run side by side with ``concurrent_orders``): the actions of one order stay in order on one
worker, so what the core orders first (a finalizer before any child, the backup before the delivery) still happens
first, while different orders' writes overlap. Each client bounds its own requests in flight and backs off on 429
(``k8s.throttle``). Results are reported in the order the source listed the orders, whatever finished first.
"""
from __future__ import annotations

import functools
import gc
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Protocol, Tuple, TypeVar, Union

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.executor import Execution, execute, status_patch
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import Resource
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import OrderResult
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import ActionError, Decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import name_of, namespace_of


class OrderSource(Protocol):
    """What a kind provides to the runner (see ``passes/``)."""

    kind: str
    resource: Resource

    def read(self) -> None: ...
    def orders(self) -> Iterable[Tuple[str, Mapping[str, Any]]]: ...
    def snapshot(self, cluster: str, order: Mapping[str, Any], now: datetime) -> Any: ...
    def reconcile(self, snapshot: Any) -> Decision: ...
    def on_action_failure(self, decision: Decision, action: Any, error: ActionError) -> Decision: ...
    def with_live(self, snapshot: Any, live: Mapping[str, Any]) -> Any: ...
    def live_objects(self, snapshot: Any) -> List[Mapping[str, Any]]: ...
    def unreadable(self) -> List[OrderResult]: ...
    def read_errors(self) -> List[Dict[str, str]]: ...


@dataclass
class PassResult:
    results: List[OrderResult] = field(default_factory=list)
    clusters: List[Dict[str, Any]] = field(default_factory=list)  # clusters (or parts) that could not be read
    changed: bool = False
    errors: int = 0
    requeue_after: Optional[float] = None
    diff: List[Dict[str, Any]] = field(default_factory=list)
    duration: float = 0.0

    @property
    def orders(self) -> List[Dict[str, Any]]:
        """The per-order entries as the modules return them (``OrderResult.to_dict``)."""
        return [result.to_dict() for result in self.results]

    def record(self, entry: OrderResult) -> None:
        self.results.append(entry)
        if entry.error:
            self.errors += 1
        self.changed = self.changed or entry.changed
        wait = entry.requeue_after
        if wait is not None and (self.requeue_after is None or wait < self.requeue_after):
            self.requeue_after = wait


def _internal_error(source: OrderSource, cluster: str, order: Mapping[str, Any], exc: Exception) -> OrderResult:
    """A bug in the core: reported on that order, by type only (its text may hold data); no retry of its own."""
    return OrderResult.failed(source.kind, name_of(order), namespace_of(order), cluster,
                              f"internal error: {type(exc).__name__}", retry=None)


def _write_status(service: Any, resource: Resource, order: Mapping[str, Any], decision: Decision,
                  redactor: Redactor) -> Tuple[bool, Optional[str]]:
    if decision.status is None:
        return False, None
    meta = order["metadata"]
    try:
        service.merge_patch(resource, meta["namespace"], meta["name"],
                            status_patch(order.get("status"), decision.status), subresource="status")
    except KubeError as exc:
        if exc.not_found:  # an order deleted meanwhile has no status to write
            return False, None
        return False, f"status write: {redactor.scrub(exc.summary())}"
    return True, None


PASS_WORKERS = 8  # orders whose writes run side by side (each client also bounds its requests in flight)
Outcome = Tuple[Decision, Execution, bool, Optional[str]]
T = TypeVar("T")


@dataclass
class Settled:
    """An order with nothing to write, reported at once: its decision (snapshot references, summary, fields) is not
    kept until the last order has been decided, which in a converged pass over thousands of orders is most of what
    the pass holds besides the lists."""
    entry: OrderResult


def result_entry(outcome: Outcome) -> OrderResult:
    decision, run, written, status_error = outcome
    errors = [e for e in (decision.summary.get("error"), status_error) if e]
    return OrderResult.of_decision(decision, run.done, written, "; ".join(errors) or None)


def decide_order(source: OrderSource, cluster: str, order: Mapping[str, Any], now: datetime) -> Tuple[Any, Decision]:
    snapshot = source.snapshot(cluster, order, now)
    return snapshot, source.reconcile(snapshot)


def carry_out(source: OrderSource, services: Mapping[str, Any], cluster: str, order: Mapping[str, Any],
              snapshot: Any, decision: Decision, redactor: Redactor) -> Outcome:
    """Execute a decision's actions in order, decide again on a 409 read back, write the status."""
    other = getattr(source, "execute_other", None)  # a kind's own action types (the gateway calls)
    run = execute(decision.actions, services, source.live_objects(snapshot), redactor, other)
    if run.error is not None and run.error.live is not None and not run.done:
        snapshot = source.with_live(snapshot, run.error.live)
        decision = source.reconcile(snapshot)
        run = execute(decision.actions, services, source.live_objects(snapshot), redactor, other)
    if run.failed is not None and run.error is not None:
        decision = source.on_action_failure(decision, run.failed, replace(run.error, live=None))
    written, status_error = _write_status(services[cluster], source.resource, order, decision, redactor)
    return decision, run, written, status_error


def reconcile_order(source: OrderSource, services: Mapping[str, Any], cluster: str, order: Mapping[str, Any],
                    now: datetime, redactor: Redactor) -> Outcome:
    snapshot, decision = decide_order(source, cluster, order, now)
    return carry_out(source, services, cluster, order, snapshot, decision, redactor)


def _guarded(work: Callable[[], T]) -> Union[T, Exception]:
    """The outcome, or the exception a bug in the core raised (reported on that order only)."""
    try:
        return work()
    except Exception as exc:  # pylint: disable=broad-except
        return exc


def _outcomes(source: OrderSource, services: Mapping[str, Any], orders: List[Tuple[str, Mapping[str, Any]]],
              now: datetime, redactor: Redactor, workers: int) -> List[Any]:
    """Each order's outcome (or exception), in the order given: decided here, written by ``workers`` threads."""
    outcomes: List[Any] = [None] * len(orders)
    pending = []
    for index, (cluster, order) in enumerate(orders):
        decided = _guarded(lambda: decide_order(source, cluster, order, now))  # pylint: disable=cell-var-from-loop
        if isinstance(decided, Exception):
            outcomes[index] = decided
            continue
        snapshot, decision = decided
        if not decision.actions and decision.status is None:  # nothing to write: no worker needed
            outcomes[index] = Settled(result_entry((decision, Execution(), False, None)))
        elif workers <= 1:
            outcomes[index] = _guarded(lambda: carry_out(  # pylint: disable=cell-var-from-loop
                source, services, cluster, order, snapshot, decision, redactor))
        else:
            pending.append((index, cluster, order, snapshot, decision))
    if pending:
        with ThreadPoolExecutor(max_workers=min(workers, len(pending)), thread_name_prefix="c5c3-pass") as pool:
            futures = [(index, pool.submit(_guarded, functools.partial(
                carry_out, source, services, cluster, order, snapshot, decision, redactor)))
                for index, cluster, order, snapshot, decision in pending]
            for index, future in futures:
                outcomes[index] = future.result()
    return outcomes


def run_pass(source: OrderSource, services: Mapping[str, Any], redactor: Redactor, now: Optional[datetime] = None,
             want_diff: bool = False, clock: Callable[[], float] = time.monotonic,
             workers: Optional[int] = None) -> PassResult:
    """``services`` maps a cluster name ("" = management) to its KubeService. ``workers``: orders written side by
    side (default ``PASS_WORKERS`` for a source whose ``concurrent_orders`` is true, else one at a time)."""
    started = clock()
    result = PassResult()
    now = now or datetime.now(timezone.utc)
    if workers is None:
        workers = PASS_WORKERS if getattr(source, "concurrent_orders", False) else 1
    try:
        source.read()  # the lists come frozen out of the cyclic garbage collector (KubeService.list)
        orders = list(source.orders())
        outcomes = _outcomes(source, services, orders, now, redactor, workers)
    finally:
        gc.unfreeze()
    for (cluster, order), outcome in zip(orders, outcomes):
        if isinstance(outcome, Exception):
            # a bug in the core must not stop the pass for the other orders; its text may hold data: type only
            result.record(_internal_error(source, cluster, order, outcome))
            continue
        if isinstance(outcome, Settled):  # nothing written, nothing changed: no diff either
            result.record(outcome.entry)
            continue
        decision, run, _written, _status_error = outcome
        entry = result_entry(outcome)
        result.record(entry)
        if want_diff and entry.changed:
            where = f"{entry.namespace}/{entry.name}"
            result.diff.append({
                "before": {"order": where, "status": order.get("status") or {}},
                "after": {"order": where,
                          "status": decision.status if decision.status is not None else order.get("status") or {},
                          "actions": list(run.done)},
            })
    for entry in source.unreadable():
        result.record(entry)
    result.clusters = source.read_errors()
    result.duration = clock() - started
    return result
