# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What the access sync's writes on one cluster came to (pure; used by roles/namespace_access/tasks/write.yml).

A write can meet a cluster that moved on after the read, and the sync judges it by the cluster as it is then
(level-triggered): a revoke that finds its binding gone (its namespace was deleted meanwhile) has done its job; a
grant refused because its namespace is gone or going is no failure (the next run plans nothing there); a grant the
access-sync admission policy refused because the namespace is *not marked* is no failure when the namespace, read
again, no longer carries the mark by the sync's own selector (the platform withdrew it meanwhile, and the next run
reports it ``unmarked``). Any of these stops ``kubernetes.core.k8s``'s batch at that object, so the step is redone one
by one. A refusal the namespace as it is now does not explain (the sync's selector emptied, say) stays an error.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.c5c3.orders.plugins.filter.namespace_grants import (
    GRANT_LABEL, labels_by_name, marked, usable)

# What the API server says of a binding or namespace that is gone or going.
GONE = re.compile(r'because it is being terminated|NamespaceTerminating|"reason":\s*"NotFound"'
                  r'|namespaces \W+[a-z0-9.-]+\W+ not found')
# What the access-sync admission policy says of a namespace without the mark (roles/namespace_access/templates/
# policies.yml.j2).
UNMARKED = re.compile(r"the access sync grants only in namespaces the platform marked for it \(.*\); "
                      r"[a-z0-9.-]+ is not marked")
STEPS = ("revoking", "granting")
LIMIT = 700


def _text(message):
    return message if isinstance(message, str) else str(message or "")


def gone(message):
    """Whether a failure only says that the object or its namespace is gone or going."""
    return bool(GONE.search(_text(message)))


def redo(message):
    """Whether a batch's failure may be one the cluster as it is now explains, so the step is redone one by one."""
    return gone(message) or bool(UNMARKED.search(_text(message)))


def _dict(value):
    return value if isinstance(value, dict) else {}


def _ran(each):
    return [r for r in _dict(each).get("results") or [] if isinstance(r, dict) and not r.get("skipped")]


def refused_unmarked(each):
    """Whether a one-by-one run has an item refused as not marked (the namespaces are then read again)."""
    return any(r.get("failed") and UNMARKED.search(_text(r.get("msg"))) for r in _ran(each))


class _NamespacesNow(object):
    """The namespaces read again after a refusal as not marked, with the sync's marks (None: not read)."""

    def __init__(self, namespaces, marks):
        self.read = namespaces is not None
        self.present = usable(namespaces) if self.read else set()
        self.labels = labels_by_name(namespaces) if self.read else {}
        self.marks = _dict(marks)

    def unmarked(self, item):
        """The grant's namespace is gone or going, or lacks the mark of the grant's kind."""
        meta = _dict(_dict(item).get("metadata"))
        namespace, grant = meta.get("namespace"), _dict(meta.get("labels")).get(GRANT_LABEL)
        if not self.read or not self.marks.get(grant):
            return False  # not read again, or no mark to go by: the refusal is not explained
        return namespace not in self.present or not marked(self.labels.get(namespace), self.marks[grant])


def _harmless(result, now):
    msg = result.get("msg")
    return gone(msg) or (bool(UNMARKED.search(_text(msg))) and now.unmarked(result.get("item")))


def step_errors(batch, each, now):
    """A step's errors: the batch's failure, or, once the batch was redone one by one, the items that failed for a
    reason the cluster as it is ``now`` does not explain."""
    ran = _ran(each)
    if ran:
        return [_text(r.get("msg")) or "error" for r in ran if r.get("failed") and not _harmless(r, now)]
    batch = _dict(batch)
    if batch.get("failed"):
        return [_text(batch.get("msg")) or "error"]
    return []


def _short(text):
    return text if len(text) <= LIMIT else text[:LIMIT - 3] + "..."


def write_errors(steps, label, namespaces_now=None, marks=None):
    """One line per failed step, ``<label>: revoking failed (<first error>)``. ``steps`` maps ``revoking`` and
    ``granting`` to ``[batch result, one-by-one result]``; ``namespaces_now`` are the Namespace objects read again
    after a refusal as not marked (None: not read), ``marks`` the sync's ``{grant: selector}``."""
    out, now = [], _NamespacesNow(namespaces_now, marks)
    for step in STEPS:
        batch, each = (list(_dict(steps).get(step) or []) + [None, None])[:2]
        errors = step_errors(batch, each, now)
        if errors:
            out.append("%s: %s failed (%s)" % (label, step, _short(errors[0])))
    return out


class FilterModule(object):
    def filters(self):
        return {"namespace_access_redo": redo, "namespace_access_refused_unmarked": refused_unmarked,
                "namespace_access_write_errors": write_errors}
