# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The pure core of the KeystoneUser reconcile pass: snapshot in, decision out, no I/O.

Entry point: ``reconcile.reconcile(snapshot) -> orders.plan.Decision``; ``reconcile.on_action_failure``
rewrites a decision whose action failed. The contract with the I/O edge is in ``snapshot.py`` (input) and
``orders/plan.py`` (output). What every order kind shares lives in ``orders/`` (its own table names the files).

Where each section of docs/keystoneuser-crd.md and docs/reconciler.md is implemented:

| Section / rule                                        | File |
|-------------------------------------------------------|------|
| Spec, Defaults, Admission rules                       | spec.py (orders/identity.py, orders/durations.py) |
| Status fields (read defensively, written whole)       | orderstatus.py (orders/outcome.py) |
| What the order was admitted as (recorded identity)    | record.py |
| Conditions: UserReady, DeliveryReady, Ready           | conditions.py, reasons.py (orders/conditions.py) |
| Consent, orders on a target cluster (admission)       | orders/consent.py, orders/controlplane.py |
| Where the children live: names, labels, ownership     | naming.py, children.py (orders/naming.py) |
| The desired children and the delivered Secret         | manifests.py |
| ServiceAccountCollision: name folding, reserved names | foldnames.py, collation.py |
| ServiceAccountCollision: one owner per Keystone user  | collision.py |
| UserReady: probe, managed User, terminal errors       | provision.py, korc.py |
| Latched transport error (unlatch)                     | unlatch.py |
| External-mode classified causes                       | externalmode.py |
| Password rotation (schedule, hold, upgrade)           | rotation.py |
| Backup first, then delivery                           | delivery.py (orders/backup.py, orders/delivery.py) |
| The auth URL, the operator's override; clouds.yaml    | authurl.py, cloudsyaml.py |
| Requeue cadences                                      | orders/requeue.py |
| Teardown                                              | teardown.py (orders/teardown.py) |
| Kubernetes-level failures of actions                  | failures.py (orders/failures.py) |
| The flow of one pass; assembling the decision         | reconcile.py, decision.py, passcontext.py |
"""
