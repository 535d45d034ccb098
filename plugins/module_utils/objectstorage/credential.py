# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The BucketCredential: a bucket's own IAM user, its two key slots, backup first, the Secret beside the order.

docs/object-storage.md "Design rules and their tests" (rows 3); docs/bucketcredential-crd.md. A pass over one
order, in order:

1. read the order; being deleted -> ``teardown``; unreadable -> both InvalidSpec (frozen);
2. the store must exist, and its ControlPlane's ``spec.namespaceAssignments`` must admit the order exactly as a
   KeystoneUser is admitted (``orders.consent``); a missing store reads StoreNotReady with the tenant's generic
   message (never which stores exist);
3. the finalizer ``c5c3.io/bucketcredential-teardown`` first; a store that is not ready -> StoreNotReady, generic
   (the cause is on the ObjectStore, for the platform);
4. one order per bucket: an earlier order naming the same store and bucket holds it (``BucketCredentialExists``
   for the same tenant, ``BucketOwnedElsewhere`` otherwise); no listed slot -> ``LastKeyProtected``;
5. the tenant's account must be set up (``account``); a *shared* account delivers its one key
   (``credentialScope: Account``, ``SharedAccountCredential``); once the account is migrated the next pass gives
   the bucket its own credential and rewrites the Secret: a migrated account's root key is never delivered;
6. bucket scope: the bucket is created if missing (a bucket of another account: ``BucketOwnedElsewhere``); the IAM
   user named after the bucket, its inline policy and the bucket policy (rebuilt from public read and the grant,
   ``policy``) are put where they differ; the slots (``slots``): missing keys are issued and persisted at once;
7. backup first (``orders.backup``): the delivered document reaches OpenBao, then the Secret ``<name>-s3`` is
   written (``orders.delivery``: server-side apply, owner reference, foreign Secret refused, repair);
