"""The long-running controller against the local stack (controller/, docs/controller.md).

One scenario, in order: a controller A (own state dir, metrics port and Lease) reconciles a fresh assigned
namespace; an order goes Ready with no manual pass; an edited delivered password and a deleted delivered
Secret are repaired by events; a raised ``spec.passwordGeneration`` rotates the password; a Lease taken by
another holder makes A step down within a renew period and stop reconciling until it is free; a second replica
B on the same Lease stays a standby (no pass, leader 0) until A is SIGTERMed, then takes over; both exit 0
on SIGTERM and release the Lease; finally every file the controllers wrote, and their captured output, is
grepped for every password the order held.
"""
import base64
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubewait import wait_for
from orders import CP_NS, Stack, unique
from passes import reconcile_until

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "controller"))
from c5c3_orders_controller.process import ControllerProcess  # noqa: E402

LEASE_NS = "default"
PASSES = "c5c3_orders_controller_passes_total"


class Scenario:
    def __init__(self, stack, core, coord, namespace, workdir, env):
        self.stack, self.core, self.coord = stack, core, coord
        self.namespace = namespace
        self.workdir = workdir
        self.env = env
        self.lease = unique("ctl-lease")
        self.order = "svc"
        self.passwords = set()
        self.controllers = {}

    def controller(self, name):
        proc = ControllerProcess(self.workdir, name, self.lease, namespaces=[self.namespace],
                                 kubeconfig=self.env["KUBECONFIG"],
                                 extra_args=["--lease-namespace", LEASE_NS, "--debounce", "1"])
        self.controllers[name] = proc
        return proc.start()

    def lease_holder(self):
        try:
            return self.coord.read_namespaced_lease(self.lease, LEASE_NS).spec.holder_identity or ""
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def remember_passwords(self):
        """Every password the order holds right now: the delivered Secret and the password Secrets."""
        delivered = self.stack.delivered(self.namespace, self.order) or {}
        if delivered.get("password"):
            self.passwords.add(delivered["password"])
        selector = "c5c3.io/keystoneuser-name=%s,c5c3.io/keystoneuser-namespace=%s" % (self.order, self.namespace)
        for secret in self.core.list_namespaced_secret(CP_NS, label_selector=selector).items:
            for key, value in (secret.data or {}).items():
                text = base64.b64decode(value).decode()
                if key == "password":
                    self.passwords.add(text)
        return delivered


@pytest.fixture(scope="module")
def scenario(stack_env, kube, tmp_path_factory):
    stack = Stack(kube, stack_env)
    core = client.CoreV1Api(kube)
    namespace = unique("ctl")
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    stack.assign(namespace)
    sc = Scenario(stack, core, client.CoordinationV1Api(kube), namespace, tmp_path_factory.mktemp("controller"),
                  stack_env)
    yield sc
    for proc in sc.controllers.values():
        proc.terminate()
    # anything a failed step left behind: tear it down with one-shot passes
    if stack.order(namespace, sc.order) is not None:
        stack.delete_order(namespace, sc.order)
        reconcile_until(lambda r: stack.order(namespace, sc.order) is None, timeout=180,
                        what="the order's teardown", namespaces=[namespace], kubeconfig=stack_env["KUBECONFIG"])
    stack.withdraw(namespace)
    core.delete_namespace(namespace)
    try:
        sc.coord.delete_namespaced_lease(sc.lease, LEASE_NS)
    except ApiException:
        pass


def test_an_order_goes_ready_without_a_manual_pass(scenario):
    a = scenario.controller("a")
    a.wait_leader()
    a.wait_log(r"full pass successful")
    scenario.stack.create_order(scenario.namespace, scenario.order)
    started = time.monotonic()
    wait_for(lambda: scenario.stack.condition(scenario.stack.order(scenario.namespace, scenario.order),
                                              "Ready").get("status") == "True",
             timeout=120, interval=0.5, what="the order to become Ready")
    print("order Ready %.1fs after creation" % (time.monotonic() - started))
    assert scenario.remember_passwords().get("password")
    assert "event ADDED KeystoneUser %s/%s" % (scenario.namespace, scenario.order) in a.log()


