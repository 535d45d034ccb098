#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the ObjectStore admission corpus (the format: tests/crd/crdcorpus.py).

One refused case per constraint of roles/install/files/crds/c5c3.io_objectstores.yaml, and the stores at the
edge of a constraint that the API server must admit.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crdcorpus import (  # noqa: E402 - the shared format lives one folder up
    DNS_SUBDOMAIN, TIME, Cases, Corpus, admitted, condition, condition_refusals, frozen_ref, object_refusals,
    ref_name_cases, ref_namespace_bounds, resource, with_status)

KIND = "ObjectStore"
REF = {"name": "cp", "namespace": "openstack"}
ENDPOINT = "https://rgw.example.test"
ENDPOINT_PATTERN = r"^https?://\S+$"
ADMIN_PATH = r"^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$"
REGION = r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"


def store(name: str, **spec) -> dict:
    """An ObjectStore; every required field has a value unless given as None."""
    spec.setdefault("endpoint", ENDPOINT)
    spec.setdefault("adminCredentialsRef", {"name": "rgw-admin"})
    spec.setdefault("controlPlaneRef", dict(REF))
    return resource(KIND, name, spec)


CASES = Cases(store)


INVALID = [
    *object_refusals(CASES, KIND, "a store"),
    # endpoint
    CASES.created("endpoint-missing", "a store without endpoint", "required",
                  "spec.endpoint: Required value", "spec.endpoint", endpoint=None),
    CASES.created("endpoint-2049", "an endpoint of 2049 characters", "maxLength",
                  "Too long: may not be more than 2048 bytes", "spec.endpoint",
                  endpoint="https://rgw.example.test/" + "p" * 2024),
    CASES.created("endpoint-scheme", "an endpoint that is not http(s)", "pattern",
                  f"spec.endpoint in body should match '{ENDPOINT_PATTERN}'", "spec.endpoint",
                  endpoint="ftp://rgw.example.test"),
    CASES.created("endpoint-whitespace", "an endpoint with a space in it", "pattern",
                  f"spec.endpoint in body should match '{ENDPOINT_PATTERN}'", "spec.endpoint",
                  endpoint="https://rgw.example.test/a b"),
    CASES.created("endpoint-no-host", "an endpoint without a host", "rule",
                  "endpoint must be an absolute URL with a host", "spec.endpoint", endpoint="https:///admin"),
    CASES.created("endpoint-credentials", "an endpoint with user and password in it", "rule",
                  "endpoint must not carry credentials; name them in adminCredentialsRef", "spec.endpoint",
                  endpoint="https://admin:not-a-secret@rgw.example.test"),
    CASES.created("endpoint-query", "an endpoint with a query", "rule",
                  "endpoint must not carry a query or a fragment", "spec.endpoint",
                  endpoint="https://rgw.example.test/?region=eu"),
    CASES.created("endpoint-fragment", "an endpoint with a fragment", "rule",
                  "endpoint must not carry a query or a fragment", "spec.endpoint",
                  endpoint="https://rgw.example.test/#s3"),
    # adminPath and region
    CASES.created("adminpath-slash", "an adminPath of two segments", "pattern",
                  f"spec.adminPath in body should match '{ADMIN_PATH}'", "spec.adminPath", adminPath="admin/ops"),
    CASES.created("adminpath-dot-dot", "an adminPath that climbs out of the endpoint", "pattern",
                  f"spec.adminPath in body should match '{ADMIN_PATH}'", "spec.adminPath", adminPath=".."),
    CASES.created("adminpath-empty", "an empty adminPath", "pattern",
                  f"spec.adminPath in body should match '{ADMIN_PATH}'", "spec.adminPath", adminPath=""),
    CASES.created("adminpath-65", "an adminPath of 65 characters", "maxLength",
                  "Too long: may not be more than 64 bytes", "spec.adminPath", adminPath="a" * 65),
    CASES.created("region-slash", "a region with a slash, which would break the SigV4 scope", "pattern",
                  f"spec.region in body should match '{REGION}'", "spec.region", region="eu/west"),
    CASES.created("region-64", "a region of 64 characters", "maxLength",
                  "Too long: may not be more than 63 bytes", "spec.region", region="r" * 64),
    # adminCredentialsRef
    CASES.created("admincredentialsref-missing", "a store without adminCredentialsRef", "required",
                  "spec.adminCredentialsRef: Required value", "spec.adminCredentialsRef", adminCredentialsRef=None),
    CASES.created("admincredentialsref-name-missing", "adminCredentialsRef without name", "required",
                  "spec.adminCredentialsRef.name: Required value", "spec.adminCredentialsRef.name",
                  adminCredentialsRef={}),
    CASES.created("admincredentialsref-name-pattern", "adminCredentialsRef.name that is no Secret name", "pattern",
                  f"spec.adminCredentialsRef.name in body should match '{DNS_SUBDOMAIN}'",
                  "spec.adminCredentialsRef.name",
                  adminCredentialsRef={"name": "RGW_Admin"}),
    CASES.created("admincredentialsref-name-254", "adminCredentialsRef.name of 254 characters", "maxLength",
                  "Too long: may not be more than 253 bytes", "spec.adminCredentialsRef.name",
                  adminCredentialsRef={"name": "s" * 254}),
    # controlPlaneRef
    *ref_name_cases(CASES, "controlPlaneRef", REF, 253, "a store"),
    *ref_namespace_bounds(CASES, "controlPlaneRef", REF),
    *frozen_ref(CASES, "controlPlaneRef", REF, "a store"),
    # The status the operator writes.
    CASES.status("lastprobetime-format", "a lastProbeTime that is no date-time", "format",
                 "lastProbeTime in body must be of type date-time", "status.lastProbeTime",
                 {"lastProbeTime": "a minute ago"}),
    CASES.status("backends-17", "17 backends", "maxItems",
                 "must have at most 16 items", "status.backends", {"backends": [f"b{i}" for i in range(17)]}),
    CASES.status("backend-64", "a backend name of 64 characters", "maxLength",
                 "Too long: may not be more than 63 bytes", "status.backends[0]", {"backends": ["b" * 64]}),
    *condition_refusals(CASES, max_items=8),
]


