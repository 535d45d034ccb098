# SPDX-License-Identifier: Apache-2.0
"""Each docs/<kind>-crd.md describes the CRD that is actually shipped.

The pages are written by hand, so nothing keeps them true but this test: it reads a page's tables and compares
every documented field, type, requiredness, schema default, bound, printer column and CEL rule with the CRD
in roles/install/files/crds/, in both directions.
"""
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / "roles" / "install" / "files" / "crds"
PAGES = {  # page -> CRD file
    "keystoneuser-crd.md": "c5c3.io_keystoneusers.yaml",
    "objectstore-crd.md": "c5c3.io_objectstores.yaml",
    "objectstoreaccount-crd.md": "c5c3.io_objectstoreaccounts.yaml",
    "bucketcredential-crd.md": "c5c3.io_bucketcredentials.yaml",
}
BOUNDS = ("minLength", "maxLength", "minimum", "maximum", "pattern", "enum", "minItems", "maxItems")
CONDITIONS = "conditions[]."


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


class Page:
    """A page's tables next to the CRD it documents."""

    def __init__(self, page: str):
        self.name = page
        self.tables = tables((REPO / "docs" / page).read_text())
        self.crd = yaml.safe_load((CRDS / PAGES[page]).read_text())
        self.version = self.crd["spec"]["versions"][0]
        self.root = self.version["schema"]["openAPIV3Schema"]
        self.kind = self.crd["spec"]["names"]["kind"]


PAGE_OBJECTS = {page: Page(page) for page in PAGES}
ALL = list(PAGE_OBJECTS.values())
IDS = [p.kind for p in ALL]


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
    """{dotted path: (schema, required)} for every property below ``schema``, depth first.

    List items appear as ``<list>[].<field>``, or as ``<list>[]`` when they are scalars with bounds of their own.
    """
    out = {}
    for name, sub in schema.get("properties", {}).items():
        path = prefix + name
        out[path] = (sub, name in schema.get("required", []))
        if sub["type"] == "object":
            out.update(fields(sub, path + "."))
        elif sub["type"] == "array" and sub["items"]["type"] == "object":
            out.update(fields(sub["items"], path + "[]."))
        elif sub["type"] == "array" and bounds_of(sub["items"]):
            out[path + "[]"] = (sub["items"], False)
    return out


def bounds_of(schema: dict) -> dict:
    return {k: (", ".join(str(v) for v in schema[k]) if k == "enum" else str(schema[k])) for k in BOUNDS if k in schema}


def documented_bounds(cell: str) -> dict:
    return dict(s.split(": ", 1) for s in code(cell) if s.split(": ", 1)[0] in BOUNDS)


def test_every_crd_has_a_page():
    assert set(PAGES.values()) == {p.name for p in CRDS.glob("*.yaml")}


@pytest.mark.parametrize("page", ALL, ids=IDS)
def test_api_group_table(page):
    rows = {r["Field"]: first_code(r["Value"]) for r in page.tables["API group and version"]}
    names = page.crd["spec"]["names"]
    assert rows == {"Group": page.crd["spec"]["group"], "Version": page.version["name"], "Kind": names["kind"],
                    "List kind": names["listKind"], "Plural": names["plural"], "Singular": names["singular"],
                    "Scope": page.crd["spec"]["scope"], "Subresources": ",".join(page.version["subresources"]),
                    "Short names": ",".join(names["shortNames"])}


@pytest.mark.parametrize("page", ALL, ids=IDS)
def test_printer_columns_table(page):
    documented = [(r["Column"], first_code(r["Type"]), first_code(r["Source"])) for r in page.tables["Printer columns"]]
    assert documented == [(c["name"], c["type"], c["jsonPath"]) for c in page.version["additionalPrinterColumns"]]


def _compare_field_table(rows: list, crd_fields: dict, with_default: bool) -> None:
    rows = {first_code(r["Field"]): r for r in rows}
    assert set(rows) == set(crd_fields), "documented fields differ from the CRD"
    for path, (sub, required) in crd_fields.items():
        row = rows[path]
        assert first_code(row["Type"]) == type_of(sub), path
        assert row["Required"] == ("yes" if required else "no"), path
        assert documented_bounds(row["Validation"]) == bounds_of(sub), path
        if with_default:
            default = first_code(row.get("Schema default", ""))
            assert (yaml.safe_load(default) if default is not None else None) == sub.get("default"), path


@pytest.mark.parametrize("page", ALL, ids=IDS)
def test_spec_table(page):
    _compare_field_table(page.tables["Spec"], fields(page.root["properties"]["spec"]), with_default=True)


@pytest.mark.parametrize("page", ALL, ids=IDS)
def test_status_table(page):
    """Every status field but the condition entries, which have their own table."""
    status = {p: f for p, f in fields(page.root["properties"]["status"]).items() if not p.startswith(CONDITIONS)}
    _compare_field_table(page.tables["Status"], status, with_default=False)


@pytest.mark.parametrize("page", ALL, ids=IDS)
def test_condition_entries_table(page):
    schema = page.root["properties"]["status"]["properties"]["conditions"]["items"]
    _compare_field_table(page.tables["Condition entries"], fields(schema), with_default=False)


@pytest.mark.parametrize("page", ALL, ids=IDS)
def test_admission_rules_table(page):
    def rules(schema, path):
        found = [(path or page.kind, " ".join(r["rule"].split()), r["message"])
                 for r in schema.get("x-kubernetes-validations", [])]
        for name, sub in schema.get("properties", {}).items():
            found += rules(sub, f"{path}.{name}" if path else name)
        if "items" in schema:
            found += rules(schema["items"], path + "[]")
        return found

    documented = [(first_code(r["Where"]), " ".join(first_code(r["Rule"]).split()), r["Message"])
                  for r in page.tables["Admission rules"]]
    assert sorted(documented) == sorted(rules(page.root, ""))


@pytest.mark.parametrize("page", ALL, ids=IDS)
def test_every_condition_type_has_its_reasons_documented(page):
    """The Conditions table names a reason for every condition type the status description announces."""
    announced = set(re.findall(r"\b([A-Z][A-Za-z]+)\b", page.root["properties"]["status"]["properties"]
                               ["conditions"]["description"])) - {"A", "The", "And"}
    documented = {first_code(r["Type"]) for r in page.tables["Conditions"]}
    assert announced <= documented, announced - documented


def test_parser_reads_escaped_pipes():
    """The duration pattern and the interval rule hold pipes; a naive split would silently cut them."""
    row = next(r for r in PAGE_OBJECTS["keystoneuser-crd.md"].tables["Spec"]
               if first_code(r["Field"]) == "rotation.interval")
    assert "|" in documented_bounds(row["Validation"])["pattern"]
