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
import copy
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
from typing import Callable, Dict, Iterable, List, Mapping, Optional

import ansible_runner

from .keys import by_pass
from .kinds import KEYSTONEUSER_PASS, OBJECTSTORAGE_PASS

LOG = logging.getLogger("c5c3_orders_controller.runner")
# the pass modules whose results a pass reads, by the reconcile role's name of their pass (c5c3_reconcile_kinds)
MODULES = {"keystoneuser_reconcile": KEYSTONEUSER_PASS, "objectstorage_reconcile": OBJECTSTORAGE_PASS}
PASSES = (KEYSTONEUSER_PASS, OBJECTSTORAGE_PASS)
PLAYBOOK = "c5c3.orders.reconcile"
# ansible-runner's event callback replaces a task result longer than MAX_EVENT_RES characters (default 700,000) by
# {}: the result of a pass over about 5,000 orders is longer, and the controller read no order of it (no requeue,
# no metrics). The module result holds names, reasons and counts, never a secret; 1 GB is "never truncate".
MAX_EVENT_RES = str(1 << 30)
# set in each pass's environment to its ident: how a lane finds its own pass's processes (pass_processes)
PASS_MARKER = "C5C3_ORDERS_PASS"

ENV_ALLOW = ("PATH", "HOME", "USER", "LANG", "LANGUAGE", "TZ", "VIRTUAL_ENV", "PYTHONPATH",
             "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "SSL_CERT_FILE",
             "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy",
             "http_proxy", "no_proxy", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_CONTEXT", "K8S_AUTH_HOST",
             "K8S_AUTH_VERIFY_SSL", "K8S_AUTH_SSL_CA_CERT", "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS",
             "ANSIBLE_CONFIG", "ANSIBLE_ROLES_PATH", "C5C3_TARGET_KUBECONFIG_DIR", "POD_NAMESPACE", "POD_NAME",
             # the operator's Keystone URL overrides the reconcile role reads (URLs, no credential)
             "C5C3_KEYSTONE_INTERNAL_URLS",
             # the platform's allowlist of tenant namespaces the reconcile role reads (labels)
             "C5C3_TENANT_NAMESPACE_SELECTOR")
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
        # the module is piped to the local interpreter instead of copied to a temp dir first (three fewer
        # processes per module run: mkdir, chmod, rm)
        "ANSIBLE_PIPELINING": "1",
    }


def descendants(pid: int, proc: str = "/proc") -> List[int]:
    """Every process below ``pid`` (Linux /proc), parents before children."""
    children: Dict[int, List[int]] = {}
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


def _marked(pid: int, marker: str, proc: str = "/proc") -> bool:
    """Whether process ``pid`` was started with ``PASS_MARKER=marker`` in its environment."""
    try:
        with open(os.path.join(proc, str(pid), "environ"), "rb") as fh:
            return ("%s=%s" % (PASS_MARKER, marker)).encode() in fh.read().split(b"\0")
    except OSError:
        return False


def pass_processes(marker: Optional[str] = None, proc: str = "/proc") -> List[int]:
    """The processes of one pass: every process below this one, or (``marker``) only the tree of the
    ansible-playbook started with that marker, so cancelling one lane's pass leaves the other lane's running."""
    below = descendants(os.getpid(), proc)
    if marker is None:
        return below
    roots = [pid for pid in below if _marked(pid, marker, proc)]
    out = []
    for root in roots:
        out += [root] + [pid for pid in descendants(root, proc) if pid not in out]
    return list(dict.fromkeys(out))


def kill_pass_processes(grace: float = 0.5, marker: Optional[str] = None) -> int:
    """Stop a cancelled pass for good. ansible-runner kills the ansible-playbook process group, but
    ansible-core (2.19) starts each worker in its own session, so a running module would survive as an
    orphan and go on writing. SIGTERM first (ansible-playbook then kills its workers' groups), then SIGKILL
    every process still below this one (``marker``: below that pass's ansible-playbook, see pass_processes)."""
    victims = pass_processes(marker)
    for pid in victims:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(os.path.exists("/proc/%d" % p) for p in victims):
        time.sleep(0.05)
    for pid in [p for p in pass_processes(marker) if p not in victims] + victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return len(victims)


