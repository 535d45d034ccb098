# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Masking the secret values a pass generated or wrote out of its result, in one walk over the result.

Ansible's output filter (``no_log_values``, applied by ``exit_json``) looks for every registered value in every
string of the result: its cost is the number of strings times the number of values. A pass that writes the
passwords of N orders registers about 2N values into a result of about 10N strings, so the filter grew with the
square of the orders: 5 CPU s at 4,000 orders, 21 s at 8,000, measured (benchmarks/scenario_scale.py), most of a
pass at 20,000. ``SecretMask`` finds the same occurrences in time linear in the size of the result:

- a *token* value (letters, digits, ``-`` and ``_``: generated passwords, access keys, secret keys) is found
  through the runs of those characters in a text: a run equal to a token is looked up in a set, and a longer run
  is searched for tokens at each position through the tokens' first ``PREFIX`` characters;
- any other value (a clouds.yaml document, say) that contains a token is masked through that token; the few left
  are looked for one by one, as Ansible would.

Every occurrence is replaced by ``MASK``, Ansible's own mask, in keys and values alike.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Set, Tuple

MASK = "********"
PREFIX = 8       # tokens shorter than this are few and are looked for one by one
_TOKEN = re.compile(r"[A-Za-z0-9_\-]+")


class SecretMask:
    def __init__(self, values: Iterable[Any]) -> None:
        tokens: Set[str] = set()
        others: Set[str] = set()
        for value in values:
            if not isinstance(value, str) or not value:
                continue
            if len(value) >= PREFIX and _TOKEN.fullmatch(value):
                tokens.add(value)
            else:
                others.add(value)
        self.tokens = frozenset(tokens)
        self.shortest = min((len(t) for t in tokens), default=0)
        self.by_prefix: Dict[str, List[str]] = {}
        for token in sorted(tokens, key=len, reverse=True):
            self.by_prefix.setdefault(token[:PREFIX], []).append(token)
        # a value holding a token is masked through it; the rest are looked for one by one, longest first
        self.others = sorted((v for v in others if not self._spans(v)), key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self.tokens or self.others)

    def _spans(self, text: str) -> List[Tuple[int, int]]:
        """Where tokens occur in ``text`` (left to right, not overlapping)."""
        found: List[Tuple[int, int]] = []
        if not self.tokens:
            return found
        for run in _TOKEN.finditer(text):
            start, end = run.span()
            if end - start < self.shortest:
                continue
            if run.group() in self.tokens:
                found.append((start, end))
                continue
            i = start
            while i <= end - PREFIX:
                match = next((t for t in self.by_prefix.get(text[i:i + PREFIX], ()) if text.startswith(t, i)), None)
                if match is None:
                    i += 1
                    continue
                found.append((i, i + len(match)))
                i += len(match)
        return found

    def text(self, text: str) -> str:
        spans = self._spans(text)
        if spans:
            parts, last = [], 0
            for start, end in spans:
                parts.append(text[last:start])
                parts.append(MASK)
                last = end
            parts.append(text[last:])
            text = "".join(parts)
        for value in self.others:
            if value in text:
                text = text.replace(value, MASK)
        return text

    def apply(self, value: Any) -> Any:
        """``value`` (a module result: dicts, lists, strings, scalars) with every occurrence masked."""
        if not self:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.apply(k): self.apply(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.apply(v) for v in value]
        return value
