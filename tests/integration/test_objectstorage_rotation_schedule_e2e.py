"""Scheduled rotation with overlap end to end on the real Tentacle gateway (docs/bucketcredential-crd.md "Scheduled
rotation"): c5c3.orders.objectstorage_reconcile run as Ansible runs it, passes limited to the test's namespace.

An order with ``rotation: {interval: 20s, overlap: 8s}``; a client that re-reads the delivered Secret before every
request and signs it with the ``AWS_*`` keys keeps working through two full scheduled rotations while the keys
change under it. Each replaced key works until its overlap has passed and is rejected by the gateway after it.
``spec.slots`` is never edited. Needs a served CRD with ``spec.rotation`` (the served schema prunes it otherwise).
"""
import time

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps

from objectstores import converged, reconcile_until, run_pass, tenant_namespace

ORDER = "scheduled"
CREDENTIAL = "BucketCredential"
INTERVAL, OVERLAP = 20, 8


def test_a_client_on_aws_keys_keeps_working_through_two_scheduled_rotations(stack, storage):
    with tenant_namespace(stack, storage, "os-rot-sched") as ns:
        bucket = f"{ns}-sched"
        storage.create_credential(ns, ORDER, bucket, rotation={"interval": f"{INTERVAL}s", "overlap": f"{OVERLAP}s"})
        if not storage.get(CREDENTIAL, ns, ORDER)["spec"].get("rotation"):
            pytest.fail("the served BucketCredential CRD has no spec.rotation (apply the CRD that defines it)")
        reconcile_until(converged(CREDENTIAL, ns, ORDER), namespaces=[ns], what="the first key to be delivered")
        order = storage.get(CREDENTIAL, ns, ORDER)
        assert order["status"]["rotation"]["phase"] == "Idle" and order["status"].get("nextRotation")

        keys = [storage.delivered_key(ns, ORDER)]
        replaced_at = {}   # access key -> when AWS_* first carried its successor
        rejected = set()
        requests = 0
        deadline = time.monotonic() + 4 * INTERVAL + 120
        while len(rejected) < 2:
            assert time.monotonic() < deadline, f"two rotations not complete; status: {order.get('status')}"
            run_pass(namespaces=[ns])
            current = storage.delivered_key(ns, ORDER)  # re-read before every request, as a reloading client does
            assert current is not None, "the delivered Secret always carries AWS_*"
            assert storage.round_trip(storage.s3(current), bucket, f"object-{requests}.txt"), \
                "a request signed with the delivered AWS_* keys failed"
            requests += 1
            if current.access_key != keys[-1].access_key:
                replaced_at[keys[-1].access_key] = time.monotonic()
                keys.append(current)
            for old in keys[:-1]:
                if old.access_key in rejected:
                    continue
                code = storage.error_code(lambda old=old: storage.s3(old).list_objects_v2(Bucket=bucket))
                if code is None:
                    continue
                assert code == "InvalidAccessKeyId", code
                assert time.monotonic() - replaced_at[old.access_key] >= OVERLAP - 1, \
                    "a replaced key was rejected before its overlap passed"
                rejected.add(old.access_key)
            order = storage.get(CREDENTIAL, ns, ORDER)
            time.sleep(0.5)

        assert len({k.access_key for k in keys}) >= 3, "two rotations gave two new keys"
        for old in keys[:-1]:
            assert storage.error_code(lambda old=old: storage.s3(old).list_objects_v2(Bucket=bucket)) == \
                "InvalidAccessKeyId", "a replaced key is rejected after its overlap"
        order = storage.get(CREDENTIAL, ns, ORDER)
        assert order["spec"]["slots"] == [{"slot": 1, "generation": 1}], "the pass never edits spec.slots"
        assert timestamps.parse(order["status"]["nextRotation"]) is not None
        storage.delete(CREDENTIAL, ns, ORDER)
        reconcile_until(lambda r: storage.get(CREDENTIAL, ns, ORDER) is None, namespaces=[ns],
                        what="the order to be released")
