"""``foldnames.fold`` against the real thing: Keystone's strip and MariaDB's comparison of user names.

Keystone stores ``name.strip()`` in ``keystone.local_user.name`` and finds users by SQL equality on that
column, so two names are one user exactly when MariaDB says ``strip(a) = strip(b)`` under the column's
collation. Every test here asks the stack's MariaDB (one statement for many pairs) or Keystone itself.
Names outside the BMP cannot be stored in the ``utf8mb3`` column; their pairs are checked under
``utf8mb4_general_ci``, whose weights the fold mirrors for them.
"""
import sys
import unicodedata
import uuid
from pathlib import Path
from typing import List, Sequence, Tuple

import openstack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.foldnames import (
    BUILTIN_ACCOUNTS, KEYSTONE_WHITESPACE, collation_weights, fold, keystone_strip, outside_bmp)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
import gen_collation_table as measured  # noqa: E402

Pair = Tuple[str, str]
WIDE = ("utf8mb4", "utf8mb4_general_ci")


@pytest.fixture(scope="module")
def column(stack_env) -> Tuple[str, str]:
    """(character set, collation) of ``keystone.local_user.name`` on the running stack."""
    return measured.column_collation()


def _literal(text: str, charset: str, name: str) -> str:
    return f"CONVERT(X'{text.encode('utf-8').hex()}' USING {charset}) COLLATE {name}"


def mariadb_equal(pairs: Sequence[Pair], collation_of: Tuple[str, str]) -> List[bool]:
    """MariaDB's ``a = b`` for every pair, in one statement."""
    charset, name = collation_of
    if charset != "utf8mb4":
        assert not any(outside_bmp(a) or outside_bmp(b) for a, b in pairs), "utf8mb3 holds no character beyond the BMP"
    selects = [f"SELECT {i}, {_literal(a, charset, name)} = {_literal(b, charset, name)}" for i, (a, b) in enumerate(pairs)]
    rows = measured.query(" UNION ALL ".join(selects) + ";")
    answers = {int(i): value for i, value in rows}
    assert sorted(answers) == list(range(len(pairs))) and set(answers.values()) <= {"0", "1"}, "an answer is missing"
    return [answers[i] == "1" for i in range(len(pairs))]


def disagreements(pairs: Sequence[Pair], column: Tuple[str, str]) -> List[str]:
    """The pairs on which fold() and Keystone+MariaDB disagree (Keystone strips before MariaDB compares)."""
    wide = [p for p in pairs if outside_bmp(p[0]) or outside_bmp(p[1])]
    narrow = [p for p in pairs if not (outside_bmp(p[0]) or outside_bmp(p[1]))]
    wrong = []
    for group, collation_of in ((narrow, column), (wide, WIDE)):
        if not group:
            continue
        stored = [(keystone_strip(a), keystone_strip(b)) for a, b in group]
        for (a, b), same in zip(group, mariadb_equal(stored, collation_of)):
            if (fold(a) == fold(b)) != same:
                wrong.append(f"{a!r} vs {b!r}: MariaDB ({collation_of[1]}) says {'equal' if same else 'different'}")
    return wrong


