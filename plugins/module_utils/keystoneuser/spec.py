# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Reading a raw KeystoneUser into a typed spec with the effective defaults.

docs/keystoneuser-crd.md "Spec", "Defaults" and "Admission rules".
The kind has no webhook and a target cluster may serve an older CRD, so nothing is trusted:
``parse_order`` applies the defaults the API server would (user name = metadata.name, password
generation at least 1, interval 720h when absent, controlPlaneRef.namespace = the order's own), bounds every
string before reading it, and raises ``OrderSpecError`` -- and nothing else -- for anything it cannot read
(``spec.secretTemplate`` included: ``orders.secrettemplate``).
The reconciler turns that error into ``InvalidSpec`` on both conditions instead of crashing.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.foldnames import outside_bmp, surrounding_whitespace
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import (  # noqa: F401 pylint: disable=useless-import-alias
    OrderIdentity as OrderIdentity,
    OrderSpecError as OrderSpecError,
    expect_mapping,
    optional_int,
    optional_string,
    parse_identity as parse_identity,
    parse_ref,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import SecretTemplate, parse_template
from ansible_collections.c5c3.orders.plugins.module_utils.orders.specduration import spec_duration

DEFAULT_ROTATION_INTERVAL = timedelta(hours=720)
MIN_ROTATION_INTERVAL = timedelta(minutes=1)
MAX_ROTATION_INTERVAL = timedelta(hours=87600)
MAX_USER_NAME = 255


@dataclass(frozen=True)
class OrderSpec:
    """The effective spec, defaults resolved."""

    identity: OrderIdentity
    control_plane_name: str
    control_plane_namespace: str
    user_name: str
    password_generation: int
    rotation_interval: timedelta  # timedelta(0) = schedule off
    secret_template: SecretTemplate = SecretTemplate()  # labels and annotations added to the delivered Secret

    @property
    def schedule_on(self) -> bool:
        return self.rotation_interval > timedelta(0)


def parse_rotation_interval(value: Any) -> timedelta:
    """``spec.rotation.interval``: 720h when absent, 0s = off, else between 1m and 87600h."""
    interval = spec_duration(value, "spec.rotation.interval")
    if interval is None:
        return DEFAULT_ROTATION_INTERVAL
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
    if not identity.fits_label:
        raise OrderSpecError("metadata.name must be at most 63 bytes")
    spec = expect_mapping(raw.get("spec"), "spec", required=True)
    cp_namespace, cp_name = parse_ref(spec, "controlPlaneRef", identity.namespace)
    user_name = optional_string(spec.get("userName"), "spec.userName", MAX_USER_NAME) or identity.name
    if "," in user_name:
        raise OrderSpecError("spec.userName: must not contain a comma")
    if surrounding_whitespace(user_name):
        raise OrderSpecError("spec.userName: must not begin or end with whitespace (Keystone strips it, so the "
                             "name would be another user's)")
    if outside_bmp(user_name):
        raise OrderSpecError("spec.userName: characters beyond U+FFFF cannot be stored by Keystone's database")
    generation = optional_int(spec.get("passwordGeneration"), "spec.passwordGeneration")
    rotation = expect_mapping(spec.get("rotation"), "spec.rotation", required=False)
    return OrderSpec(
        identity=identity,
        control_plane_name=cp_name,
        control_plane_namespace=cp_namespace,
        user_name=user_name,
        password_generation=max(generation or 1, 1),
        rotation_interval=parse_rotation_interval(rotation.get("interval")),
        secret_template=parse_template(spec.get("secretTemplate")),
    )
