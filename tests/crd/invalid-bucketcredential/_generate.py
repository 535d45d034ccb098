#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the BucketCredential admission corpus (the format: tests/crd/crdcorpus.py).

One refused case per constraint of roles/install/files/crds/c5c3.io_bucketcredentials.yaml, and the orders at
the edge of a constraint that the API server must admit. The bucket-name cases follow RGW's strict
valid_s3_bucket_name() (src/rgw/rgw_rest_s3.h in ceph) plus the two names AWS reserves.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crdcorpus import (  # noqa: E402 - the shared format lives one folder up
    DNS_SUBDOMAIN, TIME, Cases, Corpus, admitted, condition, condition_refusals, frozen_ref, object_refusals,
    ref_name_cases, ref_namespace_bounds, resource, with_status,
    schedule_refusals, secret_template_admitted, secret_template_refusals)

KIND = "BucketCredential"
REF = {"name": "rgw", "namespace": "openstack"}
BUCKET = DNS_SUBDOMAIN  # dot-separated labels that start and end with a letter or digit: RGW's strict rules
ACCESS_KEY_ID = r"^\w+$"
# Go's time.ParseDuration syntax, as for KeystoneUser's rotation.interval (tests/crd/invalid-keystoneuser/_generate.py).
GO_DURATION = r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"
PHASES = ["Idle", "Issuing", "Overlap", "Retiring", "Held"]
DUPLICATE_SLOT = "slots must name each slot at most once"
LOWERED = "a slot's generation may only increase"


def order(name: str, **spec) -> dict:
    """A BucketCredential for bucket ``photos`` of store rgw/openstack unless given otherwise."""
    spec.setdefault("objectStoreRef", dict(REF))
    spec.setdefault("bucket", "photos")
    return resource(KIND, name, spec)


CASES = Cases(order)


def _bucket(slug: str, title: str, covers: str, error: str, name: str):
    return CASES.created(slug, title, covers, error, "spec.bucket", bucket=name)


def _bad_bucket_name(slug: str, title: str, name: str):
    return _bucket(slug, title, "pattern", f"spec.bucket in body should match '{BUCKET}'", name)


def key(number: int, **overrides) -> dict:
    """A status slot entry; an override of None drops the field."""
    entry = {"slot": number, "accessKeyID": f"AKIAEXAMPLESLOT{number}XYZ", "created": TIME, "generation": 1}
    entry.update(overrides)
    return {k: v for k, v in entry.items() if v is not None}


def retiring(number: int, **overrides) -> dict:
    """A status retiringKeys entry; an override of None drops the field."""
    entry = {"slot": number, "accessKeyID": f"AKIAEXAMPLEOLD{number}XYZ", "generation": 1}
    entry.update(overrides)
    return {k: v for k, v in entry.items() if v is not None}


def record(**overrides) -> dict:
    """A status admittedAs record; an override of None drops the field."""
    entry = {"objectStoreRef": dict(REF), "bucket": "photos", "cluster": "", "account": "rgw-tenant",
             "accountID": "RGW00000000000000001"}
    entry.update(overrides)
    return {k: v for k, v in entry.items() if v is not None}


def _long(path: str, length: int) -> dict:
    """A record override that makes ``path`` (``field`` or ``objectStoreRef.field``) ``length`` characters long."""
    if path.startswith("objectStoreRef."):
        return {"objectStoreRef": dict(REF, **{path.split(".", 1)[1]: "a" * length})}
    return {path: "a" * length}


