# SPDX-License-Identifier: Apache-2.0
"""The KeystoneUser CRD ships twice and must be one file.

The install role serves the kind on the management cluster and the target-cluster-access role serves it on
every registered target cluster; an order must be admitted by the same rules wherever it lives, so the
copy is byte-identical to the source rather than merely equivalent.
"""
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "roles" / "install" / "files" / "crds" / "c5c3.io_keystoneusers.yaml"
COPY = REPO / "roles" / "target_cluster_access" / "files" / "crds" / "c5c3.io_keystoneusers.yaml"


def test_copy_is_byte_identical():
    assert COPY.read_bytes() == SOURCE.read_bytes(), f"cp {SOURCE.relative_to(REPO)} {COPY.relative_to(REPO)}"


def test_source_is_the_keystoneuser_crd():
    crd = yaml.safe_load(SOURCE.read_text())
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"]["name"] == "keystoneusers.c5c3.io"
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
