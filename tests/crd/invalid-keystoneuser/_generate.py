#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the KeystoneUser admission corpus (the format: tests/crd/crdcorpus.py).

One refused case per constraint of roles/install/files/crds/c5c3.io_keystoneusers.yaml, and the orders at the
edge of a constraint that the API server must admit. A new rule is one entry below; run this script to
rewrite the files, ``--check`` to find drift.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crdcorpus import (  # noqa: E402 - the shared format lives one folder up
    ROOT_PATH, Cases, Corpus, admitted, condition_refusals, frozen_ref, ref_namespace_bounds, refused, resource,
    secret_template_admitted, secret_template_refusals)

REF = {"name": "cp", "namespace": "openstack"}
# Go's time.ParseDuration syntax: format duration alone also admits "3d" or "2 weeks", which no Go consumer reads.
GO_DURATION = r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"
# No comma, none of the characters Python's str.strip() removes (Keystone strips a name it stores) at either end,
# and no character beyond U+FFFF anywhere (Keystone's utf8mb3 name column cannot hold one; the parser refuses it too).
OUTSIDE_BMP = r"\x{10000}-\x{10FFFF}"
EDGE = rf"[^,\x09-\x0d\x1c-\x1f\x{{85}}\p{{Z}}{OUTSIDE_BMP}]"
USER_NAME = rf"^{EDGE}([^,{OUTSIDE_BMP}]*{EDGE})?$"


def order(name: str, **spec) -> dict:
    """A KeystoneUser; ``controlPlaneRef`` defaults to cp/openstack, ``controlPlaneRef=None`` drops it."""
    spec.setdefault("controlPlaneRef", dict(REF))
    return resource("KeystoneUser", name, spec)


CASES = Cases(order)


def _user_name_refused(slug: str, title: str, value: str):
    return CASES.created(slug, title, "pattern", f"spec.userName in body should match '{USER_NAME}'", "spec.userName",
                         userName=value)


