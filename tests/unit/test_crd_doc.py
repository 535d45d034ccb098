# SPDX-License-Identifier: Apache-2.0
"""docs/keystoneuser-crd.md describes the CRD that is actually shipped.

The page is written by hand, so nothing keeps it true but this test: it reads the page's tables and compares
every documented field, type, requiredness, schema default, bound, printer column and CEL rule with
roles/install/files/crds/c5c3.io_keystoneusers.yaml, in both directions.
"""
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "keystoneuser-crd.md"
CRD = yaml.safe_load((REPO / "roles" / "install" / "files" / "crds" / "c5c3.io_keystoneusers.yaml").read_text())
VERSION = CRD["spec"]["versions"][0]
ROOT = VERSION["schema"]["openAPIV3Schema"]
BOUNDS = ("minLength", "maxLength", "minimum", "maximum", "pattern", "enum")
ROOT_NAME = "KeystoneUser"  # how the rules table names the object itself


def tables(text: str) -> dict:
    """{heading: [row dict, ...]} for the first table under each heading; ``\\|`` is a literal pipe."""
    out, heading, rows, header = {}, None, None, None
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            heading, rows, header = line.lstrip("#").strip(), None, None
        elif line.startswith("|") and heading and heading not in out:
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if header is None:
                header = cells
            elif not set("".join(cells)) <= set("-: "):  # skip the |---| separator
                rows = (rows or []) + [dict(zip(header, cells))]
        elif rows is not None:
            out[heading], rows = rows, None
    return out


TABLES = tables(DOC.read_text())


def code(cell: str) -> list:
    return re.findall(r"`([^`]*)`", cell)


def first_code(cell: str):
    spans = code(cell)
    return spans[0] if spans else None


def type_of(schema: dict) -> str:
    if schema["type"] == "array":
        return "[]" + type_of(schema["items"])
    if schema["type"] == "integer":
        return schema.get("format", "integer")
    if schema["type"] == "string" and "format" in schema:
        return f"string ({schema['format']})"
    return schema["type"]


def fields(schema: dict, prefix: str = "") -> dict:
    """{dotted path: (schema, required)} for every property below ``schema``, depth first."""
    out = {}
    for name, sub in schema.get("properties", {}).items():
        path = prefix + name
        out[path] = (sub, name in schema.get("required", []))
        if sub["type"] == "object":
            out.update(fields(sub, path + "."))
    return out


def bounds_of(schema: dict) -> dict:
    return {k: (", ".join(schema[k]) if k == "enum" else str(schema[k])) for k in BOUNDS if k in schema}


def documented_bounds(cell: str) -> dict:
    return dict(s.split(": ", 1) for s in code(cell) if s.split(": ", 1)[0] in BOUNDS)


def test_api_group_table():
    rows = {r["Field"]: first_code(r["Value"]) for r in TABLES["API group and version"]}
    names = CRD["spec"]["names"]
    assert rows == {"Group": CRD["spec"]["group"], "Version": VERSION["name"], "Kind": names["kind"],
                    "List kind": names["listKind"], "Plural": names["plural"], "Singular": names["singular"],
                    "Scope": CRD["spec"]["scope"], "Subresources": ",".join(VERSION["subresources"])}


def test_printer_columns_table():
    documented = [(r["Column"], first_code(r["Type"]), first_code(r["Source"])) for r in TABLES["Printer columns"]]
    assert documented == [(c["name"], c["type"], c["jsonPath"]) for c in VERSION["additionalPrinterColumns"]]


@pytest.mark.parametrize("heading,schema", [
    ("Spec", ROOT["properties"]["spec"]),
    ("Condition entries", ROOT["properties"]["status"]["properties"]["conditions"]["items"]),
])
def test_field_tables(heading, schema):
    rows = {first_code(r["Field"]): r for r in TABLES[heading]}
    crd_fields = fields(schema)
    assert set(rows) == set(crd_fields), "documented fields differ from the CRD"
    for path, (sub, required) in crd_fields.items():
        row = rows[path]
        assert first_code(row["Type"]) == type_of(sub), path
        assert row["Required"] == ("yes" if required else "no"), path
        assert documented_bounds(row["Validation"]) == bounds_of(sub), path
        default = first_code(row.get("Schema default", ""))
        assert (yaml.safe_load(default) if default is not None else None) == sub.get("default"), path


def test_status_table():
    rows = {first_code(r["Field"]): first_code(r["Type"]) for r in TABLES["Status"]}
    assert rows == {name: type_of(sub) for name, sub in ROOT["properties"]["status"]["properties"].items()}


def test_admission_rules_table():
    def rules(schema, path):
        found = [(path or ROOT_NAME, " ".join(r["rule"].split()), r["message"])
                 for r in schema.get("x-kubernetes-validations", [])]
        for name, sub in schema.get("properties", {}).items():
            found += rules(sub, f"{path}.{name}" if path else name)
        if "items" in schema:
            found += rules(schema["items"], path + "[]")
        return found

    documented = [(first_code(r["Where"]), " ".join(first_code(r["Rule"]).split()), r["Message"])
                  for r in TABLES["Admission rules"]]
    assert sorted(documented) == sorted(rules(ROOT, ""))


def test_parser_reads_escaped_pipes():
    """The duration pattern and the interval rule hold pipes; a naive split would silently cut them."""
    row = next(r for r in TABLES["Spec"] if first_code(r["Field"]) == "rotation.interval")
    assert "|" in documented_bounds(row["Validation"])["pattern"]
