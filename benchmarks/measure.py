"""Running what is measured, each in its own process: the module, the floor and the baseline playbooks.

Wall time and peak memory (``ru_maxrss``) are the command's own, taken by rss.py around it: a plain
``wait4`` on a child of this process would report at least this process's own peak (see rss.py).
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODULE = REPO / "plugins" / "modules" / "keystoneuser_reconcile.py"
FLOOR = REPO / "benchmarks" / "floor.py"
RSS = REPO / "benchmarks" / "rss.py"
BASELINE = REPO / "benchmarks" / "baseline"
COLLECTIONS = REPO / ".collections"
DEPS = REPO / ".collections-deps"


class Run:
    """One measured process: wall seconds, peak RSS in MiB, CPU seconds, exit code, stdout."""

    def __init__(self, wall, rss_mib, rc, stdout, stderr, cpu=None):
        self.wall, self.rss_mib, self.rc, self.stdout, self.stderr = wall, rss_mib, rc, stdout, stderr
        self.cpu = cpu


def run_process(argv, env=None, timeout=None):
    """Run ``argv`` through rss.py, which measures the command's own wall time and peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rss") as figures:
        proc = subprocess.Popen([sys.executable, str(RSS), figures.name] + list(argv), stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=dict(os.environ, **(env or {})))
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        written = figures.read().split()
        if len(written) != 3:
            raise RuntimeError(f"{argv[0]} did not finish (timeout {timeout}s)")
        kib, wall, cpu = written
        out.seek(0)
        err.seek(0)
        return Run(float(wall), int(kib) / 1024.0, proc.returncode, out.read().decode("utf-8", "replace"),
                   err.read().decode("utf-8", "replace"), float(cpu))


def module_pass(kubeconfig, profile_to=None, collections=None, **args):
    """One run of c5c3.orders.keystoneuser_reconcile as Ansible runs it (args file, fresh interpreter).

    ``collections``: a root holding another ``ansible_collections/c5c3/orders`` (an earlier commit's code, see
    scenario_revision.py) whose module runs instead of this tree's."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"ANSIBLE_MODULE_ARGS": dict(args, kubeconfig=kubeconfig)}, fh)
    try:
        root = Path(collections) if collections else COLLECTIONS
        module = root / "ansible_collections" / "c5c3" / "orders" / MODULE.relative_to(REPO) if collections else MODULE
        argv = [sys.executable, str(module), fh.name]
        if profile_to:
            argv = [sys.executable, "-m", "pyinstrument", "--renderer", "text", "--no-color", "--no-unicode",
                    "-o", str(profile_to)] + argv[1:]
        run = run_process(argv, env={"PYTHONPATH": str(root)}, timeout=3600)
    finally:
        os.unlink(fh.name)
    try:
        result = json.loads(run.stdout.strip().splitlines()[-1] if profile_to else run.stdout)
    except (ValueError, IndexError):
        raise RuntimeError(f"the module printed no JSON (rc {run.rc}): {run.stdout[-2000:]} {run.stderr[-2000:]}")
    if result.get("failed"):
        raise RuntimeError(f"the module failed: {result.get('msg')}")
    run.result = result
    return run


def floor(kubeconfig):
    """The bare list calls of a converged pass, with the same client (see floor.py)."""
    run = run_process([sys.executable, str(FLOOR), kubeconfig], env={"PYTHONPATH": str(COLLECTIONS)}, timeout=600)
    if run.rc != 0:
        raise RuntimeError(f"floor.py failed: {run.stderr[-2000:]}")
    run.result = json.loads(run.stdout)
    return run


def memory(kubeconfig):
    """Where a converged pass's memory goes (see memory.py)."""
    run = run_process([sys.executable, str(REPO / "benchmarks" / "memory.py"), kubeconfig],
                      env={"PYTHONPATH": str(COLLECTIONS)}, timeout=1200)
    if run.rc != 0:
        raise RuntimeError(f"memory.py failed: {run.stderr[-2000:]}")
    return json.loads(run.stdout)


PLAYBOOKS = {"naive": "naive.yml", "bulk": "bulk.yml"}


def baseline(kubeconfig, namespaces, workdir, timeout=None, playbook="naive", order_limit=None):
    """A baseline playbook (``PLAYBOOKS``) over every order in ``namespaces`` (the naive one: the first
    ``order_limit`` of them, when given); requests counted per module process."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    counts = workdir / "requests.log"
    counts.unlink(missing_ok=True)
    extra = workdir / "vars.json"
    extra_vars = {"namespaces": list(namespaces), "ansible_python_interpreter": sys.executable}
    if order_limit is not None:
        extra_vars["order_limit"] = order_limit
    extra.write_text(json.dumps(extra_vars))
    env = {
        "ANSIBLE_COLLECTIONS_PATH": f"{DEPS}:{COLLECTIONS}",
        "ANSIBLE_PIPELINING": "true",           # the fastest stock setting; gives the baseline its best chance
        "ANSIBLE_LOCAL_TEMP": str(workdir / "tmp"),
        "ANSIBLE_REMOTE_TEMP": str(workdir / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_HOST_KEY_CHECKING": "false",
        "ANSIBLE_RETRY_FILES_ENABLED": "false",
        "K8S_AUTH_KUBECONFIG": kubeconfig,
        # counts the HTTP requests of every module process (see baseline/counting/sitecustomize.py)
        "PYTHONPATH": str(BASELINE / "counting"),
        "C5C3_BENCH_REQUEST_LOG": str(counts),
        "TMPDIR": str(workdir / "tmp"),
    }
    (workdir / "tmp").mkdir(exist_ok=True)
    argv = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
            str(BASELINE / PLAYBOOKS[playbook]), "-e", f"@{extra}"]
    run = run_process(argv, env=env, timeout=timeout)
    (workdir / "ansible.log").write_text(run.stdout + run.stderr)
    if run.rc != 0:
        raise RuntimeError(f"the {playbook} playbook failed (rc {run.rc}); see {workdir / 'ansible.log'}: "
                           f"{run.stdout[-3000:]}")
    run.requests = sum(int(line.split()[0]) for line in counts.read_text().splitlines()) if counts.exists() else 0
    run.changed = _recap(run.stdout, "changed")
    run.tasks = _recap(run.stdout, "ok") + run.changed
    return run


def _recap(stdout, key):
    for line in reversed(stdout.splitlines()):
        if line.startswith("localhost") and f"{key}=" in line:
            return int(line.split(f"{key}=")[1].split()[0])
    return 0
