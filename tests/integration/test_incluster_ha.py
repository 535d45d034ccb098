"""Two replicas of the in-cluster controller on the node's Pod network (docs/install.md, "High availability on the
local node"): leader election, then the sharded mode, each proven by deleting the Pod that works.

The install is test_incluster.py's (the image on the node, run-unique names, the controller limited to this module's
tenant namespace), but without host networking: the Pods get addresses of the node's Pod network, so two of them can
serve their probes on the same port, and reach the API server through the bridge's gateway (the stack's forwarder;
``c5c3_install_api_host``/``_port``). Each replica appends one JSON line per pass to ``/tmp/passes.jsonl`` in its Pod
(``--pass-log``), read with ``kubectl exec``; the lines carry wall-clock times, and the Pods share the host's clock.

- Leader election (``c5c3_install_replicas: 2``): one Pod holds the Lease and decides the order, the other is Ready
  but runs no pass; an edited delivered Secret is repaired by the leader on the event; the leader's Pod deleted, the
  other Pod holds the Lease within the Lease duration and repairs the next edit on its event.
- Sharded (``c5c3_install_shards: 2`` as well): each share's Lease is held by one Pod; the Pod holding the tenant
  namespace's share decides its order, the other none of it; that Pod deleted, the other takes the share over within
  the Lease duration and repairs the next edit.

In both, no order was decided by two replicas at once: no two Pods' passes that reconciled it overlap in time.
"""
import base64
import json
import sys
import time
from pathlib import Path

import pytest

from kubewait import wait_for
from orders import unique
from test_incluster import (  # noqa: F401  (the node, image and tenant fixtures, shared with test_incluster.py)
    InCluster, _keystoneuser_ready, image, kubernetes_core_present, node, serve_then_remove, tenant, world,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "controller"))
from c5c3_orders_controller.shards import shard_lease, shard_of  # noqa: E402

LEASE_DURATION = 15.0  # the controller's default --lease-duration
TAKEOVER_BOUND = LEASE_DURATION + 2 * 2.0 + 5  # a lease duration, a retry period each side, the polling here
PASS_LOG = "/tmp/passes.jsonl"
POD_TIMEOUT = 240
PASS_TIMEOUT = 180  # a pass to show in a Pod's pass log (_wait_for_pass)


