# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Defensive reading of raw Kubernetes objects (plain dicts as the API returns them).

Nothing the core reads is trusted to have the shape its schema promises: an old CRD, a hand edit
or a half-written status must not crash a pass. Every helper here answers ``None``/empty instead of
raising when a hop is missing or of the wrong type. (docs/keystoneuser-crd.md "Defaults" and "Admission rules":
the reconciler does not trust admission.)
"""
from __future__ import annotations

import base64
import binascii
from collections import abc
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Tuple

if TYPE_CHECKING:  # Python >= 3.10; the modules run on 3.9 too, and the annotation is never evaluated
    from typing import TypeGuard


def is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, asking first whether it is a plain dict (what JSON decodes to): this check runs
    at every hop of every read of every order, and the abstract-class check alone is many times slower."""
    return type(value) is dict or isinstance(value, abc.Mapping)  # pylint: disable=unidiomatic-typecheck


def dig(obj: Any, *path: str) -> Any:
    """The value at ``path`` inside nested mappings, or None when any hop is missing or not a mapping."""
    current = obj
    for key in path:
        if type(current) is not dict and not isinstance(current, abc.Mapping):  # hot: pylint: disable=C0123
            return None
        current = current.get(key)
    return current


def text(value: Any, default: str = "") -> str:
    """``value`` when it is a non-empty string, else ``default`` (how Go reads an unset string field)."""
    if isinstance(value, str) and value:
        return value
    return default


def string_map(value: Any) -> Dict[str, str]:
    """A ``map[string]string`` (labels, annotations): non-string entries are dropped."""
    if not is_mapping(value):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def mappings(value: Any) -> List[Mapping[str, Any]]:
    """The mapping items of a list; anything else in it (or a non-list) is ignored."""
    if not isinstance(value, (list, tuple)):
        return []
    return [item for item in value if is_mapping(item)]


def name_of(obj: Any) -> str:
    return text(dig(obj, "metadata", "name"))


def namespace_of(obj: Any) -> str:
    return text(dig(obj, "metadata", "namespace"))


def uid_of(obj: Any) -> str:
    return text(dig(obj, "metadata", "uid"))


def resource_version_of(obj: Any) -> Optional[str]:
    value = dig(obj, "metadata", "resourceVersion")
    return value if isinstance(value, str) and value else None


def generation_of(obj: Any) -> int:
    """``metadata.generation``; 0 when absent or not an integer."""
    value = dig(obj, "metadata", "generation")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return 0


def labels_of(obj: Any) -> Dict[str, str]:
    return string_map(dig(obj, "metadata", "labels"))


def annotations_of(obj: Any) -> Dict[str, str]:
    return string_map(dig(obj, "metadata", "annotations"))


def is_deleting(obj: Any) -> bool:
    """True once ``metadata.deletionTimestamp`` is set: the object is on its way out."""
    return bool(dig(obj, "metadata", "deletionTimestamp"))


def kind_of(obj: Any) -> str:
    return text(dig(obj, "kind"))


def group_of(obj: Any) -> str:
    """The API group of ``apiVersion`` ("" for the core group)."""
    api_version = text(dig(obj, "apiVersion"))
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def find_condition(obj: Any, condition_type: str) -> Optional[Mapping[str, Any]]:
    """The ``status.conditions`` entry of ``condition_type``, or None."""
    for condition in mappings(dig(obj, "status", "conditions")):
        if condition.get("type") == condition_type:
            return condition
    return None


def condition_is_true(obj: Any, condition_type: str) -> bool:
    condition = find_condition(obj, condition_type)
    return condition is not None and condition.get("status") == "True"


def condition_generation(condition: Optional[Mapping[str, Any]]) -> Optional[int]:
    value = condition.get("observedGeneration") if condition is not None else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def condition_message(condition: Optional[Mapping[str, Any]]) -> str:
    return text(condition.get("message")) if condition is not None else ""


def secret_strings(secret: Any) -> Dict[str, str]:
    """A Secret's ``data`` decoded to text; undecodable values are left out."""
    result: Dict[str, str] = {}
    data = dig(secret, "data")
    if is_mapping(data):
        for key, value in data.items():
            if not isinstance(key, str) or not isinstance(value, str):
                continue
            try:
                result[key] = base64.b64decode(value.encode("ascii"), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeError, ValueError):
                continue
    return result


def same_encoded(live: Any, desired: Any, keys: Iterable[str]) -> bool:
    """True when both Secrets hold the very same base64 text under each of ``keys`` (or both lack it): their decoded
    values are then equal too, and nothing needs decoding. False says nothing (the texts may still decode alike)."""
    have, want = dig(live, "data"), dig(desired, "data")
    if not is_mapping(have) or not is_mapping(want):
        return False
    return all(have.get(key) == want.get(key) for key in keys)


def encode_strings(values: Mapping[str, str]) -> Dict[str, str]:
    """The ``data`` map of a Secret carrying ``values`` (base64 of UTF-8)."""
    return {key: base64.b64encode(value.encode("utf-8")).decode("ascii") for key, value in values.items()}


def owner_uids(obj: Any) -> Tuple[str, ...]:
    """The uids of the controller owner references (``controller: true``)."""
    uids = []
    for ref in mappings(dig(obj, "metadata", "ownerReferences")):
        if ref.get("controller") is True and isinstance(ref.get("uid"), str):
            uids.append(ref["uid"])
    return tuple(uids)
