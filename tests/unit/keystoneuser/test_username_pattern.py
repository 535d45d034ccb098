"""The CRD's ``userName`` pattern admits exactly the names the order parser reads.

A name the CRD admits but the parser refuses is frozen as ``InvalidSpec`` on a cluster that serves the current CRD,
which docs/keystoneuser-crd.md promises never happens; a name the parser reads but the CRD refuses is a name nobody
can order. The API server evaluates the pattern with Go's regexp (RE2), as tests/integration/test_crd_admission.py
proves on the real one; here the pattern is translated to Python's ``re`` (only ``\\x{...}`` and ``\\p{Z}`` differ)
and compared with ``parse_order`` on every character class the two rules care about. Lengths are ``minLength`` and
``maxLength``, not the pattern, so the names stay short.
"""
from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.foldnames import KEYSTONE_WHITESPACE
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.spec import OrderSpecError, parse_order

CRD = Path(__file__).resolve().parents[3] / "roles" / "install" / "files" / "crds" / "c5c3.io_keystoneusers.yaml"


def crd_pattern() -> str:
    crd = yaml.safe_load(CRD.read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec["properties"]["userName"]["pattern"]


def separators() -> str:
    """Go's ``\\p{Z}`` spelled out: every space, line and paragraph separator."""
    return "".join(re.escape(chr(cp)) for cp in range(sys.maxunicode + 1)
                   if unicodedata.category(chr(cp)) in ("Zs", "Zl", "Zp"))


@lru_cache(maxsize=1)
def admits():
    """The CRD's pattern as Python's ``re`` reads it (a match function)."""
    text = re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda m: "\\U%08x" % int(m.group(1), 16), crd_pattern())
    text = text.replace(r"\p{Z}", separators())
    assert "\\p" not in text and "\\x{" not in text, f"untranslated RE2 syntax in {text!r}"
    return re.compile(text).fullmatch


def parser_reads(name: str) -> bool:
    order = {"metadata": {"name": "svc", "namespace": "tenant-a"},
             "spec": {"controlPlaneRef": {"name": "cp"}, "userName": name}}
    try:
        parse_order(order)
    except OrderSpecError:
        return False
    return True


SAMPLES = sorted(set(KEYSTONE_WHITESPACE + separators().replace("\\", "") + ",a\u00e9\u200b\ufeff\ufffd\uffff"
                     "\U00010000\U0001f600\U000e0001\U0010ffff"))
SHAPES = ("{c}", "a{c}", "{c}a", "a{c}b", "{c}{c}")


@pytest.mark.parametrize("char", SAMPLES, ids=lambda c: f"U+{ord(c):04X}")
def test_pattern_and_parser_agree_on_each_character_in_each_position(char):
    for shape in SHAPES:
        name = shape.format(c=char)
        assert bool(admits()(name)) == parser_reads(name), (shape, f"U+{ord(char):04X}")


@pytest.mark.parametrize("name", ["\U0001f600", "svc\U0001f600", "\U0001f600svc", "svc\U0001f600admin",
                                  "svc\U0010ffff", "\U00010000"])
def test_a_name_beyond_the_bmp_is_refused_by_the_crd_as_by_the_parser(name):
    assert not parser_reads(name)
    assert admits()(name) is None


def test_the_bmp_is_admitted_up_to_its_last_character():
    for name in ("\uffff", "svc\ufffd", "\u30b5\u30fc\u30d3\u30b9", "svc\u200b"):
        assert parser_reads(name) and admits()(name)


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@settings(max_examples=500, derandomize=True, deadline=None)
@given(TEXT)
def test_pattern_and_parser_agree_on_any_short_name(name):
    assert bool(admits()(name)) == parser_reads(name)
