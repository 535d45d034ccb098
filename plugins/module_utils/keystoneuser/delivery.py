"""The delivery leg: back the credentials up first, then write the Secret beside the order.

Spec: "Delivered Secret contract" and the DeliveryReady rows of "Conditions"; upstream facts
sections 3, 4 and 11 (deliverCredentials). In order:

1. the user must be provisioned -> else WaitingForServiceAccounts;
2. an auth URL must apply to the order's cluster (``authurl``) -> else KeystoneNotPublished;
3. the password of the current generation must be readable -> else WaitingForServiceAccounts;
4. backup first: the source Secret holds the flat document, the PushSecret pushes it to
   ``openstack/keystone/<cp ns>/<name>-<hash>-user/service-accounts/credentials`` and is stamped
   with the document's digest; BackupNotSynced until ESO proves a push of *this* document (``eso``);
5. the delivered Secret: created when missing; DeliveryRefused when a Secret of that name is not
   controlled by the order (left unchanged); repaired by server-side apply when a managed key
   (``clouds.yaml``, ``password``), a label or the owner reference differs -- keys others added stay.

``secretName``/``secretKeys`` are reported only while the live Secret carries the current password.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.authurl import resolve_auth_url
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.cloudsyaml import render_clouds_yaml
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.consent import describe_cluster
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.drift import covers
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.eso import document_digest, push_freshness
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.manifests import (
    desired_delivered_secret,
    desired_pushsecret,
    desired_source,
    source_document,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import carries_labels
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import SECRET_KEYS
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.outcome import Outcome
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.passcontext import PassContext
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.plan import (
    LEG_BACKUP,
    LEG_DELIVERED,
    Apply,
    Create,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.provision import UserLeg
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rawobj import (
    is_deleting,
    name_of,
    owner_uids,
    secret_strings,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    BACKUP_NOT_SYNCED,
    DELIVERED,
    DELIVERY_REFUSED,
    KEYSTONE_NOT_PUBLISHED,
    WAITING_FOR_SERVICE_ACCOUNTS,
)

MANAGEMENT = ""


@dataclass(frozen=True)
class DeliveryLeg:
    verdict: Verdict
    delivered: bool  # report secretName/secretKeys


def is_owned(secret: Optional[Mapping[str, Any]], order_uid: str) -> bool:
    """Owned = a controller owner reference carrying the order's uid."""
    return secret is not None and bool(order_uid) and order_uid in owner_uids(secret)


def carries_password(ctx: PassContext, password: Optional[str]) -> bool:
    """The live delivered Secret is ours and carries ``password``."""
    live = ctx.snapshot.delivered
    return password is not None and is_owned(live, ctx.spec.identity.uid) \
        and secret_strings(live).get("password") == password


def needs_repair(live: Mapping[str, Any], desired: Mapping[str, Any], order_uid: str) -> bool:
    have, want = secret_strings(live), secret_strings(desired)
    if any(have.get(key) != want[key] for key in SECRET_KEYS):
        return True
    return not carries_labels(live, desired["metadata"]["labels"]) or not is_owned(live, order_uid)


