# SPDX-License-Identifier: Apache-2.0
"""The order CRDs ship twice and each must be one file; the platform CRDs ship once.

The install role serves every kind on the management cluster and the target-cluster-access role serves the
order kinds (KeystoneUser, BucketCredential) on every registered target cluster; an order must be admitted by
the same rules wherever it lives, so each copy is byte-identical to its source rather than merely equivalent.
ObjectStore and ObjectStoreAccount live in a ControlPlane's namespace on the management cluster only, so a
target cluster must not serve them.
"""
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "roles" / "install" / "files" / "crds"
COPIES = REPO / "roles" / "target_cluster_access" / "files" / "crds"
ORDER_KINDS = {"c5c3.io_keystoneusers.yaml": "KeystoneUser", "c5c3.io_bucketcredentials.yaml": "BucketCredential"}
PLATFORM_KINDS = {"c5c3.io_objectstores.yaml": "ObjectStore",
                  "c5c3.io_objectstoreaccounts.yaml": "ObjectStoreAccount"}
ALL_KINDS = {**ORDER_KINDS, **PLATFORM_KINDS}


def test_the_install_role_ships_every_kind():
    assert {p.name for p in SOURCES.glob("*.yaml")} == set(ALL_KINDS)


def test_the_target_cluster_role_ships_the_order_kinds_only():
    assert {p.name for p in COPIES.glob("*.yaml")} == set(ORDER_KINDS)


@pytest.mark.parametrize("name", sorted(ORDER_KINDS))
def test_copy_is_byte_identical(name):
    source, copy = SOURCES / name, COPIES / name
    assert copy.read_bytes() == source.read_bytes(), f"cp {source.relative_to(REPO)} {copy.relative_to(REPO)}"


@pytest.mark.parametrize("name,kind", sorted(ALL_KINDS.items()))
def test_source_is_a_namespaced_v1alpha1_crd_named_after_its_file(name, kind):
    crd = yaml.safe_load((SOURCES / name).read_text())
    plural = name.removeprefix("c5c3.io_").removesuffix(".yaml")
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"]["name"] == f"{plural}.c5c3.io"
    assert (crd["spec"]["group"], crd["spec"]["scope"]) == ("c5c3.io", "Namespaced")
    assert crd["spec"]["names"]["kind"] == kind and crd["spec"]["names"]["plural"] == plural
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"][-1]["name"] == "Age"


def _unbounded(schema: dict, path: str) -> list:
    """Strings without maxLength (or enum) and lists without maxItems below ``schema``."""
    out = []
    bounded_string = {"maxLength", "enum"} & set(schema) or schema.get("format") == "date-time"
    if schema.get("type") == "string" and not bounded_string:
        out.append(path)
    if schema.get("type") == "array":
        if "maxItems" not in schema:
            out.append(path)
        out += _unbounded(schema["items"], path + "[]")
    for key, sub in schema.get("properties", {}).items():
        if key not in ("apiVersion", "kind", "metadata"):
            out += _unbounded(sub, f"{path}.{key}" if path else key)
    return out


@pytest.mark.parametrize("name", sorted(PLATFORM_KINDS) + ["c5c3.io_bucketcredentials.yaml"])
def test_every_string_and_list_of_the_object_storage_kinds_is_bounded(name):
    """Nothing unbounded reaches the reconciler (a date-time is bounded by its format)."""
    crd = yaml.safe_load((SOURCES / name).read_text())
    assert _unbounded(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"], "") == []