INVALID = [
    # Schema bounds and patterns, on create.
    refused("spec-missing", "an order without spec", "required", "spec: Required value", "spec",
            resource("KeystoneUser", "inv-spec-missing", None)),
    CASES.created("controlplaneref-missing", "an order without controlPlaneRef", "required",
                  "spec.controlPlaneRef: Required value", "spec.controlPlaneRef",
                  controlPlaneRef=None, userName="x"),
    CASES.created("controlplaneref-name-missing", "controlPlaneRef without name", "required",
                  "spec.controlPlaneRef.name: Required value", "spec.controlPlaneRef.name",
                  controlPlaneRef={"namespace": "openstack"}),
    CASES.created("controlplaneref-name-empty", "controlPlaneRef.name empty", "minLength",
                  "spec.controlPlaneRef.name in body should be at least 1 chars long", "spec.controlPlaneRef.name",
                  controlPlaneRef={"name": "", "namespace": "openstack"}),
    *ref_namespace_bounds(CASES, "controlPlaneRef", REF),
    _user_name_refused("username-comma", "userName with a comma", "svc,admin"),
    CASES.created("username-empty", "userName empty", "minLength",
                  "spec.userName in body should be at least 1 chars long", "spec.userName", userName=""),
    CASES.created("username-256", "userName of 256 characters", "maxLength",
                  "Too long: may not be more than 255 bytes", "spec.userName", userName="u" * 256),
    CASES.created("password-generation-zero", "passwordGeneration 0", "minimum",
                  "spec.passwordGeneration in body should be greater than or equal to 1", "spec.passwordGeneration",
                  passwordGeneration=0),
    CASES.created("interval-not-a-duration", "rotation.interval that is no duration", "format",
                  "spec.rotation.interval in body must be of type duration", "spec.rotation.interval",
                  rotation={"interval": "monthly"}),
    CASES.created("interval-day-unit", "rotation.interval in days, which format duration alone would admit",
                  "pattern", f"spec.rotation.interval in body should match '{GO_DURATION}'", "spec.rotation.interval",
                  rotation={"interval": "30d"}),
    CASES.created("interval-65", "rotation.interval of 65 characters (the reconciler reads at most 64)", "maxLength",
                  "Too long: may not be more than 64 bytes", "spec.rotation.interval",
                  rotation={"interval": "1" + "0" * 62 + "ns"}),
    CASES.created("interval-30s", "rotation.interval between 0s and 1m", "rule",
                  "rotation.interval is 0s or at least 1m", "spec.rotation.interval", rotation={"interval": "30s"}),
    CASES.created("interval-negative", "rotation.interval negative", "rule",
                  "rotation.interval is 0s or at least 1m", "spec.rotation.interval", rotation={"interval": "-1h"}),
    CASES.created("interval-87601h", "rotation.interval above 87600h", "rule",
                  "rotation.interval is at most 87600h", "spec.rotation.interval", rotation={"interval": "87601h"}),
    # Rules on the object itself.
    refused("metadata-name-64", "metadata.name of 64 bytes", "rule",
            "metadata.name must be at most 63 bytes", ROOT_PATH, order("m" * 64)),
    # Transition rules: a valid base, then the update.
    *frozen_ref(CASES, "controlPlaneRef", REF, "an order"),
    CASES.changed("username-changed", "userName changed", "userName is immutable", ROOT_PATH,
                  {"userName": "alice"}, {"userName": "bob"}),
    CASES.changed("username-set-later", "userName set to another name than metadata.name after creation",
                  "userName is immutable", ROOT_PATH, {}, {"userName": "someone-else"}),
    CASES.changed("username-removed", "userName removed while it differs from metadata.name",
                  "userName is immutable", ROOT_PATH, {"userName": "alice"}, {}),
    CASES.changed("password-generation-lowered", "passwordGeneration lowered",
                  "passwordGeneration may only increase", "spec.passwordGeneration",
                  {"passwordGeneration": 3}, {"passwordGeneration": 2}),
    # Whitespace Keystone would strip (docs/keystoneuser-crd.md): "barbican " is stored as "barbican".
    _user_name_refused("username-trailing-space", "userName with a trailing space", "barbican "),
    _user_name_refused("username-leading-space", "userName with a leading space", " barbican"),
    _user_name_refused("username-trailing-tab", "userName with a trailing tab", "barbican\t"),
    _user_name_refused("username-trailing-nbsp", "userName with a trailing no-break space (U+00A0)", "barbican\u00a0"),
    _user_name_refused("username-leading-newline", "userName with a leading newline", "\nbarbican"),
    _user_name_refused("username-trailing-ideographic-space", "userName with a trailing ideographic space (U+3000)",
                       "barbican\u3000"),
    _user_name_refused("username-trailing-next-line", "userName with a trailing next line (U+0085)", "barbican\u0085"),
    _user_name_refused("username-only-space", "userName of a single space", " "),
    CASES.created("controlplaneref-name-254", "controlPlaneRef.name of 254 characters", "maxLength",
                  "Too long: may not be more than 253 bytes", "spec.controlPlaneRef.name",
                  controlPlaneRef={"name": "c" * 254, "namespace": "openstack"}),
    # The status the operator writes.
    *[CASES.status(f"{field.lower()}-format", f"a {field} that is no date-time", "format",
                   f"{field} in body must be of type date-time", f"status.{field}", {field: "soon"})
      for field in ("lastPasswordRotation", "nextPasswordRotation")],
    *[CASES.status(f"admittedas-{slug}-{limit + 1}", f"an admission record whose {what} has {limit + 1} characters",
                   "maxLength", f"Too long: may not be more than {limit} bytes", f"status.admittedAs.{path}",
                   {"admittedAs": record})
      for slug, what, path, limit, record in (
          ("controlplaneref-name", "ControlPlane name", "controlPlaneRef.name", 253,
           {"controlPlaneRef": {"name": "c" * 254, "namespace": "openstack"}}),
          ("controlplaneref-namespace", "ControlPlane namespace", "controlPlaneRef.namespace", 63,
           {"controlPlaneRef": {"name": "cp", "namespace": "n" * 64}}),
          ("username", "user name", "userName", 255, {"userName": "u" * 256}),
          ("cluster", "cluster", "cluster", 63, {"cluster": "e" * 64}))],
    *condition_refusals(CASES),
    # Characters beyond U+FFFF, which the parser refuses (spec.py): at the start, inside and at the end.
    _user_name_refused("username-only-emoji", "userName of one character beyond U+FFFF (U+1F600)", "\U0001F600"),
    _user_name_refused("username-inner-emoji", "userName with a character beyond U+FFFF inside (U+1F600)",
                       "svc\U0001F600admin"),
    _user_name_refused("username-trailing-supplementary", "userName ending in U+10FFFF, the last code point",
                       "svc\U0010FFFF"),
    # spec.secretTemplate (appended: earlier files keep their numbers).
    *secret_template_refusals(CASES),
]


