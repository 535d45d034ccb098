# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Keystone name folding and the names a ControlPlane reserves.

docs/reconciler.md "Reserved names" and "How names are compared"; docs/keystoneuser-crd.md "Consent".
Two names are one Keystone user exactly when their folds are equal. What the fold mirrors was
measured on the local stack (Keystone 30.0.0 on MariaDB 10.11.19) and is proved against it by
``tests/integration/test_keystone_names_mariadb.py``:

1. **Keystone strips.** ``identity/core.py`` (``create_user`` and ``update_user``) stores
   ``name.strip()``: Python's whitespace (the 29 code points of ``KEYSTONE_WHITESPACE``: tab to CR,
   U+001C-U+001F, space, NEL, NBSP, U+1680, U+2000-U+200A, U+2028/9, U+202F, U+205F, U+3000), after
   the API schema checked 1 to 255 characters with one non-whitespace. Zero-width characters stay.
2. **MariaDB compares.** Keystone finds and de-duplicates users on ``keystone.local_user.name``,
   ``VARCHAR(255)`` in ``utf8mb3`` / ``utf8mb3_general_ci``: Keystone's migrations create every table
   ``CHARSET utf8``, whatever the database's default. That collation gives each character one 16-bit
   weight (``collation.py``, generated from the real server): case and accents do not count, nor do
   ß against s, ſ against s, µ against μ, or i, ı and İ against each other; there are no ignorable
   characters, contractions or expansions (a zero-width space counts; æ is not ae, ß not ss, ﬁ not
   fi), a combining mark counts as a character of its own (e + U+0301 is not é), and full-width
   letters fold among themselves (ｎｏｖａ is not nova).
3. **PAD SPACE.** Trailing U+0020 do not count (after the strip there are none; a tab or NBSP counts).
4. **Outside the BMP.** The ``utf8mb3`` column cannot hold such characters: Keystone answers 500 to a
   create ("Incorrect string value") and to a lookup by name ("Illegal mix of collations"), so no such
   user can exist and the parser refuses them (``outside_bmp``). The fold weighs them U+FFFD, as
   ``utf8mb4_general_ci`` does, so a ``utf8mb4`` deployment gets the same answer.

The key is one character per weight, A-Z written a-z so ASCII keys read like the name; it is opaque.

Assumption: production MariaDB gives ``utf8mb3`` its built-in default collation ``utf8mb3_general_ci``,
as MariaDB up to 11.4 does. From 11.5 on the default can be ``uca1400_ai_ci``
(``character_set_collations``), which weighs differently: there, regenerate the table with
``tests/tools/gen_collation_table.py``, which refuses a collation this model does not fit.
"""
from __future__ import annotations

import functools
import re
from typing import Dict, FrozenSet, Iterable

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import collation

# The service accounts a ControlPlane creates in its admin domain itself, enabled or not.
BUILTIN_ACCOUNTS = (
    "glance",
    "placement",
    "barbican",
    "neutron",
    "cinder",
    "nova",
    "neutron-nova",
    "hypervisor-operator",
)

# What Keystone's ``str.strip()`` removes (Python 3.11, Unicode 14); spelled out so the runtime's
# Python version cannot change it.
KEYSTONE_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

_SUPPLEMENTARY = re.compile("[\U00010000-\U0010ffff]")
_SUPPLEMENTARY_WEIGHT = "\ufffd"
_PAD = " "  # the only code point weighing like a space (checked by the generator)


def decode_runs(runs: str) -> Dict[int, int]:
    """Code point -> weight from the run encoding of ``collation.RUNS`` (format in its docstring)."""
    table: Dict[int, int] = {}
    for token in runs.split():
        head, target = token.split("=") if "=" in token else (token, "")
        fields = [int(part, 16) for part in head.split(":")]
        if target:
            start, count = fields
            table.update((cp, int(target, 16)) for cp in range(start, start + count))
        else:
            start, count, stride, delta = fields
            table.update((cp, cp + delta) for cp in range(start, start + count * stride, stride))
    return table


@functools.lru_cache(maxsize=1)
def collation_weights() -> Dict[int, int]:
    """The BMP code points that do not weigh themselves, decoded once, on first use."""
    return decode_runs(collation.RUNS)


def _readable(weight: int) -> str:
    """The weight as a key character, ``A``-``Z`` written ``a``-``z`` so ASCII keys read like the name.

    No code point weighs ``a``-``z`` (they weigh ``A``-``Z``), so this renaming keeps keys distinct."""
    return chr(weight + 0x20) if 0x41 <= weight <= 0x5A else chr(weight)


@functools.lru_cache(maxsize=1)
def _translation() -> Dict[int, str]:
    """``str.translate`` table from the code points to their key characters, decoded once, on first use."""
    table = {cp: _readable(cp) for cp in range(0x41, 0x5B)}
    table.update((cp, _readable(weight)) for cp, weight in collation_weights().items())
    return table


def keystone_strip(name: str) -> str:
    """The name as Keystone stores it."""
    return name.strip(KEYSTONE_WHITESPACE)


def surrounding_whitespace(name: str) -> bool:
    """The name has leading or trailing whitespace that Keystone would strip before storing it."""
    return isinstance(name, str) and keystone_strip(name) != name


def outside_bmp(name: str) -> bool:
    """The name holds a character Keystone's ``utf8mb3`` column cannot store (beyond U+FFFF)."""
    return isinstance(name, str) and _SUPPLEMENTARY.search(name) is not None


def fold(name: str) -> str:
    """The key Keystone compares user names by: one weight character per character, not for display."""
    text = name if isinstance(name, str) else str(name)
    weighed = _SUPPLEMENTARY.sub(_SUPPLEMENTARY_WEIGHT, keystone_strip(text)).translate(_translation())
    return weighed.rstrip(_PAD)


@functools.lru_cache(maxsize=1)
def _builtin_keys() -> FrozenSet[str]:
    return frozenset(fold(n) for n in BUILTIN_ACCOUNTS)


def reserved_names(admin_user_name: str, extra: Iterable[str] = ()) -> FrozenSet[str]:
    """The folded names no order may take: the admin user and the built-in accounts."""
    return _builtin_keys() | frozenset(fold(n) for n in (admin_user_name, *extra) if n)


def is_reserved(user_name: str, admin_user_name: str) -> bool:
    key = fold(user_name)
    return key in _builtin_keys() or (bool(admin_user_name) and key == fold(admin_user_name))
