# SPDX-License-Identifier: Apache-2.0
"""The admission corpus format that every kind's generator writes and every test reads.

The c5c3.io kinds have no webhook, so a CRD's schema and CEL rules are all that stands between a writer and a
bad object. Each kind has a generator, ``tests/crd/invalid-<kind>/_generate.py``, that lists one case per
constraint of its CRD: the refused ones go to ``invalid-<kind>/``, the ones at the edge of a constraint that
must be admitted go to ``valid-<kind>/``. The real kube-apiserver must refuse every refused file with the exact
message (tests/integration/test_crd_admission.py); tests/unit/test_invalid_cr_corpus.py proves, without an
apiserver, that every constraint of every CRD has a refusal and that each expected message still names the
CRD's current bound. ``--check`` (``make verify-invalid-cr-fixtures``) fails when a file drifted from its
generator or when a numbered file no case produces is left behind.

File format: a comment header of ``# key: value`` fields, then one YAML document per request.
  phase: create       one document, created.
  phase: update       two documents: a valid base that is created first, then the update (a full PUT).
  phase: status       two documents: a valid base that is created first, then the same object with a status,
                      written through the status subresource (a full PUT).
  phase: legacy-read  one document, stored under a schema without spec.rotation, read under the real one.
  covers              (refused cases) the constraint the case proves: ``required``, ``rule`` (a CEL rule) or
                      the schema keyword (``maxLength``, ``pattern``, ``enum``, ...).
  expect-error / expect-path   (refused cases) the message the 422 must carry, and the field its cause
                               names as the API server spells it (``<nil>`` for a rule on the object itself).
  expect-field                 (admitted cases, repeatable) ``<dotted path> = <JSON value>`` as read back;
                               ``null`` means the field is absent.
Fixtures carry no namespace: the test picks one.
"""

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

REPO = Path(__file__).resolve().parents[2]
CRD_DIR = REPO / "roles" / "install" / "files" / "crds"
GROUP, VERSION = "c5c3.io", "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
FIXTURE_RE = re.compile(r"^[0-9]{2,3}-.+\.yaml$")
HEADER_RE = re.compile(r"^# ([a-z-]+): ?(.*)$")
PHASES = ("create", "update", "status", "legacy-read")
TWO_DOCUMENT_PHASES = ("update", "status")
SCHEMA_KEYWORDS = ("minLength", "maxLength", "pattern", "format", "enum", "minimum", "maximum", "minItems", "maxItems",
                   "maxProperties")
COVERS = ("required", "rule") + SCHEMA_KEYWORDS
SPDX = "# SPDX-License-Identifier: Apache-2.0"
ROOT_PATH = "<nil>"  # the field of a Status cause raised by a rule on the object itself
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
CONDITION_TYPE = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                  r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
CONDITION_REASON = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
TIME = "2025-01-01T00:00:00Z"


def resource(kind: str, name: str, spec: dict | None, **rest) -> dict:
    """A c5c3.io object; ``spec=None`` leaves the spec out, and keys of ``spec`` set to None are dropped."""
    doc = {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}}
    if spec is not None:
        doc["spec"] = {k: v for k, v in spec.items() if v is not None}
    doc.update(rest)
    return doc


def with_status(doc: dict, status: dict) -> dict:
    return dict(doc, status=status)


@dataclass(frozen=True)
class Case:
    """One admission request (or a base and its update) and what the API server must answer."""

    slug: str
    title: str
    docs: tuple  # the documents in the order they are sent
    phase: str = "create"
    covers: str | None = None
    expect_error: str | None = None
    expect_path: str | None = None
    expect_fields: tuple = field(default_factory=tuple)

    def render(self, banner: str) -> str:
        head = [SPDX, banner, f"# case: {self.title}", f"# phase: {self.phase}"]
        if self.expect_error is not None:
            head += [f"# covers: {self.covers}", f"# expect-error: {self.expect_error}",
                     f"# expect-path: {self.expect_path}"]
        head += [f"# expect-field: {p} = {json.dumps(v)}" for p, v in self.expect_fields]
        body = "".join(
            "---\n" + yaml.safe_dump(d, sort_keys=False, default_flow_style=False, width=4096)
            for d in self.docs
        )
        return "\n".join(head) + "\n" + body


def _phase(docs: tuple, phase: str | None) -> str:
    return phase or ("update" if len(docs) == 2 else "create")


def refused(slug: str, title: str, covers: str, error: str, path: str, *docs: dict, phase: str | None = None) -> Case:
    if covers not in COVERS:
        raise ValueError(f"{slug}: covers must be one of {COVERS}")
    return Case(slug, title, tuple(docs), _phase(docs, phase), covers, error, path)


