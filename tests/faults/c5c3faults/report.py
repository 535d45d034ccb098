"""docs/reliability.md from a run's results (``.stack-faults/run/results.json``): the matrix, what each fault
did to the passes, the invariant violations with their timestamps, and how the run was isolated."""
import json
import sys
import time
from pathlib import Path
from typing import List

from .ostorage import GRACE
from .ostorage import INVARIANTS as GATEWAY_INVARIANTS
from .observer import INVARIANTS


def _utc(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds % 1 * 10)}Z"


def _evidence(row: dict) -> str:
    found = row.get("evidence") or {}
    parts = []
    failed = {k: v for k, v in sorted((found.get("requests") or {}).items()) if k != "ok"}
    if failed:
        parts.append("requests failed: " + ", ".join(f"{v}×{k}" for k, v in failed.items()))
    http = found.get("http") or {}
    if http:
        parts.append("HTTP errors (retries included): " + ", ".join(f"{v}×{k}" for k, v in sorted(http.items())))
    if found.get("retry_after_max"):
        parts.append(f"longest Retry-After {found['retry_after_max']:.0f} s (slept by the client before retrying)")
    if found.get("intrusions") is not None:
        parts.append(f"{found['intrusions']} intrusion(s)")
    if found.get("killed_after"):
        parts.append(f"killed after: {found['killed_after']}")
    if found.get("killed_processes"):
        parts.append(f"{found['killed_processes']} processes killed")
    if found.get("seat_hogs"):
        parts.append("seat-holding requests " + ", ".join(f"{v}×{k}" for k, v in sorted(found["seat_hogs"].items())))
    if row.get("fault_held_s"):
        parts.append(f"fault held {row['fault_held_s']} s")
    if row.get("bystander_ready_during_fault") is not None:
        parts.append("management order Ready during the outage: "
                     + ("yes" if row["bystander_ready_during_fault"] else "**no**"))
    return "; ".join(parts) or "-"


def _verdict(row: dict) -> str:
    if row.get("applicable") and not row.get("injected"):
        return "n/a"
    if not row.get("injected"):
        return "**not injected**"
    return "yes" if row.get("converged") else "**no**"


def _row_line(row: dict) -> str:
    ttc = row.get("time_to_converge_s")
    violations = row.get("violations", 0) + row.get("observer_errors", 0)
    return (f"| {row['fault']} | {row['phase']}{' (edge-1)' if row.get('cluster') == 'edge-1' else ''} | "
            f"{row.get('detail', '')} | {_verdict(row)} | {'-' if ttc is None else ttc} | {_evidence(row)} | "
            f"{violations if not violations else f'**{violations}**'} |")


def _problems(rows: List[dict]) -> List[str]:
    lines = []
    for row in rows:
        observed = row.get("observer") or {}
        trouble = (row.get("error") or row.get("crashed_passes") or row.get("fault_error") or observed.get("violations")
                   or observed.get("artifact_leaks") or observed.get("observer_errors")
                   or (row.get("injected") and not row.get("converged")) or not row.get("cleaned_up", True))
        if not trouble:
            continue
        lines.append(f"### `{row['id']}`: {row['fault']}, {row['phase']}")
        lines.append("")
        if row.get("error"):
            lines.append(f"- harness: {row['error']}")
        if row.get("fault_error"):
            lines.append(f"- fault: {row['fault_error']}")
        if row.get("injected") and not row.get("converged"):
            last = row.get("last_pass") or {}
            lines.append(f"- not converged; last pass: rc {last.get('rc')}, failed {last.get('failed')}, "
                         f"msg `{last.get('msg', '')[:400]}`, order summary `{json.dumps(last.get('order'))[:600]}`")
        if row.get("crashed_passes"):
            lines.append("- passes that crashed in the module itself: "
                         + ", ".join(f"{v}× {k}" for k, v in row["crashed_passes"].items()))
        if not row.get("cleaned_up", True):
            lines.append("- the row's clean-up teardown did not finish")
        for episode in observed.get("violations") or []:
            lines.append(f"- **{episode['invariant']}** on `{episode['order']}` from {_utc(episode['first'])} to "
                         f"{_utc(episode['last'])} ({episode['samples']} sample(s)): {episode['detail']}")
        for leak in observed.get("artifact_leaks") or []:
            lines.append(f"- **password in an artifact**: `{leak['file']}` ({leak['matches']} match(es))")
        for error in observed.get("observer_errors") or []:
            lines.append(f"- observer error: {error}")
        if row.get("writes"):
            lines.append(f"- writes of the phase: {'; '.join(row['writes'])}")
        lines.append("")
    return lines


