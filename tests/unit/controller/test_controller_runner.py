"""The pass runner's pure parts: environment allowlist, result extraction, what reaches disk."""
import os
from types import SimpleNamespace

import pytest

from c5c3_orders_controller import runner as R


def test_the_environment_keeps_only_the_allowlist():
    env = {"PATH": "/bin", "HOME": "/root", "KUBECONFIG": "/k", "LC_ALL": "C", "ANSIBLE_COLLECTIONS_PATH": "/c",
           "BAO_TOKEN": "s3cr3t", "VAULT_TOKEN": "s3cr3t", "OS_PASSWORD": "s3cr3t", "K8S_AUTH_API_KEY": "s3cr3t",
           "K8S_AUTH_PASSWORD": "s3cr3t", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "ANSIBLE_VAULT_PASSWORD_FILE": "/p",
           "ANSIBLE_GALAXY_SERVER_X_TOKEN": "s3cr3t", "ANSIBLE_HOME": "/h", "PYTHONDONTWRITEBYTECODE": "1",
           "C5C3_TARGET_KUBECONFIG_DIR": "/t", "POD_NAMESPACE": "ns",
           "C5C3_KEYSTONE_INTERNAL_URLS": '{"openstack/cp": "http://127.0.0.1:15000/v3"}',
           "C5C3_TENANT_NAMESPACE_SELECTOR": '{"c5c3.io/tenant": "true"}'}
    allowed = R.allowed_environment(env)
    assert set(allowed) == {"PATH", "HOME", "KUBECONFIG", "LC_ALL", "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_HOME",
                            "PYTHONDONTWRITEBYTECODE", "C5C3_TARGET_KUBECONFIG_DIR", "POD_NAMESPACE",
                            "C5C3_KEYSTONE_INTERNAL_URLS", "C5C3_TENANT_NAMESPACE_SELECTOR"}
    assert "s3cr3t" not in repr(allowed)


def test_every_pass_uses_this_python_and_temp_under_the_state_dir(tmp_path):
    env = R.pass_environment(tmp_path, {"PATH": "/usr/bin"}, python="/venv/bin/python")
    assert env["PATH"] == "/venv/bin:/usr/bin"
    assert env["TMPDIR"] == env["ANSIBLE_LOCAL_TEMP"] == str(tmp_path / "tmp")
    assert env["ANSIBLE_PYTHON_INTERPRETER"] == "/venv/bin/python"


MODULE_RES = {
    "changed": True, "errors": 0, "api_requests": 11, "api_writes": 2, "requeue_after": 5.0, "duration": 0.25,
    "orders": [{"name": "a", "namespace": "t", "cluster": "", "ready": False, "reasons": {"Ready": "Progressing"},
                "changed": True, "actions": ["create Secret x"], "status_written": True, "requeue_after": 5.0,
                "unexpected": "dropped"}],
    "invocation": {"module_args": {"kubeconfig": "/k"}},
}


def fake_run(events, status="successful", rc=0):
    calls = {}

    def run(**kwargs):
        calls.update(kwargs)
        kept = [ev for ev in events if kwargs["event_handler"](ev)]
        calls["kept"] = kept
        return SimpleNamespace(status=status, rc=rc)
    return run, calls


def event(name, action="", res=None, **data):
    data = dict(data, task_action=action)
    if res is not None:
        data["res"] = res
    return {"event": name, "uuid": "u", "counter": 1, "event_data": data}


def test_the_module_result_is_read_from_its_runner_on_ok_event_and_nothing_else_reaches_disk(tmp_path, monkeypatch):
    events = [
        event("playbook_on_start"),
        event("runner_on_ok", "ansible.builtin.validate_argument_spec", res={"changed": False}),
        event("runner_on_ok", "c5c3.orders.keystoneuser_reconcile", res=MODULE_RES,
              end="2026-01-01T00:00:10.000000+00:00"),
        event("runner_on_ok", "ansible.builtin.debug", res={"msg": "orders=1"}),
        event("playbook_on_stats", ok={"localhost": 3}),
    ]
    run, calls = fake_run(events)
    monkeypatch.setattr(R.ansible_runner, "run", run)
    runner = R.PassRunner(tmp_path, kubeconfig="/k", namespaces=["t"])
    result = runner.run("targeted", {"t/a"}, cancel=lambda: False)
    assert result.ok and result.result == "success"
    assert result.module["orders"][0]["name"] == "a" and "unexpected" not in result.module["orders"][0]
    assert "invocation" not in result.module
    assert result.clock_base() == pytest.approx(1767225610.0 - 0.25)
    assert [e["event"] for e in calls["kept"]] == ["playbook_on_stats"]
    assert calls["extravars"]["c5c3_reconcile_orders"] == ["t/a"]
    assert calls["extravars"]["c5c3_reconcile_namespaces"] == ["t"]
    assert calls["suppress_env_files"] and calls["quiet"] and calls["rotate_artifacts"] == 10
    assert calls["playbook"] == "c5c3.orders.reconcile"
    # ansible-runner would drop a module result longer than 700,000 characters (a pass over ~5,000 orders)
    assert int(calls["envvars"]["MAX_EVENT_RES"]) >= 1 << 30
    assert (tmp_path / "runner" / "inventory" / "hosts").read_text().startswith("localhost ansible_connection=local")
    assert "orders=1 ready=0 changed=1" in result.summary()