def admitted(slug: str, title: str, *docs: dict, fields=(), phase: str | None = None) -> Case:
    return Case(slug, title, tuple(docs), _phase(docs, phase), expect_fields=tuple(fields))


@dataclass(frozen=True)
class Cases:
    """Case builders for one kind; ``make(name, **spec)`` returns a valid object whose spec keys may be overridden.

    Refused objects are named ``inv-<slug>``, so every case names its own object.
    """

    make: Callable[..., dict]

    def created(self, slug: str, title: str, covers: str, error: str, path: str, **spec) -> Case:
        """An object created with ``spec`` overrides."""
        return refused(slug, title, covers, error, path, self.make(f"inv-{slug}", **spec))

    def changed(self, slug: str, title: str, error: str, path: str, before: dict, after: dict) -> Case:
        """A valid base created with ``before``, then replaced by one with ``after`` (a transition rule)."""
        name = f"inv-{slug}"
        return refused(slug, title, "rule", error, path, self.make(name, **before), self.make(name, **after))

    def status(self, slug: str, title: str, covers: str, error: str, path: str, status: dict) -> Case:
        """A valid object created, then ``status`` written through the status subresource."""
        name = f"inv-status-{slug}"
        return refused(f"status-{slug}", title, covers, error, path, self.make(name),
                       with_status(self.make(name), status), phase="status")


def object_refusals(cases: Cases, kind: str, what: str) -> list[Case]:
    """A ``what`` without spec, and one whose metadata.name (a label value on its children) exceeds 63 bytes."""
    return [
        refused("spec-missing", f"{what} without spec", "required", "spec: Required value", "spec",
                resource(kind, "inv-spec-missing", None)),
        refused("metadata-name-64", "metadata.name of 64 bytes", "rule",
                "metadata.name must be at most 63 bytes", ROOT_PATH, cases.make("m" * 64)),
    ]


def ref_name_cases(cases: Cases, field: str, ref: dict, max_length: int, what: str) -> list[Case]:
    """A required reference whose ``name`` is an object name of at most ``max_length`` bytes."""
    lower, path = field.lower(), f"spec.{field}"
    without_name = {k: v for k, v in ref.items() if k != "name"}
    return [
        cases.created(f"{lower}-missing", f"{what} without {field}", "required",
                      f"{path}: Required value", path, **{field: None}),
        cases.created(f"{lower}-name-missing", f"{field} without name", "required",
                      f"{path}.name: Required value", f"{path}.name", **{field: without_name}),
        cases.created(f"{lower}-name-pattern", f"{field}.name that is no object name", "pattern",
                      f"{path}.name in body should match '{DNS_SUBDOMAIN}'", f"{path}.name",
                      **{field: dict(ref, name="")}),
        cases.created(f"{lower}-name-{max_length + 1}", f"{field}.name of {max_length + 1} characters", "maxLength",
                      f"Too long: may not be more than {max_length} bytes", f"{path}.name",
                      **{field: dict(ref, name="n" * (max_length + 1))}),
    ]


def ref_namespace_bounds(cases: Cases, field: str, ref: dict) -> list[Case]:
    """The two bounds of a reference's ``namespace`` (an RFC 1123 label)."""
    lower = field.lower()
    path = f"spec.{field}.namespace"
    return [
        cases.created(f"{lower}-namespace-pattern", f"{field}.namespace not an RFC-1123 label", "pattern",
                      f"{path} in body should match '{DNS_LABEL}'", path, **{field: dict(ref, namespace="Open_Stack")}),
        cases.created(f"{lower}-namespace-64", f"{field}.namespace of 64 characters", "maxLength",
                      "Too long: may not be more than 63 bytes", path, **{field: dict(ref, namespace="n" * 64)}),
    ]


def frozen_ref(cases: Cases, field: str, ref: dict, what: str = "an object") -> list[Case]:
    """The transitions a frozen ``{name, namespace}`` reference refuses; ``ref`` is what ``cases.make`` fills in.

    The namespace is frozen also when it was left out at creation: a rule on the reference compares its presence,
    because a transition rule on the namespace itself does not run when the old or new value is absent.
    """
    lower, without_namespace = field.lower(), {"name": ref["name"]}
    name_error, namespace_error = f"{field}.name is immutable", f"{field}.namespace is immutable"
    return [
        cases.changed(f"{lower}-name-changed", f"{field}.name changed", name_error, f"spec.{field}.name",
                      {}, {field: dict(ref, name=ref["name"] + "2")}),
        cases.changed(f"{lower}-namespace-changed", f"{field}.namespace changed", namespace_error,
                      f"spec.{field}.namespace", {}, {field: dict(ref, namespace="other")}),
        cases.changed(f"{lower}-namespace-added", f"{field}.namespace added to {what} created without it",
                      namespace_error, f"spec.{field}", {field: without_namespace}, {}),
        cases.changed(f"{lower}-namespace-removed", f"{field}.namespace removed", namespace_error, f"spec.{field}",
                      {}, {field: without_namespace}),
    ]


