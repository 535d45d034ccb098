"""Scheduled root key rotation with overlap end to end on the real Tentacle gateway (docs/objectstoreaccount-crd.md
"Scheduled root key rotation"): c5c3.orders.objectstorage_reconcile run as Ansible runs it, passes limited to the
test's namespace.

A tenant's first order gets its account; the account is given ``rootKeyRotationSchedule: {interval: 20s, overlap:
8s}`` and rotates its root key twice. Each replaced root key keeps working at the gateway for the overlap and is
rejected after it; the key ``<account>-root-key`` carries always works; the order's delivered key works throughout
(the passes sign with the new root key); at the end the root holds one key. ``spec.rootKeyRotation`` is never
edited. Needs a served CRD with ``spec.rootKeyRotationSchedule`` (the served schema prunes it otherwise).
"""
import time
from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps

from objectstores import CP_NS, converged, reconcile_until, run_pass, tenant_namespace

ORDER = "root-sched"
ACCOUNT = "ObjectStoreAccount"
CREDENTIAL = "BucketCredential"
INTERVAL, OVERLAP = 20, 8
STEPS = ("RootKeyRotationStarted", "RootKeyIssued", "RootKeyBackedUp", "RootKeyOverlapStarted", "RootKeyOverlapEnded",
         "RootKeyRevoked", "RootKeyRotationCompleted")


def test_the_root_key_rotates_twice_on_schedule_and_the_old_key_works_for_the_overlap(stack, storage):
    with tenant_namespace(stack, storage, "os-root-sched") as ns:
        bucket = f"{ns}-root"
        storage.create_credential(ns, ORDER, bucket)
        reconcile_until(converged(CREDENTIAL, ns, ORDER), namespaces=[ns], what="the first key to be delivered")
        name = storage.account_of(ns)["metadata"]["name"]
        storage.patch_account(name, {"rootKeyRotationSchedule": {"interval": f"{INTERVAL}s",
                                                                 "overlap": f"{OVERLAP}s"}})
        if not storage.get(ACCOUNT, CP_NS, name)["spec"].get("rootKeyRotationSchedule"):
            pytest.fail("the served ObjectStoreAccount CRD has no spec.rootKeyRotationSchedule (apply the CRD that "
                        "defines it)")
        reconcile_until(converged(ACCOUNT, CP_NS, name), namespaces=[ns], what="the schedule to be recorded")
        account = storage.get(ACCOUNT, CP_NS, name)
        first_rotation = account["status"]["rootKeyRotation"]
        assert timestamps.parse(account["status"]["nextRootKeyRotation"]) is not None
        assert timestamps.parse(account["status"]["rootKeyCreated"]) is not None

        keys = [storage.account_key(name)]
        replaced_at = {}   # access key -> when <account>-root-key first carried its successor
        worked_in_overlap = set()
        rejected = set()
        outputs = []
        deadline = time.monotonic() + 4 * INTERVAL + 180
        while len(rejected) < 2:
            assert time.monotonic() < deadline, f"two rotations not complete; status: {account.get('status')}"
            outputs.append(run_pass(namespaces=[ns])["_stdout"])
            current = storage.account_key(name)
            assert current is not None, "<account>-root-key always carries a key"
            assert storage.error_code(lambda: storage.s3(current).list_buckets()) is None, \
                "the root key <account>-root-key carries is rejected"
            delivered = storage.delivered_key(ns, ORDER)
            assert delivered is not None and storage.error_code(
                lambda: storage.s3(delivered).list_objects_v2(Bucket=bucket)) is None, \
                "the order's delivered key stopped working"
            if current.access_key != keys[-1].access_key:
                replaced_at[keys[-1].access_key] = time.monotonic()
                keys.append(current)
            account = storage.get(ACCOUNT, CP_NS, name)
            in_overlap = "rootKeyOverlapEnds" in account["status"]
            for old in keys[:-1]:
                if old.access_key in rejected:
                    continue
                code = storage.error_code(lambda old=old: storage.s3(old).list_buckets())
                if code is None:
                    if in_overlap:
                        worked_in_overlap.add(old.access_key)
                    continue
                assert code == "InvalidAccessKeyId", code
                assert time.monotonic() - replaced_at[old.access_key] >= OVERLAP - 1, \
                    "a replaced root key was rejected before its overlap passed"
                rejected.add(old.access_key)
            time.sleep(0.5)

        assert len({k.access_key for k in keys}) == 3, "two rotations gave two new root keys"
        assert worked_in_overlap == {k.access_key for k in keys[:-1]}, "each old root key worked during its overlap"
        for old in keys[:-1]:
            assert storage.error_code(lambda old=old: storage.s3(old).list_buckets()) == "InvalidAccessKeyId", \
                "a replaced root key is rejected after its overlap"
        account = storage.get(ACCOUNT, CP_NS, name)
        if account["status"]["rootKeyRotation"] == first_rotation + 2 and "rootKeyOverlapEnds" not in account["status"]:
            created = timestamps.parse(account["status"]["rootKeyCreated"])
            assert account["status"]["nextRootKeyRotation"] == \
                timestamps.render(timestamps.add(created, timedelta(seconds=INTERVAL)))
        # off before the account settles: on a loaded machine a third rotation may come due meanwhile (and, begun,
        # runs to its end)
        storage.patch_account(name, {"rootKeyRotationSchedule": {"interval": "0s"}})
        reconcile_until(converged(ACCOUNT, CP_NS, name), namespaces=[ns], what="the account to settle")
        account = storage.get(ACCOUNT, CP_NS, name)
        assert account["spec"]["rootKeyRotation"] == 1, "the pass never edits spec.rootKeyRotation"
        assert account["status"]["rootKeyRotation"] in (first_rotation + 2, first_rotation + 3), account["status"]
        assert "rootKeyOverlapEnds" not in account["status"] and "nextRootKeyRotation" not in account["status"]
        current = storage.account_key(name)
        listed = storage.iam(current).list_access_keys()
        assert [k["AccessKeyId"] for k in listed] == [current.access_key], "the root holds one key at the end"
        reasons = [r for r, _t, _m in storage.events(CP_NS, name)]
        for step in STEPS:
            assert reasons.count(step) >= 2, (step, reasons)
        secrets = [k.secret_key for k in keys]
        assert not any(s in out for s in secrets for out in outputs), "a root secret reached a pass's output"
