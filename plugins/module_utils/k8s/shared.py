# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""One string object for every equal string value of a listed collection.

``json`` decodes every occurrence of a value into its own ``str``: the same condition type, reason and message, the
same label values, the same API version in each of thousands of items. A pass holds its lists while it decides every
order, so at 5,000 orders those copies are about a third of the decoded lists (docs/benchmarks.md, "Where the memory
goes"). Sharing them is one walk over each page as it arrives; the objects compare and serialise exactly as before.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable


def share_strings(items: Iterable[Any], seen: Dict[str, str]) -> None:
    """Replace, in place, every string value in ``items`` (dicts and lists, nested) by the first equal one in
    ``seen``, adding the new ones. Keys are left alone (``json`` already shares them within a response)."""
    stack = list(items)
    while stack:
        node = stack.pop()
        # exact types, not isinstance: the nodes are decoded JSON, and this runs for every value of every item
        if type(node) is dict:  # pylint: disable=unidiomatic-typecheck
            for key, value in node.items():
                kind = type(value)
                if kind is str:
                    node[key] = seen.setdefault(value, value)
                elif kind is dict or kind is list:
                    stack.append(value)
        else:
            for index, value in enumerate(node):
                kind = type(value)
                if kind is str:
                    node[index] = seen.setdefault(value, value)
                elif kind is dict or kind is list:
                    stack.append(value)