def test_a_failed_task_is_a_failed_pass_and_its_event_is_kept(tmp_path, monkeypatch):
    events = [event("runner_on_failed", "c5c3.orders.keystoneuser_reconcile",
                    res={"failed": True, "msg": "cannot load the cluster configuration"}),
              event("playbook_on_stats")]
    run, calls = fake_run(events, status="failed", rc=2)
    monkeypatch.setattr(R.ansible_runner, "run", run)
    result = R.PassRunner(tmp_path).run("full", None, cancel=lambda: False)
    assert not result.ok and result.result == "failed"
    assert "cannot load" in result.failure
    assert [e["event"] for e in calls["kept"]] == ["runner_on_failed", "playbook_on_stats"]
    assert calls["extravars"]["c5c3_reconcile_orders"] == []


def test_a_cancelled_pass_and_a_runner_crash(tmp_path, monkeypatch):
    run, _ = fake_run([], status="canceled", rc=254)
    monkeypatch.setattr(R.ansible_runner, "run", run)
    assert R.PassRunner(tmp_path).run("full", None, cancel=lambda: True).result == "canceled"

    def boom(**_):
        raise RuntimeError("boom")
    monkeypatch.setattr(R.ansible_runner, "run", boom)
    result = R.PassRunner(tmp_path).run("full", None, cancel=lambda: False)
    assert result.result == "failed" and "RuntimeError" in result.failure


OS_RES = {
    "changed": False, "errors": 0, "api_requests": 7, "api_writes": 0, "requeue_after": 300.0, "duration": 0.5,
    "gateway_requests": 3,
    "orders": [{"kind": "ObjectStore", "name": "rgw", "namespace": "openstack", "cluster": "", "ready": True,
                "reasons": {}, "changed": False, "actions": [], "status_written": False, "requeue_after": 300.0},
               {"kind": "BucketCredential", "name": "x", "namespace": "t", "cluster": "", "ready": True,
                "reasons": {"Ready": "AllReady"}, "changed": False, "actions": [], "status_written": False,
                "requeue_after": None}]}


def test_a_batch_runs_the_pass_modules_its_keys_need_and_merges_their_results(tmp_path, monkeypatch):
    events = [
        event("playbook_on_start", created="2026-01-01T00:00:01+00:00"),
        event("runner_on_ok", "c5c3.orders.keystoneuser_reconcile", res=MODULE_RES,
              start="2026-01-01T00:00:02.000000+00:00", end="2026-01-01T00:00:03.000000+00:00"),
        event("runner_on_ok", "c5c3.orders.objectstorage_reconcile", res=OS_RES,
              start="2026-01-01T00:00:03.500000+00:00", end="2026-01-01T00:00:05.000000+00:00"),
        event("playbook_on_stats"),
    ]
    for ev in events:  # ansible-runner puts "created" at the top of every event
        ev["created"] = ev["event_data"].pop("created", "2026-01-01T00:00:06+00:00")
    run, calls = fake_run(events)
    monkeypatch.setattr(R.ansible_runner, "run", run)
    runner = R.PassRunner(tmp_path)
    result = runner.run("targeted", {"t/a", "BucketCredential:t/x", "ObjectStore:openstack/rgw"}, cancel=lambda: False,
                        snapshot_file="/state/tmp/snap.json")
    extra = calls["extravars"]
    assert extra["c5c3_reconcile_kinds"] == ["keystoneuser", "objectstorage"]
    assert extra["c5c3_reconcile_orders"] == ["t/a"]
    assert extra["c5c3_reconcile_objectstorage_orders"] == ["openstack/rgw", "t/x"]
    assert extra["c5c3_reconcile_snapshot_file"] == "/state/tmp/snap.json"
    assert result.ok
    merged = result.module
    assert [(o["module"], o.get("kind", "KeystoneUser"), o["name"]) for o in merged["orders"]] == [
        ("keystoneuser", "KeystoneUser", "a"), ("objectstorage", "ObjectStore", "rgw"),
        ("objectstorage", "BucketCredential", "x")]
    assert merged["api_requests"] == 18 and merged["requeue_after"] == 5.0 and merged["gateway_requests"] == 3
    assert result.clock_base("objectstorage") == pytest.approx(1767225605.0 - 0.5)
    assert result.clock_base("keystoneuser") == pytest.approx(1767225603.0 - 0.25)
    phases = result.phases()
    assert phases["before"] == pytest.approx(1.0) and phases["modules"] == pytest.approx(2.5)
    assert phases["pass"] == pytest.approx(0.75) and phases["after"] == pytest.approx(1.0)


