"""The one row with the real long-running controller (``controller/``): it is SIGKILLed with everything below it
(ansible-playbook, the module) while it provisions an order, as a node failure or an OOM kill of its Pod would,
and a new replica on the same Lease takes over.

No pass driver here: the controller schedules its own passes. The new replica has to wait for the dead
holder's Lease to expire (15 s) before it may work, which is part of the measured time to converge.
"""
import os
import signal
import sys
import time
from pathlib import Path
from typing import Dict, List

from .probe import condition
from .rows import RowOutcome, finish_row
from .stackenv import REPO, StackHandle
from .world import World, unique

sys.path.insert(0, str(REPO / "controller"))
from c5c3_orders_controller.process import ControllerProcess  # noqa: E402

FINALIZER = "c5c3.io/keystoneuser-teardown"


def descendants(root: int) -> List[int]:
    children: Dict[int, List[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            found.append(child)
            todo.append(child)
    return found


def _signal_all(pids: List[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def kill_tree(root: int) -> int:
    """SIGSTOP the process and everything below it (so nothing forks or exits meanwhile), then SIGKILL all."""
    _signal_all([root] + descendants(root), signal.SIGSTOP)
    tree = [root] + descendants(root)
    _signal_all(tree, signal.SIGKILL)
    return len(tree)


def _wait(check, timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval)
    return bool(check())


def run_controller_row(stack: StackHandle, workdir: Path) -> RowOutcome:
    world = World(stack, workdir)
    lease = unique("faults-controller")
    result = {"id": "controller/provision", "fault": "the long-running controller SIGKILLed (with its passes)",
              "phase": "provision", "cluster": "management", "applicable": "",
              "detail": "while a pass of the first provision runs; a new replica on the same Lease takes over"}
    replicas: List[ControllerProcess] = []
    started = time.time()
    key = world.key

    def replica(name: str) -> ControllerProcess:
        env = dict(os.environ, C5C3_KEYSTONE_INTERNAL_URLS=stack.env.get("C5C3_KEYSTONE_INTERNAL_URLS", "{}"))
        proc = ControllerProcess(workdir, name, lease, namespaces=[world.namespace], kubeconfig=stack.pass_kubeconfig,
                                 extra_args=["--lease-namespace", "default", "--debounce", "1"], env=env)
        replicas.append(proc)
        return proc.start()

    def mid_work(proc: ControllerProcess) -> bool:
        order = world.kube[""].get(world.order_path(key)) or {}
        has_finalizer = FINALIZER in (order.get("metadata") or {}).get("finalizers", [])
        return has_finalizer and condition(order, "Ready").get("status") != "True" and bool(descendants(proc.proc.pid))

    try:
        world.setup()
        first = replica("a")
        first.wait_leader(60)
        first.wait_log(r"full pass successful", 120)
        world.acted_at = time.time()
        world.create_order(key)
        if not _wait(lambda: mid_work(first), 120, 0.05):
            raise RuntimeError("the controller never was mid-work on the order")
        result["killed_processes"] = kill_tree(first.proc.pid)
        killed_at = time.time()
        first.terminate()
        second = replica("b")
        ready = _wait(lambda: world.settled(key, 1), 300, 0.5)
        result.update(injected=True, converged=ready,
                      time_to_converge_s=round(time.time() - killed_at, 1) if ready else None,
                      evidence={"killed_processes": result["killed_processes"], "lease": lease})
        world.delete_order(key)
        result["cleaned_up"] = _wait(lambda: world.torn_down(key), 240, 0.5)
        second.terminate()
    except Exception as exc:  # noqa: BLE001 - reported on the row
        result.setdefault("injected", False)
        result.setdefault("converged", False)
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        for proc in replicas:
            proc.terminate()
    if not result.get("cleaned_up"):
        result["cleaned_up"] = world.teardown_all()
    return finish_row(world, result, workdir, started)
