# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Sorting the listed objects into this order's children, by kind and role.

docs/reconciler.md "Where the children live" (an object belongs to the order only with all 3 labels AND one of
its names). The edge lists by the three labels; here each listed object is kept only if its name is
also one of ours and its kind fits the name. Anything else -- a foreign object, whatever its labels
-- is never touched.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import ChildNames, is_ours
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import group_of, is_mapping, kind_of, name_of

KORC_GROUP = "openstack.k-orc.cloud"
ESO_GROUP = "external-secrets.io"


@dataclass(frozen=True)
class OwnedChildren:
    user: Optional[Mapping[str, Any]] = None
    probe: Optional[Mapping[str, Any]] = None
    source: Optional[Mapping[str, Any]] = None
    backup: Optional[Mapping[str, Any]] = None
    passwords: Dict[int, Mapping[str, Any]] = field(default_factory=dict)

    def teardown_order(self) -> List[Mapping[str, Any]]:
        """PushSecret (ESO purges OpenBao), User (K-ORC deletes the Keystone user), probe, every
        password Secret, source Secret."""
        ordered = [self.backup, self.user, self.probe]
        ordered += [self.passwords[g] for g in sorted(self.passwords)]
        ordered.append(self.source)
        return [obj for obj in ordered if obj is not None]


def sort_children(listed: Sequence[Mapping[str, Any]], names: ChildNames, labels: Dict[str, str]) -> OwnedChildren:
    found: Dict[str, Any] = {}
    passwords: Dict[int, Mapping[str, Any]] = {}
    for obj in listed:
        if not is_mapping(obj) or not is_ours(obj, names, labels):
            continue
        name, kind, group = name_of(obj), kind_of(obj), group_of(obj)
        if kind == "User" and group == KORC_GROUP and name in (names.user, names.probe):
            found["user" if name == names.user else "probe"] = obj
        elif kind == "PushSecret" and group == ESO_GROUP and name == names.backup:
            found["backup"] = obj
        elif kind == "Secret" and group == "":
            if name == names.source:
                found["source"] = obj
            else:
                generation = names.password_generation(name)
                if generation is not None:
                    passwords[generation] = obj
    return OwnedChildren(passwords=passwords, **found)