8. only then are retired keys revoked at the gateway (and their Secrets deleted), so a rotation overlaps;
9. untracked keys on the IAM user are reported (status, message, an Event when their number changes).
Every gateway action raises a Kubernetes Event on the order; no key or secret is in any of them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import claim, naming, schedule, slots as keys
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import rollout as rollouts
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.claim import CredentialRecord
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.account import (
    ACCESS_KEY,
    BUCKET,
    SECRET_KEY,
    SHARED_SCOPE,
    AccountView,
    read_account,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.gateway import (
    ACCOUNT,
    ADMIN,
    GatewayCall,
    IssueKey,
    Read,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.policy import (
    bucket_policy,
    granted,
    inline_policy,
    same_policy,
    without_grant,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.reasons import (
    BACKUP_NOT_SYNCED,
    BUCKET_CREDENTIAL_EXISTS,
    BUCKET_OWNED_ELSEWHERE,
    CREDENTIAL_CONDITIONS,
    CREDENTIAL_ERROR,
    CREDENTIAL_ISSUED,
    CREDENTIAL_READY,
    DELIVERED,
    DELIVERY_ERROR,
    DELIVERY_READY,
    DELIVERY_REFUSED,
    GATEWAY_ERROR,
    INVALID_SPEC,
    KEY_LIMIT_REACHED,
    LAST_KEY_PROTECTED,
    NAMESPACE_NOT_ASSIGNED,
    REVOCATION_PENDING,
    SHARED_ACCOUNT_CREDENTIAL,
    STORE_NOT_READY,
    WAITING_FOR_ACCOUNT,
    WAITING_FOR_KEYS,
    WAITING_FOR_ROLLOUT,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.snapshot import (
    CHILDREN,
    DELIVERED as DELIVERED_PART,
    SECRET_STORES,
    CredentialSnapshot,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.spec import CredentialSpec, parse_credential
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.store import StoreView, read_store
from ansible_collections.c5c3.orders.plugins.module_utils.orders import failures, requeue, timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.backup import BackupTarget, write_backup
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict, verdict_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.consent import cluster_refusal, describe_cluster
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import ControlPlaneView, read_control_plane
from ansible_collections.c5c3.orders.plugins.module_utils.orders.delivery import (
    DeliveredSecret,
    carries,
    refused,
    write_delivered,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import (
    OrderIdentity,
    OrderSpecError,
    parse_identity,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import Outcome, build_decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    LEG_BACKUP,
    LEG_CREDENTIAL,
    LEG_DELIVERED,
    LEG_ORDER,
    ActionError,
    Create,
    Decision,
    DecisionContext,
    Delete,
    MergePatch,
    RecordEvent,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    dig,
    is_deleting,
    kind_of,
    labels_of,
    mappings,
    name_of,
    namespace_of,
    secret_strings,
    text,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.reasons import NAMESPACE_NOT_MARKED
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrets import (
    carries_labels,
    is_owned,
    owner_reference,
    secret_manifest,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secretstore import choose_store
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import templated
from ansible_collections.c5c3.orders.plugins.module_utils.orders.teardown import (
    Doomed,
    delete_children,
    finalizer_patch,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import admit_marked

KIND = "BucketCredential"
API_VERSION = "c5c3.io/v1alpha1"
SCOPE_ACCOUNT = "Account"
PROGRESS = timedelta(seconds=2)
WAIT_STORE = timedelta(minutes=1)
SLOT_KEYS = tuple(f"slot{n}-{half}" for n in (1, 2) for half in ("access-key-id", "secret-access-key"))
MANAGED_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", *SLOT_KEYS, "endpoint", "bucket", "region")
GENERIC_STORE_MESSAGE = ("the object store does not offer per-bucket credentials right now; ask the platform "
                         "administrator")


# -- the status ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CredentialFields:
    scope: str = ""
    slots: Tuple[Tuple[int, str, str, int], ...] = ()  # (slot, accessKeyID, created, generation)
    untracked: int = 0
    delivered: bool = False
    secret_name: str = ""
    record: Optional[CredentialRecord] = None
    retiring: Tuple[Tuple[int, str, int], ...] = ()  # (slot, accessKeyID, generation): live, revoked soon
    rotation: Optional[schedule.RotationState] = None  # status.rotation: the schedule's state (schedule.py)
    next_rotation: str = ""  # status.nextRotation
    rollout: Optional[rollouts.RolloutState] = None  # status.rollout: spec.revokeAfterRollout's record (rollout.py)

    def render(self) -> Dict[str, Any]:
        status: Dict[str, Any] = {}
        if self.record is not None:
            status[claim.FIELD] = self.record.render()
        if self.scope:
            status["credentialScope"] = self.scope
        if self.slots:
            status["slots"] = [{"slot": s, "accessKeyID": k, "created": c, "generation": g}
                               for s, k, c, g in self.slots]
        if self.scope:
            status["slotCount"] = len(self.slots)
        created = [c for _s, _k, c, _g in self.slots if c]
        if created:  # the key AWS_* carries (slots.newest): the Key printer column shows its age
            status["newestKeyCreated"] = max(created)
        if self.next_rotation:
            status[schedule.NEXT_ROTATION] = self.next_rotation
        if self.rotation is not None:
            status[schedule.FIELD] = self.rotation.render()
        if self.rollout is not None:
            status[rollouts.FIELD] = self.rollout.render()
        if self.retiring:
            status["retiringKeys"] = [{"slot": s, "accessKeyID": k, "generation": g} for s, k, g in self.retiring]
        if self.untracked:
            status["untrackedKeys"] = self.untracked
        if self.delivered and self.secret_name:
            status["secretName"] = self.secret_name
        return status

    def summary(self) -> Dict[str, Any]:
        return {"scope": self.scope, "slots": [s for s, _k, _c, _g in self.slots]}

    def key_ids(self) -> Set[str]:
        """Every access key id the status says the order holds (current and retiring)."""
        return {k for _s, k, _c, _g in self.slots if k} | {k for _s, k, _g in self.retiring if k}


def _carried(raw: Any, secret_name: str) -> CredentialFields:
    status = dig(raw, "status")
    found = []
    for entry in mappings(dig(status, "slots")):
        slot, generation = entry.get("slot"), entry.get("generation")
        if slot in (1, 2) and isinstance(generation, int) and not isinstance(generation, bool):
            found.append((slot, text(entry.get("accessKeyID")), text(entry.get("created")), generation))
    retiring = []
    for entry in mappings(dig(status, "retiringKeys")):
        slot, generation = entry.get("slot"), entry.get("generation")
        if slot in (1, 2) and isinstance(generation, int) and not isinstance(generation, bool):
            retiring.append((slot, text(entry.get("accessKeyID")), generation))
    untracked = dig(status, "untrackedKeys")
    return CredentialFields(
        scope=text(dig(status, "credentialScope")), slots=tuple(found),
        untracked=untracked if isinstance(untracked, int) and not isinstance(untracked, bool) else 0,
        delivered=bool(text(dig(status, "secretName"))), secret_name=secret_name,
        record=claim.parse_record(raw), retiring=tuple(retiring),
        rotation=schedule.parse_state(dig(status, schedule.FIELD)),
        next_rotation=text(dig(status, schedule.NEXT_ROTATION)) if timestamps.parse(
            dig(status, schedule.NEXT_ROTATION)) else "",
        rollout=rollouts.parse_state(dig(status, rollouts.FIELD)),
    )


# -- one pass ------------------------------------------------------------------------------------------------
class _Pass:
    def __init__(self, snap: CredentialSnapshot, spec: CredentialSpec, store: StoreView, cp: ControlPlaneView,
                 account: AccountView, out: Outcome) -> None:
        self.snap, self.spec, self.store, self.cp, self.account = snap, spec, store, cp, account
        identity = spec.identity
        self.names = naming.credential_names(snap.cluster, identity.namespace, identity.name, store.key[0])
        self.labels = naming.LABELS.child(snap.cluster, identity.namespace, identity.name)
        self.out = out  # holds the finalizer patch decided before the pass got this far
        self.fields = _carried(snap.order, self.names.delivered)
        children = [c for c in snap.children if carries_labels(c, self.labels) and self.names.is_child_name(name_of(c))]
        self.children = children
        self.source = next((c for c in children if kind_of(c) == "Secret" and name_of(c) == self.names.source), None)
        self.pushsecret = next((c for c in children if kind_of(c) == "PushSecret" and name_of(c) == self.names.backup),
                               None)

    @property
    def involved(self) -> Dict[str, str]:
        return _involved(self.snap.order)

    def call(self, op: str, why: str, ok_codes: Tuple[str, ...] = (), **args: Any) -> int:
        return self.out.act(GatewayCall(self.store.key, ACCOUNT, self.account.name, op, args, leg=LEG_CREDENTIAL,
                                        why=why, ok_codes=ok_codes))

    def event(self, reason: str, message: str) -> None:
        self.out.act(RecordEvent(self.involved, reason, message, self.snap.cluster))


def _involved(order: Any) -> Dict[str, str]:
    return {"apiVersion": API_VERSION, "kind": KIND, "namespace": namespace_of(order), "name": name_of(order),
            "uid": text(dig(order, "metadata", "uid"))}


def _decide(snap: CredentialSnapshot, out: Outcome, fields: CredentialFields, credential: Verdict, delivery: Verdict,
            wait: Optional[timedelta], writes_status: bool = True, deleting: bool = False) -> Decision:
    raw = snap.order
    previous = dig(raw, "status") if isinstance(dig(raw, "status"), dict) else {}
    identity: Dict[str, Any] = {"kind": KIND, "name": name_of(raw), "namespace": namespace_of(raw),
                                "cluster": snap.cluster}
    if deleting:
        identity["deleting"] = True
    if snap.cluster:
        wait = requeue.earliest([wait, requeue.TARGET_CLUSTER_MAX])
    context = DecisionContext(
        now=snap.now, generation=dig(raw, "metadata", "generation") if isinstance(
            dig(raw, "metadata", "generation"), int) else 0,
        conditions=CREDENTIAL_CONDITIONS, previous=previous, fields=fields,
        verdicts={CREDENTIAL_READY: credential, DELIVERY_READY: delivery}, identity=identity,
        claims=tuple(out.claims), writes_status=writes_status)
    return build_decision(context, out.actions, requeue.earliest([wait, *out.waits]))


def _previous(raw: Any, condition: str, default: Verdict) -> Verdict:
    return verdict_of(mappings(dig(raw, "status", "conditions")), condition, default)


def _refused(snap: CredentialSnapshot, reason: str, message: str, wait: timedelta, both: bool = True,
             out: Optional[Outcome] = None, fields: Optional[CredentialFields] = None) -> Decision:
    verdict = Verdict(False, reason, message)
    nothing = Verdict(False, WAITING_FOR_KEYS, "no key is delivered yet")
    delivery = verdict if both else _previous(snap.order, DELIVERY_READY, nothing)
    carried = fields if fields is not None else _carried(snap.order, f"{name_of(snap.order)}-s3")
    return _decide(snap, out or Outcome(), carried, verdict, delivery, wait)


def _no_store(snap: CredentialSnapshot, spec: CredentialSpec) -> Decision:
    """A store that does not exist and one whose ControlPlane does not admit the tenant answer alike, so a tenant
    cannot learn which stores exist: the same reason and message, frozen."""
    return _refused(snap, NAMESPACE_NOT_ASSIGNED, (
        f"no object store {spec.store_namespace}/{spec.store_name} serves namespace {spec.identity.namespace!r} "
        f"on {describe_cluster(snap.cluster)}; ask the platform administrator; the order is frozen"), requeue.FROZEN)


def decide_credential(snap: CredentialSnapshot) -> Decision:
    try:
        identity = parse_identity(snap.order)
    except OrderSpecError as err:
        if is_deleting(snap.order):  # an unreadable order still tears down from what it recorded
            return tear_down(snap, None)
        return _refused(snap, INVALID_SPEC, f"the order cannot be read: {err}", requeue.REFUSAL)
    if identity.deleting:
        return tear_down(snap, identity)
    refusal = cluster_refusal(snap.cluster)
    if refusal is not None:
        return _refused(snap, refusal.reason, refusal.message, refusal.requeue_after)
    try:
        spec = parse_credential(snap.order)
    except OrderSpecError as err:
        return _refused(snap, INVALID_SPEC, f"the order cannot be read: {err}", requeue.REFUSAL)
    carried = _carried(snap.order, f"{identity.name}-s3")
    drift = carried.record.differs(spec.store_namespace, spec.store_name, spec.bucket) \
        if carried.record is not None else None
    if drift is not None:  # only a CRD without the immutability rules lets this happen: act on nothing
        return _refused(snap, INVALID_SPEC, f"{drift}; restore the spec (the order is frozen)", requeue.REFUSAL)
    store = read_store(snap.store)
    if store is None or store.key != (spec.store_namespace, spec.store_name):
        return _no_store(snap, spec)
    cp = read_control_plane(snap.control_plane) if snap.control_plane is not None else None
    refusal = admit_marked(identity.namespace, snap.cluster, store.spec.cp_namespace, store.spec.cp_name, cp,
                           snap.tenant_marks)
    if refusal is not None and refusal.reason == NAMESPACE_NOT_MARKED:  # assigned: the tenant may know the store
        return _refused(snap, refusal.reason, refusal.message, refusal.requeue_after)
    if refusal is not None or cp is None:  # whatever the reason (no ControlPlane, not assigned, reserved)
        return _no_store(snap, spec)

    out = Outcome()
    if naming.FINALIZER not in identity.finalizers:
        out.act(finalizer_patch(KIND, naming.FINALIZER, identity, snap.cluster, add=True))
    if not store.ready:
        return _refused(snap, STORE_NOT_READY, GENERIC_STORE_MESSAGE, WAIT_STORE, both=False, out=out)
    holder = _holder(snap, spec, identity, cp, carried.record)
    if holder is not None:
        return _refused(snap, *holder, requeue.REFUSAL, both=False, out=out)
    record = carried.record or CredentialRecord(spec.store_namespace, spec.store_name, spec.bucket, snap.cluster)
    carried = replace(carried, record=record)  # the bucket is this order's from now until it is deleted
    if not spec.slots:
        return _refused(snap, LAST_KEY_PROTECTED, "spec.slots lists no slot: a credential keeps at least one live key, "
                        "so nothing is revoked", requeue.REFUSAL, both=False, out=out, fields=carried)
    account = read_account(snap.account)
    if account is None or not account.usable or snap.account_key is None:
        return _refused(snap, WAITING_FOR_ACCOUNT, "the tenant's account on the object store is being set up",
                        PROGRESS, both=False, out=out, fields=carried)
    failure = next((snap.read_failures[p] for p in (CHILDREN, SECRET_STORES) if snap.read_failures.get(p)), None)
    if failure:
        return _refused(snap, CREDENTIAL_ERROR, failure, requeue.ERROR_RETRY, both=False, out=out, fields=carried)
    run = _Pass(snap, spec, store, cp, account, out)
    run.fields = replace(run.fields, record=record.with_account(account.name, account.account_id))
    _scope_label(run)
    if account.scope == SHARED_SCOPE:
        return _shared(run)
    return _bucket(run)


def _holder(snap: CredentialSnapshot, spec: CredentialSpec, me: OrderIdentity, cp: ControlPlaneView,
            record: Optional[CredentialRecord]) -> Optional[Tuple[str, str]]:
    """One order per bucket: the refusal when another order holds the store's bucket.

    An order that recorded the bucket (``claim``) holds it until it is gone, being deleted included (its teardown
    still owns the IAM user); only among orders that recorded nothing yet does the earliest admitted one win.
    Two records of one bucket (two passes that claimed at once) rank by creation, then uid."""
    wanted = (spec.store_namespace, spec.store_name, spec.bucket)
    created = timestamps.parse(me.created) or timestamps.LATEST
    mine = (0 if record is not None and record.names(*wanted) else 1, created, me.uid)
    for cluster, rival in snap.rivals:
        try:
            other = parse_identity(rival)
        except OrderSpecError:
            continue
        if (cluster, other.namespace, other.name) == (snap.cluster, me.namespace, me.name):
            continue
        other_record = claim.parse_record(rival)
        if other_record is not None and other_record.names(*wanted):
            rank = 0
        elif other.deleting or other_record is not None:
            continue
        else:
            try:
                other_spec = parse_credential(rival)
            except OrderSpecError:
                continue
            if (other_spec.store_namespace, other_spec.store_name, other_spec.bucket) != wanted or \
                    admit_marked(other.namespace, cluster, cp.namespace, cp.name, cp, snap.tenant_marks) is not None:
                continue
            rank = 1
        if (rank, timestamps.parse(other.created) or timestamps.LATEST, other.uid) < mine:
            if (cluster, other.namespace) == (snap.cluster, me.namespace):
                return BUCKET_CREDENTIAL_EXISTS, (f"BucketCredential {other.name} in this namespace already holds "
                                                  f"the credential of bucket {spec.bucket}")
            return BUCKET_OWNED_ELSEWHERE, f"bucket {spec.bucket} belongs to another account"
    return None


def _scope_label(run: _Pass) -> None:
    """Keep ``c5c3.io/credential-scope`` on the order (``kubectl get -l`` lists the orders on a shared key:
    docs/object-storage.md "The model")."""
    scope = SCOPE_ACCOUNT if run.account.scope == SHARED_SCOPE else BUCKET
    if labels_of(run.snap.order).get(naming.SCOPE_LABEL) != scope:
        identity = run.spec.identity
        run.out.act(MergePatch(kind=KIND, api_version=API_VERSION, namespace=identity.namespace, name=identity.name,
                               cluster=run.snap.cluster, leg=LEG_ORDER, why="label the credential scope",
                               patch={"metadata": {"labels": {naming.SCOPE_LABEL: scope}}}))


def _gateway_failed(run: _Pass, read: Optional[Read], what: str) -> Decision:
    detail = read.describe() if read is not None else "not read"
    return _decide(run.snap, run.out, run.fields, Verdict(False, GATEWAY_ERROR, f"{what}: {detail}"),
                   _previous(run.snap.order, DELIVERY_READY, Verdict(False, WAITING_FOR_KEYS, "not delivered yet")),
                   requeue.ERROR_RETRY)


def _ensure_bucket(run: _Pass, grantee: Optional[str]) -> Optional[Decision]:
    """Create the bucket when missing and keep its policy; a decision when the pass cannot go on."""
    read, bucket = run.snap.bucket_policy, run.spec.bucket
    if read is None or (not read.ok and not read.missing and not read.forbidden):
        return _gateway_failed(run, read, f"reading the policy of bucket {bucket}")
    if read.forbidden:
        return _decide(run.snap, run.out, run.fields, Verdict(False, BUCKET_OWNED_ELSEWHERE,
                                                              f"bucket {bucket} belongs to another account"),
                       _previous(run.snap.order, DELIVERY_READY, Verdict(False, WAITING_FOR_KEYS, "")),
                       requeue.REFUSAL)
    desired = bucket_policy(bucket, run.spec.public_read, grantee)
    created = read.missing and read.code != "NoSuchBucketPolicy"
    if created:
        run.call("s3.create_bucket", f"create bucket {bucket} in the tenant's account", ok_codes=(
            "BucketAlreadyOwnedByYou",), bucket=bucket)
        run.event("BucketCreated", f"bucket {bucket} created in the tenant's account")
        live = None
    else:
        live = read.value if read.ok else None
    if not same_policy(live, desired):
        what = f"public read {'on' if run.spec.public_read else 'off'}" + (", the credential grant" if grantee else "")
        if desired is None:
            run.call("s3.delete_bucket_policy", f"bucket {bucket} needs no policy", ok_codes=("NoSuchBucketPolicy",),
                     bucket=bucket)
        else:
            run.call("s3.put_bucket_policy", f"rebuild the policy of bucket {bucket} ({what})", bucket=bucket,
                     document=desired)
        if not created:  # a spec edit, a bucket that gets its grant, or a policy written at the gateway: restored
            run.event("BucketPolicyUpdated", f"the policy of bucket {bucket} was rebuilt from the order ({what})")
    return None


def _document(run: _Pass, current: Mapping[int, keys.KeyRecord], account_key: Optional[Tuple[str, str]]) -> Dict[str, str]:
    store = run.store.spec
    document = {"endpoint": store.endpoint, "bucket": run.spec.bucket, "region": store.region}
    if account_key is not None:
        document["AWS_ACCESS_KEY_ID"], document["AWS_SECRET_ACCESS_KEY"] = account_key
        return document
    newest = keys.newest(current)
    document["AWS_ACCESS_KEY_ID"], document["AWS_SECRET_ACCESS_KEY"] = newest.access_key, newest.secret_key
    for slot, record in sorted(current.items()):
        document[f"slot{slot}-access-key-id"] = record.access_key
        document[f"slot{slot}-secret-access-key"] = record.secret_key
    return document


def _deliver(run: _Pass, document: Dict[str, str], what: str) -> Tuple[Verdict, bool, bool]:
    """Backup first, then the Secret beside the order: (DeliveryReady, delivered now, settled: nothing written)."""
    snap, names, identity = run.snap, run.names, run.spec.identity
    live = snap.delivered
    was_delivered = carries(live, identity.uid, "AWS_ACCESS_KEY_ID", document["AWS_ACCESS_KEY_ID"]) and \
        carries(live, identity.uid, "AWS_SECRET_ACCESS_KEY", document["AWS_SECRET_ACCESS_KEY"])
    if snap.read_failures.get(DELIVERED_PART):
        run.out.come_back(requeue.ERROR_RETRY)
        return Verdict(False, DELIVERY_ERROR, snap.read_failures[DELIVERED_PART]), was_delivered, False
    store = choose_store(run.cp.secret_store, snap.secret_stores, run.cp.namespace)
    if not store.ready:
        run.out.come_back(requeue.STORE_NOT_READY)
        return Verdict(False, BACKUP_NOT_SYNCED, store.message), was_delivered, False
    target = BackupTarget(namespace=names.cp_namespace, source=names.source, pushsecret=names.backup,
                          remote_key=names.remote_key, labels=run.labels, hash_annotation=naming.PUSH_HASH_ANNOTATION)
    push = write_backup(run.out, target, run.source, run.pushsecret, document, store.name, what)
    if push is None or not push.fresh:
        run.out.come_back(requeue.PROGRESS_ESO)
        message = push.message if push is not None else \
            f"wrote the current keys; waiting for ESO to push them to OpenBao path {names.remote_key}"
        return Verdict(False, BACKUP_NOT_SYNCED, message), was_delivered, False
    where = f"Secret {identity.namespace}/{names.delivered}"
    if refused(live, identity.uid):
        run.out.come_back(requeue.REFUSAL)
        return Verdict(False, DELIVERY_REFUSED, f"{where} exists and is not owned by this order; it is left "
                                                "unchanged"), False, False
    desired = secret_manifest(names.delivered, identity.namespace, naming.LABELS.delivered(identity.namespace,
                                                                                           identity.name), document)
    desired["metadata"]["ownerReferences"] = [owner_reference(KIND, identity.name, identity.uid)]
    desired = templated(desired, run.spec.secret_template)
    index = write_delivered(run.out, live, DeliveredSecret(desired, identity.uid, MANAGED_KEYS, snap.cluster))
    delivered = Verdict(True, DELIVERED, f"{where} carries the current {what}")
    if index is None:
        return delivered, True, True
    run.out.claim(index, replace(run.fields, delivered=was_delivered), {DELIVERY_READY: Verdict(
        False, WAITING_FOR_KEYS, f"{where} does not carry the current {what} yet")})
    return delivered, True, False


def _shared(run: _Pass) -> Decision:
    """A shared account: the bucket works with the account's one key, as buckets there work today."""
    data = secret_strings(run.snap.account_key)
    if not (data.get(ACCESS_KEY) and data.get(SECRET_KEY)):
        return _refused(run.snap, WAITING_FOR_ACCOUNT, "the tenant's account key is not recorded yet", PROGRESS,
                        both=False, out=run.out)
    stop = _ensure_bucket(run, None)
    if stop is not None:
        return stop
    run.fields = replace(run.fields, scope=SCOPE_ACCOUNT, slots=(), untracked=0, rotation=None, next_rotation="",
                         rollout=None)
    document = _document(run, {}, (data[ACCESS_KEY], data[SECRET_KEY]))
    delivery, delivered, _settled = _deliver(run, document, "account key")
    fields = replace(run.fields, delivered=delivered)
    credential = Verdict(True, SHARED_ACCOUNT_CREDENTIAL, (
        "the tenant's account is shared: the order delivers the account's one key, as buckets there work today; "
        "per-bucket keys need the account migrated (ask the platform administrator)"))
    return _decide(run.snap, run.out, fields, credential, delivery, requeue.REFUSAL)


def _bucket(run: _Pass) -> Decision:
    snap, spec, user = run.snap, run.spec, run.spec.bucket
    stop = _ensure_bucket(run, naming.user_arn(run.account.account_id, user))
    if stop is not None:
        return stop
    listed = snap.user_keys
    if listed is None or (not listed.ok and not listed.missing):
        return _gateway_failed(run, listed, f"listing the keys of IAM user {user}")
    if run.fields.scope == SCOPE_ACCOUNT:  # the account was migrated: the bucket leaves the account's key
        run.event("CredentialMigrated", f"bucket {user} moves from the account's shared key to a credential of its "
                                        "own")
    live = set()
    if listed.missing:
        run.call("iam.create_user", f"create the bucket's IAM user {user}", ok_codes=("EntityAlreadyExists",),
                 name=user)
        run.event("IAMUserCreated", f"IAM user {user} created for bucket {user}")
    else:
        live = {text(k.get("AccessKeyId")) for k in listed.value or () if text(k.get("AccessKeyId"))}
    policy_read = snap.user_policy
    if policy_read is not None and not policy_read.ok and not policy_read.missing:
        return _gateway_failed(run, policy_read, f"reading the inline policy of IAM user {user}")
    live_policy = policy_read.value if policy_read is not None and policy_read.ok else None
    if listed.missing or not same_policy(live_policy, inline_policy(user)):
        run.call("iam.put_user_policy", f"allow IAM user {user} s3:* on bucket {user} and its objects",
                 user=user, policy_name=naming.INLINE_POLICY, document=inline_policy(user))
        if not listed.missing:
            run.event("InlinePolicyRestored", f"the inline policy of IAM user {user} was restored (it was "
                                              f"{'changed' if live_policy is not None else 'missing'})")

    drift_note = _policy_drift(run)

    records = keys.records(run.children, run.names)
    step = _schedule(run, records, live)
    desired = schedule.effective_slots(spec.desired, step.state)  # spec.slots as the rotation schedule holds it
    plan = keys.plan_keys(desired, records, live)
    intents = keys.pending(run.children, run.names)
    strays = keys.interrupted(_created(listed, plan.untracked), intents)
    for access_key in strays:  # an issue whose process died between CreateAccessKey and its Secret
        run.call("iam.delete_access_key", "revoke the key of an interrupted issue (its secret was never kept)",
                 ok_codes=("NoSuchEntity",), access_key_id=access_key, user=user)
        run.event("InterruptedKeyRevoked", f"IAM user {user} held key {access_key} from an issue that did not "
                                           "finish; nobody holds its secret, so it was revoked")
    plan = replace(plan, untracked=[k for k in plan.untracked if k not in strays])
    live -= set(strays)
    for record in plan.stale:  # its key is gone at the gateway: the Secret records nothing usable
        run.out.act(Delete("Secret", "v1", run.names.cp_namespace, name_of(record.secret), "", LEG_CREDENTIAL,
                           f"the key of slot {record.slot} is no longer on the IAM user",
                           uid=text(dig(record.secret, "metadata", "uid")) or None))
        run.event("KeyRecordRemoved", f"the key of slot {record.slot} (generation {record.generation}) of bucket "
                                      f"{user} is no longer on the IAM user; its record was removed")
    untracked_note = drift_note + step.note
    if plan.untracked:
        untracked_note += (f"; {len(plan.untracked)} key(s) on IAM user {user} were not issued by this order: "
                           f"{', '.join(plan.untracked)} (reported, never deleted)")
        if len(plan.untracked) != run.fields.untracked:
            run.event("UntrackedKeys", f"IAM user {user} holds {len(plan.untracked)} key(s) this order did not "
                                       f"record ({', '.join(plan.untracked)}); they are reported, never deleted")
    current_slots = tuple((s, r.access_key, r.created, r.generation) for s, r in sorted(plan.current.items()))
    run.fields = replace(run.fields, scope=BUCKET, slots=current_slots, untracked=len(plan.untracked))

    kept = {**desired, **dict([step.retiring] if step.retiring else [])}
    early = keys.revoke_first(plan, kept, _consumer_keys(run), len(live),  # a retiring scheduled key waits
                              removed_at_once=not spec.rollout.on)
    for record in early.revoke:
        _revoke(run, record, "the slot was removed from spec.slots" if record.slot not in desired else
                "room for its successor under the gateway's key limit")
    retiring = [r for r in plan.retired if r not in early.revoke]
    run.fields = replace(run.fields, retiring=_retiring(retiring))

    if plan.to_issue:
        issuable = plan.to_issue[:early.room]
        for slot, generation in issuable:
            replacing = any(r.slot == slot for r in plan.retired)
            secret = secret_manifest(run.names.key(slot, generation), run.names.cp_namespace,
                                     {**run.labels, naming.SLOT_LABEL: str(slot),
                                      naming.GENERATION_LABEL: str(generation)}, {})
            if (slot, generation) not in intents:  # the intent first: a key no record explains is never ours
                intent = dict(secret, metadata={**secret["metadata"], "annotations": {
                    keys.ISSUING_ANNOTATION: timestamps.render(snap.now)}})
                run.out.act(Create(intent, "", LEG_CREDENTIAL, f"record the issue of slot {slot} (generation "
                                                               f"{generation}) before the key exists"))
            run.out.act(IssueKey(run.store.key, run.account.name, user, secret, write="apply",
                                 why=f"issue the key of slot {slot} at generation {generation}"))
            run.event("KeyReplaced" if replacing else "KeyIssued",
                      f"a key was issued into slot {slot} (generation {generation}) of bucket {user}")
        previous_delivery = _previous(snap.order, DELIVERY_READY, Verdict(False, WAITING_FOR_KEYS, "not delivered yet"))
        if not issuable:
            return _decide(snap, run.out, run.fields, Verdict(False, KEY_LIMIT_REACHED, (
                f"IAM user {user} holds {len(live)} key(s), the gateway's limit of {keys.MAX_KEYS}, and slot(s) "
                + ", ".join(str(slot) for slot, _g in plan.to_issue) + " cannot be issued without revoking a key "
                "this order must keep" + untracked_note + "; remove the keys it did not issue at the gateway")),
                previous_delivery, requeue.REFUSAL)
        run.out.come_back(PROGRESS)
        waiting = Verdict(False, WAITING_FOR_KEYS, "issuing the key(s) of slot(s) "
                          + ", ".join(str(slot) for slot, _generation in issuable) + untracked_note)
        return _decide(snap, run.out, run.fields, waiting, previous_delivery, PROGRESS)

    document = _document(run, plan.current, None)
    delivery, delivered, settled = _deliver(run, document, "keys")
    gate = _rollout_gate(run, plan.current, retiring, delivered, settled)
    if step.retiring is not None and spec.rollout.on and (gate is None or gate.open):
        run.out.come_back(PROGRESS)  # the schedule's next step (_schedule leaves it to the gate)
    if settled and (gate is None or gate.open):  # the consumer holds every current key: retired keys may go now
        why = "its successor is delivered" if gate is None else "its successor is delivered and " + (
            "the rollout deadline passed" if gate.deadline_passed else "its consumers rolled out")
        for record in retiring:
            _revoke(run, record, why)
        retiring = []
        run.fields = replace(run.fields, retiring=())
    held = ", ".join(str(s) for s in sorted(plan.current))
    if retiring and gate is not None and not gate.open and run.fields.rollout is not None:
        # False, as RevocationPending: an old key awaits revocation, so the order is not Ready (DeliveryReady is)
        credential = Verdict(False, WAITING_FOR_ROLLOUT, (
            f"IAM user {user} holds the key(s) of slot(s) {held}; the old key(s) of slot(s) "
            f"{', '.join(str(r.slot) for r in retiring)} still work until "
            + _waiting_text(gate) + " at the latest until "
            + timestamps.render(gate.deadline or snap.now) + untracked_note))
    elif retiring:
        credential = Verdict(False, REVOCATION_PENDING, (
            f"IAM user {user} holds the key(s) of slot(s) {held}; the replaced key(s) of slot(s) "
            f"{', '.join(str(r.slot) for r in retiring)} still work until the delivered Secret carries their "
            f"successors{untracked_note}"))
    else:
        credential = Verdict(True, CREDENTIAL_ISSUED, (
            f"IAM user {user} holds the key(s) of slot(s) {held} with its inline policy and the bucket-policy "
            f"grant{untracked_note}"))
    fields = replace(run.fields, delivered=delivered)
    gated = gate is not None and not gate.open
    wait = PROGRESS if ((retiring and not gated) or plan.stale) else requeue.REFUSAL
    return _decide(snap, run.out, fields, credential, delivery, wait)


def _waiting_text(gate: rollouts.Gate) -> str:
    """Who the gate waits for, for the CredentialReady message (names at most ``rollouts.MAX_NAMED``)."""
    if not gate.waiting_for:
        return f"the workloads of the namespace can be listed ({gate.unread}),"
    named = ", ".join(gate.waiting_for[:rollouts.MAX_NAMED])
    more = len(gate.waiting_for) - rollouts.MAX_NAMED
    return (named + (f" and {more} more" if more > 0 else "")
            + " run only pods started after the new key(s) were delivered,")


def _rollout_gate(run: _Pass, current: Mapping[int, keys.KeyRecord], retiring: Sequence[keys.KeyRecord],
                  delivered: bool, settled: bool) -> Optional[rollouts.Gate]:
    """``spec.revokeAfterRollout`` (rollout.py): record when the Secret started carrying the current keys, and,
    once it carries them and keys wait for revocation, whether their consumers have rolled out. None = no gate
    (the order did not opt in); the gate's state goes into ``status.rollout`` and its Events are raised."""
    policy = run.spec.rollout
    if not policy.on:
        run.fields = replace(run.fields, rollout=None)
        return None
    state = run.fields.rollout
    if delivered:
        state = rollouts.delivered(state, [r.access_key for r in current.values()], run.snap.now)
    if state is None or not settled or not retiring:  # nothing waits at the gate in this pass
        run.fields = replace(run.fields, rollout=replace(state, waiting_for=(), deadline=None) if state else None)
        return None
    gate = rollouts.judge(policy, state, run.snap.workloads, run.names.delivered, run.snap.now)
    old = ", ".join(f"slot {r.slot} (generation {r.generation})" for r in retiring)
    secret = f"Secret {run.spec.identity.namespace}/{run.names.delivered}"
    if gate.open:
        run.fields = replace(run.fields, rollout=replace(state, waiting_for=(), deadline=None))
        if gate.deadline_passed:
            who = ", ".join(gate.waiting_for[:rollouts.MAX_NAMED]) or f"unknown workloads ({gate.unread})"
            run.out.act(RecordEvent(run.involved, "RolloutDeadlinePassed", (
                f"the rollout deadline {timestamps.render(gate.deadline or run.snap.now)} passed while {who} still "
                f"ran pods started before {secret} carried the new key(s); the old key(s) of {old} are revoked"),
                run.snap.cluster, event_type="Warning"))
        else:
            run.event("ConsumersRolledOut", f"every workload consuming {secret} runs only pods started after it "
                                            f"carried the new key(s); the old key(s) of {old} are revoked")
        return gate
    run.fields = replace(run.fields, rollout=replace(state, waiting_for=gate.waiting_for, deadline=gate.deadline))
    if run.snap.workloads is not None and (gate.waiting_for != state.waiting_for or state.deadline is None):
        who = ", ".join(gate.waiting_for[:rollouts.MAX_NAMED]) or f"the workloads to be listed ({gate.unread})"
        run.event("RolloutWaiting", f"the old key(s) of {old} are revoked once {who} run only pods started after "
                                    f"{secret} carried the new key(s), at the latest at "
                                    f"{timestamps.render(gate.deadline or run.snap.now)}")
    run.out.come_back(PROGRESS if run.snap.workloads is None else rollouts.wake(gate, run.snap.now))
    return gate


def _schedule(run: _Pass, records: Sequence[keys.KeyRecord], live: Set[str]) -> schedule.Step:
    """One step of the rotation schedule (schedule.py) from the recorded keys the gateway lists and the key the
    delivered Secret's ``AWS_*`` carries: its Events are raised, its state and due time go into the status, and
    the pass comes back when the schedule is next due."""
    held = {(r.slot, r.generation): timestamps.parse(r.created) for r in records if r.access_key in live}
    aws = _delivered_access_key(run)
    delivered = next(((r.slot, r.generation) for r in records if aws and r.access_key == aws), None)
    step = schedule.advance(run.spec.desired, run.fields.rotation, run.spec.rotation, run.snap.now, held, delivered)
    for reason, message in step.events:
        run.event(reason, f"bucket {run.spec.bucket}: {message}")
    run.fields = replace(run.fields, rotation=step.state, next_rotation=timestamps.render(step.next_rotation)
                         if step.next_rotation is not None else "")
    if step.soon and not (step.retiring is not None and run.spec.rollout.on):  # the rollout gate decides then
        run.out.come_back(PROGRESS)
    if step.wake is not None:
        run.out.come_back(requeue.until(step.wake, run.snap.now))
    return step


def _delivered_access_key(run: _Pass) -> str:
    """The access key id the delivered Secret's ``AWS_ACCESS_KEY_ID`` carries ("" = none, or not readable)."""
    live = run.snap.delivered
    if run.snap.read_failures.get(DELIVERED_PART) or live is None or not is_owned(live, run.spec.identity.uid):
        return ""
    return secret_strings(live).get("AWS_ACCESS_KEY_ID", "")


def _policy_drift(run: _Pass) -> str:
    """Policies on the IAM user that the order did not write (another inline policy, an attached managed one):
    reported in the message and by a Warning Event when first seen, never removed (they are not the order's)."""
    read = run.snap.user_policy_names
    if read is None or not read.ok or not isinstance(read.value, Mapping):
        return ""
    inline = sorted(str(n) for n in read.value.get("inline") or () if str(n) != naming.INLINE_POLICY)
    attached = sorted(str(a) for a in read.value.get("attached") or ())
    if not (inline or attached):
        return ""
    found = ", ".join([f"inline {n}" for n in inline] + [f"attached {a}" for a in attached])
    note = f"; drift: IAM user {run.spec.bucket} also carries {found} (not written by this order; reported, never removed)"
    if note not in _previous(run.snap.order, CREDENTIAL_READY, Verdict(False, "", "")).message:
        run.out.act(RecordEvent(run.involved, "PolicyDrift", (
            f"IAM user {run.spec.bucket} carries policies this order did not write: {found}; review them on the "
            "gateway"), run.snap.cluster, event_type="Warning"))
    return note


def _created(listed: Optional[Read], ids: Sequence[str]) -> Dict[str, str]:
    """When the gateway created each of ``ids`` (``CreateDate`` of ListAccessKeys)."""
    wanted = set(ids)
    return {text(k.get("AccessKeyId")): text(k.get("CreateDate")) for k in (listed.value if listed is not None
            and listed.ok else None) or () if text(k.get("AccessKeyId")) in wanted}


def _retiring(records: Sequence[keys.KeyRecord]) -> Tuple[Tuple[int, str, int], ...]:
    return tuple((r.slot, r.access_key, r.generation) for r in records)


def _revoke(run: _Pass, record: keys.KeyRecord, why: str) -> None:
    """Delete a key at the gateway, then its record; the status lists it as retiring unless the call runs."""
    index = run.call("iam.delete_access_key", f"revoke the key of slot {record.slot} (generation "
                     f"{record.generation}): {why}", ok_codes=("NoSuchEntity",), access_key_id=record.access_key,
                     user=run.spec.bucket)
    run.out.claim(index, replace(run.fields, retiring=tuple(sorted({*run.fields.retiring, *_retiring([record])}))))
    run.out.act(Delete("Secret", "v1", run.names.cp_namespace, name_of(record.secret), "", LEG_CREDENTIAL,
                       f"the key of slot {record.slot} is revoked",
                       uid=text(dig(record.secret, "metadata", "uid")) or None))
    run.event("KeyRevoked", f"the key of slot {record.slot} (generation {record.generation}) of bucket "
                            f"{run.spec.bucket} was revoked ({why}); the gateway rejects it from now on")


def _consumer_keys(run: _Pass) -> Set[str]:
    """The access key ids the consumer holds: what the delivered Secret carries, or, when it cannot be read (its
    cluster is down), the keys the status last reported delivered."""
    if run.snap.read_failures.get(DELIVERED_PART):
        if _previous(run.snap.order, DELIVERY_READY, Verdict(False, "", "")).ok:
            return {k for _s, k, _c, _g in _carried(run.snap.order, "").slots}
        return set()
    live = run.snap.delivered
    if live is None or not is_owned(live, run.spec.identity.uid):
        return set()
    data = secret_strings(live)
    return {data[k] for k in ("AWS_ACCESS_KEY_ID", "slot1-access-key-id", "slot2-access-key-id") if data.get(k)}


# -- teardown ------------------------------------------------------------------------------------------------
def tear_down(snap: CredentialSnapshot, identity: Optional[OrderIdentity]) -> Decision:
    """The finalizer goes only once the gateway has confirmed that no key the order issued works any more (or the
    platform deleted the ObjectStore itself: fail open, nobody can revoke at a store that is gone).

    Everything is taken from what the order recorded (``claim``): the store, the bucket and the account it issued
    keys in, and the keys its Secrets and status name -- never from the current spec, which may have changed or
    no longer parse. The order that held its bucket, with its account usable, revokes its keys, deletes the inline
    policy, drops its grant from the bucket policy (whatever else was written there since) and deletes the IAM user
    (the order the gateway requires: DeleteUser conflicts while keys or policies remain). Without a usable account
    (deleted with the order, or never set up), and for an order that never held its bucket, every recorded key is
    revoked through the admin API by its access key id, each confirmed gone by a read before the children go."""
    raw = snap.order
    name, namespace = name_of(raw), namespace_of(raw)
    out = Outcome()
    fields = _carried(raw, f"{name}-s3")
    waiting = Verdict(False, WAITING_FOR_KEYS, "the order is being deleted")
    credential = _previous(raw, CREDENTIAL_READY, waiting)
    delivery = _previous(raw, DELIVERY_READY, waiting)
    finalizers = identity.finalizers if identity is not None else tuple(
        f for f in (dig(raw, "metadata", "finalizers") or ()) if isinstance(f, str))
    if naming.FINALIZER not in finalizers:
        return _decide(snap, out, fields, credential, delivery, None, writes_status=False, deleting=True)
    if identity is not None and not identity.fits_label:  # a name no label can carry never had children
        return _released(snap, [finalizer_patch(KIND, naming.FINALIZER, identity, snap.cluster, add=False)],
                         fields, credential, delivery)
    store = read_store(snap.store)
    store_key = claim.store_of(raw)
    bucket = claim.bucket_of(raw)
    names = naming.credential_names(snap.cluster, namespace, name, store_key[0])
    labels = naming.LABELS.child(snap.cluster, namespace, name)
    children = [c for c in snap.children if carries_labels(c, labels) and names.is_child_name(name_of(c))]
    issued = sorted({r.access_key for r in keys.records(children, names)} | fields.key_ids())

    def gone(reason: str, message: str, wait: Optional[timedelta]) -> Decision:
        return _decide(snap, out, fields, Verdict(False, reason, f"the order is being deleted; {message}"),
                       delivery, wait, deleting=True)

    if identity is None:  # metadata no label or patch can be built from: keep everything, say so
        return gone(INVALID_SPEC, "its metadata cannot be read, so its keys are kept; fix the object", requeue.REFUSAL)
    doomed = [Doomed(c, "", LEG_BACKUP if kind_of(c) == "PushSecret" or name_of(c) == names.source else LEG_CREDENTIAL)
              for c in sorted(children, key=lambda c: kind_of(c) != "PushSecret")]
    if is_owned(snap.delivered, identity.uid):
        doomed.append(Doomed(snap.delivered, snap.cluster, LEG_DELIVERED))
    if store is None or store.key != store_key:  # fail open: nobody can revoke at a store that is gone
        step = delete_children(KIND, naming.FINALIZER, identity, snap.cluster, doomed, False)
        return _released(snap, step.actions, fields, credential, delivery)
    if not store.ready:
        return gone(STORE_NOT_READY, "its keys are revoked once the object store is ready again", WAIT_STORE)
    account = read_account(snap.account)
    held = fields.record is not None or _held(snap, bucket, identity)
    by_account = held and account is not None and account.usable and account.scope == BUCKET and \
        snap.account_key is not None and fields.record is not None and \
        fields.record.account in ("", account.name)
    if by_account and account is not None:  # by_account says it is
        listed = snap.user_keys
        live_ids = [text(k.get("AccessKeyId")) for k in (listed.value if listed is not None and listed.ok else None)
                    or ()]
        strays = keys.interrupted(_created(listed, [k for k in live_ids if k not in issued]),
                                  keys.pending(children, names))
        state = _revoke_everything(snap, out, bucket, store, account, set(issued) | set(strays))
        unreadable = [r for r in (snap.user_keys, snap.bucket_policy) if r is not None and not r.ok]
    elif held and account is not None and account.scope == SHARED_SCOPE and not issued:
        state = True  # the order delivered the account's one key: nothing of its own lives at the gateway
        unreadable = []
    else:
        state = _revoke_by_admin(snap, out, store, issued)
        unreadable = [snap.key_owners[k] for k in issued if k in snap.key_owners and not snap.key_owners[k].ok
                      and not snap.key_owners[k].missing]
    if state is None:
        return gone(GATEWAY_ERROR, "the gateway could not confirm its keys are gone: " + (
            ", ".join(r.describe() for r in unreadable) or "not read"), requeue.ERROR_RETRY)
    if not state:
        return gone(WAITING_FOR_KEYS, "revoking its keys at the gateway; the finalizer goes once the gateway "
                                      "confirms they no longer work", PROGRESS)
    step = delete_children(KIND, naming.FINALIZER, identity, snap.cluster, doomed, True)
    if step.released:
        return _released(snap, out.actions + step.actions, fields, credential, delivery)
    for action in step.actions:
        out.act(action)
    return gone(WAITING_FOR_KEYS, "waiting for its children to go: " + ", ".join(step.waiting_for),
                requeue.TEARDOWN)


def _held(snap: CredentialSnapshot, bucket: str, identity: OrderIdentity) -> bool:
    """Whether an order that recorded no claim (written before the record existed) held its bucket: not when an
    earlier order does (it was refused, and the IAM user named after the bucket, its policy and the grant are the
    holder's)."""
    try:
        spec = parse_credential(snap.order)
    except OrderSpecError:
        return False
    cp = read_control_plane(snap.control_plane) if snap.control_plane is not None else None
    return spec.bucket == bucket and (cp is None or _holder(snap, spec, identity, cp, None) is None)


def _released(snap: CredentialSnapshot, actions: List[Any], fields: CredentialFields, credential: Verdict,
              delivery: Verdict) -> Decision:
    out = Outcome()
    for action in actions:
        out.act(action)
    return _decide(snap, out, fields, credential, delivery, None, writes_status=False, deleting=True)


def _revoke_by_admin(snap: CredentialSnapshot, out: Outcome, store: StoreView, issued: Sequence[str]) -> Optional[bool]:
    """Revoke every recorded key by its id through the admin API; True once a read says each one is gone, None
    when a key's holder cannot be read."""
    pending = False
    for access_key in issued:
        read = snap.key_owners.get(access_key)
        if read is None or (not read.ok and not read.missing):
            return None
        if read.ok:
            args = {"access_key_id": access_key, "uid": text(dig(read.value, "uid")) or None}
            out.act(GatewayCall(store.key, ADMIN, "", "admin.remove_key", args, leg=LEG_CREDENTIAL,
                                why="revoke a key of the deleted order", ok_codes=("NoSuchKey", "NoSuchUser")))
            pending = True
    if pending:
        out.act(RecordEvent(_involved(snap.order), "KeyRevoked", (
            f"the {len(issued)} key(s) the deleted order issued are revoked through the object store's admin API"),
            snap.cluster))
    return not pending


def _revoke_everything(snap: CredentialSnapshot, out: Outcome, bucket: str, store: StoreView, account: AccountView,
                       recorded: Set[str]) -> Optional[bool]:
    """The gateway half of the teardown of the order that held its bucket; True once a read shows nothing of the
    order left there, None when unreadable."""
    user = bucket

    def call(op: str, why: str, ok_codes: Tuple[str, ...] = (), **args: Any) -> None:
        out.act(GatewayCall(store.key, ACCOUNT, account.name, op, args, leg=LEG_CREDENTIAL, why=why,
                            ok_codes=ok_codes))

    listed, policy = snap.user_keys, snap.bucket_policy
    if listed is None or (not listed.ok and not listed.missing) or policy is None or \
            (not policy.ok and not policy.missing and not policy.forbidden):
        return None
    clean = True
    grant = naming.user_arn(account.account_id, user)
    if policy.ok and granted(policy.value, grant):  # whatever else was written there since stays
        remaining = without_grant(policy.value, grant)
        if remaining is None:
            call("s3.delete_bucket_policy", f"drop the credential grant from bucket {bucket}",
                 ok_codes=("NoSuchBucketPolicy", "NoSuchBucket"), bucket=bucket)
        else:
            call("s3.put_bucket_policy", f"drop the credential grant from bucket {bucket}", bucket=bucket,
                 document=remaining)
        clean = False
    if listed.missing:
        return clean
    live = [text(k.get("AccessKeyId")) for k in listed.value or () if text(k.get("AccessKeyId"))]
    ours = [key for key in live if key in recorded]
    for key in ours:
        call("iam.delete_access_key", "revoke a key of the deleted order", ok_codes=("NoSuchEntity",),
             access_key_id=key, user=user)
    untracked = [k for k in live if k not in recorded]
    call("iam.delete_user_policy", f"delete the inline policy of IAM user {user}", ok_codes=("NoSuchEntity",),
         user=user, policy_name=naming.INLINE_POLICY)
    involved = _involved(snap.order)
    if untracked:
        out.act(RecordEvent(involved, "IAMUserKept", (
            f"IAM user {user} keeps {len(untracked)} key(s) this order did not issue ({', '.join(untracked)}; never "
            "deleted), so the user stays, without a policy: review it on the gateway"), snap.cluster,
            event_type="Warning"))
        return clean and not ours  # confirmed only by a read that lists none of the order's keys
    call("iam.delete_user", f"delete the bucket's IAM user {user}", ok_codes=("NoSuchEntity",), name=user)
    out.act(RecordEvent(involved, "CredentialDeleted", f"the keys and IAM user of bucket {bucket} were deleted; the "
                                                       "bucket stays", snap.cluster))
    return False


# -- failures ------------------------------------------------------------------------------------------------
def _gateway_failure(_decision: Decision, action: Any, error: ActionError, detail: str,
                     _fields: Any) -> failures.Rewrite:
    """A gateway step refused: GatewayError with the gateway's code (the edge removed every key)."""
    verdict = Verdict(False, GATEWAY_ERROR, f"{action.verb} {action.name} failed: {detail}")
    return failures.Rewrite(CREDENTIAL_READY, verdict, requeue.ERROR_RETRY)


POLICY = failures.FailurePolicy(
    leg_conditions={LEG_ORDER: CREDENTIAL_READY, LEG_CREDENTIAL: CREDENTIAL_READY, LEG_BACKUP: DELIVERY_READY,
                    LEG_DELIVERED: DELIVERY_READY},
    error_reasons={CREDENTIAL_READY: CREDENTIAL_ERROR, DELIVERY_READY: DELIVERY_ERROR},
    special={GatewayCall: _gateway_failure, IssueKey: _gateway_failure},
)


def on_action_failure(decision: Decision, action: Any, error: ActionError) -> Decision:
    return failures.on_action_failure(decision, action, error, POLICY)


def gateway_targets(order: Any, account: Any) -> Optional[Tuple[str, bool]]:
    """What the edge reads at the gateway for this order: (bucket, whether the IAM user's keys and policy are read
    too); None when nothing (the order's account is not usable, or its spec cannot be read). An order being
    deleted is read by the bucket it recorded."""
    view = read_account(account)
    if view is None or not view.usable:
        return None
    if is_deleting(order):
        bucket = claim.bucket_of(order)
        return (bucket, view.scope == BUCKET) if bucket else None
    try:
        spec = parse_credential(order)
    except OrderSpecError:
        return None
    return spec.bucket, view.scope == BUCKET


def teardown_keys(order: Any, children: Sequence[Mapping[str, Any]], cluster: str) -> List[str]:
    """The access key ids an order being deleted issued (its key Secrets and its status): the edge reads who holds
    each through the admin API, the teardown's proof that they are gone."""
    if not is_deleting(order):
        return []
    names = naming.credential_names(cluster, namespace_of(order), name_of(order), claim.store_of(order)[0])
    recorded = {r.access_key for r in keys.records(children, names)}
    return sorted(recorded | _carried(order, "").key_ids())
