# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a BucketCredential holds, recorded in its status the first pass it wins its bucket.

Two rules rest on this record (``status.admittedAs``):
- the order that holds a bucket keeps it until it is deleted: a rival created earlier, or admitted later (its
  namespace assigned afterwards, a target cluster whose clock is behind), never demotes it (``holds``);
- the teardown acts on what the order was admitted as, never on the current spec: the store, the bucket and the
  account it issued keys in, so an edited or unreadable spec, a rival that appeared since, or an account object
  deleted before the order cannot make the finalizer go while a key it issued still works.
An order without a record (written before the field existed) acts on its spec and gets its record at its next
admitted pass.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, text

FIELD = "admittedAs"


@dataclass(frozen=True)
class CredentialRecord:
    store_namespace: str
    store_name: str
    bucket: str
    cluster: str
    account: str = ""      # the ObjectStoreAccount whose IAM user holds the keys ("" until the account is usable)
    account_id: str = ""

    @property
    def store(self) -> Tuple[str, str]:
        return self.store_namespace, self.store_name

    def names(self, store_namespace: str, store_name: str, bucket: str) -> bool:
        return (self.store_namespace, self.store_name, self.bucket) == (store_namespace, store_name, bucket)

    def with_account(self, account: str, account_id: str) -> "CredentialRecord":
        return replace(self, account=account, account_id=account_id)

    def render(self) -> Dict[str, Any]:
        rendered: Dict[str, Any] = {"objectStoreRef": {"namespace": self.store_namespace, "name": self.store_name},
                                    "bucket": self.bucket, "cluster": self.cluster}
        if self.account:
            rendered["account"] = self.account
        if self.account_id:
            rendered["accountID"] = self.account_id
        return rendered

    def differs(self, store_namespace: str, store_name: str, bucket: str) -> Optional[str]:
        """What the spec changed since the bucket was claimed, in words (None = nothing)."""
        if (store_namespace, store_name) != self.store:
            return (f"spec.objectStoreRef is {store_namespace}/{store_name}, but the order holds bucket {self.bucket} "
                    f"on ObjectStore {self.store_namespace}/{self.store_name}")
        if bucket != self.bucket:
            return f"spec.bucket is {bucket!r}, but the order holds bucket {self.bucket!r}"
        return None


def parse_record(order: Any) -> Optional[CredentialRecord]:
    """The record in ``status.admittedAs``; None when absent or unreadable."""
    raw = dig(order, "status", FIELD)
    store_namespace = text(dig(raw, "objectStoreRef", "namespace"))
    store_name = text(dig(raw, "objectStoreRef", "name"))
    bucket = text(dig(raw, "bucket"))
    cluster = dig(raw, "cluster")
    if not (store_namespace and store_name and bucket) or not isinstance(cluster, str):
        return None
    return CredentialRecord(store_namespace, store_name, bucket, cluster, text(dig(raw, "account")),
                            text(dig(raw, "accountID")))


def store_of(order: Any) -> Tuple[str, str]:
    """The ObjectStore an order is reconciled against: the recorded one, else the one its spec names (its
    namespace defaults to the order's, as the CRD's does)."""
    record = parse_record(order)
    if record is not None:
        return record.store
    ref = dig(order, "spec", "objectStoreRef")
    return text(dig(ref, "namespace"), text(dig(order, "metadata", "namespace"))), text(dig(ref, "name"))


def bucket_of(order: Any) -> str:
    record = parse_record(order)
    return record.bucket if record is not None else text(dig(order, "spec", "bucket"))
