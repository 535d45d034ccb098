"""Start, reuse and stop one server process of the stack.

Each server runs in its own session (process group) with its PID in ``<state>/pids/<name>.pid`` and its
output in ``<state>/logs/<name>.log``. ``ensure`` reuses a live, healthy process, so bringing the stack up
twice is cheap; ``stop`` kills the whole group, so nothing is left behind.
"""
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from .config import StackConfig


class StackError(RuntimeError):
    """A part of the stack could not be built, started or reached."""


def http_ok(url: str, timeout: float = 2.0, headers: Optional[Mapping[str, str]] = None,
            cafile: Optional[str] = None, cert: Optional[tuple] = None) -> bool:
    """True when ``url`` answers 2xx within ``timeout`` (never hangs: every call is bounded)."""
    ctx = None
    if url.startswith("https"):
        ctx = ssl.create_default_context(cafile=cafile) if cafile else ssl._create_unverified_context()
        if cert:
            ctx.load_cert_chain(*cert)
    req = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:
            return 200 <= resp.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def tcp_ok(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether something accepts a TCP connection on ``host:port`` (a readiness check for a plain listener)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_until(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.2,
               alive: Optional[Callable[[], bool]] = None, log: Optional[Path] = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if alive is not None and not alive():
            raise StackError(f"{what}: the process exited; last log lines:\n{tail(log)}")
        time.sleep(interval)
    raise StackError(f"{what}: not ready after {timeout:.0f}s; last log lines:\n{tail(log)}")


def tail(path: Optional[Path], lines: int = 25) -> str:
    if path is None or not path.exists():
        return "(no log)"
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - 8192))
        return "\n".join(fh.read().decode("utf-8", "replace").splitlines()[-lines:])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@dataclass
class Service:
    """One long-running server: how to start it and how to tell it is ready."""

    cfg: StackConfig
    name: str
    argv: Sequence[str]
    ready: Callable[[], bool]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Optional[Path] = None
    timeout: float = 60.0

    @property
    def pid_file(self) -> Path:
        return self.cfg.dir("pids") / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.cfg.dir("logs") / f"{self.name}.log"

    def pid(self) -> Optional[int]:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if pid_alive(pid) else None

    def running(self) -> bool:
        return self.pid() is not None and self.ready()

    def running_argv(self) -> Optional[list]:
        """The command line of the live process (None when none runs): ``ensure`` reuses a running server
        whatever flags it was started with, so this tells whether it predates a change of ``argv``."""
        pid = self.pid()
        if pid is None:
            return None
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                return [a.decode("utf-8", "replace") for a in fh.read().split(b"\0")[:-1]]
        except OSError:
            return None

    def status_row(self, detail: str):
        """One ``status`` line: (name, 'up'|'down', detail)."""
        pid = self.pid()
        if pid and self.ready():
            return (self.name, "up", f"{detail} pid {pid}")
        return (self.name, "down", "not running" if pid is None else f"pid {pid} not answering")

    def ensure(self) -> str:
        """Start the server unless a healthy one is running; returns 'reused' or 'started'."""
        if self.running():
            return "reused"
        self.stop()
        env = dict(os.environ)
        env.update(self.env)
        with open(self.log_file, "ab") as log:
            proc = subprocess.Popen(list(self.argv), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=self.cwd, env=env,
                                    start_new_session=True)
        self.pid_file.write_text(str(proc.pid))
        wait_until(self.ready, self.timeout, self.name, alive=lambda: proc.poll() is None,
                   log=self.log_file)
        return "started"

    def stop(self, grace: float = 10.0) -> bool:
        """Stop the server's whole process group; True when something was running."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return False
        stopped = False
        if pid_alive(pid):
            stopped = True
            _signal_group(pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            _signal_group(pid, signal.SIGKILL)
        else:
            _signal_group(pid, signal.SIGKILL)  # stray children of a dead leader
        self.pid_file.unlink(missing_ok=True)
        return stopped


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def run(argv: Sequence[str], env: Optional[Mapping[str, str]] = None, cwd: Optional[Path] = None,
        log: Optional[Path] = None, timeout: float = 600) -> str:
    """Run a setup command to completion; raise StackError with its output when it fails."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(list(argv), env=full_env, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout)
    out = proc.stdout.decode("utf-8", "replace")
    if log is not None:
        with open(log, "a") as fh:
            fh.write(f"$ {' '.join(argv)}\n{out}\n")
    if proc.returncode != 0:
        raise StackError(f"{argv[0]} exited {proc.returncode}:\n{out[-3000:]}")
    return out


def log_timing(cfg: StackConfig, part: str, started: float, how: str) -> float:
    """Append how long bringing ``part`` up took (since ``time.monotonic()`` was ``started``) to
    ``<state>/logs/timings.log``; the library prints nothing, so this is where cold/warm times show."""
    seconds = time.monotonic() - started
    with open(cfg.dir("logs") / "timings.log", "a") as fh:
        fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {part} {how} {seconds:.2f}s\n")
    return seconds


def secret_file(path: Path, value: Optional[str] = None) -> str:
    """Return the secret stored in ``path`` (mode 0600), creating it first (``value`` or a random
    URL-safe string) so generated passwords and tokens survive restarts without being shown anywhere."""
    if value is None and path.exists():
        return path.read_text().strip()
    value = value or secrets.token_urlsafe(24)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    os.chmod(path, 0o600)
    return value
