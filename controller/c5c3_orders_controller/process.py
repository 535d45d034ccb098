"""Running the controller as a child process: used by the integration tests, ``controller/measure.py`` and
``make demo``. Not needed to run the controller itself."""
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Dict, Iterable, Optional

from .metrics import parse

CONTROLLER_DIR = Path(__file__).resolve().parents[1]
REPO = CONTROLLER_DIR.parent


class ControllerProcess:
    """``python -m c5c3_orders_controller`` with its own state dir, lease and metrics port (picked by the
    controller: ``--metrics-port 0``), stdout and stderr captured to files in ``workdir``."""

    def __init__(self, workdir: Path, name: str, lease_name: str, namespaces: Iterable[str] = (),
                 kubeconfig: Optional[str] = None, extra_args: Iterable[str] = (), env: Optional[Dict] = None,
                 python: str = sys.executable):
        self.workdir = Path(workdir)
        self.name = name
        self.state_dir = self.workdir / ("state-" + name)
        self.stdout_path = self.workdir / (name + ".stdout")
        self.stderr_path = self.workdir / (name + ".stderr")
        self.log_path = self.state_dir / "controller.log"
        args = [python, "-m", "c5c3_orders_controller", "--state-dir", str(self.state_dir), "--metrics-port", "0",
                "--lease-name", lease_name, "--log-file", str(self.log_path)]
        if kubeconfig:
            args += ["--kubeconfig", kubeconfig]
        for ns in namespaces:
            args += ["--namespace", ns]
        self.args = args + list(extra_args)
        self.env = dict(env if env is not None else os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CONTROLLER_DIR), self.env.get("PYTHONPATH")]))
        self.env.setdefault("ANSIBLE_COLLECTIONS_PATH", str(REPO / ".collections"))
        self.proc: Optional[subprocess.Popen] = None
        self.port: Optional[int] = None

    def start(self, timeout: float = 30.0) -> "ControllerProcess":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._out = open(self.stdout_path, "wb")
        self._err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(self.args, stdout=self._out, stderr=self._err, env=self.env,
                                     cwd=str(self.workdir))
        try:
            match = self.wait_log(r"metrics on http://[0-9.]+:(\d+)/metrics", timeout)
        except BaseException:
            self.terminate()
            raise
        self.port = int(match.group(1))
        return self

    # observing -----------------------------------------------------------------------------------
    def log(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    def wait_log(self, pattern: str, timeout: float = 60.0, after: int = 0):
        """The first match of ``pattern`` in the log after character offset ``after``."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while time.monotonic() < deadline:
            match = regex.search(self.log(), after)
            if match:
                return match
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError("controller %s exited (rc %s) while waiting for %r:\n%s"
                                     % (self.name, self.proc.returncode, pattern, self.log()[-3000:]))
            time.sleep(0.1)
        raise AssertionError("controller %s: no %r within %ss:\n%s" % (self.name, pattern, timeout, self.log()[-3000:]))

    def metrics(self) -> Dict[str, float]:
        if self.port is None:
            raise AssertionError("controller %s: its metrics port is not known yet" % self.name)
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.port, timeout=5) as resp:
            return parse(resp.read().decode("utf-8"))

    def metric(self, key: str, default: float = 0.0) -> float:
        return self.metrics().get(key, default)

    def passes(self) -> float:
        values = self.metrics()
        return sum(v for k, v in values.items() if k.startswith("c5c3_orders_controller_passes_total"))

    def wait_leader(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.metric("c5c3_orders_controller_leader") == 1:
                return
            time.sleep(0.2)
        raise AssertionError("controller %s did not become leader within %ss:\n%s"
                             % (self.name, timeout, self.log()[-3000:]))

    # stopping ------------------------------------------------------------------------------------
    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM and wait; returns the exit code."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        self._err.close()
        return self.proc.returncode

    def files(self):
        """Every file the controller wrote: its state dir (runner artifacts, log) and its captured output."""
        out = [self.stdout_path, self.stderr_path]
        if self.state_dir.exists():
            out += [p for p in self.state_dir.rglob("*") if p.is_file()]
        return out
