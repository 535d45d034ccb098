#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the ObjectStoreAccount admission corpus (the format: tests/crd/crdcorpus.py).

One refused case per constraint of roles/install/files/crds/c5c3.io_objectstoreaccounts.yaml, and the
accounts at the edge of a constraint that the API server must admit.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crdcorpus import (  # noqa: E402 - the shared format lives one folder up
    DNS_LABEL, Cases, Corpus, admitted, condition, condition_refusals, object_refusals, ref_name_cases, resource,
    schedule_refusals, with_status)

KIND = "ObjectStoreAccount"
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
RGW_UID = r"^[A-Za-z0-9_.@$+=-]+$"
ACCOUNT_ID = r"^RGW[0-9]{17}$"
ACCOUNT = "RGW12345678901234567"
UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
UID_A = "3f1c9a4e-6d0b-4c1f-9e2a-0b7d5c3e8f10"
UID_B = "9b2e7d61-0c4a-4f3e-8d15-6a7b8c9d0e1f"
TENANT_FROZEN = "tenant is immutable but for namespaceUID"
SCHEDULE = "rootKeyRotationSchedule"
LEGACY_FROZEN = "legacyUser is set at creation only, never added, changed or removed"


def account(name: str, **spec) -> dict:
    """An ObjectStoreAccount of store ``rgw`` for tenant namespace ``tenant-a`` unless given otherwise."""
    spec.setdefault("objectStoreRef", {"name": "rgw"})
    spec.setdefault("tenant", {"namespace": "tenant-a"})
    return resource(KIND, name, spec)


CASES = Cases(account)


