"""A few rows of the fault matrix (``make faults``, tests/faults/) in every ``make test``.

Only faults that disturb nobody else run here, on the shared stack: a conflicting write by another field manager
and the pass process SIGKILLed at the riskiest write points of a first provision, a rotation and a teardown.
The faults that stop servers (etcd, Keystone, OpenBao, K-ORC, ESO, a target cluster) or need API Priority and
Fairness run only in ``make faults``, on the matrix's own stack. Each row uses a fresh assigned namespace and
order, with the invariant observer sampling throughout; a row must converge with zero violations.
"""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
from c5c3faults import secretscan  # noqa: E402
from c5c3faults.injectors import Intrude, KillPass  # noqa: E402
from c5c3faults.matrix import PASSWORD_CREATE, PUSH_DELETE, USER_APPLY  # noqa: E402
from c5c3faults.rows import Row, run_row  # noqa: E402
from c5c3faults.stackenv import shared_stack  # noqa: E402

ROWS = [
    Row("conflict/provision", "conflicting write by another field manager (409)", "provision",
        lambda: Intrude(times=2), detail="before each of 2 preconditioned writes"),
    Row("sigkill/provision/after-password-secret", "pass SIGKILLed", "provision",
        lambda: KillPass(after_match=PASSWORD_CREATE), detail="after the first password Secret is created"),
    Row("sigkill/rotation/after-user-apply", "pass SIGKILLed", "rotation",
        lambda: KillPass(after_match=USER_APPLY), detail="after the User is pointed at the new password"),
    Row("sigkill/teardown/after-pushsecret-delete", "pass SIGKILLed", "teardown",
        lambda: KillPass(after_match=PUSH_DELETE), detail="after the backup's PushSecret is deleted"),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_fault_row_converges_with_no_violation(row, stack_env, tmp_path):
    stack = shared_stack()
    result = run_row(row, stack, tmp_path)
    outcome = result.result
    assert not outcome.get("error"), f"{row.id}: {outcome.get('error')}"
    assert outcome["injected"], f"{row.id}: the fault never happened; writes of the phase: {outcome['writes']}"
    assert outcome["converged"], f"{row.id}: did not converge; last pass: {outcome.get('last_pass')}"
    episodes = outcome["observer"]["violations"]
    assert not episodes, f"{row.id}: invariant violations: " + "; ".join(
        f"{e['invariant']} on {e['order']} ({e['samples']} samples): {e['detail']}" for e in episodes)
    assert not outcome["observer"]["artifact_leaks"], f"{row.id}: passwords in {outcome['observer']['artifact_leaks']}"
    assert outcome["observer_errors"] == 0, f"{row.id}: observer errors {outcome['observer']['observer_errors']}"
    assert outcome["cleaned_up"], f"{row.id}: the row's orders were not torn down"
    leaks, _ = secretscan.scan([stack.state / "logs"], result.secrets)
    assert not leaks, f"{row.id}: passwords in the shared stack's logs: {leaks}"