def deliver(ctx: PassContext, out: Outcome, user: UserLeg) -> DeliveryLeg:
    carried = carries_password(ctx, user.password)
    if not user.provisioned:
        return DeliveryLeg(Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS,
                                   "the user is not provisioned yet"), carried)
    cp, names, spec = ctx.cp, ctx.names, ctx.spec
    endpoint = resolve_auth_url(cp, ctx.cluster)
    if endpoint is None:
        out.come_back(requeue.REFUSAL)
        return DeliveryLeg(Verdict(False, KEYSTONE_NOT_PUBLISHED, (
            f"the order lives on {describe_cluster(ctx.cluster)}, which cannot reach the in-cluster Keystone "
            f"Service, and ControlPlane {cp.namespace}/{cp.name} publishes neither "
            "spec.services.keystone.publicEndpoint nor a gateway hostname")), carried)
    if user.password is None:
        out.come_back(requeue.PROGRESS_KORC)
        return DeliveryLeg(Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS, (
            f"the password of generation {user.fields.password_generation} "
            f"(Secret {names.password(user.fields.password_generation)}) is not available")), carried)

    clouds_yaml = render_clouds_yaml(cp.cloud_name, endpoint.auth_url, spec.user_name, user.password,
                                     cp.admin_domain_name, cp.region, endpoint.endpoint_type)
    document = source_document(user.password, spec.user_name, cp.admin_domain_name, endpoint.auth_url,
                               cp.region, clouds_yaml)
    digest = document_digest(document)

    # Backup first.
    wrote = _write_backup_object(ctx, out, ctx.children.source,
                                 desired_source(names, ctx.labels, document), "the document the backup pushes")
    wrote = _write_backup_object(ctx, out, ctx.children.backup,
                                 desired_pushsecret(names, ctx.labels, _store_name(ctx), ctx.snapshot.store_kind,
                                                    digest), "push the document to OpenBao") or wrote
    if wrote:
        out.come_back(requeue.PROGRESS_ESO)
        return DeliveryLeg(Verdict(False, BACKUP_NOT_SYNCED, (
            f"wrote the current document; waiting for ESO to push it to OpenBao path {names.remote_key}")), carried)
    state = push_freshness(ctx.children.backup, digest, names.remote_key)
    if not state.fresh:
        out.come_back(requeue.PROGRESS_ESO)
        return DeliveryLeg(Verdict(False, BACKUP_NOT_SYNCED, state.message), carried)

    # Then the Secret beside the order.
    live = ctx.snapshot.delivered
    desired = desired_delivered_secret(names, ctx.delivered_labels, spec.identity.uid, clouds_yaml, user.password)
    where = f"Secret {spec.identity.namespace}/{names.delivered}"
    if live is not None and not is_owned(live, spec.identity.uid):
        out.come_back(requeue.REFUSAL)
        return DeliveryLeg(Verdict(False, DELIVERY_REFUSED, (
            f"{where} exists and is not owned by this order; it is left unchanged")), False)
    delivered = Verdict(True, DELIVERED, f"{where} carries password generation {user.fields.password_generation}")
    if live is None:
        index = out.act(Create(desired, ctx.cluster, LEG_DELIVERED, "deliver the credentials"))
    elif needs_repair(live, desired, spec.identity.uid):
        index = out.act(Apply(desired, ctx.cluster, LEG_DELIVERED, "repair the delivered credentials"))
    else:
        return DeliveryLeg(delivered, True)
    # Delivered holds only if that write runs; otherwise the Secret is as it was.
    out.claim(index, replace(user.fields, delivered=carried), Verdict(
        False, WAITING_FOR_SERVICE_ACCOUNTS, f"{where} does not carry the current password yet"))
    return DeliveryLeg(delivered, True)


def _store_name(ctx: PassContext) -> str:
    return name_of(ctx.snapshot.secret_store) or ctx.cp.secret_store_name


def _write_backup_object(ctx: PassContext, out: Outcome, live: Optional[Mapping[str, Any]],
                         desired: Mapping[str, Any], why: str) -> bool:
    """Create or re-apply a backup object unless the live one already carries it; True = wrote."""
    if live is None:
        out.act(Create(desired, MANAGEMENT, LEG_BACKUP, why))
        return True
    if is_deleting(live):
        return True  # gone soon; created again then -- no push can be proven meanwhile
    if desired["kind"] == "Secret":
        have, want = secret_strings(live), secret_strings(desired)
        current = all(have.get(key) == value for key, value in want.items())
        current = current and carries_labels(live, desired["metadata"]["labels"])
    else:
        current = covers(live, {"metadata": desired["metadata"], "spec": desired["spec"]})
    if current:
        return False
    out.act(Apply(desired, MANAGEMENT, LEG_BACKUP, why))
    return True