class Replicas(InCluster):
    """The install on the Pod network with two replicas."""

    def vars(self, **extra):
        base = super().vars(**extra)
        base.update({
            "c5c3_install_host_network": False,
            "c5c3_install_api_host": self.env["C5C3_NODE_POD_GATEWAY"],
            "c5c3_install_api_port": int(self.env["C5C3_NODE_POD_API_PORT"]),
            "c5c3_install_replicas": 2,
            "c5c3_install_controller_extra_args": ["--namespace", self.tenant, "--debounce", "0.5",
                                                   "--pass-log", PASS_LOG],
        })
        base.pop("c5c3_install_metrics_port", None)  # each Pod has its own address: the default port for both
        base.update(extra)
        return base

    def pods(self):
        return [p for p in self.core.list_namespaced_pod(
            self.namespace, label_selector="app.kubernetes.io/component=controller").items
            if p.metadata.deletion_timestamp is None]

    def ready_pods(self, count=2):
        pods = [p for p in self.pods() if p.status.phase == "Running" and any(
            c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])]
        return pods if len(pods) == count else None

    def passes(self, pod):
        proc = self.kubectl("exec", pod, "--", "python3", "-c",
                            "import os,sys; p=%r; sys.stdout.write(open(p).read() if os.path.exists(p) else '')"
                            % PASS_LOG, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return [dict(json.loads(line), pod=pod) for line in proc.stdout.splitlines() if line.strip()]

    def holder(self, lease):
        try:
            return self.coord.read_namespaced_lease(lease, self.namespace).spec.holder_identity or ""
        except Exception:  # not there yet
            return ""


def _pod_of(holder, pods):
    """The Pod whose controller holds a Lease (the identity starts with the Pod's hostname, its name)."""
    found = [p.metadata.name for p in pods if holder.startswith(p.metadata.name + "_")]
    return found[0] if found else None


def _edit_and_wait_for_repair(stack, ns, name, what):
    good = stack.delivered(ns, name)["password"]
    stack.core.patch_namespaced_secret(f"{name}-credentials", ns, {
        "data": {"password": base64.b64encode(b"edited-" + unique("x").encode()).decode()}})
    edited = time.monotonic()
    wait_for(lambda: (stack.delivered(ns, name) or {}).get("password") == good, 90, interval=0.5, what=what)
    return time.monotonic() - edited


def _wait_for_pass(replicas, pod, key, event, what):
    """The pass log lines of ``pod`` for passes that reconciled ``key`` (an event's when ``event``, none's when
    False, any when None): a line is written when its pass ends, a little after the Secret it repaired. A Pod that has
    just won a share first starts its watches and runs a full pass in a playbook of its own: under the load of the
    lanes beside this one that took more than 60 s once (9cf398d's run), hence the bound."""
    def found():
        return [p for p in replicas.passes(pod) if key in p["reconciled"]
                and (event is None or ("event" in p["cause"]) == event)]
    return wait_for(found, PASS_TIMEOUT, interval=1, what=what)


def _taken_over(replicas, lease, deleted):
    """The Pod that holds ``lease`` after the Pod ``deleted`` let it go (waited for at most TAKEOVER_BOUND)."""
    def heir():
        holder = replicas.holder(lease)
        found = _pod_of(holder, replicas.pods()) if holder and not holder.startswith(deleted + "_") else None
        return found
    try:
        return wait_for(heir, TAKEOVER_BOUND, interval=0.2, what=f"another Pod to hold Lease {lease}")
    except AssertionError as exc:
        pods = {p.metadata.name: p.status.phase for p in replicas.pods()}
        logs = {name: replicas.log(name)[-1500:] for name in pods}
        raise AssertionError(f"{exc}; holder {replicas.holder(lease)!r}; pods {pods}; logs {logs}")


def _no_overlap(passes, key):
    """No two Pods' passes that reconciled ``key`` overlap in time."""
    mine = [p for p in passes if key in p["reconciled"]]
    return [(p["pod"], q["pod"]) for p in mine for q in mine if p["pod"] < q["pod"]
            and p["started"] < q["ended"] and q["started"] < p["ended"]]


@pytest.fixture(scope="module")
def replicas(node, image, kube, tenant, kubernetes_core_present):  # noqa: F811
    yield from serve_then_remove(Replicas(node, kube, tenant))


def _install_and_wait(replicas, **settings):
    replicas.install(c5c3_install_mode="deployment", **settings)
    return wait_for(replicas.ready_pods, POD_TIMEOUT, interval=2, what="two Ready controller Pods")


def test_two_replicas_elect_one_leader_and_the_other_takes_over_when_its_pod_is_deleted(replicas, world):
    stack, _storage = world
    ns = replicas.tenant
    pods = _install_and_wait(replicas)
    gateway_net = replicas.env["C5C3_NODE_POD_GATEWAY"].rsplit(".", 1)[0] + "."
    for pod in pods:
        assert pod.spec.host_network in (None, False) and pod.status.pod_ip.startswith(gateway_net), pod.status
    lease = "c5c3-orders-controller"
    holder = wait_for(lambda: _pod_of(replicas.holder(lease), pods), 60, what="a Pod to hold the Lease")
    standby = next(p.metadata.name for p in pods if p.metadata.name != holder)

    name = unique("ha-user")
    stack.create_order(ns, name)
    wait_for(lambda: _keystoneuser_ready(stack, ns, name), 300, interval=1,
             what=f"KeystoneUser {ns}/{name} Ready through the leader")
    key = f"{ns}/{name}"
    _wait_for_pass(replicas, holder, key, None, "the leader's pass of the new order")
    took = _edit_and_wait_for_repair(stack, ns, name, "the leader to repair the edited Secret")
    print(f"leader {holder}: repaired an edit in {took:.1f}s")
    _wait_for_pass(replicas, holder, key, True, "the leader's pass on the edit's event")
    assert replicas.passes(standby) == [], "the standby replica ran a pass"
    before = replicas.passes(holder)

    # the leader's Pod deleted (SIGTERM: it stops, releases the Lease); another Pod takes over: the standby, or
    # the Deployment's replacement when it starts first
    replicas.core.delete_namespaced_pod(holder, replicas.namespace)
    deleted = time.monotonic()
    heir = _taken_over(replicas, lease, holder)
    took_over = time.monotonic() - deleted
    print(f"Lease taken over by {heir} ({'the standby' if heir == standby else 'the replacement'}) "
          f"{took_over:.1f}s after the leader's Pod was deleted")
    assert took_over <= TAKEOVER_BOUND
    _wait_for_pass(replicas, heir, key, False, "the new leader's first full pass")
    took = _edit_and_wait_for_repair(stack, ns, name, "the new leader to repair the edited Secret")
    print(f"new leader {heir}: repaired an edit in {took:.1f}s")
    _wait_for_pass(replicas, heir, key, True, "the new leader's pass on the edit's event")
    live = [p.metadata.name for p in replicas.pods()]
    after = [p for pod in live for p in replicas.passes(pod)]
    assert not any(key in p["reconciled"] for p in after if p["pod"] != heir), "a Pod without the Lease decided it"
    assert _no_overlap(before + after, key) == []
    wait_for(replicas.ready_pods, POD_TIMEOUT, interval=2, what="the Deployment's replacement Pod Ready")


def test_two_replicas_split_two_shares_and_a_deleted_pods_share_is_taken_over(replicas, world):
    stack, _storage = world
    ns = replicas.tenant
    pods = _install_and_wait(replicas, c5c3_install_shards=2)
    wait_for(lambda: {p.metadata.name for p in (replicas.ready_pods() or [])} == {p.metadata.name for p in pods}
             and len(replicas.pods()) == 2, POD_TIMEOUT, interval=2, what="only the sharded Pods left")
    base = "c5c3-orders-controller"
    mine = shard_lease(base, shard_of(ns, 2))
    other = shard_lease(base, 1 - shard_of(ns, 2))
    wait_for(lambda: _pod_of(replicas.holder(mine), pods) and _pod_of(replicas.holder(other), pods)
             and _pod_of(replicas.holder(mine), pods) != _pod_of(replicas.holder(other), pods), 90, interval=1,
             what="each Pod to hold one share's Lease")
    holder = _pod_of(replicas.holder(mine), pods)
    heir = _pod_of(replicas.holder(other), pods)

    name = unique("ha-shard")
    stack.create_order(ns, name)
    wait_for(lambda: _keystoneuser_ready(stack, ns, name), 300, interval=1,
             what=f"KeystoneUser {ns}/{name} Ready through the share's holder")
    key = f"{ns}/{name}"
    _edit_and_wait_for_repair(stack, ns, name, "the share's holder to repair the edited Secret")
    _wait_for_pass(replicas, holder, key, True, "the share holder's pass on the edit's event")
    before = replicas.passes(holder) + replicas.passes(heir)
    assert any(key in p["reconciled"] for p in before if p["pod"] == holder)
    assert not any(key in p["reconciled"] for p in before if p["pod"] == heir), "the other share's Pod decided it"

    replicas.core.delete_namespaced_pod(holder, replicas.namespace)
    deleted = time.monotonic()
    heir = _taken_over(replicas, mine, holder)
    took_over = time.monotonic() - deleted
    print(f"share taken over by {heir} {took_over:.1f}s after its Pod was deleted")
    assert took_over <= TAKEOVER_BOUND
    _wait_for_pass(replicas, heir, key, False, "the new holder's first full pass over the share")
    # the Deployment's replacement Pod joins and the shares rebalance to one each; the edit comes once they have
    # settled, and whoever then holds the share repairs it on the event
    wait_for(lambda: replicas.ready_pods() and len(replicas.pods()) == 2 and len(
        {_pod_of(replicas.holder(lease), replicas.pods()) for lease in (mine, other)} - {None}) == 2,
        POD_TIMEOUT, interval=1, what="the replacement Pod Ready and the shares one per Pod again")
    repairer = _pod_of(replicas.holder(mine), replicas.pods())
    _wait_for_pass(replicas, repairer, key, None, "the share holder's pass over the share")
    _edit_and_wait_for_repair(stack, ns, name, "the share's holder to repair the edited Secret")
    _wait_for_pass(replicas, repairer, key, True, "the share holder's pass on the edit's event")
    print(f"after the rebalance the share is {repairer}'s ({'the heir' if repairer == heir else 'the replacement'})")
    after = [p for pod in (p.metadata.name for p in replicas.pods()) for p in replicas.passes(pod)]
    assert _no_overlap(before + after, key) == []