TEMPLATE = "spec.secretTemplate"
TEMPLATE_ENTRIES = 32
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"


def secret_template_refusals(cases: Cases) -> list[Case]:
    """One refusal per constraint of ``spec.secretTemplate`` (both delivering kinds share it): no key under c5c3.io/,
    qualified keys, label values, and the number of entries."""
    def case(slug, title, covers, error, path, labels=None, annotations=None):
        template = {k: v for k, v in (("labels", labels), ("annotations", annotations)) if v is not None}
        return cases.created(f"secrettemplate-{slug}", title, covers, error, path, secretTemplate=template)

    many = {f"k{i}": "v" for i in range(TEMPLATE_ENTRIES + 1)}
    out = []
    for field in ("labels", "annotations"):
        path = f"{TEMPLATE}.{field}"
        entries = lambda value: {field: value}  # noqa: E731 - one map or the other
        out += [
            case(f"{field}-reserved-prefix", f"a template {field[:-1]} under c5c3.io/, the collection's own prefix",
                 "rule", f"secretTemplate.{field} must not use keys under c5c3.io/", path,
                 **entries({"c5c3.io/keystoneuser-name": "other"})),
            case(f"{field}-key-not-qualified", f"a template {field[:-1]} key that is no qualified name", "rule",
                 f"secretTemplate.{field} keys must be qualified names", path, **entries({"not a key": "x"})),
            case(f"{field}-{TEMPLATE_ENTRIES + 1}", f"{TEMPLATE_ENTRIES + 1} template {field}", "maxProperties",
                 f"must have at most {TEMPLATE_ENTRIES} items", path, **entries(many)),
        ]
    out += [
        case("labels-key-prefix-254", "a template label key whose prefix has 254 characters", "rule",
             "secretTemplate.labels keys must be qualified names", f"{TEMPLATE}.labels", labels={"p" * 254 + "/n": "x"}),
        case("label-value-64", "a template label value of 64 characters", "maxLength",
             "Too long: may not be more than 63 bytes", f"{TEMPLATE}.labels.team", labels={"team": "v" * 64}),
        case("label-value-pattern", "a template label value that is no label value", "pattern",
             f"{TEMPLATE}.labels.team in body should match '{LABEL_VALUE}'", f"{TEMPLATE}.labels.team",
             labels={"team": "two words"}),
        case("annotation-value-4097", "a template annotation value of 4097 characters", "maxLength",
             "Too long: may not be more than 4096 bytes", f"{TEMPLATE}.annotations.note",
             annotations={"note": "n" * 4097}),
    ]
    return out


# Go's time.ParseDuration syntax, which the reconciler reads (plugins/module_utils/orders/specduration.py).
GO_DURATION = r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"


def schedule_refusals(cases: Cases, name: str, slug: str) -> list[Case]:
    """One refusal per constraint of a rotation schedule ``spec.<name>`` {interval, overlap} (BucketCredential's
    ``rotation``, ObjectStoreAccount's ``rootKeyRotationSchedule``: plugins/module_utils/objectstorage/rotationspec.py
    reads both): each duration's format, pattern and length, the interval's bounds, the overlap's floor and that it is
    shorter than the interval."""
    def case(case_slug, title, covers, error, path, value):
        return cases.created(f"{slug}-{case_slug}", title, covers, error, path, **{name: value})

    out = [c for field in ("interval", "overlap") for c in (
        case(f"{field}-not-a-duration", f"{name}.{field} that is no duration", "format",
             f"spec.{name}.{field} in body must be of type duration", f"spec.{name}.{field}", {field: "monthly"}),
        case(f"{field}-day-unit", f"{name}.{field} in days, which format duration alone admits", "pattern",
             f"spec.{name}.{field} in body should match '{GO_DURATION}'", f"spec.{name}.{field}", {field: "30d"}),
        case(f"{field}-65", f"{name}.{field} of 65 characters (the reconciler reads at most 64)", "maxLength",
             "Too long: may not be more than 64 bytes", f"spec.{name}.{field}", {field: "1" + "0" * 62 + "ns"}),
    )]
    return out + [
        case("interval-9s", f"{name}.interval between 0s and 10s", "rule", f"{name}.interval is 0s or at least 10s",
             f"spec.{name}.interval", {"interval": "9s"}),
        case("interval-87601h", f"{name}.interval above 87600h", "rule", f"{name}.interval is at most 87600h",
             f"spec.{name}.interval", {"interval": "87601h"}),
        case("overlap-500ms", f"{name}.overlap below 1s", "rule", f"{name}.overlap is at least 1s",
             f"spec.{name}.overlap", {"overlap": "500ms"}),
        case("overlap-not-shorter", f"{name}.overlap as long as the interval", "rule",
             f"{name}.overlap must be shorter than {name}.interval", f"spec.{name}",
             {"interval": "1h", "overlap": "60m"}),
    ]


