"""The name fold, pure: the shipped collation table, Keystone's strip, PAD SPACE and the reserved names.

The weights below were measured on MariaDB 10.11 (``utf8mb3_general_ci`` on ``keystone.local_user.name``);
``tests/integration/test_keystone_names_mariadb.py`` checks the whole table against the real server.
"""
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import collation
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.foldnames import (
    BUILTIN_ACCOUNTS, KEYSTONE_WHITESPACE, collation_weights, decode_runs, fold, is_reserved, keystone_strip,
    outside_bmp, reserved_names, surrounding_whitespace)

ADMIN = "admin"


def test_the_table_decodes_to_the_measured_count_inside_the_bmp():
    table = collation_weights()
    assert len(table) == 1108
    assert all(0 <= cp < 0x10000 and not 0xD800 <= cp < 0xE000 for cp in table)
    assert all(weight != cp and 0 <= weight < 0x10000 for cp, weight in table.items())


def test_the_table_runs_neither_overlap_nor_repeat():
    covered = []
    for token in collation.RUNS.split():
        head, target = token.split("=") if "=" in token else (token, "")
        fields = [int(part, 16) for part in head.split(":")]
        start, count = fields[0], fields[1]
        stride = 1 if target else fields[2]
        covered.extend(range(start, start + count * stride, stride))
    assert covered == sorted(set(covered)) and len(covered) == len(collation_weights())


def test_both_kinds_of_run_decode():
    assert decode_runs("61:3:1:-20 100:3:2:-1 c0:2=41") == {
        0x61: 0x41, 0x62: 0x42, 0x63: 0x43, 0x100: 0xFF, 0x102: 0x101, 0x104: 0x103, 0xC0: 0x41, 0xC1: 0x41}
    assert decode_runs("") == {}


def test_a_weight_weighs_itself():
    """Folding is idempotent: no weight is itself moved again."""
    table = collation_weights()
    assert all(table.get(weight, weight) == weight for weight in table.values())


@pytest.mark.parametrize("char, weight", [
    ("a", "A"), ("\u00e9", "E"), ("\u00df", "S"), ("\u017f", "S"), ("\u00b5", "\u039c"), ("\u03bc", "\u039c"),
    ("i", "I"), ("\u0131", "I"), ("\u0130", "I"), ("\u00e6", "\u00c6"), ("\u0153", "\u0152"),
    ("\u03c2", "\u03a3"), ("\u03c3", "\u03a3"), ("\u0451", "\u0415"), ("\uff4e", "\uff2e"), ("\u24d0", "\u24b6"),
    ("\u2170", "\u2160"), ("\u01c6", "\u01c4"),
])
def test_measured_weights(char, weight):
    assert collation_weights().get(ord(char), ord(char)) == ord(weight)


@pytest.mark.parametrize("char", [
    "\ufb01", "\u1e9e", "\u0301", "\u200b", "\u200d", "\ufeff", "\u00ad", "\u3042", "\u4e2d", "\ufffd", "0", "-",
])
def test_characters_that_weigh_themselves(char):
    assert ord(char) not in collation_weights() and fold(char) == char


def test_key_characters_stand_for_weights_one_to_one():
    """Keys write A-Z as a-z for reading; equal keys must still mean equal weights, and back."""
    table = collation_weights()
    cps = [cp for cp in range(0x10000) if not 0xD800 <= cp < 0xE000 and chr(cp) not in KEYSTONE_WHITESPACE + " "]
    pairs = {(table.get(cp, cp), fold(chr(cp))) for cp in cps}
    assert len(pairs) == len({w for w, _ in pairs}) == len({k for _, k in pairs})


def test_ascii_keys_read_like_the_name():
    assert fold(" Hypervi\u00dfor-Operator ") == "hypervisor-operator" and fold("WorkFl\u00f6w") == "workflow"


@pytest.mark.parametrize("a, b", [
    ("raceX", "RACEX"), ("Glance", "glance"), ("gl\u00e1nce", "glance"), ("\u00c5dmin", "admin"), ("NOVA", "nova"),
    ("stra\u00dfe", "STRASE"), ("\u017fwift", "swift"), ("BARB\u0130CAN", "barbican"), ("barb\u0131can", "barbican"),
    ("\u039d\u03bf\u03c2", "\u03bd\u03bf\u03c3"), ("\u0401\u043b\u043a\u0430", "\u0435\u043b\u043a\u0430"),
    ("\uff4e\uff4f\uff56\uff41", "\uff2e\uff2f\uff36\uff21"), ("a ", "a"), ("a   ", "A"), (" a", "a"),
    ("\ta\n", "a"), ("\u00a0a\u3000", "a"), ("x\U0001f600", "x\U0001f601"), ("x\U0001f600", "x\ufffd"),
])
def test_names_keystone_takes_for_one_user(a, b):
    assert fold(a) == fold(b)