def _a(slug: str) -> str:
    return f"ok-{slug}"


VALID = [
    admitted("minimal", "the smallest store; the schema fills in adminPath, region and perBucketCredentials",
             store(_a("minimal"), controlPlaneRef={"name": "cp"}),
             fields=[("spec.adminPath", "admin"), ("spec.region", "us-east-1"), ("spec.perBucketCredentials", True),
                     ("spec.controlPlaneRef.namespace", None)]),
    admitted("every-field", "a store with every spec field",
             store(_a("every-field"), endpoint="http://127.0.0.1:7480", adminPath="rgw-admin", region="zg1",
                   adminCredentialsRef={"name": "rgw.admin"}, perBucketCredentials=False),
             fields=[("spec.endpoint", "http://127.0.0.1:7480"), ("spec.adminPath", "rgw-admin"),
                     ("spec.region", "zg1"), ("spec.adminCredentialsRef.name", "rgw.admin"),
                     ("spec.perBucketCredentials", False), ("spec.controlPlaneRef.namespace", "openstack")]),
    admitted("endpoint-ipv6", "an endpoint with an IPv6 literal and a port",
             store(_a("endpoint-ipv6"), endpoint="http://[::1]:7480"), fields=[("spec.endpoint", "http://[::1]:7480")]),
    admitted("endpoint-path", "an endpoint with a path prefix (a gateway behind a reverse proxy)",
             store(_a("endpoint-path"), endpoint="https://proxy.example.test/rgw/"),
             fields=[("spec.endpoint", "https://proxy.example.test/rgw/")]),
    admitted("endpoint-2048", "an endpoint of 2048 characters",
             store(_a("endpoint-2048"), endpoint="https://rgw.example.test/" + "p" * 2023),
             fields=[("spec.endpoint", "https://rgw.example.test/" + "p" * 2023)]),
    admitted("update-keeping-the-ref", "an update that moves the endpoint and turns per-bucket credentials off",
             store(_a("update-keeping-the-ref")),
             store(_a("update-keeping-the-ref"), endpoint="https://rgw2.example.test", perBucketCredentials=False,
                   adminCredentialsRef={"name": "rgw-admin-2"}),
             fields=[("spec.endpoint", "https://rgw2.example.test"), ("spec.perBucketCredentials", False)]),
    admitted("metadata-name-63", "metadata.name of 63 bytes", store("m" * 63), fields=[("metadata.name", "m" * 63)]),
    admitted("status-written", "the status a probe writes", store(_a("status-written")),
             with_status(store(_a("status-written")), {
                 "conditions": [condition(type="PerBucketCredentialsReady", reason="MissingAccountsCapability",
                                          status="False", message="the admin credential lacks the accounts cap")],
                 "observedGeneration": 1, "lastProbeTime": TIME, "accountsSupported": True,
                 "backends": ["rados"]}),
             phase="status",
             fields=[("status.accountsSupported", True), ("status.backends", ["rados"]),
                     ("status.conditions.0.reason", "MissingAccountsCapability")]),
]

CORPUS = Corpus(KIND, "objectstores", Path(__file__).resolve(), tuple(INVALID), tuple(VALID))

if __name__ == "__main__":
    sys.exit(CORPUS.main())