def _patch_password(scenario, value=b"edited"):
    scenario.core.patch_namespaced_secret(
        "%s-credentials" % scenario.order, scenario.namespace,
        {"data": {"password": base64.b64encode(value).decode()}})


def test_an_edited_password_is_repaired_by_an_event(scenario):
    a = scenario.controllers["a"]
    good = scenario.remember_passwords()["password"]
    mark = len(a.log())
    started = time.monotonic()
    _patch_password(scenario)
    wait_for(lambda: (scenario.stack.delivered(scenario.namespace, scenario.order) or {}).get("password") == good,
             timeout=60, interval=0.1, what="the delivered password to be repaired")
    print("edit-to-repair %.2fs" % (time.monotonic() - started))
    # the repair came from the Secret's watch event (a converged order's requeue is weeks away)
    a.wait_log(r"event MODIFIED Secret %s/%s-credentials" % (scenario.namespace, scenario.order), 5, after=mark)
    a.wait_log(r"targeted pass \(event\): %s/%s" % (scenario.namespace, scenario.order), 5, after=mark)


def test_a_deleted_secret_is_rewritten(scenario):
    a = scenario.controllers["a"]
    good = scenario.remember_passwords()["password"]
    mark = len(a.log())
    started = time.monotonic()
    scenario.core.delete_namespaced_secret("%s-credentials" % scenario.order, scenario.namespace)
    wait_for(lambda: (scenario.stack.delivered(scenario.namespace, scenario.order) or {}).get("password") == good,
             timeout=60, interval=0.1, what="the delivered Secret to be rewritten")
    print("delete-to-rewrite %.2fs" % (time.monotonic() - started))
    a.wait_log(r"event DELETED Secret %s/%s-credentials" % (scenario.namespace, scenario.order), 5, after=mark)


def test_a_raised_password_generation_rotates_the_password(scenario):
    old = scenario.remember_passwords()["password"]
    scenario.stack.patch_order(scenario.namespace, scenario.order, {"spec": {"passwordGeneration": 2}})

    def rotated():
        order = scenario.stack.order(scenario.namespace, scenario.order)
        delivered = scenario.remember_passwords()
        return ((order.get("status") or {}).get("passwordGeneration") == 2
                and delivered.get("password") not in (None, old)
                and scenario.stack.condition(order, "Ready").get("status") == "True")
    wait_for(rotated, timeout=120, interval=0.5, what="the password to rotate to generation 2")
    access = Stack.token_from_clouds_yaml(scenario.stack.delivered(scenario.namespace, scenario.order)["clouds.yaml"])
    assert access.user_id


def test_no_password_in_any_event_of_a_pass(scenario, tmp_path):
    """Every ansible-runner event of a pass over the order (the module's full result with its invocation, the
    summary task, the stats), as the controller's event handler receives them before choosing what to keep,
    holds none of the order's passwords."""
    import json

    import ansible_runner

    scenario.remember_passwords()
    events = []

    def keep(event):
        events.append(event)
        return False
    try:
        runner = ansible_runner.run(
            private_data_dir=str(tmp_path), playbook="c5c3.orders.reconcile", quiet=True, suppress_env_files=True,
            event_handler=keep, envvars={"ANSIBLE_COLLECTIONS_PATH": str(Path(__file__).resolve().parents[2] /
                                                                         ".collections"),
                                         "PATH": str(Path(sys.executable).parent) + ":" + os.environ["PATH"]},
            extravars={"c5c3_reconcile_orders": ["%s/%s" % (scenario.namespace, scenario.order)],
                       "c5c3_reconcile_kubeconfig": scenario.env["KUBECONFIG"]})
    finally:  # this run was not reduced to the allowlist: its command artifact holds the test's environment
        shutil.rmtree(tmp_path / "artifacts", ignore_errors=True)
    assert runner.status == "successful"
    results = [e for e in events if e.get("event") == "runner_on_ok"
               and (e.get("event_data") or {}).get("task_action", "").endswith("keystoneuser_reconcile")]
    assert results and results[0]["event_data"]["res"]["orders"][0]["name"] == scenario.order
    text = json.dumps(events)
    assert scenario.passwords and not any(p in text for p in scenario.passwords)


