# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The user leg: from an admitted order to a Keystone user holding the current password.

docs/keystoneuser-crd.md, the UserReady rows of "Conditions"; docs/reconciler.md
"Provisioning and the collision probe" and "Password rotation". In order:

1. a reserved name (the admin user, the built-in accounts; folded) -> ServiceAccountCollision,
   nothing created;
2. the ControlPlane namespace's secret store must be Ready -> else SecretStoreNotReady;
3. no managed User of ours yet: the collision probe (an unmanaged import by name in the admin
   domain) decides. Available at its generation (or several matches) -> ServiceAccountCollision;
   the no-match marker -> create the password Secret and the managed User, delete the probe;
   otherwise ProbingForCollision. The order never takes an existing user over;
4. a managed User of ours exists: a leftover probe is deleted; the generation to hold is planned
   (``rotation``); its password Secret is created once; the User is pointed at it;
5. a latched transport error is cleared first (``unlatch``); a terminal error is ServiceAccountsFailed;
6. until K-ORC has applied the current Secret: WaitingForServiceAccounts (against an External
   Keystone, the classified cause instead);
7. applied: UserProvisioned with ``userID`` and ``passwordGeneration``; older password Secrets are
   deleted now and never before.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Dict, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import korc, unlatch
from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.orders.drift import covers
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.collision import settle_wait, taken_by_another
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import USER_READY
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import APP_CREDENTIALS
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.externalmode import classify, external_message
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.foldnames import is_reserved
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.manifests import (
    KORC_API_VERSION,
    desired_password_secret,
    desired_probe,
    desired_user,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrets import carries_labels
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import StatusFields
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import Outcome
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.passcontext import PassContext
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    LEG_USER,
    Apply,
    ClearProgressing,
    Create,
    Delete,
    MergePatch,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    is_deleting,
    name_of,
    namespace_of,
    resource_version_of,
    secret_strings,
    uid_of,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    PROBING_FOR_COLLISION,
    SECRET_STORE_NOT_READY,
    SERVICE_ACCOUNT_COLLISION,
    SERVICE_ACCOUNTS_FAILED,
    USER_PROVISIONED,
    WAITING_FOR_SERVICE_ACCOUNTS,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rotation import (
    floor_generation,
    next_rotation,
    plan_generation,
)

MANAGEMENT = ""  # every child of the user leg lives on the management cluster


@dataclass(frozen=True)
class UserLeg:
    verdict: Verdict
    provisioned: bool           # UserReady is True (the delivery leg may run)
    fields: StatusFields        # userID, passwordGeneration, last/next rotation (delivered: see delivery)
    password: Optional[str]     # the password of fields.password_generation, when readable


def provision_user(ctx: PassContext, out: Outcome) -> UserLeg:
    carried = _carried_fields(ctx)
    if is_reserved(ctx.spec.user_name, ctx.cp.admin_user_name):
        return _stop(ctx, out, carried, Verdict(
            False, SERVICE_ACCOUNT_COLLISION,
            f"user name {ctx.spec.user_name!r} is reserved: ControlPlane {ctx.cp.namespace}/{ctx.cp.name} "
            "creates it in its admin domain itself (its admin user or a built-in service account); "
            "names are compared ignoring case and accents"), requeue.REFUSAL)
    if taken_by_another(ctx.spec.identity, ctx.cluster, ctx.children.user is not None, ctx.cp,
                        ctx.snapshot.rivals, ctx.snapshot.owners, ctx.snapshot.tenant_marks):
        return _stop(ctx, out, carried, Verdict(
            False, SERVICE_ACCOUNT_COLLISION,
            f"user name {ctx.spec.user_name!r} is taken on ControlPlane {ctx.cp.namespace}/{ctx.cp.name} by an "
            "order that holds it or was created earlier (names are compared as Keystone compares them, ignoring "
            "case and accents); the order never takes a user over"), requeue.REFUSAL)
    wait = settle_wait(ctx.spec.identity, ctx.snapshot.orders_listed_at) if ctx.children.user is None else None
    if wait is not None:
        return _stop(ctx, out, carried, Verdict(
            False, PROBING_FOR_COLLISION,
            f"waiting {max(1, int(wait.total_seconds() + 0.999))}s until every order created before this one is "
            "visible to every replica, so that one order alone claims the user name"), wait)
    if not ctx.store.ready:
        return _stop(ctx, out, carried, Verdict(False, SECRET_STORE_NOT_READY, ctx.store.message),
                     requeue.STORE_NOT_READY)
    if ctx.children.user is None:
        return _probe(ctx, out, carried)
    return _managed(ctx, out, carried, ctx.children.user)


# -- helpers shared by the steps ------------------------------------------------------------------

def _carried_fields(ctx: PassContext) -> StatusFields:
    """The status fields as they stand before this pass changes anything (next re-derived)."""
    status = ctx.status
    return StatusFields(
        user_id=status.user_id,
        password_generation=status.password_generation,
        last_rotation=status.last_rotation,
        next_rotation=next_rotation(status.last_rotation, ctx.spec.rotation_interval, status.password_generation),
        secret_name=ctx.names.delivered,
    )


def _reads_provisioned(ctx: PassContext) -> bool:
    """The order's status as read says UserReady True: consumers take its delivered password as current."""
    return any(c.get("type") == USER_READY and c.get("status") == "True" for c in ctx.status.conditions)


def _password_text(ctx: PassContext, generation: int) -> Optional[str]:
    secret = ctx.children.passwords.get(generation)
    if secret is None:
        return None
    return secret_strings(secret).get("password") or None


def _stop(ctx: PassContext, out: Outcome, fields: StatusFields, verdict: Verdict, wait: Optional[timedelta]) -> UserLeg:
    out.come_back(wait)
    return UserLeg(verdict, False, fields, _password_text(ctx, fields.password_generation))


def _target(obj: Mapping[str, Any]) -> Dict[str, Any]:
    return {"kind": "User", "api_version": KORC_API_VERSION, "namespace": namespace_of(obj),
            "name": name_of(obj), "cluster": MANAGEMENT}


def _delete(obj: Mapping[str, Any], kind: str, api_version: str, why: str) -> Delete:
    return Delete(kind=kind, api_version=api_version, namespace=namespace_of(obj), name=name_of(obj),
                  cluster=MANAGEMENT, leg=LEG_USER, why=why, uid=uid_of(obj) or None)


def _ensure_password(ctx: PassContext, out: Outcome, generation: int) -> None:
    """Create the generation's password Secret once; an existing one is never edited."""
    if generation in ctx.children.passwords:
        return
    secret = desired_password_secret(ctx.names, ctx.labels, generation, ctx.snapshot.new_password())
    out.act(Create(secret, MANAGEMENT, LEG_USER, f"password generation {generation}"))


def _wait_verdict(ctx: PassContext, obj: Mapping[str, Any], reason: str, message: str) -> Verdict:
    """A wait; against an External Keystone the classified cause of a not-Available object instead."""
    if ctx.cp.external and not korc.is_available(obj):
        detail = korc.failure_message(obj)
        cause = classify(detail)
        if cause is not None:
            return Verdict(False, cause, external_message(
                ctx.cp.external_auth_url, detail, cause, ctx.cp.external_endpoint_type, ctx.cp.region))
    return Verdict(False, reason, message)


def _failed(ctx: PassContext, out: Outcome, obj: Mapping[str, Any]) -> Verdict:
    """ServiceAccountsFailed for a terminal error; a latched transport error is handed back first."""
    message = korc.terminal_error(obj) or ""
    where = f"K-ORC User {namespace_of(obj)}/{name_of(obj)}"
    if not korc.is_latched_transport_error(obj):
        out.come_back(requeue.REFUSAL)
        return Verdict(False, SERVICE_ACCOUNTS_FAILED, f"{where} reports a terminal error: {message}")
    due = unlatch.due_at(obj, ctx.now)
    if due <= ctx.now:
        target = _target(obj)
        out.act(ClearProgressing(leg=LEG_USER, why="hand a latched transport error back to K-ORC",
                                 resource_version=resource_version_of(obj), **target))
        out.act(MergePatch(leg=LEG_USER, why="record when the transport error was unlatched",
                           patch=unlatch.stamp_patch(ctx.now), resource_version=None, **target))
        out.come_back(requeue.PROGRESS_KORC)
        note = "cleared the latched transport error so K-ORC retries"
    else:
        out.come_back(requeue.until(due, ctx.now))
        note = f"the latched transport error is cleared again at {timestamps.render(due)}"
    return Verdict(False, SERVICE_ACCOUNTS_FAILED, f"{where} reports a terminal error: {message} ({note})")


# -- step 3: no managed User yet -------------------------------------------------------------------

def _probe(ctx: PassContext, out: Outcome, fields: StatusFields) -> UserLeg:
    probe = ctx.children.probe
    looking = (f"Keystone user {ctx.spec.user_name!r} in domain {ctx.cp.admin_domain_name!r}")
    if probe is None:
        out.act(Create(desired_probe(ctx.names, ctx.labels, ctx.cp, ctx.spec.user_name), MANAGEMENT, LEG_USER,
                       "probe Keystone for an existing user of this name"))
        return _stop(ctx, out, fields, Verdict(False, PROBING_FOR_COLLISION,
                                               f"probing for an existing {looking}"), requeue.PROGRESS_PROBE)
    if is_deleting(probe):
        return _stop(ctx, out, fields, Verdict(False, PROBING_FOR_COLLISION,
                                               f"waiting for the previous probe {name_of(probe)} to go"),
                     requeue.PROGRESS_PROBE)
    if korc.is_available_at_generation(probe) or korc.found_several(probe):
        return _stop(ctx, out, fields, Verdict(
            False, SERVICE_ACCOUNT_COLLISION,
            f"{looking} already exists and was not created by this order; the order never takes a user over"),
            requeue.REFUSAL)
    if korc.found_nothing(probe):
        generation = floor_generation(ctx.spec.password_generation, ctx.status.password_generation,
                                      ctx.children.passwords)
        _ensure_password(ctx, out, generation)
        user = desired_user(ctx.names, ctx.labels, ctx.cp, ctx.spec.user_name, generation)
        out.act(Create(user, MANAGEMENT, LEG_USER, "the probe found no such user: create it"))
        out.act(_delete(probe, "User", KORC_API_VERSION, "the probe has answered"))
        return _stop(ctx, out, fields, Verdict(
            False, WAITING_FOR_SERVICE_ACCOUNTS,
            f"creating {looking} through K-ORC User {ctx.names.user}"), requeue.PROGRESS_KORC)
    if korc.terminal_error(probe) is not None:
        verdict = _failed(ctx, out, probe)
        return UserLeg(verdict, False, fields, _password_text(ctx, fields.password_generation))
    verdict = _wait_verdict(ctx, probe, PROBING_FOR_COLLISION, f"probing for an existing {looking}")
    return _stop(ctx, out, fields, verdict, requeue.PROGRESS_PROBE)


# -- steps 4-7: the managed User exists ------------------------------------------------------------

def _managed(ctx: PassContext, out: Outcome, fields: StatusFields, user: Mapping[str, Any]) -> UserLeg:
    names, spec, now = ctx.names, ctx.spec, ctx.now
    where = f"K-ORC User {names.cp_namespace}/{names.user}"
    if ctx.children.probe is not None and not is_deleting(ctx.children.probe):
        out.act(_delete(ctx.children.probe, "User", KORC_API_VERSION, "the managed User exists: probe not needed"))
    if is_deleting(user):
        return _stop(ctx, out, fields, Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS,
                                               f"{where} is being deleted; it is created again once it is gone"),
                     requeue.PROGRESS_KORC)

    # What K-ORC last applied, Available or not: a lost Secret of that generation must never be re-created.
    applied = names.password_generation(korc.applied_password_ref(user))
    plan = plan_generation(spec.password_generation, ctx.status.password_generation, sorted(ctx.children.passwords),
                           applied, ctx.status.last_rotation, spec.rotation_interval, now,
                           ctx.snapshot.app_credentials, spec.identity.name,
                           ctx.snapshot.read_failures.get(APP_CREDENTIALS, ""))
    generation = plan.generation
    _ensure_password(ctx, out, generation)

    desired = desired_user(names, ctx.labels, ctx.cp, spec.user_name, generation)
    if not (covers(user.get("spec"), desired["spec"]) and carries_labels(user, desired["metadata"]["labels"])):
        repointing = korc.password_ref(user) != names.password(generation)
        why = f"point the User at password generation {generation}" + (f": {plan.cause}" if plan.cause else "")
        if repointing and _reads_provisioned(ctx):
            # Announce first: the order stops reading Ready before Keystone's password changes. The User is pointed
            # at the new password only once a status saying so was written (a later pass), so an order never reads
            # Ready with a password K-ORC has already replaced -- whatever stops the pass between the two writes.
            return _stop(ctx, out, fields, Verdict(
                False, WAITING_FOR_SERVICE_ACCOUNTS,
                f"rotating {where} to password generation {generation}" + (f": {plan.cause}" if plan.cause else "")
                + "; the User is pointed at the new password once this status is written"), requeue.MINIMUM)
        index = out.act(Apply(desired, MANAGEMENT, LEG_USER, why if repointing else "repair the User"))
        if repointing:
            # lastPasswordRotation is set when the User is pointed at a new password -- if it is.
            out.claim(index, fields)
            fields = replace(fields, last_rotation=now, next_rotation=next_rotation(
                now, spec.rotation_interval, fields.password_generation))
        return _stop(ctx, out, fields, Verdict(
            False, WAITING_FOR_SERVICE_ACCOUNTS,
            f"pointed {where} at password Secret {names.password(generation)}; waiting for K-ORC to apply it"),
            requeue.PROGRESS_KORC)

    if korc.terminal_error(user) is not None:
        verdict = _failed(ctx, out, user)
        return UserLeg(verdict, False, fields, _password_text(ctx, fields.password_generation))

    if not korc.has_applied(user, names.password(generation)):
        if not korc.is_available(user):
            message = f"waiting for {where} to become Available: {korc.failure_message(user) or 'no status yet'}"
        else:
            message = (f"waiting for K-ORC to apply password generation {generation} "
                       f"(Secret {names.password(generation)}) to {where}")
        return _stop(ctx, out, fields, _wait_verdict(ctx, user, WAITING_FOR_SERVICE_ACCOUNTS, message),
                     requeue.PROGRESS_KORC)

    # Applied: K-ORC set this generation's password in Keystone.
    last = fields.last_rotation
    if generation > ctx.status.password_generation or last is None:
        last = now  # first provision, a rotation applied, or an order from before the schedule
    for old in sorted(g for g in ctx.children.passwords if g < generation):
        secret = ctx.children.passwords[old]
        if not is_deleting(secret):
            out.act(_delete(secret, "Secret", "v1", f"generation {generation} is applied; {old} is not needed"))
    fields = StatusFields(
        user_id=korc.user_id(user),
        password_generation=generation,
        last_rotation=last,
        next_rotation=next_rotation(last, spec.rotation_interval, generation),
        secret_name=names.delivered,
    )
    message = (f"Keystone user {spec.user_name!r} exists with id {korc.user_id(user)} and holds password "
               f"generation {generation}")
    if plan.held_by:
        message += (f"; the scheduled rotation due at {timestamps.render(plan.due_since)} waits for "
                    f"KeystoneApplicationCredential(s) being deleted: {', '.join(plan.held_by)}")
        out.come_back(requeue.REFERENCE_HOLD)
    elif plan.unreadable:
        message += (f"; the scheduled rotation due at {timestamps.render(plan.due_since)} waits until the "
                    f"KeystoneApplicationCredentials naming the order can be read: {plan.unreadable}")
        out.come_back(requeue.ERROR_RETRY)
    return UserLeg(Verdict(True, USER_PROVISIONED, message), True, fields, _password_text(ctx, generation))