HAND_PICKED: List[Pair] = [
    # the names, and two tenants meeting on one user
    ("barbican ", "barbican"), (" placement", "placement"), ("cinder\t", "cinder"), ("raceX", "RACEX"),
    ("hypervi\u00dfor-operator", "hypervisor-operator"), ("BARB\u0130CAN", "barbican"), ("\uff4e\uff4f\uff56\uff41", "nova"),
    # Latin
    ("Jos\u00e9", "jose"), ("JOS\u00c9", "jos\u00e9"), ("\u00c5ngstr\u00f6m", "angstrom"), ("\u0152uvre", "oeuvre"),
    ("\u0153", "\u0152"), ("\u00e6", "\u00c6"), ("\u00e6", "ae"), ("\u00e6", "a"), ("\u00df", "s"), ("\u00df", "ss"),
    ("\u00df", "\u1e9e"), ("\u1e9e", "S"), ("\u017f", "s"), ("\u00d8", "o"), ("\u00f8", "\u00d8"), ("\u0110", "D"),
    ("\u0111", "d"), ("\u0141", "l"), ("\u0142", "L"), ("\u00de", "th"), ("\u00fe", "\u00de"), ("\u00f0", "\u00d0"),
    ("\u00f0", "d"), ("\u0133", "ij"), ("\u0132", "\u0133"), ("\u01c4", "\u01c5"), ("\u01c6", "D\u017d"),
    ("\u0149", "n"), ("\u0180", "b"), ("\u0250", "\u2c6f"), ("\u1e9b", "s"), ("\u00aa", "a"), ("\u00ba", "o"),
    # Turkish dotted and dotless i
    ("\u0131", "i"), ("\u0130", "i"), ("\u0131", "I"), ("\u0130", "I"), ("\u0131", "\u0130"), ("barb\u0131can", "BARBICAN"),
    ("i\u0307", "i"), ("I\u0307", "\u0130"),
    # Greek
    ("\u03a3\u03af\u03c3\u03c5\u03c6\u03bf\u03c2", "\u03a3\u0399\u03a3\u03a5\u03a6\u039f\u03a3"), ("\u03c2", "\u03c3"),
    ("\u03ac", "\u03b1"), ("\u0390", "\u03b9"), ("\u00b5", "\u03bc"), ("\u00b5", "\u039c"), ("\u03d0", "\u03b2"),
    ("\u03d1", "\u03b8"), ("\u2126", "\u03a9"), ("\u1f00", "\u03b1"), ("\u1fbe", "\u03b9"), ("\u0345", "\u03b9"),
    # Cyrillic and Armenian
    ("\u0401\u043b\u043a\u0430", "\u0435\u043b\u043a\u0430"), ("\u0439", "\u0438"), ("\u0457", "\u0456"),
    ("\u0490", "\u0433"), ("\u0430", "a"), ("\u0441\u0435", "ce"), ("\u0561", "\u0531"), ("\u0587", "\u0535\u0582"),
    # full width, half width, circled, roman numerals, letter-like symbols
    ("\uff4e\uff4f\uff56\uff41", "\uff2e\uff2f\uff36\uff21"), ("\uff21", "A"), ("\uff76", "\u30ab"), ("\u24d0", "\u24b6"),
    ("\u24d0", "a"), ("\u2170", "\u2160"), ("\u2170", "i"), ("\u212a", "K"), ("\u212a", "k"), ("\u212b", "\u00c5"),
    ("\u2160", "I"),
    # ligatures and other expansions
    ("\ufb01", "fi"), ("\ufb01", "FI"), ("\ufb00", "ff"), ("\ufb06", "st"), ("\u01c9", "lj"),
    # combining marks against precomposed
    ("e\u0301", "\u00e9"), ("e\u0301", "e"), ("e\u0301", "E\u0301"), ("a\u0308", "\u00e4"), ("Ne\u0301utron", "neutron"),
    ("\u00e9", "\u0119"), ("\u1ea0", "a"), ("\u1e9e", "\u00df"),
    # spaces, tabs and other whitespace
    ("a", "a "), ("a", "a   "), ("a", " a"), ("a", "a\t"), ("a", "a\u00a0"), ("a b", "a  b"), ("a b", "a\u00a0b"),
    ("a b", "a\tb"), ("a", "a\u3000"), ("a", "\u2028a"), ("", " "), ("a\u00a0 ", "a"), ("a \u00a0", "a"),
    ("a\u202f", "a"), ("a\x85", "a"), ("a\x1c", "a"), ("a\u180e", "a"), ("a\u200b", "a"),
    # zero-width and other invisible characters
    ("ab", "a\u200bb"), ("ab", "a\u200cb"), ("ab", "a\u200db"), ("ab", "\ufeffab"), ("ab", "a\u00adb"),
    ("ab", "a\u2060b"), ("ab", "a\u034fb"), ("a\u200b", "a\u200c"), ("\u00ad", "-"),
    # control characters
    ("a\x00", "a"), ("a\x00", "a "), ("a\x1f", "a"), ("a\x7f", "a"),
    # CJK, kana, Hangul
    ("\u4e2d\u6587", "\u4e2d\u6587"), ("\u304c", "\u304b\u3099"), ("\u30ac", "\u304c"), ("\uac00", "\u1100\u1161"),
    ("\ufffd", "?"), ("\uffff", "\ufffe"),
    # beyond the BMP: utf8mb4_general_ci weighs them all U+FFFD
    ("\U0001f600", "\U0001f601"), ("\U0001f600", "\ufffd"), ("x\U0001f600", "x"), ("\U0001d400", "A"),
    ("\U00010400", "\U00010428"), ("\U0001f600", "\U0001f600 "), ("a\U0001f600b", "a\U00010000b"),
    ("\U0010ffff", "\U00020000"),
]