INVALID = [
    *object_refusals(CASES, KIND, "an order"),
    # objectStoreRef
    *ref_name_cases(CASES, "objectStoreRef", REF, 63, "an order"),
    *ref_namespace_bounds(CASES, "objectStoreRef", REF),
    *frozen_ref(CASES, "objectStoreRef", REF, "an order"),
    # bucket: length, characters and shape (RGW strict names), then the reserved forms and the transition.
    CASES.created("bucket-missing", "an order without bucket", "required",
                  "spec.bucket: Required value", "spec.bucket", bucket=None),
    _bucket("bucket-2", "a bucket name of 2 characters", "minLength",
            "spec.bucket in body should be at least 3 chars long", "ab"),
    _bucket("bucket-64", "a bucket name of 64 characters", "maxLength",
            "Too long: may not be more than 63 bytes", "b" * 64),
    _bad_bucket_name("bucket-uppercase", "a bucket name with an uppercase letter", "Photos"),
    _bad_bucket_name("bucket-underscore", "a bucket name with an underscore", "my_photos"),
    _bad_bucket_name("bucket-leading-hyphen", "a bucket name that starts with a hyphen", "-photos"),
    _bad_bucket_name("bucket-trailing-hyphen", "a bucket name that ends with a hyphen", "photos-"),
    _bad_bucket_name("bucket-leading-dot", "a bucket name that starts with a dot", ".photos"),
    _bad_bucket_name("bucket-trailing-dot", "a bucket name that ends with a dot", "photos."),
    _bad_bucket_name("bucket-double-dot", "a bucket name with two adjacent dots", "my..photos"),
    _bad_bucket_name("bucket-dot-hyphen", "a bucket name with a dot before a hyphen", "my.-photos"),
    _bad_bucket_name("bucket-hyphen-dot", "a bucket name with a hyphen before a dot", "my-.photos"),
    _bad_bucket_name("bucket-non-ascii", "a bucket name with a letter outside ASCII", "fotos-café"),
    _bucket("bucket-ipv4", "a bucket name formatted as an IPv4 address", "rule",
            "bucket must not be formatted as an IPv4 address", "192.168.5.4"),
    _bucket("bucket-ipv4-out-of-range", "a bucket name formatted as an IPv4 address with groups above 255", "rule",
            "bucket must not be formatted as an IPv4 address", "999.1.1.1"),
    _bucket("bucket-xn-prefix", "a bucket name that starts with xn--", "rule",
            "bucket must not start with xn--", "xn--photos"),
    _bucket("bucket-s3alias-suffix", "a bucket name that ends with -s3alias", "rule",
            "bucket must not end with -s3alias", "photos-s3alias"),
    CASES.changed("bucket-changed", "bucket changed", "bucket is immutable", "spec.bucket", {}, {"bucket": "videos"}),
    # slots
    CASES.created("slots-empty", "an empty slot list", "minItems",
                  "spec.slots in body should have at least 1 items", "spec.slots", slots=[]),
    CASES.created("slots-3", "three slots", "maxItems",
                  "must have at most 2 items", "spec.slots",
                  slots=[{"slot": 1}, {"slot": 2}, {"slot": 1}]),
    CASES.created("slots-duplicate", "slot 1 listed twice", "rule", DUPLICATE_SLOT, "spec.slots",
                  slots=[{"slot": 1, "generation": 1}, {"slot": 1, "generation": 2}]),
    CASES.created("slot-missing", "a slot entry without its number", "required",
                  "spec.slots[0].slot: Required value", "spec.slots[0].slot", slots=[{"generation": 1}]),
    CASES.created("slot-3", "slot 3", "enum",
                  'Unsupported value: 3: supported values: "1", "2"', "spec.slots[0].slot", slots=[{"slot": 3}]),
    CASES.created("slot-generation-zero", "a slot generation of 0", "minimum",
                  "spec.slots[0].generation in body should be greater than or equal to 1", "spec.slots[0].generation",
                  slots=[{"slot": 1, "generation": 0}]),
    CASES.changed("slot-generation-lowered", "slot 1's generation lowered", LOWERED, "spec.slots",
                  {"slots": [{"slot": 1, "generation": 3}]}, {"slots": [{"slot": 1, "generation": 2}]}),
    CASES.changed("slot-generation-lowered-reordered", "slot 1's generation lowered while the list is reordered",
                  LOWERED, "spec.slots",
                  {"slots": [{"slot": 1, "generation": 2}, {"slot": 2, "generation": 5}]},
                  {"slots": [{"slot": 2, "generation": 5}, {"slot": 1, "generation": 1}]}),
    CASES.changed("slot-generation-defaulted-lower", "slot 1 relisted without generation after generation 2",
                  LOWERED, "spec.slots", {"slots": [{"slot": 1, "generation": 2}]}, {"slots": [{"slot": 1}]}),
    # The status the operator writes.
    CASES.status("credentialscope-enum", "a credentialScope outside Bucket/Account", "enum",
                 'Unsupported value: "Shared": supported values: "Bucket", "Account"', "status.credentialScope",
                 {"credentialScope": "Shared"}),
    CASES.status("slots-3", "three status slots", "maxItems", "must have at most 2 items", "status.slots",
                 {"slots": [key(1), key(2), key(1, generation=2)]}),
    CASES.status("slot-3", "a status slot 3", "enum", 'Unsupported value: 3: supported values: "1", "2"',
                 "status.slots[0].slot", {"slots": [key(3)]}),
    CASES.status("slot-accesskeyid-129", "an accessKeyID of 129 characters", "maxLength",
                 "Too long: may not be more than 128 bytes", "status.slots[0].accessKeyID",
                 {"slots": [key(1, accessKeyID="A" * 129)]}),
    CASES.status("slot-accesskeyid-pattern", "an accessKeyID with a character outside [A-Za-z0-9_]", "pattern",
                 f"slots[0].accessKeyID in body should match '{ACCESS_KEY_ID}'", "status.slots[0].accessKeyID",
                 {"slots": [key(1, accessKeyID="AKIA/EXAMPLE")]}),
    CASES.status("slot-created-format", "a slot created time that is no date-time", "format",
                 "slots[0].created in body must be of type date-time", "status.slots[0].created",
                 {"slots": [key(1, created="today")]}),
    CASES.status("slot-generation-zero", "a status slot generation of 0", "minimum",
                 "slots[0].generation in body should be greater than or equal to 1",
                 "status.slots[0].generation",
                 {"slots": [key(1, generation=0)]}),
    *[CASES.status(f"slot-{missing.lower()}-missing", f"a status slot without {missing}", "required",
                   f"status.slots[0].{missing}: Required value", f"status.slots[0].{missing}",
                   {"slots": [key(1, **{missing: None})]})
      for missing in ("slot", "accessKeyID", "created", "generation")],
    CASES.status("slotcount-negative", "a slotCount below 0", "minimum",
                 "slotCount in body should be greater than or equal to 0", "status.slotCount",
                 {"slotCount": -1}),
    CASES.status("slotcount-3", "a slotCount above 2", "maximum",
                 "slotCount in body should be less than or equal to 2", "status.slotCount", {"slotCount": 3}),
    CASES.status("secretname-254", "a secretName of 254 characters", "maxLength",
                 "Too long: may not be more than 253 bytes", "status.secretName", {"secretName": "s" * 254}),
    CASES.status("untrackedkeys-negative", "untrackedKeys below 0", "minimum",
                 "untrackedKeys in body should be greater than or equal to 0", "status.untrackedKeys",
                 {"untrackedKeys": -1}),
    *condition_refusals(CASES, max_items=8),
    # The keys pending revocation and the admission record (appended: earlier files keep their numbers).
    CASES.status("retiringkeys-5", "five retiring keys", "maxItems", "must have at most 4 items",
                 "status.retiringKeys", {"retiringKeys": [retiring(1)] * 5}),
    CASES.status("retiring-slot-3", "a retiring key of slot 3", "enum",
                 'Unsupported value: 3: supported values: "1", "2"', "status.retiringKeys[0].slot",
                 {"retiringKeys": [retiring(3)]}),
    CASES.status("retiring-accesskeyid-129", "a retiring accessKeyID of 129 characters", "maxLength",
                 "Too long: may not be more than 128 bytes", "status.retiringKeys[0].accessKeyID",
                 {"retiringKeys": [retiring(1, accessKeyID="A" * 129)]}),
    CASES.status("retiring-accesskeyid-pattern", "a retiring accessKeyID with a character outside [A-Za-z0-9_]",
                 "pattern", f"retiringKeys[0].accessKeyID in body should match '{ACCESS_KEY_ID}'",
                 "status.retiringKeys[0].accessKeyID", {"retiringKeys": [retiring(1, accessKeyID="AK-1")]}),
    CASES.status("retiring-generation-zero", "a retiring key of generation 0", "minimum",
                 "retiringKeys[0].generation in body should be greater than or equal to 1",
                 "status.retiringKeys[0].generation", {"retiringKeys": [retiring(1, generation=0)]}),
    *[CASES.status(f"retiring-{missing.lower()}-missing", f"a retiring key without {missing}", "required",
                   f"status.retiringKeys[0].{missing}: Required value", f"status.retiringKeys[0].{missing}",
                   {"retiringKeys": [retiring(1, **{missing: None})]})
      for missing in ("slot", "accessKeyID", "generation")],
    *[CASES.status(f"admittedas-{missing.lower()}-missing", f"an admission record without {missing}", "required",
                   f"status.admittedAs.{missing}: Required value", f"status.admittedAs.{missing}",
                   {"admittedAs": record(**{missing: None})})
      for missing in ("objectStoreRef", "bucket", "cluster")],
    *[CASES.status(f"admittedas-store-{missing}-missing", f"an admission record whose store lacks its {missing}",
                   "required", f"status.admittedAs.objectStoreRef.{missing}: Required value",
                   f"status.admittedAs.objectStoreRef.{missing}",
                   {"admittedAs": record(objectStoreRef={k: v for k, v in REF.items() if k != missing})})
      for missing in ("name", "namespace")],
    *[CASES.status(f"admittedas-{path.lower().replace('.', '-')}-{limit + 1}",
                   f"an admission record whose {path} has {limit + 1} characters", "maxLength",
                   f"Too long: may not be more than {limit} bytes", f"status.admittedAs.{path}",
                   {"admittedAs": record(**_long(path, limit + 1))})
      for path, limit in (("objectStoreRef.name", 253), ("objectStoreRef.namespace", 63), ("bucket", 63),
                          ("cluster", 63), ("account", 253), ("accountID", 20))],
    # spec.secretTemplate (appended: earlier files keep their numbers).
    *secret_template_refusals(CASES),
    CASES.status("newestkeycreated-format", "a newestKeyCreated that is no date-time", "format",
                 "newestKeyCreated in body must be of type date-time", "status.newestKeyCreated",
                 {"newestKeyCreated": "today"}),
    # spec.rotation and the schedule's status (appended: earlier files keep their numbers).
    *schedule_refusals(CASES, "rotation", "rotation"),
    CASES.status("nextrotation-format", "a nextRotation that is no date-time", "format",
                 "nextRotation in body must be of type date-time", "status.nextRotation", {"nextRotation": "soon"}),
    CASES.status("rotation-phase-enum", "a rotation phase outside the schedule's phases", "enum",
                 "Unsupported value: \"Paused\": supported values: " + ", ".join(f'"{p}"' for p in PHASES),
                 "status.rotation.phase", {"rotation": {"phase": "Paused"}}),
    CASES.status("rotation-overlapends-format", "an overlapEnds that is no date-time", "format",
                 "overlapEnds in body must be of type date-time", "status.rotation.overlapEnds",
                 {"rotation": {"phase": "Overlap", "overlapEnds": "soon"}}),
    CASES.status("rotation-message-1025", "a rotation message of 1025 characters", "maxLength",
                 "Too long: may not be more than 1024 bytes", "status.rotation.message",
                 {"rotation": {"phase": "Held", "message": "m" * 1025}}),
    # spec.revokeAfterRollout and its status (appended: earlier files keep their numbers).
    CASES.created("rollout-deadline-not-a-duration", "revokeAfterRollout.deadline that is no duration", "format",
                  "spec.revokeAfterRollout.deadline in body must be of type duration",
                  "spec.revokeAfterRollout.deadline", revokeAfterRollout={"deadline": "a day"}),
    CASES.created("rollout-deadline-day-unit", "revokeAfterRollout.deadline in days", "pattern",
                  f"spec.revokeAfterRollout.deadline in body should match '{GO_DURATION}'",
                  "spec.revokeAfterRollout.deadline", revokeAfterRollout={"deadline": "1d"}),
    CASES.created("rollout-deadline-65", "revokeAfterRollout.deadline of 65 characters", "maxLength",
                  "Too long: may not be more than 64 bytes", "spec.revokeAfterRollout.deadline",
                  revokeAfterRollout={"deadline": "1" + "0" * 62 + "ns"}),
    CASES.created("rollout-deadline-500ms", "revokeAfterRollout.deadline below 1s", "rule",
                  "revokeAfterRollout.deadline is at least 1s", "spec.revokeAfterRollout.deadline",
                  revokeAfterRollout={"deadline": "500ms"}),
    CASES.created("rollout-deadline-87601h", "revokeAfterRollout.deadline above 87600h", "rule",
                  "revokeAfterRollout.deadline is at most 87600h", "spec.revokeAfterRollout.deadline",
                  revokeAfterRollout={"deadline": "87601h"}),
    CASES.status("rollout-accesskeyids-3", "three delivered access key ids", "maxItems",
                 "must have at most 2 items", "status.rollout.accessKeyIDs",
                 {"rollout": {"accessKeyIDs": ["AKIAONE", "AKIATWO", "AKIATHREE"]}}),
    CASES.status("rollout-accesskeyid-129", "a delivered access key id of 129 characters", "maxLength",
                 "Too long: may not be more than 128 bytes", "status.rollout.accessKeyIDs[0]",
                 {"rollout": {"accessKeyIDs": ["A" * 129]}}),
    CASES.status("rollout-accesskeyid-pattern", "a delivered access key id with a character outside [A-Za-z0-9_]",
                 "pattern", f"rollout.accessKeyIDs[0] in body should match '{ACCESS_KEY_ID}'",
                 "status.rollout.accessKeyIDs[0]", {"rollout": {"accessKeyIDs": ["AK-1"]}}),
    CASES.status("rollout-deliveredat-format", "a deliveredAt that is no date-time", "format",
                 "deliveredAt in body must be of type date-time", "status.rollout.deliveredAt",
                 {"rollout": {"deliveredAt": "today"}}),
    CASES.status("rollout-deadline-format", "a rollout deadline that is no date-time", "format",
                 "deadline in body must be of type date-time", "status.rollout.deadline",
                 {"rollout": {"deadline": "tomorrow"}}),
    CASES.status("rollout-waitingfor-33", "33 workloads waited for", "maxItems", "must have at most 32 items",
                 "status.rollout.waitingFor", {"rollout": {"waitingFor": [f"Deployment/w{n}" for n in range(33)]}}),
    CASES.status("rollout-waitingfor-318", "a workload name of 318 characters", "maxLength",
                 "Too long: may not be more than 317 bytes", "status.rollout.waitingFor[0]",
                 {"rollout": {"waitingFor": ["Deployment/" + "w" * 307]}}),
]


