"""Keystone name folding and the names a ControlPlane reserves.

Spec: Conditions, ``ServiceAccountCollision`` ("Names are compared as Keystone compares them,
ignoring case and accents"); upstream facts section 8 (``keystoneNameKey``). Keystone's MySQL
``*_general_ci`` collation ignores case and accents, so two names that fold equal are one user:
NFD, drop the combining marks (category Mn), NFC, lowercase.
"""
from __future__ import annotations

import unicodedata
from typing import FrozenSet, Iterable

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


def fold(name: str) -> str:
    """The key Keystone compares user names by."""
    try:
        decomposed = unicodedata.normalize("NFD", name)
        stripped = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
        return unicodedata.normalize("NFC", stripped).lower()
    except (TypeError, ValueError):
        return str(name).lower()


def reserved_names(admin_user_name: str, extra: Iterable[str] = ()) -> FrozenSet[str]:
    """The folded names no order may take: the admin user and the built-in accounts."""
    return frozenset(fold(n) for n in (admin_user_name, *BUILTIN_ACCOUNTS, *extra) if n)


def is_reserved(user_name: str, admin_user_name: str) -> bool:
    return fold(user_name) in reserved_names(admin_user_name)