def test_a_lost_lease_stops_work_within_a_renew_period(scenario):
    """Another holder takes the Lease (written behind A's back): A's next renew fails its resourceVersion
    precondition, A steps down and reconciles nothing until the Lease is free again."""
    a = scenario.controllers["a"]
    lease = scenario.coord.read_namespaced_lease(scenario.lease, LEASE_NS)
    lease.spec.holder_identity = "intruder"
    lease.spec.lease_duration_seconds = 3600
    stolen = time.monotonic()
    scenario.coord.replace_namespaced_lease(scenario.lease, LEASE_NS, lease)
    wait_for(lambda: a.metric("c5c3_orders_controller_leader") == 0, timeout=10, interval=0.2,
             what="A to step down")
    print("stepped down %.1fs after the Lease was taken" % (time.monotonic() - stolen))
    assert time.monotonic() - stolen <= 5 + 2  # one renew period (+ the metrics poll)
    a.wait_log(r"lost lease", 1)
    passes = a.passes()
    good = scenario.remember_passwords()["password"]
    _patch_password(scenario, b"edited-while-standby")
    time.sleep(6)
    assert scenario.stack.delivered(scenario.namespace, scenario.order)["password"] == "edited-while-standby"
    assert a.passes() == passes
    # the intruder releases the Lease: A takes it at its next try and repairs the Secret
    lease = scenario.coord.read_namespaced_lease(scenario.lease, LEASE_NS)
    lease.spec.holder_identity = ""
    scenario.coord.replace_namespaced_lease(scenario.lease, LEASE_NS, lease)
    a.wait_leader(timeout=10)
    wait_for(lambda: scenario.stack.delivered(scenario.namespace, scenario.order)["password"] == good, timeout=60,
             interval=0.2, what="A to repair the password after regaining the Lease")


def test_a_second_replica_waits_and_takes_over_after_sigterm(scenario):
    a = scenario.controllers["a"]
    b = scenario.controller("b")
    time.sleep(8)  # more than a renew period and several standby retries
    assert scenario.lease_holder().startswith(a.log().split("started as ", 1)[1].split(";", 1)[0])
    # an event while B is standby: A repairs it, B does not reconcile at all
    good = scenario.remember_passwords()["password"]
    _patch_password(scenario, b"edited-again")
    wait_for(lambda: (scenario.stack.delivered(scenario.namespace, scenario.order) or {}).get("password") == good,
             timeout=60, interval=0.2, what="A to repair the password")
    assert b.metric("c5c3_orders_controller_leader") == 0
    assert b.passes() == 0, b.log()
    assert "pass" not in b.log().replace("waiting for the lease", ""), b.log()

    # SIGTERM A: it exits 0 and releases the lease; B takes over without waiting out the lease
    stopped = time.monotonic()
    assert a.terminate() == 0, a.log()[-3000:]
    assert "released lease" in a.log()
    b.wait_leader(timeout=15)
    print("takeover %.1fs after SIGTERM" % (time.monotonic() - stopped))
    b.wait_log(r"full pass successful", 30)
    # B now reconciles: an edit is repaired by B
    mark = len(b.log())
    _patch_password(scenario)
    wait_for(lambda: (scenario.stack.delivered(scenario.namespace, scenario.order) or {}).get("password") == good,
             timeout=60, interval=0.2, what="B to repair the password")
    b.wait_log(r"targeted pass \(event\): %s/%s" % (scenario.namespace, scenario.order), 5, after=mark)


