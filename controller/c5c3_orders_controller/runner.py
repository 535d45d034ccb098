"""One reconcile pass through ansible-runner's Python API.

Each pass is ``ansible_runner.run(playbook="c5c3.orders.reconcile", ...)``: a fresh ``ansible-playbook``
process in a private data dir under the state dir, with its artifacts rotated (``rotate_artifacts``).

Keeping secrets out of the artifacts:

- ansible-runner seeds a pass's environment from ``os.environ`` and writes all of it into
  ``artifacts/<ident>/command``; the controller therefore reduces its own environment to an allowlist at
  start (PATH, locale, KUBECONFIG, ANSIBLE_*/K8S_AUTH_* names that are paths or switches, ...), so a token
  in the environment it was started with never reaches an artifact;
- extravars carry only order names, namespaces, cluster names and kubeconfig paths; with
  ``suppress_env_files`` they go on the command line instead of ``env/extravars``;
- the module never returns a password (its generated passwords are no_log values, masked by Ansible);
  still, only ``playbook_on_stats`` and failure events are written to ``job_events/`` - the
  reconcile task's result is read in memory by the event handler and only counters and order summaries are
  kept.

``only_failed_event_data`` exists in ansible-runner 2.4.3 but blanks ``event_data`` (hence ``res``) of every
``runner_on_ok`` event, including the one this controller reads the module result from; the event handler
above gives the same on-disk guarantee without losing the result.
"""
import itertools
import json
import logging
import os
import shutil
import signal
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, List, Mapping, Optional

import ansible_runner

LOG = logging.getLogger("c5c3_orders_controller.runner")
MODULE = "keystoneuser_reconcile"
PLAYBOOK = "c5c3.orders.reconcile"

ENV_ALLOW = ("PATH", "HOME", "USER", "LANG", "LANGUAGE", "TZ", "VIRTUAL_ENV", "PYTHONPATH",
             "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "SSL_CERT_FILE",
             "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy",
             "http_proxy", "no_proxy", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_CONTEXT", "K8S_AUTH_HOST",
             "K8S_AUTH_VERIFY_SSL", "K8S_AUTH_SSL_CA_CERT", "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS",
             "ANSIBLE_CONFIG", "ANSIBLE_ROLES_PATH", "C5C3_TARGET_KUBECONFIG_DIR", "POD_NAMESPACE", "POD_NAME",
             # the operator's Keystone URL overrides the reconcile role reads (URLs, no credential)
             "C5C3_KEYSTONE_INTERNAL_URLS")
ENV_ALLOW_PREFIX = ("LC_", "ANSIBLE_", "PYTHON")
ENV_DENY_WORDS = ("TOKEN", "PASSW", "SECRET", "KEY", "CREDENTIAL", "AUTH")


def allowed_environment(environ: Optional[Mapping[str, str]] = None) -> dict:
    """The allowlisted part of ``environ``. The controller reduces its own environment to it at start:
    ansible-runner seeds every pass's environment from ``os.environ`` and writes it to the ``command``
    artifact, so nothing else (a Vault token, a cloud password) may be in it. ``ANSIBLE_*``, ``PYTHON*`` and
    ``LC_*`` pass unless the name speaks of a token, password, secret, key, credential or auth."""
    def allowed(name):
        if name in ENV_ALLOW:
            return True
        return name.startswith(ENV_ALLOW_PREFIX) and not any(w in name.upper() for w in ENV_DENY_WORDS)
    return {k: v for k, v in (os.environ if environ is None else environ).items() if allowed(k)}


def pass_environment(state_dir: Path, environ: Optional[Mapping[str, str]] = None,
                     python: str = sys.executable) -> dict:
    """What every pass adds: this Python's bin dir first on PATH (ansible-playbook of the same venv), temp
    dirs under the state dir (``/tmp`` is never filled), no colour."""
    tmp = str(Path(state_dir) / "tmp")
    environ = os.environ if environ is None else environ
    return {
        "PATH": os.path.dirname(python) + os.pathsep + environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "TMPDIR": tmp, "ANSIBLE_LOCAL_TEMP": tmp, "ANSIBLE_REMOTE_TEMP": tmp,
        "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_PYTHON_INTERPRETER": python, "ANSIBLE_DEPRECATION_WARNINGS": "0",
    }


