# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The KeystoneUser delivery leg: back the credentials up first, then write the Secret beside the order.

docs/reconciler.md "Backup first, then delivery"; docs/keystoneuser-crd.md, the DeliveryReady rows of
"Conditions". The backup and the delivered-Secret rules every kind shares are in ``orders.backup`` and
``orders.delivery``. In order:

1. the user must be provisioned -> else WaitingForServiceAccounts;
2. an auth URL must apply to the order's cluster (``authurl``) -> else KeystoneNotPublished;
3. the password of the current generation must be readable -> else WaitingForServiceAccounts;
4. the Secrets beside the order must have been readable -> else DeliveryError with the error text;
5. backup first: the source Secret holds the flat document, the PushSecret pushes it to
   ``openstack/keystone/<cp ns>/<name>-<hash>-user/service-accounts/credentials`` and is stamped
   with the document's digest; BackupNotSynced until ESO proves a push of *this* document;
6. the delivered Secret: created when missing; DeliveryRefused when a Secret of that name is not
   controlled by the order (left unchanged); repaired by server-side apply when a managed key
   (``clouds.yaml``, ``password``), a label, a ``spec.secretTemplate`` entry or the owner reference differs --
   keys others added stay.

``secretName``/``secretKeys`` are reported only while the live Secret carries the current password.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.authurl import resolve_auth_url
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.cloudsyaml import render_clouds_yaml
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import DELIVERY_READY
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.manifests import (
    PUSH_HASH_ANNOTATION,
    desired_delivered_secret,
    source_document,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import SECRET_KEYS
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.passcontext import PassContext
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.provision import UserLeg
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    BACKUP_NOT_SYNCED,
    DELIVERED,
    DELIVERY_ERROR,
    DELIVERY_REFUSED,
    KEYSTONE_NOT_PUBLISHED,
    WAITING_FOR_SERVICE_ACCOUNTS,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import DELIVERED as DELIVERED_PART
from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.backup import BackupTarget, write_backup
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.orders.consent import describe_cluster
from ansible_collections.c5c3.orders.plugins.module_utils.orders.delivery import (
    DeliveredSecret,
    carries,
    refused,
    write_delivered,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import Outcome
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import templated


@dataclass(frozen=True)
class DeliveryLeg:
    verdict: Verdict
    delivered: bool  # report secretName/secretKeys


def backup_target(ctx: PassContext) -> BackupTarget:
    names = ctx.names
    return BackupTarget(namespace=names.cp_namespace, source=names.source, pushsecret=names.backup,
                        remote_key=names.remote_key, labels=ctx.labels, hash_annotation=PUSH_HASH_ANNOTATION)


def deliver(ctx: PassContext, out: Outcome, user: UserLeg) -> DeliveryLeg:
    live = ctx.snapshot.delivered
    uid = ctx.spec.identity.uid
    carried = carries(live, uid, "password", user.password)
    if not user.provisioned:
        return DeliveryLeg(Verdict(False, WAITING_FOR_SERVICE_ACCOUNTS,
                                   "the user is not provisioned yet"), carried)
    cp, names, spec = ctx.cp, ctx.names, ctx.spec
    endpoint = resolve_auth_url(cp, ctx.cluster, ctx.snapshot.keystone_internal_url)
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
    read_failure = ctx.snapshot.read_failures.get(DELIVERED_PART)
    if read_failure:
        out.come_back(requeue.ERROR_RETRY)
        return DeliveryLeg(Verdict(False, DELIVERY_ERROR, read_failure), carried)

    clouds_yaml = render_clouds_yaml(cp.cloud_name, endpoint.auth_url, spec.user_name, user.password,
                                     cp.admin_domain_name, cp.region, endpoint.endpoint_type)
    document = source_document(user.password, spec.user_name, cp.admin_domain_name, endpoint.auth_url,
                               cp.region, clouds_yaml)

    # Backup first.
    push = write_backup(out, backup_target(ctx), ctx.children.source, ctx.children.backup, document,
                        ctx.store.name, "document")
    if push is None:
        out.come_back(requeue.PROGRESS_ESO)
        return DeliveryLeg(Verdict(False, BACKUP_NOT_SYNCED, (
            f"wrote the current document; waiting for ESO to push it to OpenBao path {names.remote_key}")), carried)
    if not push.fresh:
        out.come_back(requeue.PROGRESS_ESO)
        return DeliveryLeg(Verdict(False, BACKUP_NOT_SYNCED, push.message), carried)

    # Then the Secret beside the order.
    where = f"Secret {spec.identity.namespace}/{names.delivered}"
    if refused(live, uid):
        out.come_back(requeue.REFUSAL)
        return DeliveryLeg(Verdict(False, DELIVERY_REFUSED, (
            f"{where} exists and is not owned by this order; it is left unchanged")), False)
    manifest = desired_delivered_secret(names, ctx.delivered_labels, uid, clouds_yaml, user.password)
    desired = DeliveredSecret(templated(manifest, spec.secret_template), uid, SECRET_KEYS, ctx.cluster)
    delivered = Verdict(True, DELIVERED, f"{where} carries password generation {user.fields.password_generation}")
    index = write_delivered(out, live, desired)
    if index is not None:
        # Delivered holds only if that write runs; otherwise the Secret is as it was.
        out.claim(index, replace(user.fields, delivered=carried), {DELIVERY_READY: Verdict(
            False, WAITING_FOR_SERVICE_ACCOUNTS, f"{where} does not carry the current password yet")})
    return DeliveryLeg(delivered, True)