@pytest.mark.parametrize("a, b", [
    ("glance2", "glance"), ("stra\u00dfe", "strasse"), ("\u00e6", "ae"), ("\ufb01", "fi"), ("\u00df", "\u1e9e"),
    ("Ne\u0301utron", "neutron"), ("\uff4e\uff4f\uff56\uff41", "nova"), ("a\u200bb", "ab"), ("\ufeffab", "ab"),
    ("a b", "ab"), ("a\u00a0b", "a b"), ("a\tb", "a b"), ("a\u00ad", "a"), ("x\U0001f600", "x"),
])
def test_names_keystone_keeps_apart(a, b):
    assert fold(a) != fold(b)


def test_keystone_whitespace_is_what_python_strips():
    assert sorted(KEYSTONE_WHITESPACE) == [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    every = KEYSTONE_WHITESPACE + "x" + KEYSTONE_WHITESPACE
    assert keystone_strip(every) == every.strip() == "x"


@pytest.mark.parametrize("name, surrounded", [
    ("barbican ", True), (" placement", True), ("cinder\t", True), ("\u00a0nova", True), ("nova\u3000", True),
    ("nova\u2028", True), ("nova", False), ("no va", False), ("\u200bnova", False), ("nova\ufeff", False),
    ("", False), (None, False),
])
def test_surrounding_whitespace(name, surrounded):
    assert surrounding_whitespace(name) is surrounded


@pytest.mark.parametrize("name, beyond", [
    ("nova", False), ("\uffff", False), ("\U00010000", True), ("a\U0001f600b", True), ("\U0010ffff", True),
    (None, False),
])
def test_outside_bmp(name, beyond):
    assert outside_bmp(name) is beyond


@pytest.mark.parametrize("name", [
    "barbican ", " placement", "cinder\t", "hypervi\u00dfor-operator", "BARB\u0130CAN",
    "Hypervis\u00f3r-Operator", "NEUTRON-NOVA", "Gl\u00e4nce", "\u00a0nova\u00a0",
    "hypervi\u017for-operator", "Admin", "\u00c0DMIN",
])
def test_variants_of_the_reserved_names_are_reserved(name):
    assert is_reserved(name, ADMIN)


@pytest.mark.parametrize("name", [
    "\uff4e\uff4f\uff56\uff41", "nova2", "neutron nova", "hypervisor_operator", "gl\u200bance", "barbic\u0430n",
    "cinder\u00ad", "placement-x", "no\u0301va", "", "   ",
])
def test_names_near_the_reserved_ones_are_free(name):
    assert not is_reserved(name, ADMIN)


def test_the_controlplane_admin_user_is_reserved_as_keystone_compares_it():
    assert is_reserved("Root", "root") and is_reserved("r\u00f6\u00f6t ", "ROOT") and not is_reserved("admin", "root")
    assert not is_reserved("", "") and not is_reserved("root", "")


def test_reserved_names_are_the_folds_of_the_admin_the_builtins_and_extra():
    names = reserved_names(" Root", extra=["stra\u00dfe"])
    assert names == frozenset(fold(n) for n in ("root", *BUILTIN_ACCOUNTS, "strase"))
    assert len(reserved_names("")) == len(BUILTIN_ACCOUNTS)


def test_fold_never_raises_on_what_is_not_a_string():
    assert fold(42) == "42" and fold(None) == "none"


BMP = st.characters(max_codepoint=0xFFFF, blacklist_categories=("Cs",))
ANY = st.characters(blacklist_categories=("Cs",))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(ANY, max_size=24))
def test_fold_is_idempotent(name):
    assert fold(fold(name)) == fold(name)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(BMP, max_size=24), st.text(" ", max_size=4), st.text(st.sampled_from(KEYSTONE_WHITESPACE), max_size=4))
def test_whitespace_around_and_trailing_spaces_never_count(name, spaces, around):
    assert fold(around + name + spaces + around) == fold(name)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(st.characters(max_codepoint=0x7F, blacklist_categories=("Cs",)), max_size=24))
def test_ascii_folds_by_case_alone(name):
    assert fold(name.upper()) == fold(name.lower()) == keystone_strip(name).rstrip(" ").lower()
