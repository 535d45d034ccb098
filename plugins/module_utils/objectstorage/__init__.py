# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The pure core of the object-storage kinds: snapshot in, decision out, no I/O.

Per-bucket credentials with two key slots on Ceph RGW accounts (docs/object-storage.md). Entry points:
``store.decide_store``, ``account.decide_account``, ``credential.decide_credential`` (each with
``on_action_failure``), in that order within a pass. The contract with the edge: ``snapshot.py`` (input),
``gateway.py`` and ``orders/plan.py`` (output). What every order kind shares lives in ``orders/``.

| Row of docs/object-storage.md "Design rules and their tests"    | File |
|-----------------------------------------------------------------|------|
| 1. ObjectStore: readiness causes, probe cadence                 | store.py (rgw/readiness.py classifies) |
| 2. Account per tenant and store; id derived; 409 is success      | account.py, naming.py |
| 2.2 New account: own root, rotated at once                      | account.py (``_create_key_user``, ``_rotated_verdict``) |
| 2.3 Migration: adopt the legacy user, only on ``migrate``        | account.py (``_set_up``) |
| 2.4 Shared account; ``perBucketCredentials`` only at first setup | account.py (``missing_account``, ``accounts_to_create``) |
| 2.4 A recorded scope never changes by an edit (``EditRefused``)  | account.py (``decide_account``) |
| 2.5 Non-downgrade                                                | account.py (``decide_account``, ``_gateway_error``) |
| 2 The tenant namespace's uid binds the account (``NamespaceReplaced``) | account.py, passes/objectstorage.py (reads it) |
| 2.6 Root key rotation; refused while legacy buckets remain      | account.py (``_stage``); a migrated bucket is never legacy again |
| 2.6 Scheduled root key rotation with overlap (opt-in)           | rootschedule.py, rotationspec.py, account.py (``_stage``, ``_overlap``) |
| 3. BucketCredential admission, one order per bucket             | credential.py (``decide_credential``, ``_holder``) |
| 3. The holder keeps its bucket; what it holds is recorded        | claim.py (``status.admittedAs``), credential.py (``_holder``) |
| 3. A missing store and a store that does not admit answer alike  | credential.py (``_no_store``) |
| 3. IAM user, inline policy, bucket policy from both inputs      | credential.py (``_bucket``, ``_ensure_bucket``), policy.py |
| 3. Slots: issue, overlap, revoke last, last key protected       | slots.py, credential.py |
| 3. Scheduled rotation with overlap; spec.slots never edited     | schedule.py, rotationspec.py, credential.py (``_schedule``) |
| 3. A removed slot is revoked in that pass; the key limit of 4    | slots.py (``revoke_first``), credential.py (``_bucket``) |
| 3. Revoke after consumers rolled out (opt-in, with a deadline)   | consumers.py, rollout.py, credential.py (``_rollout_gate``) |
| 3. Policies the order did not write are drift, never removed     | credential.py (``_policy_drift``) |
| 3. Untracked keys reported, never deleted                       | slots.py, credential.py |
| 3. Delivered Secret ``<name>-s3``, backup first                  | credential.py (``_deliver``; orders/backup.py, orders/delivery.py) |
| 3. Shared account: the account's one key, scope Account         | credential.py (``_shared``) |
| 3. Deletion: keys, policy, grant, user, children; bucket stays  | credential.py (``tear_down``) |
| 3. Deletion never leaves a live key (confirmed, from the record) | credential.py (``tear_down``, ``_revoke_by_admin``) |
| 3. Every action raises an Event                                 | account.py, credential.py (``RecordEvent``) |
| 4. No key in any log, event, condition, diff or error           | gateway.py (reprs), k8s/redact.py, rgw/credentials.py |
| Spec parsing without trusting admission                         | spec.py |
| Condition types and reasons                                     | reasons.py |
"""
