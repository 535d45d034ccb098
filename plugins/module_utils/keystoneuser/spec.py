"""Reading a raw KeystoneUser into a typed spec with the effective defaults.

Spec: "Spec" (KeystoneUserSpec, ControlPlaneRefSpec) and "Defaulting and Validation Summary".
The kind has no webhook and a target cluster may serve an older CRD, so nothing is trusted:
``parse_order`` applies the defaults the API server would (user name = metadata.name, password
generation at least 1, interval 720h when absent, controlPlaneRef.namespace = the order's own) and
raises ``OrderSpecError`` -- and nothing else -- for anything it cannot read. The reconciler turns
that error into ``InvalidSpec`` on both conditions instead of crashing.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.durations import (
    DurationError,
    parse_go_duration,
)

DEFAULT_ROTATION_INTERVAL = timedelta(hours=720)
MIN_ROTATION_INTERVAL = timedelta(minutes=1)
MAX_ROTATION_INTERVAL = timedelta(hours=87600)
MAX_NAME_BYTES = 63
MAX_USER_NAME = 255


class OrderSpecError(ValueError):
    """The order cannot be read; the message says which field and why."""


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


@dataclass(frozen=True)
class OrderSpec:
    """The effective spec, defaults resolved."""

    identity: OrderIdentity
    control_plane_name: str
    control_plane_namespace: str
    user_name: str
    password_generation: int
    rotation_interval: timedelta  # timedelta(0) = schedule off

    @property
    def schedule_on(self) -> bool:
        return self.rotation_interval > timedelta(0)


def _mapping(value: Any, where: str, required: bool) -> Mapping[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, Mapping):
        raise OrderSpecError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _optional_string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise OrderSpecError(f"{where}: expected a string, got {type(value).__name__}")
    return value


def _int(value: Any, where: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise OrderSpecError(f"{where}: expected an integer, got {type(value).__name__}")
    return value


def parse_identity(raw: Any) -> OrderIdentity:
    """The order's metadata; raises OrderSpecError when it cannot name the order."""
    order = _mapping(raw, "order", required=True)
    metadata = _mapping(order.get("metadata"), "metadata", required=True)
    name = _optional_string(metadata.get("name"), "metadata.name")
    namespace = _optional_string(metadata.get("namespace"), "metadata.namespace")
    if not name:
        raise OrderSpecError("metadata.name: required")
    if not namespace:
        raise OrderSpecError("metadata.namespace: required")
    if len(name.encode("utf-8", "replace")) > MAX_NAME_BYTES:
        raise OrderSpecError("metadata.name must be at most 63 bytes")
    generation = _int(metadata.get("generation"), "metadata.generation") or 0
    resource_version = metadata.get("resourceVersion")
    finalizers_raw = metadata.get("finalizers")
    if finalizers_raw is None:
        finalizers: Tuple[str, ...] = ()
    elif isinstance(finalizers_raw, (list, tuple)) and all(isinstance(f, str) for f in finalizers_raw):
        finalizers = tuple(finalizers_raw)
    else:
        raise OrderSpecError("metadata.finalizers: expected a list of strings")
    uid = metadata.get("uid")
    return OrderIdentity(
        name=name,
        namespace=namespace,
        uid=uid if isinstance(uid, str) else "",
        generation=max(generation, 0),
        resource_version=resource_version if isinstance(resource_version, str) and resource_version else None,
        finalizers=finalizers,
        deleting=bool(metadata.get("deletionTimestamp")),
    )


def parse_rotation_interval(value: Any) -> timedelta:
    """``spec.rotation.interval``: 720h when absent, 0s = off, else between 1m and 87600h."""
    if value is None:
        return DEFAULT_ROTATION_INTERVAL
    if not isinstance(value, str):
        raise OrderSpecError(f"spec.rotation.interval: expected a duration string, got {type(value).__name__}")
    try:
        interval = parse_go_duration(value)
    except DurationError as err:
        raise OrderSpecError(f"spec.rotation.interval: {err}") from None
    if interval < timedelta(0):
        raise OrderSpecError("spec.rotation.interval: must not be negative")
    if timedelta(0) < interval < MIN_ROTATION_INTERVAL:
        raise OrderSpecError("rotation.interval is 0s or at least 1m")
    if interval > MAX_ROTATION_INTERVAL:
        raise OrderSpecError("rotation.interval is at most 87600h")
    return interval


def parse_order(raw: Any) -> OrderSpec:
    """The effective spec of a raw KeystoneUser; raises only OrderSpecError."""
    try:
        return _parse_order(raw)
    except OrderSpecError:
        raise
    except Exception as err:  # noqa: BLE001 - the contract is "only OrderSpecError", whatever the input
        raise OrderSpecError(f"unreadable order: {type(err).__name__}: {err}") from None


def _parse_order(raw: Any) -> OrderSpec:
    identity = parse_identity(raw)
    spec = _mapping(raw.get("spec"), "spec", required=True)
    ref = _mapping(spec.get("controlPlaneRef"), "spec.controlPlaneRef", required=True)
    cp_name = _optional_string(ref.get("name"), "spec.controlPlaneRef.name")
    if not cp_name:
        raise OrderSpecError("spec.controlPlaneRef.name: required")
    cp_namespace = _optional_string(ref.get("namespace"), "spec.controlPlaneRef.namespace") or identity.namespace

    user_name = _optional_string(spec.get("userName"), "spec.userName") or identity.name
    if len(user_name) > MAX_USER_NAME:
        raise OrderSpecError("spec.userName: at most 255 characters")
    if "," in user_name:
        raise OrderSpecError("spec.userName: must not contain a comma")

    generation = _int(spec.get("passwordGeneration"), "spec.passwordGeneration")
    rotation = _mapping(spec.get("rotation"), "spec.rotation", required=False)
    return OrderSpec(
        identity=identity,
        control_plane_name=cp_name,
        control_plane_namespace=cp_namespace,
        user_name=user_name,
        password_generation=max(generation or 1, 1),
        rotation_interval=parse_rotation_interval(rotation.get("interval")),
    )