INVALID = [
    *object_refusals(CASES, KIND, "an account"),
    # objectStoreRef
    *ref_name_cases(CASES, "objectStoreRef", {"name": "rgw"}, 63, "an account"),
    CASES.changed("objectstoreref-name-changed", "objectStoreRef.name changed",
                  "objectStoreRef.name is immutable", "spec.objectStoreRef.name",
                  {}, {"objectStoreRef": {"name": "rgw2"}}),
    # tenant
    CASES.created("tenant-missing", "an account without tenant", "required",
                  "spec.tenant: Required value", "spec.tenant", tenant=None),
    CASES.created("tenant-namespace-missing", "tenant without namespace", "required",
                  "spec.tenant.namespace: Required value", "spec.tenant.namespace", tenant={"cluster": "edge-1"}),
    CASES.created("tenant-namespace-pattern", "tenant.namespace not an RFC-1123 label", "pattern",
                  f"spec.tenant.namespace in body should match '{DNS_LABEL}'", "spec.tenant.namespace",
                  tenant={"namespace": "Tenant_A"}),
    CASES.created("tenant-namespace-64", "tenant.namespace of 64 characters", "maxLength",
                  "Too long: may not be more than 63 bytes", "spec.tenant.namespace", tenant={"namespace": "t" * 64}),
    CASES.created("tenant-cluster-pattern", "tenant.cluster that is no label value", "pattern",
                  f"spec.tenant.cluster in body should match '{LABEL_VALUE}'", "spec.tenant.cluster",
                  tenant={"namespace": "tenant-a", "cluster": "edge 1"}),
    CASES.created("tenant-cluster-64", "tenant.cluster of 64 characters", "maxLength",
                  "Too long: may not be more than 63 bytes", "spec.tenant.cluster",
                  tenant={"namespace": "tenant-a", "cluster": "c" * 64}),
    CASES.changed("tenant-namespace-changed", "tenant.namespace changed", TENANT_FROZEN, "spec.tenant.namespace",
                  {}, {"tenant": {"namespace": "tenant-b"}}),
    CASES.changed("tenant-cluster-set-later", "tenant.cluster set on an account of the management cluster",
                  TENANT_FROZEN, "spec.tenant.cluster", {}, {"tenant": {"namespace": "tenant-a", "cluster": "edge-1"}}),
    CASES.changed("tenant-cluster-removed", "tenant.cluster removed, which means the management cluster",
                  TENANT_FROZEN, "spec.tenant.cluster",
                  {"tenant": {"namespace": "tenant-a", "cluster": "edge-1"}}, {}),
    CASES.changed("tenant-namespace-changed-with-uid", "tenant.namespace changed together with namespaceUID",
                  TENANT_FROZEN, "spec.tenant.namespace", {"tenant": {"namespace": "tenant-a", "namespaceUID": UID_A}},
                  {"tenant": {"namespace": "tenant-b", "namespaceUID": UID_B}}),
    CASES.created("tenant-namespaceuid-pattern", "tenant.namespaceUID that is no lowercase UUID", "pattern",
                  f"spec.tenant.namespaceUID in body should match '{UUID}'", "spec.tenant.namespaceUID",
                  tenant={"namespace": "tenant-a", "namespaceUID": UID_A.upper()}),
    CASES.created("tenant-namespaceuid-37", "tenant.namespaceUID of 37 characters", "maxLength",
                  "Too long: may not be more than 36 bytes", "spec.tenant.namespaceUID",
                  tenant={"namespace": "tenant-a", "namespaceUID": UID_A + "0"}),
    CASES.changed("tenant-namespaceuid-removed", "tenant.namespaceUID removed (it may only be handed over)",
                  "tenant.namespaceUID cannot be removed", "spec.tenant",
                  {"tenant": {"namespace": "tenant-a", "namespaceUID": UID_A}}, {"tenant": {"namespace": "tenant-a"}}),
    # legacyUser
    CASES.created("legacyuser-pattern", "legacyUser with a colon (a subuser, not a uid)", "pattern",
                  f"spec.legacyUser in body should match '{RGW_UID}'", "spec.legacyUser", legacyUser="tenant:swift"),
    CASES.created("legacyuser-empty", "legacyUser empty", "pattern",
                  f"spec.legacyUser in body should match '{RGW_UID}'", "spec.legacyUser", legacyUser=""),
    CASES.created("legacyuser-256", "legacyUser of 256 characters", "maxLength",
                  "Too long: may not be more than 255 bytes", "spec.legacyUser", legacyUser="u" * 256),
    CASES.changed("legacyuser-changed", "legacyUser changed", LEGACY_FROZEN, "spec.legacyUser",
                  {"legacyUser": "alice"}, {"legacyUser": "bob"}),
    CASES.changed("legacyuser-removed", "legacyUser removed", LEGACY_FROZEN, "spec", {"legacyUser": "alice"}, {}),
    CASES.changed("legacyuser-added", "legacyUser added to an account created without it (a per-bucket account "
                  "would turn Shared)", LEGACY_FROZEN, "spec", {}, {"legacyUser": "alice"}),
    CASES.changed("legacyuser-added-with-migrate", "legacyUser added with migrate (another user would become "
                  "the root)", LEGACY_FROZEN, "spec", {}, {"legacyUser": "alice", "migrate": True}),
    # migrate
    CASES.created("migrate-without-legacyuser", "migrate true without legacyUser", "rule",
                  "migrate requires legacyUser", "spec", migrate=True),
    CASES.changed("migrate-without-legacyuser-later", "migrate set to true later on an account without legacyUser",
                  "migrate requires legacyUser", "spec", {}, {"migrate": True}),
    CASES.changed("migrate-undone", "migrate set back to false", "migrate cannot be set back to false", "spec.migrate",
                  {"legacyUser": "alice", "migrate": True}, {"legacyUser": "alice", "migrate": False}),
    CASES.changed("migrate-dropped", "migrate left out after it was true (the default false applies)",
                  "migrate cannot be set back to false", "spec.migrate",
                  {"legacyUser": "alice", "migrate": True}, {"legacyUser": "alice"}),
    # rootKeyRotation
    CASES.created("rootkeyrotation-zero", "rootKeyRotation 0", "minimum",
                  "spec.rootKeyRotation in body should be greater than or equal to 1", "spec.rootKeyRotation",
                  rootKeyRotation=0),
    CASES.changed("rootkeyrotation-lowered", "rootKeyRotation lowered", "rootKeyRotation may only increase",
                  "spec.rootKeyRotation", {"rootKeyRotation": 3}, {"rootKeyRotation": 2}),
    # The status the operator writes.
    CASES.status("accountid-pattern", "an accountID that is no RGW account id", "pattern",
                 f"accountID in body should match '{ACCOUNT_ID}'", "status.accountID",
                 {"accountID": "RGW1234"}),
    CASES.status("accountid-21", "an accountID of 21 characters", "maxLength",
                 "Too long: may not be more than 20 bytes", "status.accountID", {"accountID": ACCOUNT + "8"}),
    CASES.status("scope-enum", "a scope outside Bucket/Shared", "enum",
                 'Unsupported value: "Account": supported values: "Bucket", "Shared"', "status.scope",
                 {"scope": "Account"}),
    CASES.status("stage-enum", "a stage that is not one of the four", "enum",
                 'Unsupported value: "Done": supported values: "AccountKey", "MigrateBuckets", "RotateAccountKey", '
                 '"Complete"', "status.stage", {"stage": "Done"}),
    CASES.status("legacybuckets-1001", "1001 legacy buckets", "maxItems",
                 "must have at most 1000 items", "status.legacyBuckets",
                 {"legacyBuckets": [f"b{i:04d}" for i in range(1001)]}),
    CASES.status("legacybucket-256", "a legacy bucket name of 256 characters", "maxLength",
                 "Too long: may not be more than 255 bytes", "status.legacyBuckets[0]", {"legacyBuckets": ["b" * 256]}),
    CASES.status("keyuser-256", "a keyUser of 256 characters", "maxLength",
                 "Too long: may not be more than 255 bytes", "status.keyUser", {"keyUser": "u" * 256}),
    CASES.status("migratedbuckets-1001", "1001 migrated buckets", "maxItems",
                 "must have at most 1000 items", "status.migratedBuckets",
                 {"migratedBuckets": [f"b{i:04d}" for i in range(1001)]}),
    CASES.status("migratedbucket-256", "a migrated bucket name of 256 characters", "maxLength",
                 "Too long: may not be more than 255 bytes", "status.migratedBuckets[0]",
                 {"migratedBuckets": ["b" * 256]}),
    CASES.status("orphanedbuckets-1001", "1001 orphaned buckets", "maxItems",
                 "must have at most 1000 items", "status.orphanedBuckets",
                 {"orphanedBuckets": [f"b{i:04d}" for i in range(1001)]}),
    CASES.status("orphanedbucket-256", "an orphaned bucket name of 256 characters", "maxLength",
                 "Too long: may not be more than 255 bytes", "status.orphanedBuckets[0]",
                 {"orphanedBuckets": ["b" * 256]}),
    CASES.status("rootkeysecretname-254", "a rootKeySecretName of 254 characters", "maxLength",
                 "Too long: may not be more than 253 bytes", "status.rootKeySecretName",
                 {"rootKeySecretName": "s" * 254}),
    *condition_refusals(CASES, max_items=8),
    # spec.rootKeyRotationSchedule and its status (appended: earlier files keep their numbers).
    *schedule_refusals(CASES, SCHEDULE, "schedule"),
    *[CASES.status(f"{field.lower()}-format", f"a {field} that is no date-time", "format",
                   f"{field} in body must be of type date-time", f"status.{field}", {field: "soon"})
      for field in ("rootKeyCreated", "nextRootKeyRotation", "rootKeyOverlapEnds")],
]


