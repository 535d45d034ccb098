# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Reading an order's metadata and references without trusting admission (every order kind).

docs/keystoneuser-crd.md "Defaults" and "Admission rules" (the object-storage kinds likewise): the kinds have no
webhook and a target cluster may serve an older CRD, so nothing is trusted. Readers here raise
``OrderSpecError`` -- and nothing else -- for what they cannot read; each kind's core turns it into InvalidSpec.
``parse_identity`` asks of the metadata only what a teardown needs (name, namespace, uid, finalizers, deletion),
so an order whose spec no longer parses can still be torn down and released.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.errors import CoreError
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import is_mapping

MAX_NAME_BYTES = 63
MAX_REF_NAME = 253


class OrderSpecError(CoreError, ValueError):
    """The order cannot be read; the message says which field and why."""


def expect_mapping(value: Any, where: str, required: bool) -> Mapping[str, Any]:
    if value is None and not required:
        return {}
    if not is_mapping(value):
        raise OrderSpecError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def optional_string(value: Any, where: str, max_length: Optional[int] = None) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise OrderSpecError(f"{where}: expected a string, got {type(value).__name__}")
    if max_length is not None and len(value) > max_length:
        raise OrderSpecError(f"{where}: at most {max_length} characters")
    return value


def optional_int(value: Any, where: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise OrderSpecError(f"{where}: expected an integer, got {type(value).__name__}")
    return value


def optional_bool(value: Any, where: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise OrderSpecError(f"{where}: expected a boolean, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class OrderIdentity:
    """What the metadata says: enough to name the children and to run the teardown."""

    name: str
    namespace: str
    uid: str
    generation: int
    resource_version: Optional[str]
    finalizers: Tuple[str, ...]
    deleting: bool
    created: str  # metadata.creationTimestamp as stored ("" when absent)

    @property
    def fits_label(self) -> bool:
        """The name fits a label value (63 bytes): only then can it have children."""
        return len(self.name.encode("utf-8", "replace")) <= MAX_NAME_BYTES


def parse_identity(raw: Any) -> OrderIdentity:
    """The order's metadata; raises OrderSpecError only when it cannot name the order at all."""
    order = expect_mapping(raw, "order", required=True)
    metadata = expect_mapping(order.get("metadata"), "metadata", required=True)
    name = optional_string(metadata.get("name"), "metadata.name")
    namespace = optional_string(metadata.get("namespace"), "metadata.namespace")
    if not name:
        raise OrderSpecError("metadata.name: required")
    if not namespace:
        raise OrderSpecError("metadata.namespace: required")
    generation = metadata.get("generation")
    resource_version = metadata.get("resourceVersion")
    finalizers_raw = metadata.get("finalizers")
    finalizers: Tuple[str, ...] = ()
    if isinstance(finalizers_raw, (list, tuple)):
        finalizers = tuple(f for f in finalizers_raw if isinstance(f, str))
    uid = metadata.get("uid")
    created = metadata.get("creationTimestamp")
    return OrderIdentity(
        name=name,
        namespace=namespace,
        uid=uid if isinstance(uid, str) else "",
        generation=generation if isinstance(generation, int) and not isinstance(generation, bool)
        and generation > 0 else 0,
        resource_version=resource_version if isinstance(resource_version, str) and resource_version else None,
        finalizers=finalizers,
        deleting=bool(metadata.get("deletionTimestamp")),
        created=created if isinstance(created, str) else "",
    )


def parse_ref(spec: Mapping[str, Any], key: str, default_namespace: str) -> Tuple[str, str]:
    """``spec.<key>`` = {name, namespace}: (namespace, name), the namespace defaulting to the order's own."""
    ref = expect_mapping(spec.get(key), f"spec.{key}", required=True)
    name = optional_string(ref.get("name"), f"spec.{key}.name", MAX_REF_NAME)
    if not name:
        raise OrderSpecError(f"spec.{key}.name: required")
    namespace = optional_string(ref.get("namespace"), f"spec.{key}.namespace", MAX_NAME_BYTES) or default_namespace
    return namespace, name
