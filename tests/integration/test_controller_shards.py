"""Scale-out on the local stack (docs/scaling.md, "The shard test (local stack)"): replicas of the controller split the
namespaces into shares, one Lease per share, with Kubernetes Leases as the only coordination.

Three namespaces, one per share (``--shards 3``), an order in each (each with its own user name). Two replicas split
the three shares and bring every order to Ready; an order in another share asking for a user name another share's
order holds is refused by its own replica (ServiceAccountCollision: one Keystone user never serves two orders); a third replica joins and the shares rebalance to one each; the replica holding one share is
SIGKILLed with everything below it (as a node failure would), and a survivor takes its share over within one lease
duration and repairs an edited delivered Secret there. Every pass each replica ran is in its pass log: no order
was reconciled by two replicas at once. Timings are printed, never asserted (but for the takeover's bound).
"""
import base64
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubewait import wait_for
from orders import Stack, unique
from passes import reconcile_until

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "controller"))
from c5c3_orders_controller.process import ControllerProcess  # noqa: E402
from c5c3_orders_controller.shards import shard_of, shard_lease  # noqa: E402

SHARDS = 3
LEASE_NS = "default"
LEASE_DURATION = 15.0
ORDER = "svc"
DUP = "dup"  # an order asking for another share's user name


def user_name(ns):
    return "svc-" + ns