def render(results: dict) -> str:
    rows = results["rows"]
    judged = [r for r in rows if r.get("injected")]
    converged = sum(1 for r in judged if r.get("converged"))
    violations = sum(r.get("violations", 0) for r in rows) + len(results.get("run_leaks") or [])
    samples = sum((r.get("observer") or {}).get("samples", 0) for r in rows)
    blind = {name: sum(((r.get("observer") or {}).get("blind") or {}).get(name, 0) for r in rows)
             for name in INVARIANTS + tuple(n for n in GATEWAY_INVARIANTS if n not in INVARIANTS)}
    out = [
        "# Reliability: the fault matrix",
        "",
        "Generated by `make faults` (`tests/faults/run.py`); do not edit by hand. How it works: "
        "[testing.md](testing.md#the-fault-matrix-make-faults).",
        "",
        f"Run of {results['started']} on {results['host']}, {results['duration_min']} min, commit `{results['commit']}`"
        f"{' plus uncommitted changes in plugins/' if results.get('dirty') else ''}"
        + (f"; load average {results['load_average'][0]} / {results['load_average'][2]} (1 / 15 min) at its end: "
           "other test runs shared the cores, so times are upper bounds" if results.get("load_average") else "")
        + ".",
        "",
        f"**{len(rows)} rows; {len(judged)} with the fault injected, {converged} of them converged; "
        f"{violations} invariant violation(s).** The observer took {samples} samples "
        f"(every {results['interval']} s per order); samples it could not judge because a server was down: "
        + ", ".join(f"{name} {count}" for name, count in blind.items()) + ".",
        "",
        "Time to converge is measured from the moment the fault was lifted (server started again, APF objects "
        "removed, last intrusion, the kill) to the first pass after which the phase's goal held on the real "
        "systems: Ready with the current generation's password delivered and accepted by Keystone, with a pass "
        "that wrote nothing (provision, rotation); the order, every labelled child, the OpenBao path and the "
        "Keystone user gone (teardown). Passes run at most 2 s apart (the earliest requeue, capped), as an "
        "event-driven controller would run them.",
        "",
        "| fault | phase | where / how | converged | time to converge (s) | what the passes met | violations |",
        "|---|---|---|---|---|---|---|",
    ]
    out += [_row_line(row) for row in rows]
    out += ["", "## Rows that need attention", ""]
    problems = _problems(rows)
    out += problems or ["None.", ""]
    out += ["## Write points of the SIGKILL rows", "",
            "The unkilled baseline of each phase, its writes in order (counted from the phase's action); "
            "row `sigkill/<phase>/<k>` kills the pass right after write k.", ""]
    for phase, writes in (results.get("write_points") or {}).items():
        out.append(f"- **{phase}**: " + "; ".join(f"{i}. {w}" for i, w in enumerate(writes, start=1)))
    out += ["", "## Invariants", "",
            "Checked by `tests/faults/c5c3faults/observer.py` against the real systems every "
            f"{results['interval']} s per order, from before the phase's action to after the row's clean-up:", "",
            "| invariant | holds when |", "|---|---|",
            "| recoverable | while the order exists and is not being deleted and Keystone has its user, one of the "
            "candidate passwords (its `-password-v<N>` Secrets, the OpenBao backup) authenticates as that user |",
            "| delivered-authenticates | the delivered Secret's `password` equals the password in its `clouds.yaml` and "
            "authenticates, or a rotation is in flight: the K-ORC User's `passwordRef` names a newer generation "
            "than the one the delivered password was seen in (no grace period: the old password fails from "
            "K-ORC's apply until the delivered Secret is rewritten after ESO's push) |",
            "| ready-authenticates | an order with Ready=True has a delivered password that authenticates |",
            "| no-orphan | once the order is gone, nothing labelled for it is left in the ControlPlane's namespace, "
            "OpenBao has nothing at its path, Keystone has no user of its name |",
            "| no-secret-in-status | no password ever seen appears in the order's status |",
            "| no password in artifacts | no password ever seen appears in a row's pass outputs, hook logs, events "
            "(row namespaces and the ControlPlane's), observer output, controller state; and, after the run, in "
            "any file under the matrix's stack directory except the stores named below |", "",
            "", "The object-storage rows (`gateway-*`, kind BucketCredential on the Tentacle gateway) are judged by "
            "`tests/faults/c5c3faults/ostorage.py` against the gateway's admin API and IAM:", "",
            "| invariant | holds when |", "|---|---|",
            "| backup-first | a key the delivered `<name>-s3` carries is in OpenBao (a live version at the path the "
            "order's or its account's PushSecret names) when the observer first sees it delivered |",
            "| key-recorded | every access key on the order's IAM user is recorded by one of its key Secrets or its "
            "status (`slots`, `retiringKeys`), every key on the account's root user by `<account>-root-key`; a key "
            f"counts as unrecorded once it stayed so {GRACE:.0f} s |",
            "| keys-within-plan | the IAM user holds at most its slots (spec or status) plus one while a key is "
            "replaced, never above 4; the root at most 2 |",
            "| no-secret-in-status | no secret key ever seen appears in the order's status |",
            "| no-orphan | once the order is gone, nothing labelled for it is left and the gateway rejects every "
            "key it ever held (`GET /admin/user?access-key=` answers 404) |", "",
            "A suspected violation counts only when a second read that saw the same objects (resourceVersions, "
            "backup, Keystone user) shows it again; reads in between which objects moved are re-done "
            f"({sum((r.get('observer') or {}).get('unconfirmed', 0) for r in rows)} such readings in this run). "
            f"Longest rotation in flight seen: "
            f"{max([(r.get('observer') or {}).get('longest_in_flight_s', 0) for r in rows] or [0])} s.", "",
            "## The run's own stack", ""]
    out += results.get("stack_notes") or []
    leaks = results.get("run_leaks") or []
    out += ["", f"Secrets scan after the run: {results.get('run_scanned', 0)} files under the stack directory "
            f"(logs of every server, pass outputs, hook logs, events, controller state and runner artifacts), "
            f"skipping {', '.join(results.get('run_skipped') or [])}: "
            + ("no password found." if not leaks else ", ".join(f"`{l['file']}` ({l['matches']})" for l in leaks)), ""]
    return "\n".join(out)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    results = json.loads(Path(argv[0]).read_text())
    Path(argv[1]).write_text(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