def secret_template_admitted(make: Callable[..., dict]) -> list[Case]:
    """The template a reloader reads, and keys and values at the edge of each bound."""
    labels = {"app.kubernetes.io/part-of": "billing", "team": "", "p" * 253 + "/" + "n" * 63: "v" * 63}
    annotations = {"reloader.stakater.com/match": "true", "note": "free text, with spaces",
                   "c5c3.io.example.com/not-ours": "x"}
    template = {"labels": labels, "annotations": annotations}
    return [admitted("secret-template", "a secret template with a reloader annotation and keys at their bounds",
                     make("ok-secret-template", secretTemplate=template),
                     fields=[(f"{TEMPLATE}.labels", labels), (f"{TEMPLATE}.annotations", annotations)])]


def condition(**overrides) -> dict:
    """A valid metav1.Condition; an override of None drops the field."""
    cond = {"type": "Ready", "status": "True", "reason": "AllReady", "message": "ok",
            "lastTransitionTime": TIME, "observedGeneration": 1}
    cond.update(overrides)
    return {k: v for k, v in cond.items() if v is not None}


def condition_refusals(cases: Cases, max_items: int | None = None) -> list[Case]:
    """One status refusal per constraint of the metav1.Condition schema every kind shares.

    Each case creates a valid object, then writes a status whose one condition breaks one bound.
    """
    def case(slug, title, covers, error, path, *conds):
        return cases.status(slug, title, covers, error, path, {"conditions": list(conds)})

    at = "status.conditions[0]"
    # The status subresource validates the status alone, so a schema message spells the field from there.
    rel = "conditions[0]"
    out = [
        case("condition-type-317", "a condition type of 317 characters", "maxLength",
             "Too long: may not be more than 316 bytes", f"{at}.type", condition(type="T" * 317)),
        case("condition-type-pattern", "a condition type that is no qualified name", "pattern",
             f"{rel}.type in body should match '{CONDITION_TYPE}'", f"{at}.type", condition(type="Not Ready")),
        case("condition-status-enum", "a condition status outside True/False/Unknown", "enum",
             'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"', f"{at}.status",
             condition(status="Maybe")),
        case("condition-observedgeneration-negative", "a condition observedGeneration below 0", "minimum",
             f"{rel}.observedGeneration in body should be greater than or equal to 0", f"{at}.observedGeneration",
             condition(observedGeneration=-1)),
        case("condition-lasttransitiontime-format", "a condition lastTransitionTime that is no date-time", "format",
             f"{rel}.lastTransitionTime in body must be of type date-time", f"{at}.lastTransitionTime",
             condition(lastTransitionTime="yesterday")),
        case("condition-reason-empty", "an empty condition reason", "minLength",
             f"{rel}.reason in body should be at least 1 chars long", f"{at}.reason", condition(reason="")),
        case("condition-reason-1025", "a condition reason of 1025 characters", "maxLength",
             "Too long: may not be more than 1024 bytes", f"{at}.reason", condition(reason="R" * 1025)),
        case("condition-reason-pattern", "a condition reason that is no CamelCase word", "pattern",
             f"{rel}.reason in body should match '{CONDITION_REASON}'", f"{at}.reason",
             condition(reason="not a reason")),
        case("condition-message-32769", "a condition message of 32769 characters", "maxLength",
             "Too long: may not be more than 32768 bytes", f"{at}.message", condition(message="m" * 32769)),
    ]
    for missing in ("type", "status", "reason", "message", "lastTransitionTime"):
        out.append(case(f"condition-{missing.lower()}-missing", f"a condition without {missing}", "required",
                          f"{at}.{missing}: Required value", f"{at}.{missing}", condition(**{missing: None})))
    if max_items is not None:
        out.append(case(f"conditions-{max_items + 1}", f"{max_items + 1} conditions", "maxItems",
                          f"must have at most {max_items} items", "status.conditions",
                          *[condition(type=f"Type{i}") for i in range(max_items + 1)]))
    return out