def one_namespace_per_share(prefix):
    found = {}
    while len(found) < SHARDS:
        ns = unique(prefix)
        found.setdefault(shard_of(ns, SHARDS), ns)
    return [found[s] for s in range(SHARDS)]


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as fh:
                    children.setdefault(int(fh.read().rsplit(")", 1)[1].split()[1]), []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(pid):
    """SIGSTOP the controller and everything below it, then SIGKILL all: nothing it started goes on writing."""
    tree = [pid] + descendants(pid)
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for p in tree:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass


class Shards:
    def __init__(self, stack, coord, namespaces, workdir, env):
        self.stack, self.coord, self.namespaces, self.workdir, self.env = stack, coord, namespaces, workdir, env
        self.lease = unique("ctl-shards")
        self.replicas = {}

    def start(self, name):
        proc = ControllerProcess(self.workdir, name, self.lease, namespaces=self.namespaces,
                                 kubeconfig=self.env["KUBECONFIG"], extra_args=[
                                     "--lease-namespace", LEASE_NS, "--shards", str(SHARDS),
                                     "--pass-log", str(self.workdir / (name + ".passes.jsonl"))])
        self.replicas[name] = proc
        return proc.start()

    def holders(self):
        out = {}
        for shard in range(SHARDS):
            try:
                out[shard] = self.coord.read_namespaced_lease(shard_lease(self.lease, shard), LEASE_NS).spec.holder_identity
            except ApiException as exc:
                if exc.status != 404:
                    raise
        return out

    def identity(self, name):
        return self.replicas[name].log().split("started as ", 1)[1].split(";", 1)[0]

    def held(self, name):
        values = self.replicas[name].metrics()
        return {int(k.split('shard="')[1].split('"')[0]) for k in values if k.startswith("c5c3_orders_controller_shard_held")}

    def passes(self):
        records = []
        for name in self.replicas:
            path = self.workdir / (name + ".passes.jsonl")
            if path.exists():
                records += [dict(json.loads(line), replica=name) for line in path.read_text().splitlines() if line]
        return records


@pytest.fixture
def world(stack_env, kube, tmp_path):
    stack = Stack(kube, stack_env)
    core = client.CoreV1Api(kube)
    namespaces = one_namespace_per_share("ctl-sh")
    for ns in namespaces:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
        stack.assign(ns)
    w = Shards(stack, client.CoordinationV1Api(kube), namespaces, tmp_path, stack_env)
    yield w
    for proc in w.replicas.values():
        if proc.proc is not None and proc.proc.poll() is None:
            proc.terminate()
    for ns in namespaces:
        for name in (ORDER, DUP):
            if stack.order(ns, name) is not None:
                stack.delete_order(ns, name)
    if any(stack.order(ns, name) is not None for ns in namespaces for name in (ORDER, DUP)):
        reconcile_until(lambda r: all(stack.order(ns, name) is None for ns in namespaces for name in (ORDER, DUP)),
                        timeout=240,
                        what="the orders' teardown", namespaces=namespaces, kubeconfig=stack_env["KUBECONFIG"])
    for ns in namespaces:
        stack.withdraw(ns)
        core.delete_namespace(ns)
    for name in [shard_lease(w.lease, s) for s in range(SHARDS)] + ["%s-member-%d" % (w.lease, j) for j in range(SHARDS)]:
        try:
            w.coord.delete_namespaced_lease(name, LEASE_NS)
        except ApiException:
            pass


def ready(stack, ns):
    return Stack.condition(stack.order(ns, ORDER), "Ready").get("status") == "True"


def test_replicas_split_the_shares_and_a_killed_ones_share_is_taken_over(world):
    stack = world.stack
    a, b = world.start("a"), world.start("b")
    for ns in world.namespaces:
        stack.create_order(ns, ORDER, userName=user_name(ns))
    started = time.monotonic()
    wait_for(lambda: all(ready(stack, ns) for ns in world.namespaces), timeout=240, interval=1,
             what="every order Ready with two replicas")
    print("3 orders Ready with 2 replicas in %.1fs" % (time.monotonic() - started))
    wait_for(lambda: len(world.holders()) == SHARDS and set(world.holders().values()) == {
        world.identity("a"), world.identity("b")}, timeout=60, what="both replicas to hold shares")

    # another share's user name, asked for from the second namespace (whose share the other replica may hold)
    stack.create_order(world.namespaces[1], DUP, userName=user_name(world.namespaces[0]).upper())
    wait_for(lambda: Stack.condition(stack.order(world.namespaces[1], DUP), "UserReady").get("reason")
             == "ServiceAccountCollision", timeout=120, interval=1, what="the duplicate user name refused")
    assert ready(stack, world.namespaces[0])

    c = world.start("c")
    joined = time.monotonic()
    wait_for(lambda: all(len(world.held(n)) == 1 for n in "abc"), timeout=90, interval=0.5,
             what="the shares to rebalance to one per replica")
    print("rebalanced to one share each %.1fs after the third replica started" % (time.monotonic() - joined))
    assert sorted(s for n in "abc" for s in world.held(n)) == list(range(SHARDS))

    # SIGKILL the replica holding the first namespace's share (and its passes)
    victim = next(n for n in "abc" if 0 in world.held(n))
    survivors = [n for n in "abc" if n != victim]
    kill_tree(world.replicas[victim].proc.pid)
    killed = time.monotonic()
    world.replicas[victim].terminate()
    wait_for(lambda: any(0 in world.held(n) for n in survivors), timeout=LEASE_DURATION + 20, interval=0.2,
             what="a survivor to take the killed replica's share over")
    took = time.monotonic() - killed
    print("share 0 taken over %.1fs after the SIGKILL" % took)
    assert took <= LEASE_DURATION + 2 * 2.0 + 3  # one lease duration, a retry period each side, the metrics poll
    heir = next(n for n in survivors if 0 in world.held(n))

    ns = world.namespaces[0]
    good = stack.delivered(ns, ORDER)["password"]
    mark = len(world.replicas[heir].log())
    stack.core.patch_namespaced_secret("%s-credentials" % ORDER, ns, {
        "data": {"password": base64.b64encode(b"edited").decode()}})
    wait_for(lambda: (stack.delivered(ns, ORDER) or {}).get("password") == good, timeout=60, interval=0.2,
             what="the new holder to repair the edited Secret")
    world.replicas[heir].wait_log(r"targeted pass \(event\): %s/%s" % (ns, ORDER), 5, after=mark)

    # no order reconciled by two replicas at once (every pass in the pass logs; the killed one's last pass ended at
    # the SIGKILL at the latest)
    passes = world.passes()
    assert {p["replica"] for p in passes} >= {"a", "b"}
    for p in passes:
        assert set(p["reconciled"]) <= {"%s/%s" % (n, o) for n in world.namespaces for o in (ORDER, DUP)}
        assert all(shard_of(key.split("/")[0], SHARDS) in p["shards"] for key in p["reconciled"]), p
    overlaps = [(p["replica"], q["replica"], key) for p in passes for q in passes if p["replica"] < q["replica"]
                for key in set(p["reconciled"]) & set(q["reconciled"])
                if p["started"] < q["ended"] and q["started"] < p["ended"]]
    assert overlaps == []
    for name in survivors:
        assert world.replicas[name].terminate() == 0
