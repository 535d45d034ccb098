"""The pure core of the KeystoneUser reconcile pass: snapshot in, decision out, no I/O.

Entry point: ``reconcile.reconcile(snapshot) -> plan.Decision``; ``reconcile.on_action_failure``
rewrites a decision whose action failed. The contract with the I/O edge is in ``snapshot.py``
(input) and ``plan.py`` (output).

Where each part of the spec (the KeystoneUser CRD reference) is implemented:

| Spec section / rule                                   | File            |
|-------------------------------------------------------|-----------------|
| Spec, defaults, Defaulting and Validation Summary     | spec.py, durations.py |
| Status fields (read defensively, written whole)       | orderstatus.py, timestamps.py |
| Conditions (lastTransitionTime, bounds, aggregate)    | conditions.py, reasons.py |
| Consent, Orders on a target cluster (admission)       | consent.py, controlplane.py |
| Projected child names, labels, ownership              | naming.py, children.py |
| The desired children and the delivered Secret         | manifests.py, drift.py |
| ServiceAccountCollision: name folding, reserved names | foldnames.py |
| UserReady: probe, managed User, terminal errors       | provision.py, korc.py |
| Latched transport error (unlatch)                     | unlatch.py |
| External-mode classified causes                       | externalmode.py |
| Password rotation (schedule, hold, upgrade)           | rotation.py |
| Delivered Secret contract: backup first, delivery     | delivery.py, eso.py |
| auth_url table, clouds.yaml                           | authurl.py, cloudsyaml.py |
| Cadences (requeue)                                    | requeue.py |
| Deletion Semantics (teardown)                         | teardown.py |
| Kubernetes-level failures of actions                  | failures.py |
| The flow of one pass                                  | reconcile.py (passcontext.py, outcome.py) |
"""
