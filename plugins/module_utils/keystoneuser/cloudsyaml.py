# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The delivered ``clouds.yaml``, rendered as text (no YAML library in a module's runtime).

docs/reconciler.md "Backup first, then delivery" (step 2). One cloud, keyed by the ControlPlane's
cloud name (default ``admin``); ``auth`` holds auth_url, username, password and user_domain_name
and no project (the user has no project and no role: an unscoped token); then region_name,
endpoint_type and ``identity_api_version: 3``. Strings are Go-``%q`` double-quoted (a valid YAML
double-quoted scalar for any input), endpoint_type is bare, 2-space indent, trailing newline.
"""
from __future__ import annotations

import re
import unicodedata

_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
    "\\": "\\\\", '"': '\\"',
}
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
# Plain scalars YAML 1.1 would read as booleans or null.
_YAML_WORDS = frozenset(("true", "false", "yes", "no", "on", "off", "y", "n", "null"))


def _printable(char: str) -> bool:
    """Go's ``unicode.IsPrint``: letters, marks, numbers, punctuation, symbols and the ASCII space."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


def go_quote(value: str) -> str:
    """Go's ``strconv.Quote`` (what ``%q`` prints for a string)."""
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'  # printable ASCII needs no escape (the common case, checked in C)
    out = ['"']
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif _printable(char):
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def bare_or_quoted(value: str) -> str:
    """``value`` bare when YAML reads it back as that very string (a plain identifier), else quoted."""
    if _PLAIN.match(value) and value.lower() not in _YAML_WORDS:
        return value
    return go_quote(value)


def render_clouds_yaml(
    cloud_name: str,
    auth_url: str,
    username: str,
    password: str,
    user_domain_name: str,
    region_name: str,
    endpoint_type: str,
) -> str:
    return (
        "clouds:\n"
        f"  {bare_or_quoted(cloud_name)}:\n"
        "    auth:\n"
        f"      auth_url: {go_quote(auth_url)}\n"
        f"      username: {go_quote(username)}\n"
        f"      password: {go_quote(password)}\n"
        f"      user_domain_name: {go_quote(user_domain_name)}\n"
        f"    region_name: {go_quote(region_name)}\n"
        f"    endpoint_type: {bare_or_quoted(endpoint_type)}\n"
        "    identity_api_version: 3\n"
    )
