"""The faults, each real and injected from outside the code under test.

- ``StopServers``: SIGKILL a server's process group through its PID file (etcd alone, Keystone, OpenBao,
  K-ORC, ESO, a whole target cluster) at an exact point of a pass (the pass pauses before a chosen write, see
  hook/sitecustomize.py), keep it down for a while, then start it again with the stack's own definition.
- ``Throttle``: API Priority and Fairness objects that give the pass identity a tiny, rejecting priority level,
  plus a load generator on the same identity, so the pass's requests meet real 429s.
- ``Intrude``: another field manager patches the object a preconditioned write is about to change (real 409).
- ``KillPass``: SIGKILL the pass process after the k-th write (or after the first write matching a pattern);
  gateway writes count and match too (``gw iam:CreateAccessKey``, see hook/sitecustomize.py).
- ``FreezeGateway``: SIGSTOP the Tentacle radosgw's process group right before a chosen write (its kernel still
  accepts connections, nothing answers, as a hung gateway), SIGCONT after a while, always (``finally``).
- ``KillGateway``: SIGKILL the radosgw right before a chosen write, start it again after a while through the
  stack's own definition (``c5c3faults.stackctl start rgw-gw``); its mon and OSD, so its data, keep running.

Every fault records when it was injected and lifted and what the passes met (HTTP outcomes from the hook log),
so the report can show the fault was real.
"""
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Callable, List, Optional

from .kubeapi import FLOWCONTROL, CORE, Kube
from .stackenv import FAULTS_DIR, StackHandle, stack_modules

stack_modules()
from c5c3stack.process import pid_alive  # noqa: E402  (the stack's own liveness test: zombies count as gone)

APF_NAME = "c5c3-faults-throttle"
# ConfigMaps whose list (about 11 MB) is larger than a socket's send buffer (4 MB at most on Linux): a handler
# writing it to a client that does not read blocks, and holds its APF seat
BALLAST_NS = "c5c3-faults-ballast"
BALLAST_COUNT, BALLAST_BYTES = 12, 900_000
LOAD_PATH = f"/api/v1/namespaces/{BALLAST_NS}/configmaps"


def kill_server(stack: StackHandle, name: str, timeout: float = 20) -> Optional[int]:
    """SIGKILL the process group of server ``name`` of ``stack`` and wait until it is gone; its PID or None."""
    if not stack.isolated:
        raise RuntimeError(f"refusing to stop {name} on a shared stack")
    try:
        pid = int(stack.pid_file(name).read_text().strip())
    except (OSError, ValueError):
        return None
    if not pid_alive(pid):
        return None
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid


def start_server(stack: StackHandle, name: str, log: Path) -> None:
    """Start server ``name`` again through the stack's own code (``c5c3faults.stackctl start``)."""
    env = stack.process_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FAULTS_DIR), env.get("PYTHONPATH")]))
    with open(log, "ab") as out:
        proc = subprocess.run([sys.executable, "-m", "c5c3faults.stackctl", "start", name], env=env, stdout=out,
                              stderr=subprocess.STDOUT, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"could not start {name} again (rc {proc.returncode}); see {log}")


def outcomes(requests: List[dict], since: float = 0.0) -> dict:
    """What the passes' requests ended with since ``since`` ({'ok': n, '504': n, 'transport': n, ...}), and the
    failed HTTP exchanges underneath, retried ones included ({'429': n, ...})."""
    recent = [r for r in requests if r["t"] >= since and not r.get("intruder")]
    waits = [float(r["retry_after"]) for r in recent if str(r.get("retry_after", "")).isdigit()]
    return {"requests": dict(Counter(r["outcome"] for r in recent if "outcome" in r)),
            "http": dict(Counter(r["http"] for r in recent if "http" in r)),
            "retry_after_max": max(waits) if waits else None}


class Fault:
    """Base: what every fault reports."""

    kind = "none"

    def __init__(self) -> None:
        self.injected_at: Optional[float] = None
        self.lifted_at: Optional[float] = None
        self.error: Optional[str] = None
        self.notes: List[str] = []

    def arm(self, world) -> None:
        """Before the phase's action: set the trap (or inject at once)."""

    def observe(self, world) -> None:
        """Between passes: notice from the hook log what happened (kills, intrusions)."""

    def settle(self, world) -> None:
        """Make sure the fault is lifted (also after an error)."""

    @property
    def lifted(self) -> bool:
        return self.lifted_at is not None

    def evidence(self, world) -> dict:
        return outcomes(world.driver.requests(), world.acted_at or 0.0)