class PassResult:
    """One pass: its status, and the results of the pass modules it ran, merged (``module``: orders of every kind,
    the earliest requeue, summed request counts), with when each module read its clock and where the time went."""

    def __init__(self, kind: str, keys: Optional[Iterable[str]]):
        self.kind = kind
        self.keys = sorted(keys) if keys else []
        self.status = "unstarted"
        self.rc = None
        self.module: Optional[dict] = None  # the modules' return values, merged (orders, requeue_after, ...)
        self.modules: Dict[str, dict] = {}  # pass module -> {"end": wall, "duration": s, "start": wall}
        self.module_end: Optional[float] = None  # wall time the last reconcile task ended
        self.failure = ""
        self.started = time.time()
        self.duration = 0.0
        self.marks: Dict[str, float] = {}  # wall times: playbook (started), stats (done), ended
        self.expected: set = set()  # the pass modules the pass was to run

    @property
    def ok(self) -> bool:
        """The playbook succeeded and every pass module it was to run returned a result."""
        return (self.status == "successful" and self.module is not None and not self.module.get("failed")
                and self.expected <= set(self.modules))

    @property
    def result(self) -> str:
        if self.status == "canceled":
            return "canceled"
        return "success" if self.ok else "failed"

    def clock_base(self, module: str = "") -> float:
        """Wall time a module read its clock, as closely as known: its task's end minus the module's own duration
        (never earlier than the module's ``now``, so a requeue is never early); the first module's without a name."""
        found = self.modules.get(module) or (min(self.modules.values(), key=lambda m: m["end"])
                                             if self.modules else None)
        if found is not None:
            return found["end"] - found["duration"]
        return self.started + self.duration

    def add_module(self, name: str, res: Mapping, start: Optional[float], end: Optional[float]) -> None:
        """Merge one pass module's result (only what the controller keeps; every order summary notes its module)."""
        duration = float(res.get("duration") or 0.0)
        end = end if end is not None else time.time()
        self.modules[name] = {"end": end, "duration": duration, "start": start if start is not None else end}
        self.module_end = max(self.module_end or end, end)
        merged = self.module or {"orders": [], "requeue_after": None, "api_requests": 0, "api_writes": 0,
                                 "errors": 0, "changed": False, "duration": 0.0, "gateway_requests": 0}
        merged["orders"] += [dict(_safe_summary(o), module=name) for o in res.get("orders") or []]
        wait = res.get("requeue_after")
        if wait is not None and (merged["requeue_after"] is None or wait < merged["requeue_after"]):
            merged["requeue_after"] = wait
        for count in ("api_requests", "api_writes", "errors", "gateway_requests"):
            merged[count] = int(merged.get(count) or 0) + int(res.get(count) or 0)
        merged["changed"] = bool(merged["changed"] or res.get("changed"))
        merged["duration"] = float(merged["duration"]) + duration
        self.module = merged

    def phases(self) -> Dict[str, float]:
        """Where the pass's wall time went, in seconds: ``start`` (ansible-runner and ansible-playbook starting, up
        to the playbook's first event), ``before`` (the role's tasks before the first pass module), ``modules`` (the
        pass modules' tasks: interpreter start, imports, connecting and the pass), ``pass`` (of it, the modules' own
        ``duration``), ``after`` (the summary tasks and the stats), ``exit`` (ansible-playbook ending)."""
        marks = self.marks
        if "playbook" not in marks or not self.modules:
            return {}
        first = min(m["start"] for m in self.modules.values())
        last = max(m["end"] for m in self.modules.values())
        ended = marks.get("ended", self.started + self.duration)
        return {"start": max(0.0, marks["playbook"] - self.started), "before": max(0.0, first - marks["playbook"]),
                "modules": sum(m["end"] - m["start"] for m in self.modules.values()),
                "pass": sum(m["duration"] for m in self.modules.values()),
                "after": max(0.0, marks.get("stats", last) - last),
                "exit": max(0.0, ended - marks.get("stats", last))}

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
    keep = ("kind", "name", "namespace", "cluster", "ready", "reasons", "changed", "actions", "status_written",
            "requeue_after", "error")
    return {k: order[k] for k in keep if k in order}