def _a(slug: str) -> str:
    return f"ok-{slug}"


VALID = [
    admitted("minimal", "the smallest account; the schema fills in cluster, migrate and rootKeyRotation",
             account(_a("minimal")),
             fields=[("spec.tenant.cluster", ""), ("spec.migrate", False), ("spec.rootKeyRotation", 1),
                     ("spec.legacyUser", None)]),
    admitted("every-field", "an account of a target-cluster tenant with every spec field",
             account(_a("every-field"), tenant={"namespace": "tenant-a", "cluster": "edge-1", "namespaceUID": UID_A},
                     legacyUser="tenant-a$legacy.user@example", migrate=True, rootKeyRotation=2),
             fields=[("spec.tenant.cluster", "edge-1"), ("spec.tenant.namespaceUID", UID_A),
                     ("spec.legacyUser", "tenant-a$legacy.user@example"),
                     ("spec.migrate", True), ("spec.rootKeyRotation", 2)]),
    admitted("shared-legacy", "a legacy user kept shared (migrate false)",
             account(_a("shared-legacy"), legacyUser="3f1c9a4e-6d0b-4c1f-9e2a-0b7d5c3e8f10"),
             fields=[("spec.legacyUser", "3f1c9a4e-6d0b-4c1f-9e2a-0b7d5c3e8f10"), ("spec.migrate", False)]),
    admitted("namespaceuid-bound-later", "tenant.namespaceUID set on an account created without it (the pass binds "
             "it to the namespace it first sees)", account(_a("namespaceuid-bound-later")),
             account(_a("namespaceuid-bound-later"), tenant={"namespace": "tenant-a", "namespaceUID": UID_A}),
             fields=[("spec.tenant.namespaceUID", UID_A), ("spec.tenant.cluster", "")]),
    admitted("namespaceuid-handed-over", "tenant.namespaceUID changed: the platform hands the account to a new "
             "namespace of the same name",
             account(_a("namespaceuid-handed-over"), tenant={"namespace": "tenant-a", "namespaceUID": UID_A}),
             account(_a("namespaceuid-handed-over"), tenant={"namespace": "tenant-a", "namespaceUID": UID_B}),
             fields=[("spec.tenant.namespaceUID", UID_B)]),
    admitted("migrate-set", "migrate turned on for a legacy user, and the root key rotation raised",
             account(_a("migrate-set"), legacyUser="alice"),
             account(_a("migrate-set"), legacyUser="alice", migrate=True, rootKeyRotation=2),
             fields=[("spec.migrate", True), ("spec.rootKeyRotation", 2)]),
    admitted("tenant-spelled-out", "an update that spells out the default cluster",
             account(_a("tenant-spelled-out")),
             account(_a("tenant-spelled-out"), tenant={"namespace": "tenant-a", "cluster": ""}),
             fields=[("spec.tenant.cluster", "")]),
    admitted("tenant-bounds", "tenant namespace and cluster of 63 characters",
             account(_a("tenant-bounds"), tenant={"namespace": "t" * 63, "cluster": "C" * 63}),
             fields=[("spec.tenant.namespace", "t" * 63), ("spec.tenant.cluster", "C" * 63)]),
    admitted("metadata-name-63", "metadata.name of 63 bytes", account("m" * 63), fields=[("metadata.name", "m" * 63)]),
    admitted("status-written", "the status of an account half way through its migration",
             account(_a("status-written")),
             with_status(account(_a("status-written")), {
                 "conditions": [condition(type="Migrated", reason="Migrated"),
                                condition(type="AccountKeyRotated", status="False", reason="LegacyBucketsRemain",
                                          message="legacy buckets remain: Old_Bucket"),
                                condition(type="Ready", status="False", reason="NotAllReady")],
                 "observedGeneration": 1, "accountID": ACCOUNT, "scope": "Bucket", "stage": "MigrateBuckets",
                 "legacyBuckets": ["Old_Bucket", "b" * 255], "migratedBuckets": ["photos"],
                 "orphanedBuckets": ["photos"], "keyUser": "tenant-a$legacy.user@example", "rootKeyRotation": 1,
                 "rootKeySecretName": f"{ACCOUNT.lower()}-root-key"}),
             phase="status",
             fields=[("status.accountID", ACCOUNT), ("status.stage", "MigrateBuckets"),
                     ("status.legacyBuckets", ["Old_Bucket", "b" * 255])]),
    admitted("root-key-schedule", "a root key schedule at the lower bounds of both durations, and its status",
             account(_a("root-key-schedule"), rootKeyRotationSchedule={"interval": "10s", "overlap": "1s"}),
             with_status(account(_a("root-key-schedule"), rootKeyRotationSchedule={"interval": "10s",
                                                                                   "overlap": "1s"}), {
                 "rootKeyRotation": 3, "rootKeyCreated": "2026-09-01T12:00:00Z",
                 "nextRootKeyRotation": "2026-09-01T12:00:10Z", "rootKeyOverlapEnds": "2026-09-01T12:00:01Z"}),
             phase="status",
             fields=[("spec.rootKeyRotationSchedule", {"interval": "10s", "overlap": "1s"}),
                     ("status.nextRootKeyRotation", "2026-09-01T12:00:10Z")]),
]

CORPUS = Corpus(KIND, "objectstoreaccounts", Path(__file__).resolve(), tuple(INVALID), tuple(VALID))

if __name__ == "__main__":
    sys.exit(CORPUS.main())
