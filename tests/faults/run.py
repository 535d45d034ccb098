"""``make faults``: bring the matrix's own stack up, run every row, scan for leaked passwords, write the report,
bring the stack down. ``--only REGEX`` runs the rows whose id matches (the baselines their SIGKILL rows need are
added); ``--keep-stack`` leaves the stack running; ``--report-only`` re-renders the last results.

Exit status: 0 when every row with its fault injected converged with zero violations, 1 otherwise.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from c5c3faults import report, secretscan  # noqa: E402
from c5c3faults.controllerrow import run_controller_row  # noqa: E402
from c5c3faults.matrix import (OS_PHASE_NAMES, PHASE_NAMES, fault_rows, gateway_fault_rows,  # noqa: E402
                               gateway_rows, kill_rows)
from c5c3faults.observer import INTERVAL  # noqa: E402
from c5c3faults.rows import run_row  # noqa: E402
from c5c3faults.stackenv import REPO, STACK_SRC, default_ports, faults_stack, shared_stack  # noqa: E402

RUN_DIR_NAME = "run"


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def stackctl(stack, verb: str) -> None:
    env = stack.process_env()
    env["PYTHONPATH"] = str(HERE)
    subprocess.run([sys.executable, "-m", "c5c3faults.stackctl", verb], env=env, check=True, timeout=1800)
    stack.forget_env()


def fresh_stack(stack) -> float:
    """Down, forget the clusters' data and every log, up: every run starts from empty clusters."""
    t0 = time.monotonic()
    stackctl(stack, "down")
    for path in list(stack.state.glob("kube/*/etcd")) + [stack.state / "logs", stack.state / RUN_DIR_NAME,
                                                         stack.state / "controller"]:
        shutil.rmtree(path, ignore_errors=True)
    stackctl(stack, "up")
    return time.monotonic() - t0


def side_by_side(stack) -> list:
    """Evidence that the matrix's stack and the shared one are separate: port sets, state dirs, and which of
    the shared stack's ports answer while ours run."""
    def listening(port: int) -> bool:
        with socket.socket() as sock:
            sock.settimeout(0.3)
            return sock.connect_ex(("127.0.0.1", port)) == 0
    ports = default_ports()
    shared = shared_stack()
    lines = ["| port | shared stack (`.stack/`) | this run (`.stack-faults/`) |", "|---|---|---|"]
    for name, port in sorted(ports.items()):
        mine = int(stack.overrides[f"C5C3_PORT_{name.upper()}"])
        lines.append(f"| {name} | {port} ({'listening' if listening(port) else 'not listening'}) | "
                     f"{mine} ({'listening' if listening(mine) else 'not listening'}) |")
    status = subprocess.run([sys.executable, "-m", "c5c3stack", "status"], cwd=REPO, capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(STACK_SRC), C5C3_STACK_DIR=str(shared.state)),
                            timeout=120, check=False)
    up = sum(1 for line in status.stdout.splitlines() if " up " in f" {line} ")
    lines += ["", f"While this run's stack was up, `c5c3stack status` of the shared stack counted {up} process(es) "
              "up. Target-cluster ports are the kube ports + 100 per target on both."]
    return lines


def run_matrix(args, stack, run_dir: Path) -> dict:
    selected = re.compile(args.only) if args.only else None
    rows = fault_rows()
    wanted_kills = {p for p in PHASE_NAMES if not selected or selected.search(f"sigkill/{p}/")}
    results, seen, write_points = [], set(), {}

    def execute(row, runner=run_row):
        log(f"row {row.id}: {row.fault}, {row.phase}")
        outcome = runner(row, stack, run_dir / row.id.replace("/", "_"))
        seen.update(outcome.secrets)
        r = outcome.result
        log(f"  -> injected {r.get('injected')}, converged {r.get('converged')}, "
            f"{r.get('time_to_converge_s')} s, violations {r.get('violations')}"
            f"{', error: ' + r['error'] if r.get('error') else ''}")
        results.append(r)
        return outcome

    for row in rows:
        is_baseline = row.id.startswith("baseline/")
        if selected and not selected.search(row.id) and not (is_baseline and row.phase in wanted_kills):
            continue
        outcome = execute(row)
        if is_baseline:
            write_points[row.phase] = outcome.result["writes"]
    for phase in PHASE_NAMES:
        if phase in write_points and phase in wanted_kills:
            for row in kill_rows(phase, write_points[phase], args.kill_limit):
                if not selected or selected.search(row.id):
                    execute(row)
    run_gateway_rows(args, selected, execute, write_points)
    if not selected or selected.search("controller/provision"):
        log("row controller/provision: the long-running controller SIGKILLed")
        outcome = run_controller_row(stack, run_dir / "controller_provision")
        seen.update(outcome.secrets)
        results.append(outcome.result)
        log(f"  -> converged {outcome.result.get('converged')}, {outcome.result.get('time_to_converge_s')} s, "
            f"violations {outcome.result.get('violations')}")
    return {"rows": results, "write_points": write_points, "seen": seen}