def test_the_controller_tears_the_order_down(scenario):
    scenario.remember_passwords()
    scenario.stack.delete_order(scenario.namespace, scenario.order)
    wait_for(lambda: scenario.stack.order(scenario.namespace, scenario.order) is None, timeout=180, interval=1,
             what="the order's teardown by the controller")
    assert scenario.stack.children(scenario.namespace, scenario.order) == []


def test_sigterm_exits_cleanly_and_releases_the_lease(scenario):
    b = scenario.controllers["b"]
    assert scenario.lease_holder() not in ("", None)
    assert b.terminate() == 0, b.log()[-3000:]
    assert scenario.lease_holder() == ""
    assert "stopped" in b.log()


def test_without_leader_election_it_works_at_once_and_holds_no_lease(scenario):
    """``--no-leader-elect`` (one replica, Deployment strategy Recreate): it leads from its start, reconciles on
    events as the elected controller does, and never creates, reads or renews a Lease."""
    lease = unique("solo-lease")
    proc = ControllerProcess(scenario.workdir, "solo", lease, namespaces=[scenario.namespace],
                             kubeconfig=scenario.env["KUBECONFIG"],
                             extra_args=["--lease-namespace", LEASE_NS, "--debounce", "0.5", "--no-leader-elect"])
    scenario.controllers["solo"] = proc
    proc.start()
    proc.wait_leader(30)
    proc.wait_log(r"full pass successful", 120)
    name = "solo"
    scenario.stack.create_order(scenario.namespace, name)
    wait_for(lambda: scenario.stack.condition(scenario.stack.order(scenario.namespace, name), "Ready")
             .get("status") == "True", timeout=120, interval=0.5, what="the solo controller's order to be Ready")
    good = scenario.stack.delivered(scenario.namespace, name)["password"]
    scenario.passwords.add(good)
    scenario.core.patch_namespaced_secret(f"{name}-credentials", scenario.namespace,
                                          {"data": {"password": base64.b64encode(b"edited").decode()}})
    wait_for(lambda: (scenario.stack.delivered(scenario.namespace, name) or {}).get("password") == good,
             timeout=60, interval=0.2, what="the solo controller to repair the password")
    scenario.stack.delete_order(scenario.namespace, name)
    wait_for(lambda: scenario.stack.order(scenario.namespace, name) is None, timeout=180, interval=1,
             what="the solo controller's teardown")
    assert proc.metric('c5c3_orders_controller_api_requests_total{source="lease"}') in (None, 0)
    with pytest.raises(ApiException) as err:
        scenario.coord.read_namespaced_lease(lease, LEASE_NS)
    assert err.value.status == 404
    assert "holding no Lease" in proc.log()
    assert proc.terminate() == 0, proc.log()[-3000:]


def test_no_secret_in_anything_the_controllers_wrote(scenario):
    """The secrets grep: every file of both controllers (state dirs with the runner artifacts, logs) and
    their captured stdout/stderr, for every password the order held and the stack's OpenBao token (which
    was in the environment the controllers were started with)."""
    secrets = {p for p in scenario.passwords if p}
    assert len(secrets) >= 2, "expected the generation 1 and 2 passwords"
    needles = [s.encode() for s in secrets] + [base64.b64encode(s.encode()) for s in secrets]
    needles.append(scenario.env["BAO_TOKEN"].encode())
    files = [f for proc in scenario.controllers.values() for f in proc.files()]
    assert any("artifacts" in str(f) for f in files) and any(f.name == "command" for f in files)
    leaks = []
    for path in files:
        data = path.read_bytes()
        leaks += ["%s holds secret #%d" % (path, i) for i, needle in enumerate(needles) if needle in data]
    assert leaks == []
    # the runner artifacts stayed bounded by --rotate-artifacts (10)
    for proc in scenario.controllers.values():
        assert len(list((proc.state_dir / "runner" / "artifacts").iterdir())) <= 10