@dataclass(frozen=True)
class Fixture:
    """A fixture file as the tests read it."""

    path: Path
    header: dict  # single-valued header fields
    expect_fields: tuple  # ((dotted path, value), ...)
    docs: tuple


def load(path: Path) -> Fixture:
    """Parses one fixture file; raises ValueError on a malformed header."""
    header, fields = {}, []
    for line in path.read_text().splitlines():
        if line.startswith("---"):
            break
        m = HEADER_RE.match(line)
        if not m:
            continue
        key, value = m.groups()
        if key == "expect-field":
            p, _, v = value.partition(" = ")
            fields.append((p, json.loads(v)))
        elif key in header:
            raise ValueError(f"{path}: header field {key} twice")
        else:
            header[key] = value
    if header.get("phase") not in PHASES:
        raise ValueError(f"{path}: phase must be one of {PHASES}")
    docs = tuple(d for d in yaml.safe_load_all(path.read_text()) if d is not None)
    return Fixture(path, header, tuple(fields), docs)


def load_all(folder: Path) -> list[Fixture]:
    return [load(p) for p in sorted(folder.iterdir()) if FIXTURE_RE.match(p.name)]


@dataclass(frozen=True)
class Corpus:
    """The cases of one kind and the two folders they are written to."""

    kind: str
    plural: str
    generator: Path  # invalid-<kind>/_generate.py
    invalid: tuple
    valid: tuple

    @property
    def invalid_dir(self) -> Path:
        return self.generator.parent

    @property
    def valid_dir(self) -> Path:
        return self.generator.parent.parent / f"valid-{self.kind.lower()}"

    @property
    def crd_file(self) -> Path:
        return CRD_DIR / f"{GROUP}_{self.plural}.yaml"

    @property
    def banner(self) -> str:
        return f"# Generated by {self.script}; edit the script, not this file."

    @property
    def script(self) -> str:
        """The generator's path as typed from the repository root (also for a copy of tests/crd elsewhere)."""
        return f"tests/crd/{self.generator.parent.name}/{self.generator.name}"

    def expected_files(self) -> dict[Path, str]:
        """Every file of the corpus, keyed by path."""
        width = 3 if max(len(self.invalid), len(self.valid)) > 99 else 2
        out = {}
        for folder, cases in ((self.invalid_dir, self.invalid), (self.valid_dir, self.valid)):
            for i, case in enumerate(cases, start=1):
                out[folder / f"{i:0{width}d}-{case.slug}.yaml"] = case.render(self.banner)
        return out

    def problems(self) -> list[str]:
        """What ``--check`` complains about: missing, drifted and orphan fixture files."""
        want = self.expected_files()
        found = [p for d in (self.invalid_dir, self.valid_dir) if d.is_dir()
                 for p in d.iterdir() if FIXTURE_RE.match(p.name)]
        out = [f"orphan: {p}" for p in sorted(set(found) - set(want))]
        for path, text in want.items():
            if not path.exists():
                out.append(f"missing: {path}")
            elif path.read_text() != text:
                out.append(f"drift: {path}")
        return out

    def write(self) -> None:
        self.valid_dir.mkdir(exist_ok=True)
        for p in self.problems():
            if p.startswith("orphan: "):
                Path(p[len("orphan: "):]).unlink()
        for path, text in self.expected_files().items():
            path.write_text(text)

    def main(self, argv=None) -> int:
        parser = argparse.ArgumentParser(description=f"Writes the {self.kind} admission corpus.")
        parser.add_argument("--check", action="store_true", help="fail on drift or orphan files instead of writing")
        args = parser.parse_args(argv)
        if not args.check:
            self.write()
            return 0
        found = self.problems()
        for line in found:
            print(line, file=sys.stderr)
        if found:
            print(f"run {self.script} to regenerate", file=sys.stderr)
        return 1 if found else 0


def corpora() -> list[Corpus]:
    """Every kind's corpus, found as tests/crd/invalid-<kind>/_generate.py and loaded from its file."""
    import importlib.util

    out = []
    for generator in sorted(Path(__file__).resolve().parent.glob("invalid-*/_generate.py")):
        spec = importlib.util.spec_from_file_location(f"crd_corpus_{generator.parent.name.replace('-', '_')}",
                                                      generator)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.append(module.CORPUS)
    return out
