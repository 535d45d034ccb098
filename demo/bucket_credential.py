"""The object-storage part of `make demo`: a BucketCredential ordered from the demo namespace on the stack's real
Ceph RGW (Tentacle), its delivered key used with an S3 client, a rotation through slot 2 and the revocation of
slot 1, after which the gateway rejects the old key.

The demo stops its controller after the KeystoneUser part (the controller watches the object-storage kinds too, see
docs/object-storage.md), so that each step here is shown by one pass: this part runs the object-storage pass itself,
pass after pass: ``c5c3.orders.objectstorage_reconcile`` executed as Ansible executes a module (the module file with its
arguments), limited to the demo namespace. Nothing here prints a key: keys are shown by a short fingerprint.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3
import yaml
from botocore.config import Config
from botocore.exceptions import ClientError

REPO = Path(__file__).resolve().parents[1]
MODULE = REPO / "plugins" / "modules" / "objectstorage_reconcile.py"
CP_NAMESPACE, STORE = "openstack", "demo-rgw"
NAME = "photos"


def kubectl(*args, stdin=None, check=True):
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, check=check).stdout


def fingerprint(access_key):
    """Which key it is, without showing it."""
    return "key#" + hashlib.sha256(access_key.encode()).hexdigest()[:8]


class BucketDemo:
    def __init__(self, namespace):
        self.namespace = namespace
        self.bucket = f"{namespace}-{NAME}"
        self.passes = 0

    # -- the pass, as Ansible runs the module --------------------------------------------------------------------
    def run_pass(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as args:
            json.dump({"ANSIBLE_MODULE_ARGS": {"namespaces": [self.namespace]}}, args)
        try:
            proc = subprocess.run([sys.executable, str(MODULE), args.name], capture_output=True, text=True,
                                  env=dict(os.environ, PYTHONPATH=str(REPO / ".collections")), timeout=300)
        finally:
            os.unlink(args.name)
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            sys.exit(f"the object-storage pass printed no result (rc {proc.returncode})")
        if result.get("failed"):
            sys.exit(f"the object-storage pass failed: {result.get('msg')}")
        self.passes += 1
        actions = [a for e in result["orders"] for a in e.get("actions", [])]
        print(f"   pass {self.passes}: {len(actions)} action(s), api_writes={result['api_writes']} "
              f"gateway_requests={result['gateway_requests']} gateway_writes={result['gateway_writes']}")
        for action in actions[:6]:
            print(f"      {action[:150]}")
        if len(actions) > 6:
            print(f"      ... {len(actions) - 6} more")
        return result

    def until(self, check, what, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.run_pass()
            if check():
                return
            time.sleep(0.2)
        sys.exit(f"timed out after {timeout}s waiting for {what}")

    # -- what the tenant sees ------------------------------------------------------------------------------------
    def order(self):
        found = kubectl("get", "bucketcredential", "-n", self.namespace, NAME, "-o", "json", check=False)
        return json.loads(found) if found else None

    def ready(self):
        conditions = ((self.order() or {}).get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    def slots(self):
        return [s["slot"] for s in ((self.order() or {}).get("status") or {}).get("slots") or []]

    def events(self):
        """The reasons of the Events on the order (this one, not an earlier demo's), oldest first."""
        uid = (self.order() or {}).get("metadata", {}).get("uid", "")
        events = json.loads(kubectl("get", "events", "-n", self.namespace, "--field-selector",
                                    f"involvedObject.uid={uid}", "-o", "json"))["items"]
        events.sort(key=lambda e: e.get("lastTimestamp") or e["metadata"]["creationTimestamp"])
        return [e["reason"] for e in events]

    def delivered(self):
        data = yaml.safe_load(kubectl("get", "secret", "-n", self.namespace, f"{NAME}-s3", "-o", "yaml"))["data"]
        return {k: base64.b64decode(v).decode() for k, v in data.items()}

    def s3(self, delivered, slot=None):
        access, secret = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if slot is None else \
            (f"slot{slot}-access-key-id", f"slot{slot}-secret-access-key")
        return boto3.session.Session().client(
            "s3", endpoint_url=delivered["endpoint"], region_name=delivered["region"],
            aws_access_key_id=delivered[access], aws_secret_access_key=delivered[secret],
            config=Config(signature_version="v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    @staticmethod
    def attempt(call):
        """``ok``, or the HTTP status and S3 error code the gateway answered."""
        try:
            call()
        except ClientError as exc:
            return f"{exc.response['ResponseMetadata']['HTTPStatusCode']} {exc.response['Error']['Code']}"
        return "ok"

    # -- the demo --------------------------------------------------------------------------------------------------
    def ensure_store(self):
        """The ObjectStore ``demo-rgw`` on the stack's Tentacle gateway, with its admin credential (kept)."""
        kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([
            {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
             "metadata": {"name": f"{STORE}-admin", "namespace": CP_NAMESPACE},
             "stringData": {"accessKey": os.environ["RGW_ADMIN_ACCESS_KEY"],
                            "secretKey": os.environ["RGW_ADMIN_SECRET_KEY"]}},
            {"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStore",
             "metadata": {"name": STORE, "namespace": CP_NAMESPACE},
             "spec": {"endpoint": os.environ["RGW_ENDPOINT"], "region": os.environ.get("RGW_REGION", "us-east-1"),
                      "adminCredentialsRef": {"name": f"{STORE}-admin"},
                      "controlPlaneRef": {"name": "cp", "namespace": CP_NAMESPACE}}}]))

    def slot_patch(self, *slots):
        kubectl("patch", "bucketcredential", "-n", self.namespace, NAME, "--type", "merge", "-p",
                json.dumps({"spec": {"slots": [{"slot": s, "generation": 1} for s in slots]}}))

    def run(self):
        print(f"== object storage: ObjectStore {CP_NAMESPACE}/{STORE} on the stack's Ceph RGW Tentacle "
              f"({os.environ['RGW_ENDPOINT']}); the object-storage pass runs limited to {self.namespace}")
        self.ensure_store()
        if self.order() is not None:
            print(f"== an earlier demo's BucketCredential {self.namespace}/{NAME} exists: deleting it (its keys are "
                  "revoked at the gateway, the bucket stays)")
            kubectl("delete", "bucketcredential", "-n", self.namespace, NAME, "--wait=false")
            self.until(lambda: self.order() is None, "the teardown")

        print(f"== ordering BucketCredential {self.namespace}/{NAME} for bucket {self.bucket}")
        started = time.monotonic()
        kubectl("apply", "-f", "-", stdin=yaml.safe_dump({
            "apiVersion": "c5c3.io/v1alpha1", "kind": "BucketCredential",
            "metadata": {"name": NAME, "namespace": self.namespace},
            "spec": {"objectStoreRef": {"name": STORE, "namespace": CP_NAMESPACE}, "bucket": self.bucket}}))
        self.until(self.ready, "the order to become Ready")
        print(f"   Ready after {time.monotonic() - started:.1f}s ({self.passes} passes so far)")
        print(kubectl("get", "bucketcredential", "-n", self.namespace, NAME))
        print(kubectl("get", "objectstoreaccount", "-n", CP_NAMESPACE, "-l", f"c5c3.io/objectstore-name={STORE}"))
        first = self.delivered()
        slot1 = fingerprint(first["slot1-access-key-id"])
        s3 = self.s3(first)
        s3.put_object(Bucket=self.bucket, Key="hello.txt", Body=b"hello from the demo")
        body = s3.get_object(Bucket=self.bucket, Key="hello.txt")["Body"].read()
        print(f"   S3 with the delivered key ({slot1}, slot 1): put and get hello.txt in {self.bucket}: "
              f"{'ok' if body == b'hello from the demo' else 'MISMATCH'}")

        print("== rotating: slot 2 added (spec.slots [1, 2]); both keys work during the overlap")
        self.slot_patch(1, 2)
        self.until(lambda: self.slots() == [1, 2] and self.ready()
                   and "slot2-access-key-id" in self.delivered(), "slot 2 to be delivered")
        both = self.delivered()
        slot2 = fingerprint(both["slot2-access-key-id"])
        for slot, label in ((1, slot1), (2, slot2)):
            answer = self.attempt(lambda: self.s3(both, slot).get_object(Bucket=self.bucket, Key="hello.txt"))
            print(f"   slot {slot} ({label}): get hello.txt: {answer}")
        print(f"   AWS_ACCESS_KEY_ID is now {fingerprint(both['AWS_ACCESS_KEY_ID'])} (the newest key)")

        print("== revoking slot 1 (spec.slots [2]): the key is deleted at the gateway once the Secret no longer "
              "carries it")
        self.slot_patch(2)
        self.until(lambda: self.slots() == [2] and "KeyRevoked" in self.events(), "slot 1 to be revoked")
        answer = self.attempt(lambda: self.s3(first).get_object(Bucket=self.bucket, Key="hello.txt"))
        print(f"   the old slot 1 key ({slot1}): get hello.txt: {answer}  <- rejected by the gateway")
        after = self.delivered()
        answer = self.attempt(lambda: self.s3(after).get_object(Bucket=self.bucket, Key="hello.txt"))
        print(f"   the delivered key ({fingerprint(after['AWS_ACCESS_KEY_ID'])}, slot 2): get hello.txt: {answer}")
        print(kubectl("get", "bucketcredential", "-n", self.namespace, NAME))
        print("   Events on the order: " + ", ".join(self.events()))
        print(f"   {self.passes} object-storage passes in all")
