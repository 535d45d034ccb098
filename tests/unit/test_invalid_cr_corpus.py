# SPDX-License-Identifier: Apache-2.0
"""The admission corpora are what their generators say, and together they prove every constraint of every CRD.

The integration test can only prove the rules the corpora hold; these checks keep them honest without an
apiserver: no drift from a generator, no orphan file, one file per case, and above all coverage: every CEL
rule, every schema bound (length, pattern, format, enum, range, list size) and every required field of every
CRD, spec and status alike, has a refused fixture at its field, whose expected message still names the bound
the CRD has today. A bound added to a CRD without a fixture, or changed without its fixture, fails here.
"""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CRD_DIR = REPO / "tests" / "crd"
sys.path.insert(0, str(CRD_DIR))

import crdcorpus  # noqa: E402 - lives in tests/crd, next to the generators

CORPORA = crdcorpus.corpora()
KINDS = [c.kind for c in CORPORA]
INVALID = [(c, f) for c in CORPORA for f in crdcorpus.load_all(c.invalid_dir)]
VALID = [(c, f) for c in CORPORA for f in crdcorpus.load_all(c.valid_dir)]
INTEGER_FORMATS = ("int32", "int64")


def _id(pair) -> str:
    corpus, fixture = pair
    return f"{corpus.kind.lower()}/{fixture.path.name}"


def _check(generator: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(generator), "--check"], capture_output=True, text=True)


def test_every_crd_has_a_corpus():
    shipped = {p.name for p in crdcorpus.CRD_DIR.glob("*.yaml")}
    assert {c.crd_file.name for c in CORPORA} == shipped
    assert sorted(KINDS) == ["BucketCredential", "KeystoneUser", "ObjectStore", "ObjectStoreAccount"]


@pytest.mark.parametrize("corpus", CORPORA, ids=KINDS)
def test_check_passes_on_the_committed_corpus(corpus):
    result = _check(corpus.generator)
    assert result.returncode == 0, result.stderr


def test_check_fails_on_drift_and_orphans(tmp_path):
    """--check must notice both failure modes, or `make verify-invalid-cr-fixtures` guards nothing."""
    crd = tmp_path / "crd"
    shutil.copytree(CRD_DIR, crd, ignore=shutil.ignore_patterns("__pycache__"))
    gen = crd / "invalid-bucketcredential" / "_generate.py"
    first = sorted((crd / "invalid-bucketcredential").glob("[0-9]*-*.yaml"))[0]  # 01- or 001-
    first.write_text(first.read_text() + "# edited by hand\n")
    (crd / "valid-bucketcredential" / "99-left-behind.yaml").write_text("{}\n")
    result = _check(gen)
    assert result.returncode == 1
    assert f"drift: {first}" in result.stderr
    assert "orphan: " in result.stderr and "99-left-behind.yaml" in result.stderr
    assert "run tests/crd/invalid-bucketcredential/_generate.py to regenerate" in result.stderr


@pytest.mark.parametrize("corpus", CORPORA, ids=KINDS)
def test_counts_match_the_generator(corpus):
    assert len(crdcorpus.load_all(corpus.invalid_dir)) == len(corpus.invalid)
    assert len(crdcorpus.load_all(corpus.valid_dir)) == len(corpus.valid)


@pytest.mark.parametrize("corpus", CORPORA, ids=KINDS)
def test_file_names_slugs_and_object_names_are_unique(corpus):
    """All cases of a kind share one namespace in the integration test, so two files naming one object collide."""
    invalid, valid = crdcorpus.load_all(corpus.invalid_dir), crdcorpus.load_all(corpus.valid_dir)
    for fixtures in (invalid, valid):
        slugs = [f.path.name.split("-", 1)[1] for f in fixtures]
        assert len(set(slugs)) == len(slugs)
        width = len(fixtures[0].path.name.split("-", 1)[0])
        assert [f.path.name.split("-", 1)[0] for f in fixtures] == [
            f"{i:0{width}d}" for i in range(1, len(fixtures) + 1)]
    names = [f.docs[0]["metadata"]["name"] for f in invalid + valid]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("corpus,fixture", INVALID + VALID, ids=[_id(p) for p in INVALID + VALID])
def test_fixture_is_well_formed(corpus, fixture):
    text = fixture.path.read_text()
    assert text.startswith(crdcorpus.SPDX + "\n")
    assert text.splitlines()[1] == corpus.banner
    assert fixture.header.get("case")
    phase = fixture.header["phase"]
    assert len(fixture.docs) == (2 if phase in crdcorpus.TWO_DOCUMENT_PHASES else 1)
    if len(fixture.docs) == 2:
        assert fixture.docs[0]["metadata"]["name"] == fixture.docs[1]["metadata"]["name"]
    if phase == "status":
        assert "status" not in fixture.docs[0] and "status" in fixture.docs[1]
    for doc in fixture.docs:
        assert "namespace" not in doc["metadata"], "fixtures carry no namespace"
        assert (doc["apiVersion"], doc["kind"]) == (crdcorpus.API_VERSION, corpus.kind)