class NoFault(Fault):
    """The baseline: the phase as it runs without a fault (also records the write sequence)."""

    def arm(self, world) -> None:
        self.injected_at = self.lifted_at = time.time()


class StopServers(Fault):
    """Stop ``servers`` when the pass is about to send a write matching ``before``; start them after ``hold`` s."""

    kind = "stop"

    def __init__(self, servers: List[str], before: str, hold: float = 5.0, start_as: Optional[List[str]] = None,
                 hold_until: Optional[Callable] = None, max_hold: float = 90.0):
        super().__init__()
        self.servers, self.before, self.hold = servers, before, hold
        self.start_as = start_as or servers
        self.hold_until, self.max_hold = hold_until, max_hold
        self.condition_met: Optional[bool] = None
        self._thread: Optional[threading.Thread] = None
        self._world = None

    def arm(self, world) -> None:
        self._world = world
        world.driver.arm("pause.json", {"before_match": self.before, "timeout": 600})
        self._thread = threading.Thread(target=self._run, name="stop-servers", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        world = self._world
        paused, resume = world.driver.hook_dir / "paused", world.driver.hook_dir / "resume"
        while not paused.exists():
            if world.finished.is_set():
                return
            time.sleep(0.05)
        try:
            for name in self.servers:
                if kill_server(world.stack, name) is None:
                    self.notes.append(f"{name} was not running")
            self.injected_at = time.time()
        except Exception as exc:  # noqa: BLE001 - reported on the row
            self.error = f"stopping {self.servers}: {exc}"
        finally:
            resume.touch()
            paused.unlink(missing_ok=True)
        time.sleep(self.hold)
        if self.hold_until is not None:  # keep it down until something is shown to work without it
            deadline = time.monotonic() + self.max_hold - self.hold
            while not self.hold_until(world) and time.monotonic() < deadline:
                time.sleep(0.5)
            self.condition_met = bool(self.hold_until(world))
        self._start_all()

    def _start_all(self) -> None:
        world = self._world
        try:
            for name in self.start_as:
                start_server(world.stack, name, world.workdir / "stackctl.log")
        except Exception as exc:  # noqa: BLE001 - reported on the row
            self.error = str(exc)
        self.lifted_at = time.time()

    def settle(self, world) -> None:
        world.driver.disarm("pause.json")
        if self._thread is not None:
            self._thread.join(timeout=self.max_hold + 300)
        if self.injected_at is not None and self.lifted_at is None:
            self._start_all()


class Throttle(Fault):
    """APF: a FlowSchema that sends the pass identity to a priority level of a few seats (1 share of ~250) and no
    queue (``limitResponse: Reject``), and ``hogs`` requests of the same identity that occupy those seats: each
    lists ballast ConfigMaps (11 MB) over a socket that reads only the status line, so the apiserver's handler
    blocks writing the response and keeps its seat. Every other request of the identity then meets a 429 at once."""

    kind = "apf"

    def __init__(self, hold: float = 8.0, hogs: int = 8):
        super().__init__()
        self.hold, self.hogs = hold, hogs
        self._stop = threading.Event()
        self._threads: List[threading.Thread] = []
        self.hog_outcomes: Counter = Counter()
        self._seat_held = threading.Event()
        self.plc_uid = ""

    def _objects(self):
        plc = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
               "metadata": {"name": APF_NAME},
               "spec": {"type": "Limited", "limited": {
                   "nominalConcurrencyShares": 1, "lendablePercent": 0, "borrowingLimitPercent": 0,
                   "limitResponse": {"type": "Reject"}}}}
        schema = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                  "metadata": {"name": APF_NAME},
                  "spec": {"priorityLevelConfiguration": {"name": APF_NAME}, "matchingPrecedence": 200,
                           "distinguisherMethod": {"type": "ByUser"},
                           "rules": [{"subjects": [{"kind": "User", "user": {"name": "c5c3-faults-pass"}}],
                                      "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                                         "namespaces": ["*"], "clusterScope": True}],
                                      "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}
        return plc, schema

    def _classified(self, kube: Kube) -> bool:
        """The pass identity's requests land in our priority level (the response header says which)."""
        try:
            kube.get(f"{CORE}/namespaces/default")
        except Exception:  # noqa: BLE001 - a rejection here is already the fault
            return True
        return kube.last_headers.get("x-kubernetes-pf-prioritylevel-uid") == self.plc_uid

    @staticmethod
    def _ballast(admin: Kube) -> None:
        if admin.get(f"{CORE}/namespaces/{BALLAST_NS}") is None:
            admin.create(f"{CORE}/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": BALLAST_NS}})
        have = {c["metadata"]["name"] for c in admin.items(LOAD_PATH)}
        for i in range(BALLAST_COUNT):
            if f"ballast-{i}" not in have:
                admin.create(LOAD_PATH, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"ballast-{i}"},
                                         "data": {"ballast": "x" * BALLAST_BYTES}})

    def arm(self, world) -> None:
        admin = world.kube[""]
        self._ballast(admin)
        plc, schema = self._objects()
        self.plc_uid = admin.apply(f"{FLOWCONTROL}/prioritylevelconfigurations/{APF_NAME}", plc)["metadata"]["uid"]
        admin.apply(f"{FLOWCONTROL}/flowschemas/{APF_NAME}", schema)
        probe = Kube(world.stack.pass_kubeconfig, timeout=5)
        deadline = time.monotonic() + 60
        while not self._classified(probe) and time.monotonic() < deadline:
            time.sleep(0.1)
        probe.close()
        for i in range(self.hogs):
            thread = threading.Thread(target=self._hog, args=(world,), name=f"apf-hog-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)
        if not self._seat_held.wait(30):
            self.error = "no request of the pass identity got hold of a seat"
        self.injected_at = time.time()
        threading.Thread(target=self._lift_later, args=(world,), daemon=True).start()

    def _hog(self, world) -> None:
        state = world.stack.state
        context = ssl.create_default_context(cafile=str(state / "kube" / "management" / "pki" / "ca.crt"))
        context.load_cert_chain(str(state / "faults" / "pass.crt"), str(state / "faults" / "pass.key"))
        port = int(world.stack.overrides["C5C3_PORT_APISERVER"])
        request = (f"GET {LOAD_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\n"
                   "User-Agent: c5c3-faults-apf-hog\r\n\r\n").encode()
        while not self._stop.is_set():
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            try:
                sock.connect(("127.0.0.1", port))
                tls = context.wrap_socket(sock, server_hostname="127.0.0.1")
                tls.sendall(request)
                status = tls.recv(64).split(b" ", 2)[1].decode()
            except (OSError, IndexError, ValueError):
                sock.close()
                self.hog_outcomes["transport"] += 1
                self._stop.wait(0.2)
                continue
            self.hog_outcomes[status] += 1
            if status == "200":
                self._seat_held.set()
                self._stop.wait()  # hold the seat: the rest of the response is never read
            tls.close()
            self._stop.wait(0.05)

    def _lift_later(self, world) -> None:
        self._stop.wait(self.hold)
        self.settle(world)

    def settle(self, world) -> None:
        if self.lifted_at is not None:
            return
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        admin = world.kube[""]
        for plural in ("flowschemas", "prioritylevelconfigurations"):
            try:
                admin.delete(f"{FLOWCONTROL}/{plural}/{APF_NAME}")
            except Exception as exc:  # noqa: BLE001 - reported on the row
                self.error = f"removing the APF objects: {exc}"
        self.lifted_at = time.time()

    def evidence(self, world) -> dict:
        found = super().evidence(world)
        found["seat_hogs"] = dict(self.hog_outcomes)
        return found


class Intrude(Fault):
    """Before each of the next ``times`` preconditioned writes, another field manager patches the object."""

    kind = "conflict"

    def __init__(self, times: int = 2):
        super().__init__()
        self.times = times

    def arm(self, world) -> None:
        world.driver.arm("intrude.json", {"remaining": self.times, "kubeconfig": world.stack.admin_kubeconfig})

    def _intrusions(self, world) -> List[dict]:
        return [r for r in world.driver.requests() if r.get("intruder") and r["t"] >= (world.acted_at or 0)]

    def observe(self, world) -> None:
        done = self._intrusions(world)
        if done and self.injected_at is None:
            self.injected_at = done[0]["t"]
        if len(done) >= self.times and self.lifted_at is None:
            self.lifted_at = done[-1]["t"]

    def settle(self, world) -> None:
        self.observe(world)
        world.driver.disarm("intrude.json")
        if self.injected_at is not None and self.lifted_at is None:
            self.lifted_at = self._intrusions(world)[-1]["t"]

    def evidence(self, world) -> dict:
        found = super().evidence(world)
        found["intrusions"] = len(self._intrusions(world))
        return found


class KillPass(Fault):
    """SIGKILL the pass process right after write number ``after_write`` (counted from the phase's action)
    or after the first write whose signature matches ``after_match``."""

    kind = "sigkill"

    def __init__(self, after_write: Optional[int] = None, after_match: Optional[str] = None, skip: int = 0):
        """``skip``: with ``after_match``, let that many matching writes pass first."""
        super().__init__()
        self.after_write, self.after_match, self.skip = after_write, after_match, skip
        self.killed_write: Optional[dict] = None

    def arm(self, world) -> None:
        spec = {"after_write": self.after_write} if self.after_write else {"after_match": self.after_match,
                                                                           "skip": self.skip}
        world.driver.arm("kill.json", spec)

    def observe(self, world) -> None:
        if self.injected_at is None:
            for entry in world.driver.requests():
                if entry.get("killed") and entry["t"] >= (world.acted_at or 0):
                    self.injected_at = self.lifted_at = entry["t"]
                    self.killed_write = entry

    def settle(self, world) -> None:
        self.observe(world)
        world.driver.disarm("kill.json")

    def evidence(self, world) -> dict:
        found = super().evidence(world)
        if self.killed_write:
            found["killed_after"] = world.describe_write(self.killed_write)
        found["killed_passes"] = sum(1 for r in world.driver.records if r.killed)
        return found


GATEWAY = "rgw-gw"  # the Tentacle radosgw's PID file (stack/c5c3stack/rgw.py)


class GatewayFault(Fault):
    """Pause the pass before the first write matching ``before``, strike the gateway, let the write go out into
    the fault, lift it after ``hold`` seconds. Subclasses say how to strike and how to lift."""

    kind = "gateway"

    def __init__(self, before: Optional[str] = None, hold: float = 12.0, before_write: int = 0):
        super().__init__()
        self.before, self.hold, self.before_write = before, hold, before_write
        self._thread: Optional[threading.Thread] = None
        self._world = None
        self._lock = threading.Lock()
        self.pid: Optional[int] = None

    def arm(self, world) -> None:
        if not world.stack.isolated:
            raise RuntimeError("refusing to strike the gateway of a shared stack")
        self._world = world
        where = {"before_write": self.before_write} if self.before_write else {"before_match": self.before}
        world.driver.arm("pause.json", dict(where, timeout=600))
        self._thread = threading.Thread(target=self._run, name=f"{self.kind}-gateway", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        world = self._world
        paused, resume = world.driver.hook_dir / "paused", world.driver.hook_dir / "resume"
        while not paused.exists():
            if world.finished.is_set():
                return
            time.sleep(0.05)
        try:
            self.strike(world)
            self.injected_at = time.time()
        except Exception as exc:  # noqa: BLE001 - reported on the row
            self.error = f"striking the gateway: {exc}"
        finally:
            resume.touch()
            paused.unlink(missing_ok=True)
        if not world.finished.wait(self.hold):
            self._lift()

    def _lift(self) -> None:
        with self._lock:
            if self.injected_at is None or self.lifted_at is not None:
                return
            try:
                self.lift(self._world)
            except Exception as exc:  # noqa: BLE001 - reported on the row
                self.error = f"lifting the gateway fault: {exc}"
            self.lifted_at = time.time()

    def strike(self, world) -> None:
        raise NotImplementedError

    def lift(self, world) -> None:
        raise NotImplementedError

    def settle(self, world) -> None:
        world.driver.disarm("pause.json")
        if self._thread is not None:
            self._thread.join(timeout=self.hold + 300)
        self._lift()

    def evidence(self, world) -> dict:
        found = super().evidence(world)
        gateway = [r for r in world.driver.requests() if r.get("cluster") == "gw" and r["t"] >= (world.acted_at or 0)]
        found["gateway_requests"] = dict(Counter(r.get("outcome", "?") for r in gateway if "outcome" in r))
        return found


class FreezeGateway(GatewayFault):
    """SIGSTOP the radosgw's process group; SIGCONT when lifted, and in every case before the row ends."""

    kind = "freeze"

    def strike(self, world) -> None:
        self.pid = int(world.stack.pid_file(GATEWAY).read_text().strip())
        os.killpg(self.pid, signal.SIGSTOP)

    def lift(self, world) -> None:
        os.killpg(self.pid, signal.SIGCONT)

    def settle(self, world) -> None:
        try:
            super().settle(world)
        finally:
            if self.pid is not None and pid_alive(self.pid):
                os.killpg(self.pid, signal.SIGCONT)  # always: a stopped gateway must never outlive its row


class KillGateway(GatewayFault):
    """SIGKILL the radosgw; started again through the stack's own code when lifted."""

    kind = "kill"

    def strike(self, world) -> None:
        self.pid = kill_server(world.stack, GATEWAY)
        if self.pid is None:
            raise RuntimeError("the gateway was not running")

    def lift(self, world) -> None:
        start_server(world.stack, GATEWAY, world.workdir / "stackctl.log")
