"""Running one row of the matrix: a fault in a phase, on a fresh order in a fresh assigned namespace, with the
observer sampling from before the phase until after the row's clean-up teardown."""
import json
import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Set

from . import secretscan
from .injectors import Fault
from .ostorage import OS_PHASES, OsWorld
from .ostorage import PrepareFailed as OsPrepareFailed
from .phases import PHASES, PrepareFailed
from .stackenv import StackHandle
from .world import World

CONVERGE_TIMEOUT = 300


@dataclass
class Row:
    id: str
    fault: str
    phase: str
    make_fault: Callable[[], Fault]
    detail: str = ""
    cluster: str = ""
    bystander: bool = False
    applicable: str = ""  # non-empty: why a fault cannot bite in this phase (still run and reported)
    kind: str = "KeystoneUser"  # or "BucketCredential": the object-storage phases and world (ostorage.py)


@dataclass
class RowOutcome:
    result: dict
    secrets: Set[str] = field(default_factory=set)
    writes: List[dict] = field(default_factory=list)


def _finished(world: World, fault: Fault, phase, state: dict) -> Callable[[], bool]:
    def check() -> bool:
        fault.observe(world)
        if fault.error:
            return True
        if not phase.done(world):
            return False
        if fault.injected_at is None:
            state["missed"] = True
            return True
        if not fault.lifted:
            return False
        state["converged_at"] = time.time()
        return True
    return check


def run_row(row: Row, stack: StackHandle, workdir: Path, hook: Optional[Callable[[World], None]] = None) -> RowOutcome:
    """Run ``row``; ``hook(world)`` (tests) runs after the row's world is set up."""
    shutil.rmtree(workdir, ignore_errors=True)
    objectstorage = row.kind == "BucketCredential"
    world = (OsWorld if objectstorage else World)(stack, workdir, cluster=row.cluster, bystander=row.bystander)
    fault = row.make_fault()
    if hasattr(fault, "hold_until") and row.bystander and fault.hold_until is None:
        fault.hold_until = lambda w: w.bystander_ready()
    phase = (OS_PHASES if objectstorage else PHASES)[row.phase]
    result = {"id": row.id, "fault": row.fault, "phase": row.phase, "detail": row.detail, "kind": row.kind,
              "cluster": row.cluster or "management", "applicable": row.applicable}
    state: dict = {}
    started = time.time()
    try:
        world.setup()
        if hook:
            hook(world)
        phase.prepare(world)
        world.driver.reset_write_count()
        world.acted_at = time.time()
        fault.arm(world)
        phase.act(world)
        world.driver.drive(_finished(world, fault, phase, state), CONVERGE_TIMEOUT)
    except (PrepareFailed, OsPrepareFailed) as exc:
        result["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - a harness failure is reported on its row, the matrix goes on
        result["error"] = f"{type(exc).__name__}: {exc}"
        (workdir / "harness-error.txt").write_text(traceback.format_exc())
    finally:
        world.finished.set()
        try:
            fault.settle(world)
        except Exception as exc:  # noqa: BLE001
            result.setdefault("error", f"lifting the fault: {exc}")
    fault.observe(world)
    writes = [r for r in world.driver.requests() if r.get("write") and r["t"] >= (world.acted_at or started)]
    result.update({
        "injected": fault.injected_at is not None,
        "fault_error": fault.error,
        "notes": list(fault.notes),
        "converged": bool(state.get("converged_at")) and not fault.error and "error" not in result,
        "time_to_converge_s": (round(state["converged_at"] - fault.lifted_at, 1)
                               if state.get("converged_at") and fault.lifted_at else None),
        "fault_held_s": (round(fault.lifted_at - fault.injected_at, 1)
                         if fault.lifted_at and fault.injected_at else None),
        "evidence": fault.evidence(world),
        "writes": [world.describe_write(w) for w in writes],
    })
    if row.bystander:
        result["bystander_ready_during_fault"] = getattr(fault, "condition_met", None)
    last = world.driver.records[-1] if world.driver.records else None
    if last is not None and not result["converged"]:
        summary = last.summary(world.key[1], world.key[2], world.key[0])
        result["last_pass"] = {"rc": last.rc, "failed": last.failed, "msg": last.msg, "order": summary}
    result["passes"] = len(world.driver.records)
    result["failed_passes"] = sum(1 for r in world.driver.records if r.failed and not r.killed)
    result["killed_passes"] = sum(1 for r in world.driver.records if r.killed)
    crashes = sorted({r.crash for r in world.driver.records if r.crash})
    if crashes:  # the module itself died (e.g. a half-edited working tree): the row says so
        result["crashed_passes"] = {kind: sum(1 for r in world.driver.records if r.crash == kind) for kind in crashes}
    result["cleaned_up"] = world.teardown_all()
    return finish_row(world, result, workdir, started, writes)


def finish_row(world: World, result: dict, workdir: Path, started: float, writes=()) -> RowOutcome:
    """The row's last observation, its events dumped, the secrets scan of everything it wrote, its result file."""
    world.observer.sample_now()
    world.dump_events()
    observed = world.observer.report()
    secrets = world.observer.seen_secrets
    world.close()
    (workdir / "observer.json").write_text(json.dumps(observed, indent=1))
    leaks, scanned = secretscan.scan([workdir], secrets)
    observed["artifact_leaks"] = leaks
    observed["artifacts_scanned"] = scanned
    result["observer"] = observed
    result["violations"] = len(observed["violations"]) + len(leaks)
    result["observer_errors"] = len(observed["observer_errors"])
    result["duration_s"] = round(time.time() - started, 1)
    (workdir / "result.json").write_text(json.dumps(result, indent=1))
    return RowOutcome(result, secrets, list(writes))
