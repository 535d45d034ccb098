"""Regenerate ``plugins/module_utils/keystoneuser/collation.py`` from the local stack's real MariaDB.

Keystone compares user names in SQL on ``keystone.local_user.name``. This asks the running MariaDB
(``make stack-up``) which collation that column has and what weight the collation gives every BMP code
point (``WEIGHT_STRING``), checks the assumptions the fold in ``foldnames.py`` rests on, and writes the
code points whose weight is not the code point itself as a compact run-encoded table.

Assumptions checked (the script stops with a message, and writes nothing, when one fails):

- every BMP character weighs exactly one 16-bit unit (no expansion, contraction or ignorable);
- the column's collation gives the BMP the same weights as ``utf8mb4_general_ci``;
- under ``utf8mb4_general_ci`` every code point outside the BMP weighs U+FFFD;
- the collation is PAD SPACE (``'a ' = 'a'``) and only U+0020 weighs like a space.

Usage: ``python tests/tools/gen_collation_table.py`` (writes the module) or ``--check`` (exits 1 when the
shipped module differs from what the database says). Not shipped with the collection.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Tuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "stack"))
sys.path.insert(0, str(REPO / "tests"))
import conftest  # noqa: E402,F401  (puts the checkout on sys.path as the collection c5c3.orders)
from c5c3stack import mariadb  # noqa: E402
from c5c3stack.config import StackConfig  # noqa: E402

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.foldnames import decode_runs  # noqa: E402

MODULE = REPO / "plugins" / "module_utils" / "keystoneuser" / "collation.py"
REFERENCE = "utf8mb4_general_ci"
BMP = 0x10000
SURROGATES = range(0xD800, 0xE000)
REPLACEMENT = 0xFFFD


class GenerationError(Exception):
    pass


def query(sql: str) -> List[List[str]]:
    """Rows of tab-separated columns from the stack's MariaDB (root over its socket)."""
    out = mariadb.sql(StackConfig(), sql, timeout=300)
    return [line.split("\t") for line in out.splitlines() if line]


def column_collation() -> Tuple[str, str]:
    """(character set, collation) of the column Keystone matches user names on."""
    rows = query("SELECT CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS "
                 "WHERE TABLE_SCHEMA = 'keystone' AND TABLE_NAME = 'local_user' AND COLUMN_NAME = 'name';")
    if len(rows) != 1:
        raise GenerationError("keystone.local_user.name not found: is Keystone bootstrapped on the stack's MariaDB?")
    return rows[0][0], rows[0][1]


def bmp_weights(charset: str, collation: str) -> Dict[int, int]:
    """The weight of every BMP code point but the surrogates under ``collation``."""
    rows = query(f"SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING {charset}) COLLATE {collation})) "
                 "FROM mysql.seq_0_to_65535;")
    weights = {}
    for cp_text, weight in rows:
        cp = int(cp_text)
        if cp in SURROGATES:
            continue
        if len(weight) != 4:
            raise GenerationError(f"U+{cp:04X} weighs {weight!r} under {collation}: not one 16-bit unit, "
                                  "the fold's model (one weight per character) does not fit this collation")
        weights[cp] = int(weight, 16)
    if len(weights) != BMP - len(SURROGATES):
        raise GenerationError(f"{collation}: expected a weight for every BMP code point, got {len(weights)}")
    return weights


def supplementary_weights() -> List[str]:
    """The distinct weights ``utf8mb4_general_ci`` gives the code points outside the BMP."""
    rows = query("SELECT DISTINCT HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) "
                 f"COLLATE {REFERENCE})) FROM mysql.seq_65536_to_1114111;")
    return sorted(r[0] for r in rows)


def pads_spaces(charset: str, collation: str) -> bool:
    rows = query(f"SELECT CONVERT('a  ' USING {charset}) COLLATE {collation} = CONVERT('a' USING {charset});")
    return rows == [["1"]]