def _a(slug: str) -> str:
    return f"ok-{slug}"


VALID = [
    admitted("minimal", "the smallest order; the schema fills in generation and interval",
             order(_a("minimal"), controlPlaneRef={"name": "cp"}),
             fields=[("spec.passwordGeneration", 1), ("spec.rotation.interval", "720h"),
                     ("spec.userName", None), ("spec.controlPlaneRef.namespace", None)]),
    admitted("every-field", "an order with every spec field",
             order(_a("every-field"), userName="svc-every-field", passwordGeneration=4,
                   rotation={"interval": "48h"}),
             fields=[("spec.userName", "svc-every-field"), ("spec.passwordGeneration", 4),
                     ("spec.rotation.interval", "48h"), ("spec.controlPlaneRef.namespace", "openstack")]),
    admitted("username-spelled-out", "an update that spells out userName: <metadata.name>",
             order(_a("username-spelled-out")),
             order(_a("username-spelled-out"), userName=_a("username-spelled-out")),
             fields=[("spec.userName", _a("username-spelled-out"))]),
    admitted("update-keeping-the-ref", "an update that raises the generation and changes the interval",
             order(_a("update-keeping-the-ref")),
             order(_a("update-keeping-the-ref"), passwordGeneration=2, rotation={"interval": "0s"}),
             fields=[("spec.passwordGeneration", 2), ("spec.rotation.interval", "0s")]),
    admitted("interval-0s", "rotation.interval 0s turns the schedule off",
             order(_a("interval-0s"), rotation={"interval": "0s"}),
             fields=[("spec.rotation.interval", "0s")]),
    admitted("interval-1m", "rotation.interval at its lower bound",
             order(_a("interval-1m"), rotation={"interval": "1m"}),
             fields=[("spec.rotation.interval", "1m")]),
    admitted("interval-compound", "rotation.interval with fraction and several units, as Go parses it",
             order(_a("interval-compound"), rotation={"interval": "1.5h30m"}),
             fields=[("spec.rotation.interval", "1.5h30m")]),
    admitted("interval-87600h", "rotation.interval at its upper bound",
             order(_a("interval-87600h"), rotation={"interval": "87600h"}),
             fields=[("spec.rotation.interval", "87600h")]),
    admitted("metadata-name-63", "metadata.name of 63 bytes",
             order("m" * 63), fields=[("metadata.name", "m" * 63)]),
    admitted("stored-without-rotation", "an order stored before spec.rotation existed reads back with 720h",
             order(_a("stored-without-rotation")), phase="legacy-read",
             fields=[("spec.rotation.interval", "720h")]),
    admitted("username-inner-space", "userName with whitespace inside, which Keystone keeps",
             order(_a("username-inner-space"), userName="svc\u00a0admin team"),
             fields=[("spec.userName", "svc\u00a0admin team")]),
    admitted("username-one-character", "userName of one character",
             order(_a("username-one-character"), userName="x"), fields=[("spec.userName", "x")]),
    admitted("username-accented", "userName with letters outside ASCII at both ends",
             order(_a("username-accented"), userName="Ådmin José"), fields=[("spec.userName", "Ådmin José")]),
    admitted("username-trailing-zero-width-space",
             "userName ending in U+200B, which is no whitespace to str.strip() and so not stripped by Keystone",
             order(_a("username-trailing-zwsp"), userName="svc\u200b"), fields=[("spec.userName", "svc\u200b")]),
    admitted("username-255", "userName of 255 characters",
             order(_a("username-255"), userName="u" * 255), fields=[("spec.userName", "u" * 255)]),
    admitted("username-bmp-edge", "userName with U+FFFD and CJK letters: the BMP is what Keystone's column holds",
             order(_a("username-bmp-edge"), userName="\ufffd\u30b5\u30fc\u30d3\u30b9\ufffd"),
             fields=[("spec.userName", "\ufffd\u30b5\u30fc\u30d3\u30b9\ufffd")]),
    *secret_template_admitted(order),
]

CORPUS = Corpus("KeystoneUser", "keystoneusers", Path(__file__).resolve(), tuple(INVALID), tuple(VALID))

if __name__ == "__main__":
    sys.exit(CORPUS.main())
