"""What one pass decided: the actions for the I/O edge, the status to write, when to come back.

This is the contract between the pure core and the I/O edge (the module). The edge:

1. executes ``Decision.actions`` in order, and stops executing the rest of an order's actions at
   the first failure, handing that failure to ``failures.on_action_failure(decision, action,
   ActionError(...))``, which returns the decision to report instead (status rewritten);
   a ``Delete`` answered 404 (already gone) or 409 on its uid precondition (a different object now
   holds the name) counts as done, not as a failure;
2. then writes ``Decision.status`` to the order's status subresource -- only when it is not None
   (None = the status as read is already right; a converged pass writes nothing);
3. comes back after ``Decision.requeue_after`` (None = wait for an event).

Every action names its target: ``kind``, ``api_version``, ``namespace``, ``name`` and ``cluster``
("" = the management cluster, else the order's target cluster -- only the order itself (finalizer)
and the delivered Secret live there; every other child is on the management cluster), a short
``why``, and the ``leg`` it belongs to, which decides which condition a failure lands on:
``order`` and ``user`` -> UserReady; ``backup`` and ``delivered`` -> DeliveryReady.

Action types:
- ``Create(obj)``: POST the full object. Children and the delivered Secret are only ever created
  this way, so a foreign object holding the name is never overwritten: the server answers 409.
- ``Apply(obj, force=True)``: server-side apply (field manager chosen by the edge) of an object we
  own: the User's spec (new passwordRef), the source Secret, the PushSecret, the delivered Secret
  repair (only our two keys, labels and owner reference; keys others added stay).
- ``MergePatch(patch, resource_version)``: JSON merge patch, with a resourceVersion precondition
  when given (the order's finalizer list; the unlatch stamp annotation).
- ``ClearProgressing(resource_version)``: remove the ``Progressing`` condition from a K-ORC User's
  status (status JSON patch with a ``test`` of resourceVersion). Always followed by a MergePatch of
  the annotation ``c5c3.io/korc-transport-unlatched-at``.
- ``Delete(uid)``: delete with a uid precondition.
Writing the order's status is not an action: see ``Decision.status``.

``ActionError(status, reason, message)``: ``status`` is the HTTP status (None when no response came
back), ``reason`` the Kubernetes Status reason ("AlreadyExists", "Conflict", "Forbidden", "Timeout",
...), ``message`` the error text (it ends up in a condition message; it must not hold a secret).

``Decision`` fields: ``actions``; ``status`` (the complete new ``.status`` or None); ``requeue_after``;
``ready``; ``reasons`` (condition type -> reason); ``summary`` (for the module's return: name,
namespace, cluster, ready, reasons, one line per action, status_changed, changed,
requeue_after_seconds, password_generation; after a failure also failed_action and error);
``context`` (only for ``on_action_failure``).

No action's ``repr`` shows a manifest (Secrets carry passwords); ``Decision.summary`` never holds one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import OrderStatus, StatusFields
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rawobj import dig, text

LEG_ORDER = "order"          # the order object itself (finalizer)
LEG_USER = "user"            # K-ORC User, probe, password Secrets
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


Action = Union[Create, Apply, MergePatch, ClearProgressing, Delete]


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


@dataclass(frozen=True)
class Claim:
    """A status fact that holds only if the action at ``index`` runs (the edge stops at a failure).

    ``on_action_failure`` puts back ``fields`` (and ``delivery``, when set) for every claim whose
    action did not run.
    """

    index: int
    fields: StatusFields
    delivery: Optional[Verdict] = None


@dataclass(frozen=True)
class DecisionContext:
    """What ``on_action_failure`` needs to rewrite the status; not for the edge."""

    now: datetime
    generation: int
    secret_name: str  # the delivered Secret's name, reported once it carries the current password
    previous: OrderStatus
    fields: StatusFields
    user: Verdict
    delivery: Verdict
    claims: Tuple[Claim, ...] = ()
    requeue_cap: Optional[timedelta] = None  # never come back later than this (a due rotation)
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
