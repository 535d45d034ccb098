# SPDX-License-Identifier: Apache-2.0
"""The KeystoneUser admission corpus is what its generator says, and each file is usable by the real test.

The integration test can only prove the rules the corpus holds; these checks keep the corpus honest
without an apiserver: no drift from _generate.py, no orphan file, one file per case, an expected message
on every refusal, and no pinned namespace (the integration test picks its own).
"""
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "tests" / "crd" / "invalid-keystoneuser" / "_generate.py"

_spec = importlib.util.spec_from_file_location("keystoneuser_corpus", GENERATOR)
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

INVALID = corpus.load_all(corpus.INVALID_DIR)
VALID = corpus.load_all(corpus.VALID_DIR)
ALL = INVALID + VALID


def _check(generator: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(generator), "--check"], capture_output=True, text=True)


def test_check_passes_on_the_committed_corpus():
    result = _check(GENERATOR)
    assert result.returncode == 0, result.stderr


def test_check_fails_on_drift_and_orphans(tmp_path):
    """--check must notice both failure modes, or `make verify-invalid-cr-fixtures` guards nothing."""
    crd = tmp_path / "crd"
    shutil.copytree(GENERATOR.parent.parent, crd, ignore=shutil.ignore_patterns("__pycache__"))
    gen = crd / "invalid-keystoneuser" / "_generate.py"
    first = sorted((crd / "invalid-keystoneuser").glob("01-*.yaml"))[0]
    first.write_text(first.read_text() + "# edited by hand\n")
    (crd / "valid-keystoneuser" / "99-left-behind.yaml").write_text("{}\n")
    result = _check(gen)
    assert result.returncode == 1
    assert f"drift: {first}" in result.stderr
    assert "orphan: " in result.stderr and "99-left-behind.yaml" in result.stderr


def test_counts_match_the_generator():
    assert len(INVALID) == len(corpus.INVALID) and len(VALID) == len(corpus.VALID)
    assert len(INVALID) >= 20 and len(VALID) >= 9


def test_file_names_and_slugs_are_unique():
    for fixtures in (INVALID, VALID):
        slugs = [f.path.name.split("-", 1)[1] for f in fixtures]
        assert len(set(slugs)) == len(slugs)
        assert [f.path.name[:2] for f in fixtures] == [f"{i:02d}" for i in range(1, len(fixtures) + 1)]


def test_object_names_are_unique_across_the_corpus():
    """All cases share one namespace in the integration test, so two files naming one object would collide."""
    names = [f.docs[0]["metadata"]["name"] for f in ALL]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("fixture", ALL, ids=[f"{f.path.parent.name}/{f.path.name}" for f in ALL])
def test_fixture_is_well_formed(fixture):
    text = fixture.path.read_text()
    assert text.startswith(corpus.SPDX + "\n")
    assert fixture.header.get("case")
    phase = fixture.header["phase"]
    assert len(fixture.docs) == (2 if phase == "update" else 1)
    if phase == "update":
        assert fixture.docs[0]["metadata"]["name"] == fixture.docs[1]["metadata"]["name"]
    for doc in fixture.docs:
        assert "namespace" not in doc["metadata"], "fixtures carry no namespace"
        assert (doc["apiVersion"], doc["kind"]) == ("c5c3.io/v1alpha1", "KeystoneUser")


@pytest.mark.parametrize("fixture", INVALID, ids=[f.path.name for f in INVALID])
def test_every_refusal_names_its_message(fixture):
    assert fixture.header.get("expect-error"), "a refusal without an expected message proves nothing"
    assert "expect-path" in fixture.header
    assert not fixture.expect_fields


@pytest.mark.parametrize("fixture", VALID, ids=[f.path.name for f in VALID])
def test_every_admission_names_what_it_reads_back(fixture):
    assert "expect-error" not in fixture.header
    assert fixture.expect_fields


def test_every_cel_message_of_the_crd_has_a_refusal():
    """A rule without a fixture is a rule nobody has seen the apiserver enforce."""
    import yaml

    crd = yaml.safe_load((REPO / "roles/install/files/crds/c5c3.io_keystoneusers.yaml").read_text())
    messages = set()

    def walk(schema):
        messages.update(r["message"] for r in schema.get("x-kubernetes-validations", []))
        for sub in schema.get("properties", {}).values():
            walk(sub)
        if "items" in schema:
            walk(schema["items"])

    walk(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    assert messages <= {f.header["expect-error"] for f in INVALID}