def encode_runs(weights: Dict[int, int]) -> List[str]:
    """Run-encode the code points whose weight differs from the code point (see collation.py)."""
    moved = sorted(cp for cp, w in weights.items() if w != cp)
    tokens, i = [], 0
    while i < len(moved):
        start = moved[i]
        delta, target = weights[start] - start, weights[start]
        best, token = 0, ""
        for stride in (1, 2):
            n = 1
            while i + n < len(moved) and moved[i + n] == start + n * stride and \
                    weights[moved[i + n]] - moved[i + n] == delta:
                n += 1
            if n > best:
                best, token = n, f"{start:x}:{n:x}:{stride:x}:{delta:x}"
        n = 1
        while i + n < len(moved) and moved[i + n] == start + n and weights[moved[i + n]] == target:
            n += 1
        if n > best:
            best, token = n, f"{start:x}:{n:x}={target:x}"
        tokens.append(token)
        i += best
    return tokens


def render(tokens: List[str], charset: str, collation: str, version: str, moved: int) -> str:
    lines, line = [], ""
    for token in tokens:
        if len(line) + len(token) + 1 > 104:
            lines.append(line)
            line = ""
        line = f"{line} {token}" if line else token
    lines.append(line)
    table = "\n".join(f'    "{chunk} "' for chunk in lines)
    return f'''# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The weights MariaDB's ``{collation}`` gives the Basic Multilingual Plane, as data.

GENERATED by ``tests/tools/gen_collation_table.py`` from MariaDB {version} (the column
``keystone.local_user.name`` is ``{charset}`` / ``{collation}``, as Keystone 30's migrations create it);
do not edit by hand. Every BMP code point weighs one 16-bit unit; the {moved} code points listed here weigh
something other than themselves, every other one weighs its own code point. Outside the BMP,
``utf8mb4_general_ci`` weighs every code point U+FFFD (``foldnames.py`` applies that).

Encoding, hexadecimal, one token per run: ``S:N:K:D`` is N code points from S in steps of K, each
weighing its code point plus D; ``S:N=W`` is N consecutive code points from S all weighing W.
``foldnames.decode_runs`` reads it.
"""

RUNS = (
{table}
)
'''


def decoded(source: str) -> Dict[int, int]:
    namespace: dict = {}
    exec(compile(source, str(MODULE), "exec"), namespace)  # our own generated text, checked before writing
    return decode_runs(namespace["RUNS"])


def generate() -> str:
    charset, collation = column_collation()
    version = query("SELECT VERSION();")[0][0]
    column = bmp_weights(charset, collation)
    reference = column if collation == REFERENCE else bmp_weights("utf8mb4", REFERENCE)
    differing = [cp for cp in column if column[cp] != reference[cp]]
    if differing:
        raise GenerationError(f"{collation} and {REFERENCE} weigh {len(differing)} BMP code points differently "
                              f"(first U+{differing[0]:04X}): the fold's model does not fit")
    beyond = supplementary_weights()
    if beyond != [f"{REPLACEMENT:04X}"]:
        raise GenerationError(f"{REFERENCE} weighs the code points outside the BMP as {beyond[:5]}, not U+FFFD alone")
    if not pads_spaces(charset, collation):
        raise GenerationError(f"{collation} is not PAD SPACE: trailing spaces would count")
    spaces = [cp for cp, w in column.items() if w == column[0x20]]
    if spaces != [0x20]:
        raise GenerationError(f"code points weighing like a space: {[hex(cp) for cp in spaces]}")
    moved = {cp: w for cp, w in column.items() if w != cp}
    source = render(encode_runs(column), charset, collation, version, len(moved))
    if decoded(source) != moved:
        raise GenerationError("the encoded table does not decode to the measured weights")
    return source


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the shipped table with the database's, write nothing")
    args = parser.parse_args(argv)
    try:
        source = generate()
    except (GenerationError, mariadb.StackError) as err:
        print(f"gen_collation_table: {err}", file=sys.stderr)
        return 2
    if args.check:
        same = MODULE.exists() and decoded(MODULE.read_text(encoding="utf-8")) == decoded(source)
        print(f"{MODULE.relative_to(REPO)}: {'up to date' if same else 'DIFFERS from the database'}")
        return 0 if same else 1
    MODULE.write_text(source, encoding="utf-8")
    print(f"wrote {MODULE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