SWAPS = [("s", "\u00df"), ("s", "\u017f"), ("i", "\u0131"), ("i", "\u0130"), ("a", "\u00e1"), ("e", "\u00e9"),
         ("o", "\u00f6"), ("u", "\u00fc"), ("a", "\u0430"), ("e", "\u0435"), ("o", "\u043e"), ("c", "\u0441"),
         ("p", "\u0440"), ("-", "\u2010"), ("-", "_"), ("n", "\u00f1"), ("r", "\u0155"), ("v", "\u028b"), ("ce", "\u0153")]


def variants(name: str) -> List[str]:
    """Names a tenant might write for ``name``: case, accents, look-alikes, whitespace, invisible characters."""
    middle = len(name) // 2
    out = [name, name.upper(), name.title(), name + " ", " " + name, name + "\t", "\u00a0" + name + "\u3000",
           name[:middle] + "\u200b" + name[middle:], name + "\ufeff", name[:middle] + "\u00ad" + name[middle:],
           "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name), name + "2", name[:-1],
           unicodedata.normalize("NFD", name.replace("e", "\u00e9")), name.replace("i", "I\u0307")]
    out += [name.replace(plain, other) for plain, other in SWAPS if plain in name]
    out += [name.replace(plain, other).upper() for plain, other in SWAPS if plain in name]
    return out


def test_the_column_is_utf8mb3_general_ci(column):
    """What Keystone 30's migrations create (``CHARSET utf8``), whatever the database default."""
    assert column == ("utf8mb3", "utf8mb3_general_ci")


def test_the_shipped_table_is_the_columns_weight_for_every_bmp_code_point(column):
    weights = measured.bmp_weights(*column)
    assert {cp: w for cp, w in weights.items() if w != cp} == collation_weights()
    assert weights == measured.bmp_weights(*WIDE), "utf8mb3 and utf8mb4 general_ci weigh the BMP alike"


def test_every_code_point_beyond_the_bmp_weighs_the_replacement_character():
    assert measured.supplementary_weights() == ["FFFD"]


def test_hand_picked_pairs(column):
    wrong = disagreements(HAND_PICKED, column)
    assert not wrong, "fold() disagrees with MariaDB on: " + "; ".join(wrong[:20])


def test_variants_of_the_reserved_names(column):
    names = [*BUILTIN_ACCOUNTS, "admin"]
    pairs = [(v, other) for name in names for v in variants(name) for other in names + variants(name)]
    assert len(pairs) > 5000
    wrong = disagreements(pairs, column)
    assert not wrong, f"fold() disagrees with MariaDB on {len(wrong)} pairs: " + "; ".join(wrong[:20])


def _same_weight_groups():
    groups = {}
    for cp, weight in collation_weights().items():
        groups.setdefault(weight, [weight]).append(cp)
    return [[chr(cp) for cp in group] for group in groups.values()]


TWINS = _same_weight_groups()
TWIN_OF = {c: group for group in TWINS for c in group}
INTERESTING = sorted({c for group in TWINS for c in group} | set(KEYSTONE_WHITESPACE)
                     | set("\u200b\u200c\u200d\u2060\ufeff\u00ad\u034f\u0301\u0308\u0307\ufffd\x00"))
BMP_CHAR = st.one_of(st.sampled_from(INTERESTING),
                     st.characters(max_codepoint=0xFFFF, blacklist_categories=("Cs",)),
                     st.characters(max_codepoint=0x7F, blacklist_categories=("Cs",)))
ANY_CHAR = st.one_of(BMP_CHAR, st.characters(min_codepoint=0x10000, blacklist_categories=("Cs",)))


@st.composite
def near_pairs(draw, char=BMP_CHAR):
    """A random name and a variant: each character maybe swapped for one of the same weight, case-changed,
    followed by a combining or invisible character; spaces or whitespace maybe added around."""
    a = draw(st.text(char, min_size=0, max_size=12))
    b = []
    for c in a:
        how = draw(st.integers(0, 5))
        if how == 0 and c in TWIN_OF:
            c = draw(st.sampled_from(TWIN_OF[c]))
        elif how == 1:
            c = c.swapcase() if len(c.swapcase()) == 1 else c
        elif how == 2:
            c += draw(st.sampled_from("\u0301\u200b\u00ad \u00a0"))
        b.append(c)
    around = st.text(st.sampled_from(KEYSTONE_WHITESPACE + "  \u200b"), max_size=3)
    return draw(around) + a + draw(around), draw(around) + "".join(b) + draw(st.text(" ", max_size=3))


