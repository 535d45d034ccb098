# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The order machinery every order kind shares: pure, snapshot in, decision out, no I/O.

A kind (``keystoneuser/``, ``objectstorage/``) brings its own spec, children and legs; what an order *is* --
admitted or frozen, conditions and their aggregate, the delivered Secret contract, backup first, finalizer and
teardown, the decision the edge carries out -- is defined once, here.

| Rule (docs/keystoneuser-crd.md, docs/reconciler.md)       | File |
|-----------------------------------------------------------|------|
| Consent, orders on a target cluster (admission, freezing) | consent.py, controlplane.py |
| The platform's tenant mark as a pass read it (admission)  | tenantmarks.py |
| The ControlPlane as orders read it (assignments, reserved namespaces, store, Keystone) | controlplane.py |
| Reading metadata and references without trusting admission | identity.py |
| Conditions: sub-conditions, aggregate Ready, transition times, bounds | conditions.py |
| Reasons every kind shares (admission, delivery)           | reasons.py |
| Child prefixes and ownership labels                       | naming.py |
| Ownership by owner-reference uid; Secret manifests        | secrets.py |
| The delivered Secret: SSA, foreign refusal, repair        | delivery.py |
| The delivered Secret's template labels and annotations    | secrettemplate.py |
| Backup first through ESO; the fresh-push gate             | backup.py, secretstore.py |
| The namespace's own SecretStore only                      | secretstore.py |
| Finalizer; patient and fail-open teardown                 | teardown.py |
| Decision, actions, claims (the contract with the edge)    | plan.py |
| Assembling a decision; the summary; OrderResult           | outcome.py, summary.py |
| What a failed action means for the conditions             | failures.py |
| Cadences (requeue)                                        | requeue.py |
| Defensive raw-object reading, durations, timestamps       | rawobj.py, durations.py, timestamps.py, drift.py |
"""
