# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The delivered Secret contract every order kind shares.

docs/reconciler.md "Backup first, then delivery" and "The delivered Secret is owned by uid" (the object-storage
kinds deliver alike: docs/object-storage.md "Design rules and their tests"): the Secret beside the order carries
a controller owner reference to the order and the kind's labels; the operator applies it with server-side apply
and owns its keys. An edited managed key is rewritten, a deleted
Secret is written again, a key somebody else added stays. A Secret of that name the order does not own (by uid)
is never taken over: the order reports DeliveryRefused and leaves it unchanged. The order's ``spec.secretTemplate``
adds labels and annotations (``orders.secrettemplate``): a missing or different one is repaired like a label, and
one the template no longer has is removed.

The live Secret is whatever holds the name, whatever its labels; one the order owns but whose labels were removed
is not in the pass's label-selected list, so it is created with ``read_on_conflict``: the 409 brings it back and
the core decides again with it (repair restores the labels). A managed key the order stops delivering (a revoked
key slot) is removed with a merge patch after the repair: the keys the Secret got when it was created (POST) stay
owned by that write, and server-side apply only removes fields no other entry of managedFields owns; a former
template label or annotation is removed in the same merge patch, for the same reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Sequence

from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import LEG_DELIVERED, Apply, Create, MergePatch
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import same_encoded, secret_strings
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrets import carries_annotations, carries_labels, is_owned
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import dropped_metadata

if TYPE_CHECKING:  # for the annotation only
    from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import Outcome


@dataclass(frozen=True)
class DeliveredSecret:
    """The desired delivered Secret and what the order manages in it."""

    desired: Mapping[str, Any]
    order_uid: str
    managed_keys: Sequence[str]
    cluster: str  # the order's cluster: the Secret lives beside the order


def dropped_keys(live: Mapping[str, Any], delivered: DeliveredSecret) -> Sequence[str]:
    """Managed keys the live Secret carries that the order no longer delivers (e.g. a revoked key slot)."""
    have, want = secret_strings(live), secret_strings(delivered.desired)
    return [key for key in delivered.managed_keys if key in have and key not in want]


def metadata_stale(live: Mapping[str, Any], delivered: DeliveredSecret) -> bool:
    """A label or annotation the order sets is missing or differs, or one a former template set is still there."""
    meta = delivered.desired["metadata"]
    return not carries_labels(live, meta["labels"]) or not carries_annotations(live, meta.get("annotations") or {}) \
        or bool(dropped_metadata(live, delivered.desired))


def needs_repair(live: Mapping[str, Any], delivered: DeliveredSecret) -> bool:
    if same_encoded(live, delivered.desired, delivered.managed_keys):  # no key differs, none to drop: no decoding
        return metadata_stale(live, delivered) or not is_owned(live, delivered.order_uid)
    have, want = secret_strings(live), secret_strings(delivered.desired)
    if any(have.get(key) != want.get(key) for key in delivered.managed_keys):
        return True
    if any(key not in want and key in have for key in delivered.managed_keys):
        return True
    return metadata_stale(live, delivered) or not is_owned(live, delivered.order_uid)


def refused(live: Optional[Mapping[str, Any]], order_uid: str) -> bool:
    """A Secret of the delivered name exists that the order does not own: it is left alone."""
    return live is not None and not is_owned(live, order_uid)


def carries(live: Optional[Mapping[str, Any]], order_uid: str, key: str, value: Optional[str]) -> bool:
    """The live delivered Secret is the order's and carries ``value`` under ``key``."""
    return value is not None and is_owned(live, order_uid) and secret_strings(live).get(key) == value


def write_delivered(out: Outcome, live: Optional[Mapping[str, Any]], delivered: DeliveredSecret) -> Optional[int]:
    """Create or repair the delivered Secret (the caller has checked ``refused``); the action's index, or None when
    the live Secret already carries what is wanted."""
    if live is None:
        return out.act(Create(delivered.desired, delivered.cluster, LEG_DELIVERED, "deliver the credentials",
                              read_on_conflict=True))
    if not needs_repair(live, delivered):
        return None
    index = out.act(Apply(delivered.desired, delivered.cluster, LEG_DELIVERED, "repair the delivered credentials"))
    patch = _drop_patch(live, delivered)
    if patch:  # what the Secret got at its POST stays owned by that write: apply alone never removes it
        meta = delivered.desired["metadata"]
        index = out.act(MergePatch(kind="Secret", api_version="v1", namespace=meta["namespace"], name=meta["name"],
                                   cluster=delivered.cluster, leg=LEG_DELIVERED,
                                   why="drop what the order no longer delivers", patch=patch))
    return index


def _drop_patch(live: Mapping[str, Any], delivered: DeliveredSecret) -> Dict[str, Any]:
    """The merge patch that removes the keys and former template entries the order no longer delivers ({} = none)."""
    patch: Dict[str, Any] = {}
    dropped = dropped_keys(live, delivered)
    if dropped:
        patch["data"] = {key: None for key in dropped}
    metadata = {field: {key: None for key in keys} for field, keys in dropped_metadata(live, delivered.desired).items()}
    if metadata:
        patch["metadata"] = metadata
    return patch