def descendants(pid: int, proc: str = "/proc") -> List[int]:
    """Every process below ``pid`` (Linux /proc), parents before children."""
    children = {}
    try:
        entries = os.listdir(proc)
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc, entry, "stat"), "rb") as fh:
                stat = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")"
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            out.append(child)
            todo.append(child)
    return out


def kill_pass_processes(grace: float = 0.5) -> int:
    """Stop a cancelled pass for good. ansible-runner kills the ansible-playbook process group, but
    ansible-core (2.19) starts each worker in its own session, so a running module would survive as an
    orphan and go on writing. SIGTERM first (ansible-playbook then kills its workers' groups), then SIGKILL
    every process still below this one."""
    victims = descendants(os.getpid())
    for pid in victims:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(os.path.exists("/proc/%d" % p) for p in victims):
        time.sleep(0.05)
    for pid in descendants(os.getpid()) + victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return len(victims)


class PassResult:
    def __init__(self, kind: str, keys: Optional[Iterable[str]]):
        self.kind = kind
        self.keys = sorted(keys) if keys else []
        self.status = "unstarted"
        self.rc = None
        self.module: Optional[dict] = None  # the module's return value (orders, requeue_after, ...)
        self.module_end: Optional[float] = None  # wall time the reconcile task ended
        self.failure = ""
        self.started = time.time()
        self.duration = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "successful" and self.module is not None and not self.module.get("failed")

    @property
    def result(self) -> str:
        if self.status == "canceled":
            return "canceled"
        return "success" if self.ok else "failed"

    def clock_base(self) -> float:
        """Wall time the module read its clock, as closely as known: the task's end minus the module's own
        duration (never earlier than the module's ``now``, so a requeue is never early)."""
        if self.module_end is not None and self.module is not None:
            return self.module_end - float(self.module.get("duration") or 0.0)
        return self.started + self.duration

    def summary(self) -> str:
        if self.module is None:
            return "%s pass %s in %.1fs: %s" % (self.kind, self.status, self.duration, self.failure or "no result")
        m = self.module
        orders = m.get("orders") or []
        return ("%s pass %s in %.1fs: orders=%d ready=%d changed=%d errors=%s requeue_after=%s api_requests=%s"
                % (self.kind, self.status, self.duration, len(orders), sum(1 for o in orders if o.get("ready")),
                   sum(1 for o in orders if o.get("changed")), m.get("errors"),
                   None if m.get("requeue_after") is None else round(float(m["requeue_after"]), 1),
                   m.get("api_requests")))


def _parse_time(value) -> Optional[float]:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _safe_summary(order: Mapping) -> dict:
    """The order summary fields the controller keeps (the module returns no secret; this keeps it so)."""
    keep = ("name", "namespace", "cluster", "ready", "reasons", "changed", "actions", "status_written",
            "requeue_after", "error")
    return {k: order[k] for k in keep if k in order}


