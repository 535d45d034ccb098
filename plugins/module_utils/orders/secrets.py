# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Secrets the orders write, and who owns what.

Ownership is decided by a controller owner reference carrying the order's uid, never by a label: labels are how
the pass finds its objects cheaply, but anybody who can write a Secret can write labels, while an owner reference
naming the order's uid is what the order itself put there (and what the garbage collector follows).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional

if TYPE_CHECKING:  # Python >= 3.10; the modules run on 3.9 too, and the annotation is never evaluated
    from typing import TypeGuard

from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, encode_strings, is_mapping, owner_uids

ORDER_API_VERSION = "c5c3.io/v1alpha1"


def secret_manifest(name: str, namespace: str, labels: Mapping[str, str], values: Mapping[str, str]) -> Dict[str, Any]:
    """An Opaque Secret carrying ``values`` (text, base64-encoded as ``data``)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "type": "Opaque",
        "data": encode_strings(values),
    }


def owner_reference(kind: str, order_name: str, order_uid: str) -> Dict[str, Any]:
    return {
        "apiVersion": ORDER_API_VERSION,
        "kind": kind,
        "name": order_name,
        "uid": order_uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_owned(obj: Optional[Mapping[str, Any]], order_uid: str) -> TypeGuard[Mapping[str, Any]]:
    """Owned = a controller owner reference carrying the order's uid."""
    return obj is not None and bool(order_uid) and order_uid in owner_uids(obj)


def carries_labels(obj: Any, labels: Mapping[str, str]) -> bool:
    """Every label of ``labels`` is on ``obj`` with that (string) value."""
    return _carries(obj, "labels", labels)


def carries_annotations(obj: Any, annotations: Mapping[str, str]) -> bool:
    """Every annotation of ``annotations`` is on ``obj`` with that (string) value."""
    return _carries(obj, "annotations", annotations)


def _carries(obj: Any, field: str, entries: Mapping[str, str]) -> bool:
    present = dig(obj, "metadata", field)
    if not is_mapping(present):
        return not entries
    for key, value in entries.items():  # read in place: copying the labels for each check was a hot spot
        have = present.get(key)
        if not isinstance(have, str) or have != value:
            return False
    return True
