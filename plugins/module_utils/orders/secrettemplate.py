# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""``spec.secretTemplate``: the labels and annotations an order adds to its delivered Secret.

docs/keystoneuser-crd.md "Secret template" (BucketCredential alike: docs/bucketcredential-crd.md). The template's
entries are added to the delivered Secret; the contract's own labels and annotations win, and every key under
``c5c3.io/`` is ours, so a template naming one is refused (the CRD refuses it at admission; ``parse_template``
refuses it again for a cluster whose CRD is older, as ``OrderSpecError`` -> InvalidSpec).

A key removed from the template must leave the Secret. Server-side apply alone does not do that for a key the
Secret got at its creation (a POST owns it, see ``orders.delivery``), and nothing else tells a former template
key from one somebody else added, so the Secret records the template's keys in two annotations of ours
(``RECORD_LABELS``, ``RECORD_ANNOTATIONS``); a recorded key the template no longer has is dropped. An order
without a template writes no record, so its Secret is what it was before templates existed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError, expect_mapping
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import annotations_of, labels_of

RESERVED_PREFIX = "c5c3.io/"
RECORD_LABELS = "c5c3.io/template-labels"
RECORD_ANNOTATIONS = "c5c3.io/template-annotations"
MAX_ENTRIES = 32              # maxProperties of each map: bounds the CEL cost and the Secret's metadata
MAX_LABEL_VALUE = 63
MAX_ANNOTATION_VALUE = 4096   # 32 of them stay far below the API server's 256 KiB for all annotations
MAX_PREFIX = 253
_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

Entries = Tuple[Tuple[str, str], ...]


@dataclass(frozen=True)
class SecretTemplate:
    """The template's entries, sorted by key (empty = no template)."""

    labels: Entries = ()
    annotations: Entries = ()


def qualified_name_problem(key: str) -> Optional[str]:
    """Why ``key`` is no label or annotation key Kubernetes accepts (None = fine): ``[prefix/]name``."""
    prefix, slash, name = key.rpartition("/")
    if slash and (len(prefix) > MAX_PREFIX or not _PREFIX.fullmatch(prefix)):
        return "its prefix must be a DNS subdomain of at most 253 characters"
    if not _NAME.fullmatch(name):
        return "its name must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
    return None


def _entries(raw: Any, where: str, max_value: int, value_pattern: Optional["re.Pattern[str]"]) -> Entries:
    entries = expect_mapping(raw, where, required=False)
    if len(entries) > MAX_ENTRIES:
        raise OrderSpecError(f"{where}: at most {MAX_ENTRIES} entries")
    out: Dict[str, str] = {}
    for key, value in entries.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise OrderSpecError(f"{where}: keys and values must be strings")
        if key.startswith(RESERVED_PREFIX):
            raise OrderSpecError(f"{where}: {key!r} is under {RESERVED_PREFIX}, which the collection reserves")
        problem = qualified_name_problem(key)
        if problem:
            raise OrderSpecError(f"{where}: key {key!r} is no qualified name: {problem}")
        if len(value) > max_value:
            raise OrderSpecError(f"{where}[{key}]: at most {max_value} characters")
        if value_pattern is not None and not value_pattern.fullmatch(value):
            raise OrderSpecError(f"{where}[{key}]: a label value is letters, digits, '-', '_' or '.', starting and "
                                 "ending with a letter or digit")
        out[key] = value
    return tuple(sorted(out.items()))


def parse_template(raw: Any, where: str = "spec.secretTemplate") -> SecretTemplate:
    """``spec.secretTemplate``; raises OrderSpecError for what admission would have refused."""
    template = expect_mapping(raw, where, required=False)
    return SecretTemplate(
        labels=_entries(template.get("labels"), f"{where}.labels", MAX_LABEL_VALUE, _LABEL_VALUE),
        annotations=_entries(template.get("annotations"), f"{where}.annotations", MAX_ANNOTATION_VALUE, None),
    )


def _record(entries: Entries) -> str:
    return ",".join(key for key, _value in entries)


def templated(manifest: Mapping[str, Any], template: SecretTemplate) -> Dict[str, Any]:
    """``manifest`` with the template's entries added under its own labels and annotations, which win, and the
    record of the template's keys."""
    metadata = dict(manifest["metadata"])
    labels = dict(template.labels)
    labels.update(metadata.get("labels") or {})
    annotations = dict(template.annotations)
    annotations.update(metadata.get("annotations") or {})
    for record, entries in ((RECORD_LABELS, template.labels), (RECORD_ANNOTATIONS, template.annotations)):
        if entries:
            annotations[record] = _record(entries)
    metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return dict(manifest, metadata=metadata)


def _recorded(live_annotations: Mapping[str, str], record: str) -> Tuple[str, ...]:
    return tuple(key for key in live_annotations.get(record, "").split(",") if key)


def dropped_metadata(live: Any, desired: Mapping[str, Any]) -> Dict[str, Tuple[str, ...]]:
    """{"labels": keys, "annotations": keys} the live Secret carries that a former template put there (or our
    record itself) and the desired Secret no longer has: they are removed with a merge patch."""
    live_labels = labels_of(live)
    live_annotations = annotations_of(live)
    want_labels = desired["metadata"].get("labels") or {}
    want_annotations = desired["metadata"].get("annotations") or {}
    labels = tuple(key for key in _recorded(live_annotations, RECORD_LABELS)
                   if key in live_labels and key not in want_labels)
    former = _recorded(live_annotations, RECORD_ANNOTATIONS) + (RECORD_LABELS, RECORD_ANNOTATIONS)
    annotations = tuple(key for key in dict.fromkeys(former)
                        if key in live_annotations and key not in want_annotations)
    return {kind: keys for kind, keys in (("labels", labels), ("annotations", annotations)) if keys}