class PassRunner:
    def __init__(self, state_dir: Path, kubeconfig: Optional[str] = None, context: Optional[str] = None,
                 namespaces: Iterable[str] = (), target_clusters: Iterable[Mapping] = (),
                 field_manager: str = "c5c3-orders", playbook: str = PLAYBOOK, rotate_artifacts: int = 10,
                 pass_timeout: int = 600, environ: Optional[Mapping[str, str]] = None):
        self.state_dir = Path(state_dir)
        self.private_dir = self.state_dir / "runner"
        self.kubeconfig = kubeconfig
        self.context = context
        self.namespaces = list(namespaces)
        self.target_clusters = [dict(t) for t in target_clusters]
        self.field_manager = field_manager
        self.playbook = playbook
        self.rotate_artifacts = rotate_artifacts
        self.pass_timeout = pass_timeout
        self.env = pass_environment(self.state_dir, environ)
        self._seq = itertools.count(1)
        self.prepare()

    def prepare(self) -> None:
        """The private data dir: an inventory naming localhost (local connection, this Python), runner
        settings, an empty temp dir (leftovers of a killed pass are removed at start)."""
        shutil.rmtree(self.state_dir / "tmp", ignore_errors=True)
        (self.state_dir / "tmp").mkdir(parents=True, exist_ok=True)
        inventory = self.private_dir / "inventory"
        inventory.mkdir(parents=True, exist_ok=True)
        (inventory / "hosts").write_text("localhost ansible_connection=local ansible_python_interpreter=%s\n"
                                         % sys.executable)
        (self.private_dir / "artifacts").mkdir(parents=True, exist_ok=True)
        # ansible-runner 2.4.3 drops a ``settings=`` argument unless env/settings exists, so the settings go
        # there: check the cancel callback every second (default 5), no echo of Ansible's output
        (self.private_dir / "env").mkdir(exist_ok=True)
        (self.private_dir / "env" / "settings").write_text(
            json.dumps({"pexpect_timeout": 1, "suppress_ansible_output": True}) + "\n")
        os.chmod(self.state_dir, 0o700)

    def extravars(self, keys: Optional[Iterable[str]]) -> dict:
        extra = {
            "c5c3_reconcile_orders": sorted(keys) if keys else [],
            "c5c3_reconcile_namespaces": self.namespaces,
            "c5c3_reconcile_target_clusters": self.target_clusters,
            "c5c3_reconcile_field_manager": self.field_manager,
        }
        if self.kubeconfig:
            extra["c5c3_reconcile_kubeconfig"] = self.kubeconfig
        if self.context:
            extra["c5c3_reconcile_context"] = self.context
        return extra

    def run(self, kind: str, keys: Optional[Iterable[str]], cancel: Callable[[], bool]) -> PassResult:
        result = PassResult(kind, keys)
        ident = "%s-%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), kind, next(self._seq))

        def on_event(event: dict) -> bool:
            name = event.get("event")
            data = event.get("event_data") or {}
            action = data.get("task_action") or data.get("resolved_action") or ""
            if action.endswith(MODULE) and name in ("runner_on_ok", "runner_on_failed"):
                res = data.get("res") or {}
                if name == "runner_on_failed" or res.get("failed"):
                    result.failure = str(res.get("msg") or "the reconcile task failed")[:500]
                else:
                    result.module = {
                        "orders": [_safe_summary(o) for o in res.get("orders") or []],
                        "requeue_after": res.get("requeue_after"), "api_requests": res.get("api_requests"),
                        "api_writes": res.get("api_writes"), "errors": res.get("errors"),
                        "changed": res.get("changed"), "duration": res.get("duration"),
                    }
                    result.module_end = _parse_time(data.get("end"))
            elif name in ("runner_on_failed", "runner_on_unreachable") and not result.failure:
                result.failure = "%s: %s" % (data.get("task") or name,
                                             str((data.get("res") or {}).get("msg") or "")[:300])
            # keep on disk only what a post-mortem needs and what Runner.stats reads
            return name in ("playbook_on_stats", "runner_on_failed", "runner_on_unreachable")

        cancelled = []

        def on_cancel_check() -> bool:
            if cancelled:
                return True
            timed_out = time.monotonic() - started > self.pass_timeout
            if timed_out or cancel():
                if timed_out:
                    result.failure = "the pass exceeded %ss and was stopped" % self.pass_timeout
                cancelled.append(kill_pass_processes())
                return True
            return False

        started = time.monotonic()
        try:
            runner = ansible_runner.run(
                private_data_dir=str(self.private_dir), playbook=self.playbook, ident=ident,
                extravars=self.extravars(keys), envvars=dict(self.env), rotate_artifacts=self.rotate_artifacts,
                quiet=True, suppress_env_files=True, event_handler=on_event, cancel_callback=on_cancel_check,
            )
            result.status, result.rc = runner.status, runner.rc
        except Exception as exc:  # noqa: BLE001 - a runner failure is a failed pass, not a crash
            result.status = "error"
            result.failure = "ansible-runner: %s" % type(exc).__name__
        result.duration = time.monotonic() - started
        if result.failure.startswith("the pass exceeded"):
            result.status = "timeout"  # a failed pass (retried), not a cancelled one
        return result

    def artifact_dirs(self) -> List[Path]:
        return sorted((self.private_dir / "artifacts").iterdir())