def run_gateway_rows(args, selected, execute, write_points: dict) -> None:
    """The object-storage rows: baselines (kept when a derived row of their phase is selected), OpenBao and ESO
    down while a key is issued, then per phase the gateway frozen and killed before each of its gateway steps and
    the pass SIGKILLed after each gateway write."""
    derived = ("gateway-frozen", "gateway-killed", "gateway-sigkill")
    wanted = {p for p in OS_PHASE_NAMES if not selected or any(selected.search(f"{d}/{p}/") for d in derived)}
    for row in gateway_rows():
        is_baseline = row.id.startswith("gateway-baseline/")
        if selected and not selected.search(row.id) and not (is_baseline and row.phase in wanted):
            continue
        outcome = execute(row)
        if is_baseline:
            write_points[f"gateway/{row.phase}"] = outcome.result["writes"]
    for phase in OS_PHASE_NAMES:
        if f"gateway/{phase}" in write_points and phase in wanted:
            for row in gateway_fault_rows(phase, write_points[f"gateway/{phase}"], args.kill_limit):
                if not selected or selected.search(row.id):
                    execute(row)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False).stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the rows whose id matches this regular expression")
    parser.add_argument("--kill-limit", type=int, default=0, help="at most this many SIGKILL rows per phase")
    parser.add_argument("--keep-stack", action="store_true", help="leave the matrix's stack running afterwards")
    parser.add_argument("--reuse-stack", action="store_true", help="use the running matrix stack as it is")
    parser.add_argument("--report", help="where the report goes (default docs/reliability.md; with --only, "
                                         ".stack-faults/reliability.md, so a partial run never replaces the matrix)")
    parser.add_argument("--report-only", action="store_true", help="re-render the report from the last results")
    parser.add_argument("--down", action="store_true", help="only bring the matrix's stack down")
    args = parser.parse_args(argv)
    stack = faults_stack()
    if args.report is None:
        args.report = str(stack.state / "reliability.md" if args.only else REPO / "docs" / "reliability.md")
    if args.down:
        stackctl(stack, "down")
        return 0
    run_dir = stack.state / RUN_DIR_NAME
    results_file = stack.state / "results.json"
    if args.report_only:
        Path(args.report).write_text(report.render(json.loads(results_file.read_text())))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.time()
    try:
        if args.reuse_stack:
            bring_up = 0.0
        else:
            log("bringing the matrix's own stack up (.stack-faults/, ports +1000)")
            bring_up = fresh_stack(stack)
        run_dir.mkdir(parents=True, exist_ok=True)
        notes = side_by_side(stack)
        matrix = run_matrix(args, stack, run_dir)
        skip = sorted(stack.state.glob("kube/*/etcd")) + [stack.state / "mariadb" / "data"]
        leaks, scanned = secretscan.scan([stack.state], matrix["seen"], skip)
    finally:
        if not args.keep_stack:
            log("bringing the matrix's stack down")
            stackctl(stack, "down")
    rows = matrix["rows"]
    results = {
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "host": f"a {os.cpu_count()}-core machine", "duration_min": round((time.time() - started) / 60, 1),
        "commit": git("rev-parse", "--short", "HEAD"), "dirty": bool(git("status", "--porcelain", "plugins")),
        "load_average": [round(x, 1) for x in os.getloadavg()], "interval": INTERVAL, "rows": rows, "write_points": matrix["write_points"],
        "run_leaks": leaks, "run_scanned": scanned,
        "run_skipped": ["etcd data (the Secrets themselves, unencrypted at rest)",
                        "MariaDB data (Keystone's bcrypt hashes)"],
        "stack_notes": [f"Brought up from empty clusters in {bring_up:.0f} s by `python -m c5c3faults.stackctl up` "
                        "(the stack's own `up` with `C5C3_STACK_DIR=.stack-faults`, every `C5C3_PORT_<NAME>` "
                        "moved by 1000 and the Reef gateway left out (the Tentacle one serves the object-storage "
                        "rows), then kube-apiserver restarted with API Priority and "
                        "Fairness on, which the stack has no option for, and a client-certificate identity "
                        "`c5c3-faults-pass` bound to `cluster-admin` that every pass runs as, because APF exempts "
                        "the admin's `system:masters`).", ""] + notes,
    }
    results_file.write_text(json.dumps(results, indent=1))
    text = report.render(results)
    if secretscan.needles(matrix["seen"]) and any(n.decode() in text for n in secretscan.needles(matrix["seen"])):
        raise SystemExit("the report would contain a password; not written")
    Path(args.report).write_text(text)
    log(f"report: {args.report}")
    clean = all((r.get("converged") or (r.get("applicable") and not r.get("injected")))
                and not r.get("violations") and not r.get("observer_errors") for r in rows) and not leaks
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