def test_only_the_passes_a_batch_needs_run_and_a_missing_result_fails_the_pass(tmp_path, monkeypatch):
    run, calls = fake_run([event("runner_on_ok", "c5c3.orders.keystoneuser_reconcile", res=MODULE_RES)])
    monkeypatch.setattr(R.ansible_runner, "run", run)
    result = R.PassRunner(tmp_path).run("targeted", {"BucketCredential:t/x"}, cancel=lambda: False)
    assert calls["extravars"]["c5c3_reconcile_kinds"] == ["objectstorage"]
    assert calls["extravars"]["c5c3_reconcile_orders"] == []  # an empty list would mean every KeystoneUser
    assert not result.ok  # the object-storage module never answered
    full = R.PassRunner(tmp_path, passes=["keystoneuser"]).extravars(None)
    assert full["c5c3_reconcile_kinds"] == ["keystoneuser"] and "c5c3_reconcile_snapshot_file" not in full


def test_descendants_finds_grandchildren_in_other_sessions():
    import subprocess
    import sys
    import time
    # a child that starts its own session (as ansible-core's workers do) with a grandchild below it
    code = "import os, subprocess, time; os.setsid(); subprocess.Popen(['sleep', '30']); time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(R.descendants(os.getpid())) < 2:
            time.sleep(0.05)
        found = R.descendants(os.getpid())
        assert child.pid in found and len(found) >= 2
    finally:
        for pid in R.descendants(child.pid) + [child.pid]:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        child.wait()


def test_a_401_reloads_the_configuration_once_and_retries():
    from kubernetes import client as k8s_client

    from c5c3_orders_controller.kube import ApiError, Kube

    reloads = []
    kube = Kube(k8s_client.Configuration(), reload=lambda: reloads.append(1) or k8s_client.Configuration())
    answers = [ApiError("GET", "/x", 401, "Unauthorized"), "ok"]

    def once(*_args):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer
    kube._call_once = once
    assert kube._call("GET", "/x") == "ok" and reloads == [1]
    kube._call_once = lambda *_: (_ for _ in ()).throw(ApiError("GET", "/x", 401, "Unauthorized"))
    with pytest.raises(ApiError):
        kube._call("GET", "/x")
    assert reloads == [1, 1]


def test_a_cancelled_pass_leaves_no_process_behind(tmp_path):
    """ansible-core 2.19 starts each worker in its own session: killing ansible-playbook's process group alone
    would leave the running module (here: a command task) alive. The runner kills the whole tree."""
    import subprocess
    import time

    marker = "sleep 47.%d" % os.getpid()
    playbook = tmp_path / "sleep.yml"
    playbook.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
                        "    - ansible.builtin.command: %s\n" % marker)
    runner = R.PassRunner(tmp_path / "state", playbook=str(playbook))
    started = time.monotonic()

    def cancel():
        return time.monotonic() - started > 4 and bool(subprocess.run(["pgrep", "-f", marker],
                                                                      capture_output=True).stdout)
    result = runner.run("full", None, cancel=cancel)
    took = time.monotonic() - started
    time.sleep(0.3)
    assert result.result == "canceled"
    assert subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout == b""
    assert took < 20


def test_a_state_dir_owned_by_root_closes_what_the_runner_made_in_it(tmp_path, monkeypatch):
    """A Pod's emptyDir (mounted with fsGroup) belongs to root, and only its owner may chmod it: found in-cluster
    (tests/integration/test_incluster.py), where the controller stopped at start with EPERM. The runner then closes
    the dirs it made in it; a state dir of its own that it cannot chmod is still an error."""
    real_chmod = os.chmod
    state = tmp_path / "state"
    state.mkdir()

    def chmod(path, mode):
        if str(path) == str(state):
            raise PermissionError(1, "Operation not permitted", str(path))
        real_chmod(path, mode)

    monkeypatch.setattr(R.os, "chmod", chmod)
    monkeypatch.setattr(R.os, "geteuid", lambda: os.stat(state).st_uid + 1)  # not the owner
    runner = R.PassRunner(state)
    assert (runner.private_dir.stat().st_mode & 0o777) == 0o700
    assert ((state / "tmp").stat().st_mode & 0o777) == 0o700
    lane = runner.for_pass("objectstorage")
    assert (lane.private_dir.stat().st_mode & 0o777) == 0o700

    monkeypatch.setattr(R.os, "geteuid", lambda: os.stat(state).st_uid)  # the owner: a real failure
    with pytest.raises(PermissionError):
        R.PassRunner(state)
