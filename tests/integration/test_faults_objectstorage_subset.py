"""A few object-storage rows of the fault matrix (``make faults``, tests/faults/) in every ``make test``.

Only faults that disturb nobody else run here, on the shared stack's Tentacle gateway: the reconcile pass SIGKILLed
right after the gateway answered a write, before the pass could record what it did, at the riskiest points of a
key's life: right after the order's own key was created (CreateAccessKey; its key Secret not yet written), right
after slot 1's key was deleted when the slot was removed, and right after a scheduled root key rotation deleted the
old root key once its overlap ended (before the pass recorded the rotation as done). Freezing or killing the
gateway, and stopping OpenBao or ESO while a key is issued, run only in ``make faults`` on the matrix's own stack.
Each row uses a fresh tenant namespace, order and RGW account, with the gateway observer
(tests/faults/c5c3faults/ostorage.py) sampling throughout; a row must converge with zero violations: no key
delivered before its backup, no key left live without a record, never more keys on the IAM user than planned, every
key rejected once the order is gone.
"""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
from c5c3faults import secretscan  # noqa: E402
from c5c3faults.injectors import KillPass  # noqa: E402
from c5c3faults.matrix import KEY_ISSUE, KEY_REVOKE, OS  # noqa: E402
from c5c3faults.rows import Row, run_row  # noqa: E402
from c5c3faults.stackenv import shared_stack  # noqa: E402

from rgwenv import require  # noqa: E402

ROWS = [
    # a new account's root key comes with its root user (PUT /admin/user): the phase's one CreateAccessKey is the
    # order's key, and the kill lands before its key Secret exists
    Row("gateway-sigkill/issue/after-order-key", "pass SIGKILLed", "issue",
        lambda: KillPass(after_match=KEY_ISSUE), detail="right after the order's key is created", kind=OS),
    Row("gateway-sigkill/revoke-slot/after-revoke", "pass SIGKILLed", "revoke-slot",
        lambda: KillPass(after_match=KEY_REVOKE), detail="right after slot 1's key is deleted", kind=OS),
    # the phase's one delete is the old root key's, after the overlap (docs/objectstoreaccount-crd.md)
    Row("gateway-sigkill/rotate-root-scheduled/after-old-root-key", "pass SIGKILLed", "rotate-root-scheduled",
        lambda: KillPass(after_match=KEY_REVOKE), detail="right after the old root key is deleted", kind=OS),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_gateway_fault_row_converges_with_no_violation(row, stack_env, tmp_path):
    require(stack_env)
    stack = shared_stack()
    result = run_row(row, stack, tmp_path)
    outcome = result.result
    assert not outcome.get("error"), f"{row.id}: {outcome.get('error')}"
    assert outcome["injected"], f"{row.id}: the fault never happened; writes of the phase: {outcome['writes']}"
    assert outcome["converged"], f"{row.id}: did not converge; last pass: {outcome.get('last_pass')}"
    episodes = outcome["observer"]["violations"]
    assert not episodes, f"{row.id}: invariant violations: " + "; ".join(
        f"{e['invariant']} on {e['order']} ({e['samples']} samples): {e['detail']}" for e in episodes)
    assert outcome["observer"]["samples"] > 0 and outcome["observer"]["keys_seen"] > 0, \
        f"{row.id}: the observer never saw a key at the gateway: {outcome['observer']}"
    assert not outcome["observer"]["artifact_leaks"], f"{row.id}: keys in {outcome['observer']['artifact_leaks']}"
    assert outcome["observer_errors"] == 0, f"{row.id}: observer errors {outcome['observer']['observer_errors']}"
    assert outcome["cleaned_up"], f"{row.id}: the row's order was not torn down"
    leaks, _ = secretscan.scan([stack.state / "logs"], result.secrets)
    assert not leaks, f"{row.id}: keys in the shared stack's logs: {leaks}"