RANDOM = settings(max_examples=12, derandomize=True, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@RANDOM
@given(pairs=st.lists(st.one_of(near_pairs(), st.tuples(st.text(BMP_CHAR, max_size=6), st.text(BMP_CHAR, max_size=6))),
                      min_size=150, max_size=300))
def test_random_bmp_pairs(column, pairs):
    wrong = disagreements(pairs, column)
    assert not wrong, "fold() disagrees with MariaDB on: " + "; ".join(wrong[:20])


@RANDOM
@given(pairs=st.lists(near_pairs(char=ANY_CHAR), min_size=100, max_size=200))
def test_random_pairs_beyond_the_bmp(column, pairs):
    wrong = disagreements(pairs, column)
    assert not wrong, "fold() disagrees with MariaDB on: " + "; ".join(wrong[:20])


class KeystoneUsers:
    """Users created through the real Keystone API by the system-scoped admin, deleted afterwards."""

    def __init__(self, conn):
        self.conn, self.created = conn, []

    def create(self, name: str):
        response = self.conn.identity.post("/users", json={"user": {"name": name, "domain_id": "default"}},
                                           raise_exc=False)
        if response.status_code == 201:
            self.created.append(response.json()["user"]["id"])
        return response

    def stored_name(self, user_id: str) -> str:
        return self.conn.identity.get("/users/" + user_id).json()["user"]["name"]

    def named(self, name: str):
        """(status, names) of a lookup by name in the default domain."""
        response = self.conn.identity.get("/users", params={"name": name, "domain_id": "default"}, raise_exc=False)
        names = [u["name"] for u in response.json()["users"]] if response.status_code == 200 else []
        return response.status_code, names

    def delete_created(self) -> None:
        for user_id in self.created:
            self.conn.identity.delete("/users/" + user_id, raise_exc=False)


@pytest.fixture
def keystone(stack_env):
    conn = openstack.connect(cloud=stack_env["OS_CLOUD"])
    users = KeystoneUsers(conn)
    try:
        yield users
    finally:
        users.delete_created()
        conn.close()


def test_keystone_strips_exactly_python_whitespace(keystone):
    core = f"fold-{uuid.uuid4().hex[:10]}"
    sent = KEYSTONE_WHITESPACE + core + KEYSTONE_WHITESPACE[::-1]
    response = keystone.create(sent)
    assert response.status_code == 201, f"create answered {response.status_code}"
    stored = keystone.stored_name(response.json()["user"]["id"])
    assert stored == core == keystone_strip(sent) and fold(sent) == fold(stored)
    kept = "\u200b\u180e" + core + "\ufeff"
    response = keystone.create(kept)
    assert response.status_code == 201, f"create answered {response.status_code}"
    assert keystone.stored_name(response.json()["user"]["id"]) == kept, "zero-width characters are kept"


def test_keystone_takes_fold_equal_names_for_one_user(keystone):
    core = f"Fold-{uuid.uuid4().hex[:10]}-stra\u00dfe"
    assert keystone.create(core).status_code == 201
    shouted = core.upper().replace("SS", "S")
    for same in (shouted, "\t" + core.lower() + "\u00a0", core.replace("a", "\u00e1")):
        assert fold(same) == fold(core)
        assert keystone.create(same).status_code == 409, "a fold-equal name must conflict"
    assert keystone.named(shouted + "  ") == (200, [core]), "trailing spaces do not count on lookup (PAD SPACE)"
    for other in (core.replace("\u00df", "ss"), core.replace("a", "a\u0301"), core + "\u200b"):
        assert fold(other) != fold(core)
        assert keystone.create(other).status_code == 201, "a fold-different name is another user"


def test_keystone_can_neither_store_nor_find_names_beyond_the_bmp(keystone):
    """The utf8mb3 column: the create fails (measured: 500, "Incorrect string value"), and so does a lookup
    (measured: 500, "Illegal mix of collations"); the parser must refuse such names."""
    core = f"fold-{uuid.uuid4().hex[:10]}"
    wide = core + "\U0001f600"
    assert outside_bmp(wide)
    assert keystone.create(wide).status_code >= 400
    status, names = keystone.named(wide)
    assert status >= 400 or names == []
    assert keystone.named(core) == (200, [])