def _a(slug: str) -> str:
    return f"ok-{slug}"


VALID = [
    admitted("minimal", "the smallest order; the schema fills in publicRead and one slot of generation 1",
             order(_a("minimal"), objectStoreRef={"name": "rgw"}),
             fields=[("spec.publicRead", False), ("spec.slots", [{"slot": 1, "generation": 1}]),
                     ("spec.objectStoreRef.namespace", None)]),
    admitted("every-field", "an order with every spec field",
             order(_a("every-field"), bucket="media.example-1", publicRead=True,
                   slots=[{"slot": 2, "generation": 3}]),
             fields=[("spec.bucket", "media.example-1"), ("spec.publicRead", True),
                     ("spec.slots", [{"slot": 2, "generation": 3}]), ("spec.objectStoreRef.namespace", "openstack")]),
    *[admitted(f"bucket-{slug}", title, order(_a(f"bucket-{slug}"), bucket=name), fields=[("spec.bucket", name)])
      for slug, title, name in (
          ("3", "a bucket name of 3 characters", "abc"),
          ("63", "a bucket name of 63 characters", "b" * 63),
          ("digits", "a bucket name of digits only", "123"),
          ("three-groups", "a bucket name of three digit groups, which is no IPv4 address", "10.0.0"),
          ("five-groups", "a bucket name of five digit groups, which is no IPv4 address", "10.0.0.1.2"),
          ("inner-double-hyphen", "a bucket name with two adjacent hyphens inside", "my--photos"),
          ("dotted", "a bucket name of several dot-separated labels", "a.b-c.d1"),
          ("xn-inside", "xn-- inside a bucket name rather than at its start", "my-xn--photos"),
          ("s3alias-inside", "-s3alias inside a bucket name rather than at its end", "photos-s3alias-2"),
      )],
    admitted("slot-generation-default", "a slot listed without generation gets generation 1",
             order(_a("slot-generation-default"), slots=[{"slot": 2}]),
             fields=[("spec.slots", [{"slot": 2, "generation": 1}])]),
    admitted("slot-added", "slot 2 added beside slot 1 (the overlap of a rotation)",
             order(_a("slot-added")),
             order(_a("slot-added"), slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}]),
             fields=[("spec.slots", [{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])]),
    admitted("slot-generation-raised", "slot 1's generation raised and the list reordered",
             order(_a("slot-generation-raised"), slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 4}]),
             order(_a("slot-generation-raised"), slots=[{"slot": 2, "generation": 4}, {"slot": 1, "generation": 2}]),
             fields=[("spec.slots", [{"slot": 2, "generation": 4}, {"slot": 1, "generation": 2}])]),
    admitted("slot-readded", "slot 1 listed again after it was removed, at a lower generation than before",
             order(_a("slot-readded"), slots=[{"slot": 2, "generation": 3}]),
             order(_a("slot-readded"), slots=[{"slot": 2, "generation": 3}, {"slot": 1, "generation": 1}]),
             fields=[("spec.slots", [{"slot": 2, "generation": 3}, {"slot": 1, "generation": 1}])]),
    admitted("slot-removed", "slot 1 removed, slot 2 kept",
             order(_a("slot-removed"), slots=[{"slot": 1, "generation": 5}, {"slot": 2, "generation": 1}]),
             order(_a("slot-removed"), slots=[{"slot": 2, "generation": 1}]),
             fields=[("spec.slots", [{"slot": 2, "generation": 1}])]),
    admitted("publicread-toggled", "publicRead switched on after creation",
             order(_a("publicread-toggled")), order(_a("publicread-toggled"), publicRead=True),
             fields=[("spec.publicRead", True)]),
    admitted("metadata-name-63", "metadata.name of 63 bytes", order("m" * 63), fields=[("metadata.name", "m" * 63)]),
    admitted("status-written", "the status of an order holding two keys",
             order(_a("status-written")),
             with_status(order(_a("status-written")), {
                 "conditions": [condition(type="CredentialReady", reason="CredentialIssued"),
                                condition(type="DeliveryReady", reason="Delivered"),
                                condition(type="Ready", reason="AllReady")],
                 "observedGeneration": 1, "credentialScope": "Bucket", "slots": [key(1), key(2, generation=2)],
                 "slotCount": 2, "newestKeyCreated": TIME, "secretName": f"{_a('status-written')}-s3",
                 "untrackedKeys": 0}),
             phase="status",
             fields=[("status.credentialScope", "Bucket"), ("status.slotCount", 2),
                     ("status.slots", [key(1), key(2, generation=2)]), ("status.newestKeyCreated", TIME)]),
    *secret_template_admitted(order),
    admitted("rotation", "a rotation schedule at the lower bounds the integration test uses",
             order(_a("rotation"), rotation={"interval": "20s", "overlap": "8s"}),
             fields=[("spec.rotation", {"interval": "20s", "overlap": "8s"})]),
    admitted("rotation-off", "rotation.interval 0s with an overlap longer than it: the schedule is off",
             order(_a("rotation-off"), rotation={"interval": "0s", "overlap": "2h"}),
             fields=[("spec.rotation", {"interval": "0s", "overlap": "2h"})]),
    admitted("rotation-status", "the status of an order in the overlap of a scheduled rotation",
             order(_a("rotation-status")),
             with_status(order(_a("rotation-status")), {
                 "nextRotation": TIME, "rotation": {"phase": "Overlap", "specSlot": {"slot": 1, "generation": 1},
                                                    "keySlot": {"slot": 2, "generation": 2},
                                                    "previousSlot": {"slot": 1, "generation": 1},
                                                    "overlapEnds": TIME}}),
             phase="status",
             fields=[("status.nextRotation", TIME), ("status.rotation.phase", "Overlap"),
                     ("status.rotation.overlapEnds", TIME)]),
    admitted("revoke-after-rollout", "revoke after consumers rolled out, at the lowest deadline",
             order(_a("revoke-after-rollout"), revokeAfterRollout={"deadline": "1s"}),
             fields=[("spec.revokeAfterRollout", {"deadline": "1s"})]),
    admitted("revoke-after-rollout-default", "revoke after consumers rolled out with the default deadline",
             order(_a("revoke-after-rollout-default"), revokeAfterRollout={}),
             fields=[("spec.revokeAfterRollout", {})]),
    admitted("rollout-status", "the status of an order whose old key waits for a Deployment",
             order(_a("rollout-status")),
             with_status(order(_a("rollout-status")), {
                 "rollout": {"accessKeyIDs": ["AKIAEXAMPLESLOT2XYZ"], "deliveredAt": TIME, "deadline": TIME,
                             "waitingFor": ["Deployment/web"]}}),
             phase="status",
             fields=[("status.rollout.waitingFor", ["Deployment/web"]), ("status.rollout.deadline", TIME)]),
]

CORPUS = Corpus(KIND, "bucketcredentials", Path(__file__).resolve(), tuple(INVALID), tuple(VALID))

if __name__ == "__main__":
    sys.exit(CORPUS.main())
