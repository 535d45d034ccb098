# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What one pass decided for one order: the actions for the I/O edge, the status, when to come back.

This is the contract between the pure core of every order kind and the I/O edge. The edge:

1. executes ``Decision.actions`` in order and stops executing the rest of an order's actions at the first
   failure; it reports that failure (the action and an ``ActionError``) and the kind's core rewrites the
   decision (``failures.on_action_failure``): the status to report instead. A ``Delete`` answered 404
   (already gone) or 409 on its uid precondition (a different object now holds the name) counts as done.
   A ``Create`` with ``read_on_conflict`` that is answered 409 is reported with the live object the edge
   read back, so the core can decide again with it (an object the order owns whose labels were removed is
   found this way, without listing what carries no label);
2. then writes ``Decision.status`` to the order's status subresource -- only when it is not None
   (None = the status as read is already right; a converged pass writes nothing);
3. comes back after ``Decision.requeue_after`` (None = wait for an event).

Every action names its target: ``kind``, ``api_version``, ``namespace``, ``name`` and ``cluster``
("" = the management cluster, else the order's target cluster), a short ``why``, and the ``leg`` it
belongs to, which decides which condition a failure lands on (each kind maps its legs to conditions).

Action types:
- ``Create(obj)``: POST the full object. Children and delivered Secrets are only ever created this way, so a
  foreign object holding the name is never overwritten: the server answers 409.
- ``Apply(obj, force=True)``: server-side apply (field manager chosen by the edge) of an object we own.
- ``MergePatch(patch, resource_version)``: JSON merge patch, with a resourceVersion precondition when given.
- ``ClearProgressing(resource_version)``: remove the ``Progressing`` condition from an object's status (status
  JSON patch with a ``test`` of resourceVersion): hands a latched error back to its controller.
- ``Delete(uid)``: delete with a uid precondition.
- ``RecordEvent(involved, reason, message)``: a Kubernetes Event on an object (best effort).
A kind may add action types the edge carries out by other means (the object-storage gateway calls,
``objectstorage.gateway``); the edge hands each of those to the executor that knows it.
Writing the order's status is not an action: see ``Decision.status``.

``ActionError(status, reason, message)``: ``status`` is the HTTP status (None when no response came back),
``reason`` the Kubernetes Status reason ("AlreadyExists", "Conflict", "Forbidden", "Timeout", ...),
``message`` the error text, already redacted by the edge (it ends up in a condition message).

No action's ``repr`` shows a manifest (Secrets carry passwords); ``Decision.summary`` never holds one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import ConditionSet, Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, text

LEG_ORDER = "order"          # the order object itself (finalizer)
LEG_USER = "user"            # KeystoneUser: K-ORC User, probe, password Secrets
LEG_CREDENTIAL = "credential"  # BucketCredential: the gateway identity, its keys and key Secrets
LEG_BACKUP = "backup"        # source Secret, PushSecret
LEG_DELIVERED = "delivered"  # the Secret beside the order


class _ObjectTarget:
    """Target fields read from the manifest an action carries."""

    obj: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return text(dig(self.obj, "kind"))

    @property
    def api_version(self) -> str:
        return text(dig(self.obj, "apiVersion"))

    @property
    def namespace(self) -> str:
        return text(dig(self.obj, "metadata", "namespace"))

    @property
    def name(self) -> str:
        return text(dig(self.obj, "metadata", "name"))


@dataclass(frozen=True)
class Create(_ObjectTarget):
    obj: Mapping[str, Any] = field(repr=False)
    cluster: str
    leg: str
    why: str
    read_on_conflict: bool = False  # on 409, read the live object back for the core to decide again
    verb = "create"


@dataclass(frozen=True)
class Apply(_ObjectTarget):
    obj: Mapping[str, Any] = field(repr=False)
    cluster: str
    leg: str
    why: str
    force: bool = True
    verb = "apply"


@dataclass(frozen=True)
class MergePatch:
    kind: str
    api_version: str
    namespace: str
    name: str
    cluster: str
    leg: str
    why: str
    patch: Mapping[str, Any]
    resource_version: Optional[str] = None
    verb = "patch"


@dataclass(frozen=True)
class ClearProgressing:
    kind: str
    api_version: str
    namespace: str
    name: str
    cluster: str
    leg: str
    why: str
    resource_version: Optional[str]
    verb = "clear Progressing on"


@dataclass(frozen=True)
class Delete:
    kind: str
    api_version: str
    namespace: str
    name: str
    cluster: str
    leg: str
    why: str
    uid: Optional[str] = None
    verb = "delete"


@dataclass(frozen=True)
class RecordEvent:
    """A Kubernetes Event on ``involved`` (apiVersion, kind, namespace, name, uid): every gateway action the
    object-storage kinds take is recorded this way. Best effort: the edge never fails an order for an Event.
    The message must never hold a key or a secret."""

    involved: Mapping[str, str]
    reason: str
    message: str
    cluster: str
    event_type: str = "Normal"
    leg: str = LEG_ORDER
    verb = "record an event on"

    @property
    def why(self) -> str:
        return self.reason

    @property
    def kind(self) -> str:
        return self.involved.get("kind", "")

    @property
    def namespace(self) -> str:
        return self.involved.get("namespace", "")

    @property
    def name(self) -> str:
        return self.involved.get("name", "")


Action = Union[Create, Apply, MergePatch, ClearProgressing, Delete, RecordEvent, Any]


def describe(action: Action) -> str:
    """One line for logs and the module's return (never the manifest)."""
    where = f"{action.namespace}/{action.name}" if action.namespace else action.name
    cluster = f" on cluster {action.cluster}" if action.cluster else ""
    return f"{action.verb} {action.kind} {where}{cluster}: {action.why}"


@dataclass(frozen=True)
class ActionError:
    """How an action failed, as the edge saw it (HTTP status when there was one)."""

    status: Optional[int]
    reason: str
    message: str
    live: Optional[Mapping[str, Any]] = field(default=None, repr=False)  # read back after a 409 (read_on_conflict)


@dataclass(frozen=True)
class Claim:
    """A status fact that holds only if the action at ``index`` runs (the edge stops at a failure).

    ``on_action_failure`` puts back ``fields`` and the ``verdicts`` given here for every claim whose action
    did not run.
    """

    index: int
    fields: Any
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)


@dataclass(frozen=True)
class DecisionContext:
    """Everything needed to compose the status, and to recompose it when an action failed; not for the edge.

    ``fields`` are the kind's status fields besides the conditions: an object whose ``render()`` returns
    them as the status dict carries them.
    """

    now: datetime
    generation: int
    conditions: ConditionSet
    previous: Mapping[str, Any]  # the status as read (raw)
    fields: Any
    verdicts: Mapping[str, Verdict]
    identity: Mapping[str, Any]  # name, namespace, cluster (and deleting): what the summary names
    claims: Tuple[Claim, ...] = ()
    requeue_cap: Optional[timedelta] = None  # never come back later than this (e.g. a due rotation)
    writes_status: bool = True


@dataclass
class Decision:
    actions: List[Action]
    status: Optional[Dict[str, Any]]
    requeue_after: Optional[timedelta]
    ready: bool
    reasons: Dict[str, str]
    summary: Dict[str, Any]
    context: Optional[DecisionContext] = field(default=None, repr=False)