@pytest.mark.parametrize("corpus,fixture", INVALID, ids=[_id(p) for p in INVALID])
def test_every_refusal_names_its_message_and_what_it_covers(corpus, fixture):
    assert fixture.header.get("expect-error"), "a refusal without an expected message proves nothing"
    assert "expect-path" in fixture.header
    assert fixture.header.get("covers") in crdcorpus.COVERS
    assert not fixture.expect_fields


@pytest.mark.parametrize("corpus,fixture", VALID, ids=[_id(p) for p in VALID])
def test_every_admission_names_what_it_reads_back(corpus, fixture):
    assert "expect-error" not in fixture.header and "covers" not in fixture.header
    assert fixture.expect_fields


# Coverage: the constraints of a CRD, and the refusals that prove them.

def _normalise(path: str) -> str:
    """A cause's field with list indexes dropped: status.conditions[0].type -> status.conditions[].type."""
    return re.sub(r"\[[0-9]+\]", "[]", path)


def constraints(schema: dict, path: str = crdcorpus.ROOT_PATH) -> set:
    """{(field as a cause names it, constraint, detail)} for every rule, bound and required field below ``schema``."""
    out = {(path, "rule", r["message"]) for r in schema.get("x-kubernetes-validations", [])}
    for keyword in crdcorpus.SCHEMA_KEYWORDS:
        if keyword == "enum" and keyword in schema:  # the values as the apiserver quotes them
            out.add((path, keyword, json.dumps([str(v) for v in schema[keyword]])))
        elif keyword in schema and not (keyword == "format" and schema[keyword] in INTEGER_FORMATS):
            out.add((path, keyword, str(schema[keyword])))

    def child(name):
        return name if path == crdcorpus.ROOT_PATH else f"{path}.{name}"

    out |= {(child(name), "required", "") for name in schema.get("required", [])}
    for name, sub in schema.get("properties", {}).items():
        if name not in ("apiVersion", "kind", "metadata"):
            out |= constraints(sub, child(name))
    if "items" in schema:
        out |= constraints(schema["items"], path + "[]")
    if isinstance(schema.get("additionalProperties"), dict):  # a map's values: the cause names the key
        out |= constraints(schema["additionalProperties"], path + ".*")
    return out


def same_field(cause: str, constraint: str) -> bool:
    """A cause's (normalised) field is the constraint's; ``*`` in the constraint stands for one map key."""
    return re.fullmatch(re.escape(constraint).replace(r"\*", r"[^.]+"), cause) is not None


def expected_text(keyword: str, detail: str) -> str:
    """The part of the apiserver's message that names the CRD's current value of a bound."""
    return {
        "minLength": f"should be at least {detail} chars long",
        "maxLength": f"may not be more than {detail} bytes",
        "pattern": f"should match '{detail}'",
        "format": f"must be of type {detail}",
        "enum": "Unsupported value",
        "minimum": f"greater than or equal to {detail}",
        "maximum": f"less than or equal to {detail}",
        "minItems": f"should have at least {detail} items",
        "maxItems": f"must have at most {detail} items",
        "maxProperties": f"must have at most {detail} items",
        "required": "Required value",
    }.get(keyword, detail)


def _schema(corpus) -> dict:
    crd = yaml.safe_load(corpus.crd_file.read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def _refusals(corpus) -> list:
    return [(_normalise(f.header["expect-path"]), f.header["covers"], f.header["expect-error"], f.path.name)
            for f in crdcorpus.load_all(corpus.invalid_dir)]


@pytest.mark.parametrize("corpus", CORPORA, ids=KINDS)
def test_every_constraint_of_the_crd_has_a_refusal(corpus):
    """A rule or bound without a fixture is one nobody has seen the apiserver enforce."""
    refusals = _refusals(corpus)
    missing = [c for c in sorted(constraints(_schema(corpus)))
               if not any(same_field(path, c[0]) and covers == c[1] and expected_text(c[1], c[2]) in error
                          for path, covers, error, _ in refusals)]
    assert missing == [], f"constraints of {corpus.crd_file.name} without a refused fixture: {missing}"


@pytest.mark.parametrize("corpus", CORPORA, ids=KINDS)
def test_every_refusal_proves_a_constraint_the_crd_has(corpus):
    """A fixture whose bound the CRD no longer has (or has with another value) would test a stale promise."""
    have = constraints(_schema(corpus))
    stale = [name for path, covers, error, name in _refusals(corpus)
             if not any(same_field(path, c[0]) and covers == c[1] and expected_text(c[1], c[2]) in error
                        for c in have)]
    assert stale == []


def test_enum_refusals_list_the_crds_values():
    """The enum message lists the allowed values, so a changed enum must change its fixture too."""
    for corpus in CORPORA:
        enums = {path: values for path, keyword, values in constraints(_schema(corpus)) if keyword == "enum"}
        for path, covers, error, name in _refusals(corpus):
            if covers == "enum":
                listed = re.findall(r'"([^"]*)"', error.split("supported values:", 1)[1])
                assert listed == json.loads(enums[path]), name