class PassRunner:
    def __init__(self, state_dir: Path, kubeconfig: Optional[str] = None, context: Optional[str] = None,
                 namespaces: Iterable[str] = (), target_clusters: Iterable[Mapping] = (),
                 field_manager: str = "c5c3-orders", playbook: str = PLAYBOOK, rotate_artifacts: int = 10,
                 pass_timeout: int = 600, environ: Optional[Mapping[str, str]] = None, passes: Iterable[str] = PASSES):
        """``passes``: the pass modules a full pass runs (the reconcile role's ``c5c3_reconcile_kinds``); a
        targeted pass runs those its keys need."""
        self.state_dir = Path(state_dir)
        self.passes = [p for p in PASSES if p in set(passes)]
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
        self._prepare_private()

    def for_pass(self, name: str) -> "PassRunner":
        """A runner of the one pass kind ``name`` (a lane's, lanes.py): its own private data dir (``runner`` for the
        KeystoneUser pass, ``runner-<name>`` for another), so two lanes' passes never rotate each other's artifacts;
        the temp dir and the rest are shared."""
        if name not in self.passes:
            raise ValueError("%s is not a pass of this runner (%s)" % (name, ", ".join(self.passes)))
        lane = copy.copy(self)
        lane.passes = [name]
        lane.private_dir = self.state_dir / ("runner" if name == KEYSTONEUSER_PASS else "runner-" + name)
        lane.env = dict(self.env)
        lane._seq = itertools.count(1)
        lane._prepare_private()
        return lane

    def _prepare_private(self) -> None:
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
        # the artifacts (the command line, extravars) for this user only. The state dir itself may be a mounted
        # volume that root owns (a Pod's emptyDir with fsGroup), which only its owner may chmod: then the dirs made
        # here in it are closed instead.
        try:
            os.chmod(self.state_dir, 0o700)
        except PermissionError:
            if self.state_dir.stat().st_uid == os.geteuid():
                raise
            for made in (self.private_dir, self.state_dir / "tmp"):
                os.chmod(made, 0o700)

    def passes_for(self, keys: Optional[Iterable[str]]) -> Dict[str, List[str]]:
        """``{pass: orders}``: every configured pass with no order (all of them) for a full pass, else the passes
        the keys need with their ``<namespace>/<name>`` refs."""
        if not keys:
            return {name: [] for name in self.passes}
        wanted = by_pass(keys)
        return {name: wanted[name] for name in self.passes if name in wanted}

    def extravars(self, keys: Optional[Iterable[str]], snapshot_file: Optional[str] = None,
                  shards: Optional[Mapping] = None) -> dict:
        """The reconcile role's variables; ``shards``: ``{"count", "held"}`` of a replica that holds shares."""
        passes = self.passes_for(keys)
        extra = {
            "c5c3_reconcile_kinds": list(passes),
            "c5c3_reconcile_orders": passes.get(KEYSTONEUSER_PASS, []),
            "c5c3_reconcile_objectstorage_orders": passes.get(OBJECTSTORAGE_PASS, []),
            "c5c3_reconcile_namespaces": self.namespaces,
            "c5c3_reconcile_target_clusters": self.target_clusters,
            "c5c3_reconcile_field_manager": self.field_manager,
            # the controller reads the modules' results from the events: the role's summary tasks are skipped
            "c5c3_reconcile_report": False,
        }
        if snapshot_file:
            extra["c5c3_reconcile_snapshot_file"] = snapshot_file
        if shards:
            extra["c5c3_reconcile_shards"] = {"count": int(shards["count"]), "held": list(shards["held"])}
        if self.kubeconfig:
            extra["c5c3_reconcile_kubeconfig"] = self.kubeconfig
        if self.context:
            extra["c5c3_reconcile_context"] = self.context
        return extra

    def run(self, kind: str, keys: Optional[Iterable[str]], cancel: Callable[[], bool],
            snapshot_file: Optional[str] = None, shards: Optional[Mapping] = None) -> PassResult:
        result = PassResult(kind, keys)
        ident = "%s-%s-%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), kind, "+".join(self.passes), next(self._seq))
        extravars = self.extravars(keys, snapshot_file, shards)
        result.expected = set(extravars["c5c3_reconcile_kinds"])

        def on_event(event: dict) -> bool:
            name = event.get("event")
            data = event.get("event_data") or {}
            action = data.get("task_action") or data.get("resolved_action") or ""
            module = next((MODULES[m] for m in MODULES if action.endswith(m)), None)
            if name == "playbook_on_start":
                result.marks["playbook"] = _parse_time(event.get("created")) or time.time()
            elif name == "playbook_on_stats":
                result.marks["stats"] = _parse_time(event.get("created")) or time.time()
            if module and name in ("runner_on_ok", "runner_on_failed"):
                res = data.get("res") or {}
                if name == "runner_on_failed" or res.get("failed"):
                    result.failure = str(res.get("msg") or "the reconcile task failed")[:500]
                else:
                    result.add_module(module, res, _parse_time(data.get("start")), _parse_time(data.get("end")))
            elif name in ("runner_on_failed", "runner_on_unreachable") and not result.failure:
                result.failure = "%s: %s" % (data.get("task") or name,
                                             str((data.get("res") or {}).get("msg") or "")[:300])
            # keep on disk only what a post-mortem needs and what Runner.stats reads
            return name in ("playbook_on_stats", "runner_on_failed", "runner_on_unreachable")

        cancelled: List[int] = []

        def on_cancel_check() -> bool:
            if cancelled:
                return True
            timed_out = time.monotonic() - started > self.pass_timeout
            if timed_out or cancel():
                if timed_out:
                    result.failure = "the pass exceeded %ss and was stopped" % self.pass_timeout
                cancelled.append(kill_pass_processes(marker=ident))
                return True
            return False

        started = time.monotonic()
        try:
            runner = ansible_runner.run(
                private_data_dir=str(self.private_dir), playbook=self.playbook, ident=ident,
                extravars=extravars, envvars=dict(self.env, MAX_EVENT_RES=MAX_EVENT_RES, **{PASS_MARKER: ident}),
                rotate_artifacts=self.rotate_artifacts,
                quiet=True, suppress_env_files=True, event_handler=on_event, cancel_callback=on_cancel_check,
            )
            result.status, result.rc = runner.status, runner.rc
        except Exception as exc:  # noqa: BLE001 - a runner failure is a failed pass, not a crash
            result.status = "error"
            result.failure = "ansible-runner: %s" % type(exc).__name__
        result.duration = time.monotonic() - started
        result.marks["ended"] = time.time()
        if result.failure.startswith("the pass exceeded"):
            result.status = "timeout"  # a failed pass (retried), not a cancelled one
        return result

    def artifact_dirs(self) -> List[Path]:
        return sorted((self.private_dir / "artifacts").iterdir())
