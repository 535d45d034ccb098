"""Runs reconcile passes the way the role runs them: the real module ``keystoneuser_reconcile`` (or
``objectstorage_reconcile`` for the gateway rows), one process per pass, here with the fault hooks of ``tests/faults/hook`` on its PYTHONPATH.

The driver plays the scheduler (a CronJob, the controller): it starts the next pass after the earliest
requeue the last one asked for, at most 2 s later (the controller would also wake on the watch events of
K-ORC's and ESO's writes), and never judges a pass by its exit: a killed or failed pass is recorded and the
next one runs. Each pass's stdout and stderr are kept for the secrets scan.
"""
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

from .stackenv import COLLECTIONS, HOOK_DIR, REPO, StackHandle

MODULE = REPO / "plugins" / "modules" / "keystoneuser_reconcile.py"
OBJECTSTORAGE_MODULE = REPO / "plugins" / "modules" / "objectstorage_reconcile.py"
MAX_PACE = 2.0


@dataclass
class PassRecord:
    n: int
    started: float
    ended: float
    rc: int
    killed: bool
    failed: bool
    msg: str = ""
    orders: List[dict] = field(default_factory=list)
    requeue_after: Optional[float] = None
    crash: str = ""  # the exception type when the module died with a traceback

    def summary(self, namespace: str, name: str, cluster: str = "") -> Optional[dict]:
        for entry in self.orders:
            if (entry.get("namespace"), entry.get("name"), entry.get("cluster")) == (namespace, name, cluster):
                return entry
        return None


def _crash_kind(stderr: Path) -> str:
    """The exception type on a traceback's last line (never its message, which might quote a value)."""
    lines = stderr.read_text(errors="replace").strip().splitlines() if stderr.exists() else []
    match = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b", lines[-1]) if lines else None
    return match.group(1) if match else ""


class PassDriver:
    def __init__(self, stack: StackHandle, workdir: Path, namespaces: List[str],
                 targets: Optional[Dict[str, str]] = None, module: Path = MODULE, extra_args: Optional[dict] = None):
        """``module``: the reconcile module a pass runs (``objectstorage_reconcile`` for the gateway rows), with
        ``extra_args`` beside the kubeconfig and namespaces."""
        self.module = module
        self.extra_args = dict(extra_args or {})
        self.stack = stack
        self.workdir = workdir
        self.hook_dir = workdir / "hook"
        self.out_dir = workdir / "passes"
        self.hook_dir.mkdir(parents=True, exist_ok=True)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.namespaces = list(namespaces)
        self.targets = dict(targets or {})
        self.records: List[PassRecord] = []

    # the hook's control files ---------------------------------------------------------------------
    def arm(self, name: str, spec: dict) -> None:
        tmp = self.hook_dir / (name + ".tmp")
        tmp.write_text(json.dumps(spec))
        os.replace(tmp, self.hook_dir / name)

    def disarm(self, name: str) -> None:
        (self.hook_dir / name).unlink(missing_ok=True)

    def requests(self) -> List[dict]:
        """Every request the passes of this driver made so far (see hook/sitecustomize.py)."""
        path = self.hook_dir / "requests.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def reset_write_count(self) -> None:
        """Write indexes count from here (the phase's action), not from the preparation's passes."""
        (self.hook_dir / "writes.count").write_text("0")

    def write_count(self) -> int:
        try:
            return int((self.hook_dir / "writes.count").read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    # passes ------------------------------------------------------------------------------------------
    def _args(self) -> dict:
        args = {"kubeconfig": self.stack.pass_kubeconfig, "namespaces": self.namespaces, **self.extra_args}
        internal = self.stack.env.get("C5C3_KEYSTONE_INTERNAL_URLS")
        if internal and self.module == MODULE:  # what the role passes from the same variable: the stack's Keystone listens on loopback
            args["keystone_internal_urls"] = json.loads(internal)
        if self.targets:
            args["target_clusters"] = [{"name": n, "kubeconfig": k} for n, k in sorted(self.targets.items())]
        return args

    def run_pass(self, timeout: float = 300) -> PassRecord:
        n = len(self.records) + 1
        args_file = self.out_dir / f"{n:03d}.args.json"
        args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": self._args()}))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HOOK_DIR), str(COLLECTIONS)]),
                   C5C3_FAULTS_HOOK_DIR=str(self.hook_dir), C5C3_FAULTS_PASS_ID=str(n))
        started = time.time()
        with open(self.out_dir / f"{n:03d}.out", "wb") as out, open(self.out_dir / f"{n:03d}.err", "wb") as err:
            try:
                proc = subprocess.run([sys.executable, str(self.module), str(args_file)], stdout=out, stderr=err, env=env,
                                      timeout=timeout, check=False)
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                rc = -999
        record = PassRecord(n, started, time.time(), rc, killed=rc == -9, failed=True)
        try:
            result = json.loads((self.out_dir / f"{n:03d}.out").read_text() or "null")
        except ValueError:
            result = None
        if isinstance(result, dict):
            record.failed = bool(result.get("failed"))
            record.msg = str(result.get("msg") or "")[:500]
            record.orders = [{k: v for k, v in o.items() if k != "actions"} | {"actions": len(o.get("actions") or [])}
                             for o in result.get("orders") or []]
            record.requeue_after = result.get("requeue_after")
        elif rc == -999:
            record.msg = f"pass timed out after {timeout:.0f}s"
        elif not record.killed:
            record.crash = _crash_kind(self.out_dir / f"{n:03d}.err")
            record.msg = f"no JSON result (rc {rc})" + (f", crashed: {record.crash}" if record.crash else "")
        self.records.append(record)
        return record

    def pace(self, record: PassRecord) -> None:
        wait = record.requeue_after if record.requeue_after else 1.0
        time.sleep(max(0.2, min(MAX_PACE, wait)))

    def drive(self, done: Callable[[], bool], timeout: float, between: Optional[Callable[[], None]] = None) -> bool:
        """Passes until ``done()`` (checked after each pass); False after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            record = self.run_pass()
            if done():
                return True
            if between is not None:
                between()
            self.pace(record)
        return done()
